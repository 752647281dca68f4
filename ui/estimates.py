"""How long SHAP and LIME will take on the Compare page, timed on a row or two of the data first."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from flex_core import FittedModel, TaskSpec
from flex_core._format import format_duration, plural
from flex_core.compare import lime_importance, shap_importance

__all__ = ["RunEstimate", "estimate_shap", "estimate_lime"]


@dataclass(frozen=True)
class RunEstimate:
    """How long an explainer will take on some rows, from timing it on a few of them.

    Attributes
    ----------
    seconds_per_row : float
        Measured on ``probe_rows`` rows (building the explainer included, so it errs long).
    n_rows : int
        Rows the estimate is for; :meth:`with_rows` gives the same estimate for another count.
    method, detail : str
        What runs, e.g. "TreeSHAP" and "95 one-hot columns".
    """

    seconds_per_row: float
    n_rows: int
    method: str
    detail: str
    probe_rows: int

    @property
    def seconds(self) -> float:
        return self.seconds_per_row * self.n_rows

    def with_rows(self, n_rows: int) -> RunEstimate:
        return replace(self, n_rows=int(n_rows))

    def describe(self) -> str:
        """``"about 2 minutes on this data (TreeSHAP on 200 rows × 95 one-hot columns; timed on 2 rows first)"``."""
        return (
            f"{format_duration(self.seconds)} on this data ({self.method} on {plural(self.n_rows, 'row')} × "
            f"{self.detail}; timed on {plural(self.probe_rows, 'row')} first)"
        )


def estimate_shap(model: FittedModel, task: TaskSpec, rows: Sequence[int], *, probe: int = 2, **options) -> RunEstimate:
    """Time :func:`shap_importance` on ``probe`` of the rows and extrapolate to all of them.

    ``options`` are passed on (explainer, nsamples, seed, ...).
    """
    rows = [int(r) for r in rows]
    sample = rows[: max(1, min(probe, len(rows)))]
    started = time.perf_counter()
    result = shap_importance(model, task, sample, **options)
    per_row = (time.perf_counter() - started) / len(sample)
    method = "TreeSHAP" if result.explainer.startswith("tree") else "KernelSHAP"
    columns = len(result.column_names)
    detail = f"{columns} one-hot columns" if columns > len(task.features) else f"{columns} columns"
    return RunEstimate(per_row, len(rows), method, detail, len(sample))


def estimate_lime(model: FittedModel, task: TaskSpec, rows: Sequence[int], *, num_samples: int = 5000, seed: int = 0) -> RunEstimate:
    """Time :func:`lime_importance` on the first of the rows and extrapolate to all of them."""
    rows = [int(r) for r in rows]
    started = time.perf_counter()
    lime_importance(model, task, rows[:1], num_samples=num_samples, seed=seed)
    return RunEstimate(time.perf_counter() - started, len(rows), "LIME", f"{num_samples:,} samples each", 1)
