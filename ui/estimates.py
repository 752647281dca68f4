"""How long SHAP and LIME will take on the Compare page, timed on a row or two of the data first."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from flex_core import FittedModel, TaskSpec
from flex_core.compare import lime_importance, shap_importance
from flex_core.formatting import format_duration, plural

__all__ = ["RunEstimate", "estimate_shap", "estimate_lime"]


@dataclass(frozen=True)
class RunEstimate:
    """How long an explainer will take on some rows, from timing it on a few of them.

    Attributes
    ----------
    seconds_per_row : float
        Measured on ``probe_rows`` rows; for SHAP without the explainer's set-up, which is ``fixed_seconds``.
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
    fixed_seconds: float = 0.0

    @property
    def seconds(self) -> float:
        return self.fixed_seconds + self.seconds_per_row * self.n_rows

    def with_rows(self, n_rows: int) -> RunEstimate:
        return replace(self, n_rows=int(n_rows))

    def describe(self) -> str:
        """``"about 2 minutes on this data (TreeSHAP on 200 rows × 95 one-hot columns; timed on 2 rows first)"``."""
        return (
            f"{format_duration(self.seconds)} on this data ({self.method} on {plural(self.n_rows, 'row')} × "
            f"{self.detail}; timed on {plural(self.probe_rows, 'row')} first)"
        )


#: The least time the rows beyond the first must take in the probe: below it, timer and cache noise swamp
#: the cost per row (TreeSHAP on a booster costs about a millisecond a row, and was read as twice that).
MIN_PROBE_SECONDS = 0.2
#: A run that would take under this even if all the probe's time were per row is quick whatever the split:
#: the page says "under 5 seconds" even if the estimate is twice the time, so probing on would tell nothing.
QUICK_SECONDS = 2.5


def estimate_shap(model: FittedModel, task: TaskSpec, rows: Sequence[int], *, probe: int = 2, **options) -> RunEstimate:
    """Time :func:`shap_importance` on ``probe`` of the rows (or more) and extrapolate to all of them.

    A first call on one row warms up (imports, shap's compiled code); then one row and ``probe``
    rows are timed, which separates the explainer's set-up (background, k-means, the tree
    conversion) from the cost per row: a set-up spread over two rows made TreeSHAP look 15x
    slower than it is. Where the extra rows take under :data:`MIN_PROBE_SECONDS`, the probe
    grows fourfold until they do, so a cheap explainer is timed on enough rows to measure; it stops
    early when the whole run is quick anyway (:data:`QUICK_SECONDS`). The final probe is timed twice and
    the quicker kept, so a moment's load on the machine is not multiplied by every row. ``options`` are passed on (explainer, nsamples, seed, ...).
    """
    rows = [int(r) for r in rows]
    sample = rows[: max(1, min(probe, len(rows)))]
    result = shap_importance(model, task, sample[:1], **options)  # warm-up
    # The quicker of two: a one-row call is short enough for a moment's load on the machine to double it.
    one = min(_timed(shap_importance, model, task, sample[-1:], **options) for _ in range(2))
    several = _timed(shap_importance, model, task, sample, **options)
    while (several - one < MIN_PROBE_SECONDS and len(sample) < len(rows)
           and several / len(sample) * len(rows) >= QUICK_SECONDS):
        sample = rows[: min(len(rows), 4 * len(sample))]  # four times: each call pays the set-up again
        several = _timed(shap_importance, model, task, sample, **options)
    if len(sample) > 1:
        # The quicker of two here too: a stall of a few seconds during the probe was multiplied by every row
        # (a 22 s run announced at 17 minutes, benchmarks/results/estimates.md); one more probe call prevents it.
        several = min(several, _timed(shap_importance, model, task, sample, **options))
        per_row = max((several - one) / (len(sample) - 1), several / len(sample) / 10)
        fixed = max(one - per_row, 0.0)
    else:
        per_row, fixed = one, 0.0
    method = "TreeSHAP" if result.explainer.startswith("tree") else "KernelSHAP"
    columns = len(result.column_names)
    detail = f"{columns} one-hot columns" if columns > len(task.features) else f"{columns} columns"
    return RunEstimate(per_row, len(rows), method, detail, len(sample), fixed)


def _timed(run, *args, **options) -> float:
    started = time.perf_counter()
    run(*args, **options)
    return time.perf_counter() - started


def estimate_lime(model: FittedModel, task: TaskSpec, rows: Sequence[int], *, num_samples: int = 5000, seed: int = 0) -> RunEstimate:
    """Time :func:`lime_importance` on the first of the rows and extrapolate to all of them."""
    rows = [int(r) for r in rows]
    started = time.perf_counter()
    lime_importance(model, task, rows[:1], num_samples=num_samples, seed=seed)
    return RunEstimate(time.perf_counter() - started, len(rows), "LIME", f"{num_samples:,} samples each", 1)
