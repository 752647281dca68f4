"""Side-by-side rankings in the paper's table format (Tables 1 and 3)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._errors import ConfigError
from .._results import importance_rank

__all__ = ["format_rank_cell", "ranking_table"]


def format_rank_cell(rank: int | str, mean: float, std: float | None = None, *, decimals: int = 2) -> str:
    """The paper's table cell: ``"1 (0.34 ± 0.24)"``, or ``"3 (0.0224)"`` without a std.

    ``rank`` may be a text such as ``"4–7"`` (a rank interval).
    """
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "–"
    shown = f"{mean:.{decimals}f}"
    if float(shown) == 0:
        shown = shown.lstrip("-")  # a tiny negative mean (a shuffle that helped by chance) reads 0, not -0
    if std is None or (isinstance(std, float) and math.isnan(std)):
        return f"{rank} ({shown})"
    return f"{rank} ({shown} ± {std:.{decimals}f})"


def ranking_table(
    labels: Sequence[str],
    scores: Mapping[str, np.ndarray],
    *,
    stds: Mapping[str, np.ndarray] | None = None,
    decimals: Mapping[str, int] | None = None,
    include: np.ndarray | Sequence[bool] | None = None,
    rank_intervals: Mapping[str, np.ndarray] | None = None,
) -> pd.DataFrame:
    """Side-by-side rankings in the paper's format (Tables 1 and 3).

    Parameters
    ----------
    labels : sequence of str, length n_features
    scores : mapping method -> ndarray of shape (n_features,)
        Importances; each method is ranked on its own (1 = most important, ties share
        the best rank).
    stds : mapping method -> ndarray of shape (n_features,), optional
        Shown as "± std" for the methods that have one (FLEX).
    decimals : mapping method -> int, optional (default 2)
    include : bool ndarray of shape (n_features,), optional
        Features to rank and show (e.g. the mutable ones, as in the paper's tables).
    rank_intervals : mapping method -> ndarray of shape (n_features, 2), optional
        [best, worst] rank of each feature (``FlexResult.rank_interval``); where
        they differ the cell shows the range, e.g. ``"4–7 (0.05 ± 0.03)"``. Ranks of the
        features left out by ``include`` must not affect them (true for FLEX's mutable features,
        since an immutable feature that never changes has the interval [0, 0]).

    Returns
    -------
    DataFrame indexed by feature label, one text column per method, rows ordered by
    the first method's rank.
    """
    labels = list(labels)
    keep = np.ones(len(labels), bool) if include is None else np.asarray(include, dtype=bool)
    if not scores:
        raise ConfigError("A ranking table needs at least one method.")
    stds, decimals = dict(stds or {}), dict(decimals or {})
    columns, first_rank = {}, None
    for method, values in scores.items():
        values = np.asarray(values, dtype=float)
        if len(values) != len(labels):
            raise ConfigError(f"{method}: {len(values)} scores for {len(labels)} features.")
        ranks = importance_rank(values[keep])
        spread = None if method not in stds else np.asarray(stds[method], dtype=float)[keep]
        intervals = (rank_intervals or {}).get(method)
        rank_texts = [str(int(r)) for r in ranks]
        if intervals is not None:
            intervals = np.asarray(intervals, dtype=float)[keep]
            rank_texts = [
                text if np.isnan(lo) or lo == hi else f"{int(lo)}–{int(hi)}"
                for text, (lo, hi) in zip(rank_texts, intervals)
            ]
        columns[method] = [
            format_rank_cell(
                rank_texts[i], float(v), None if spread is None else float(spread[i]), decimals=decimals.get(method, 2)
            )
            for i, v in enumerate(values[keep])
        ]
        if first_rank is None:
            first_rank = ranks
    kept_labels = [label for label, ok in zip(labels, keep) if ok]
    frame = pd.DataFrame(columns, index=pd.Index(kept_labels, name="feature"))
    assert first_rank is not None  # scores is not empty
    order = np.lexsort((np.arange(len(kept_labels)), first_rank))
    return frame.iloc[order]
