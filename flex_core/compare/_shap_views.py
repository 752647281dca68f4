"""What the SHAP views read from a :class:`~flex_core.compare.ShapImportance`: the feature whose values best
explain the spread of another's SHAP values (the dependence plot's colour), and one case's SHAP contributions
set beside the features its counterfactuals change (FLEX), with one sentence on where they agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._errors import ConfigError
from ..data import TaskSpec
from ._shap import ShapImportance

__all__ = ["Interaction", "strongest_interaction", "association", "CaseAgreement", "case_agreement", "MAX_BINS", "MIN_BIN_ROWS"]

#: At most this many bins of the chosen feature's values ...
MAX_BINS = 10
#: ... each of at least this many rows (the chance adjustment of :func:`association` needs rows to spare).
MIN_BIN_ROWS = 20


def association(shap_values: np.ndarray, other: np.ndarray, *, categorical: bool) -> float:
    """How much of the spread of ``shap_values`` ``other`` explains, as a correlation in [0, 1], adjusted for chance.

    The share of the sum of squares ``other`` explains, less what ``df`` parameters explain of pure noise:
    ε² = (SS_explained − df · SS_residual / (n − df − 1)) / SS_total, at least 0, and its square root. A number
    explains by a straight line (SS_explained = r² · SS_total, df = 1: the adjusted r²); levels by their means
    (SS_between, df = levels − 1: the adjusted correlation ratio). Unadjusted, a feature with seven levels
    "explains" about a third of pure noise in 20 rows and would win against every number. 0 when either is
    constant, or when there are too few rows to tell (n ≤ df + 1).
    """
    y = np.asarray(shap_values, dtype=float)
    total = float(((y - y.mean()) ** 2).sum())
    if categorical:
        codes = pd.factorize(pd.Series(other, dtype=object))[0]
        levels = np.unique(codes)
        explained = sum(float((codes == c).sum() * (y[codes == c].mean() - y.mean()) ** 2) for c in levels)
        df = len(levels) - 1
    else:
        x = np.asarray(other, dtype=float)
        spread = float(((x - x.mean()) ** 2).sum())
        df = 1 if spread > 0 else 0
        explained = float(((x - x.mean()) * (y - y.mean())).sum()) ** 2 / spread if spread > 0 else 0.0
    if total <= 0 or df == 0 or len(y) <= df + 1:
        return 0.0
    residual = max(total - explained, 0.0)
    share = (explained - df * residual / (len(y) - df - 1)) / total
    return float(np.sqrt(min(max(share, 0.0), 1.0)))


@dataclass(frozen=True)
class Interaction:
    """The feature SHAP suggests for a dependence plot's colour.

    Attributes
    ----------
    feature : str
        The feature whose SHAP values are plotted.
    strongest : str or None
        The other feature with the largest strength (None when every strength is 0).
    strengths : dict
        Each other feature's strength: the mean over bins of the feature's values of :func:`association`.
    n_bins : int
    """

    feature: str
    strongest: str | None
    strengths: dict
    n_bins: int


def strongest_interaction(shap: ShapImportance, task: TaskSpec, feature: str, *,
                          min_rows: int = MIN_BIN_ROWS) -> Interaction:
    """The other feature that best explains the spread of ``feature``'s SHAP values at like values of ``feature``.

    The explained rows are ordered by ``feature``'s value (levels in their order) and cut into
    ``min(MAX_BINS, n_rows // min_rows)`` (at least 1) consecutive bins of nearly equal size; within a bin ``feature`` barely
    varies, so what is left of its SHAP values' spread is what other features add. Each other feature's strength
    is the mean over the bins of :func:`association` with those SHAP values (a correlation adjusted for chance, so
    a feature with many levels does not win on noise); the largest wins (ties: the first in the data's column
    order). This is the idea of shap's ``approximate_interactions``, with levels and the adjustment added.
    """
    if feature not in shap.feature_names:
        raise ConfigError(f"There is no feature {feature!r}; choose one of {', '.join(shap.feature_names)}.")
    j = shap.feature_names.index(feature)
    frame = task.frame.loc[shap.query_index, list(shap.feature_names)]
    order = np.argsort(_sort_key(frame[feature], task.feature(feature)), kind="stable")
    n_bins = max(1, min(MAX_BINS, len(order) // min_rows))
    bins = np.array_split(order, n_bins)
    strengths = {}
    for name in shap.feature_names:
        if name == feature:
            continue
        categorical = not task.feature(name).is_continuous
        column = frame[name].to_numpy()
        strengths[name] = float(np.mean([association(shap.values[b, j], column[b], categorical=categorical)
                                         for b in bins])) if len(order) else 0.0
    best = max(strengths.values(), default=0.0)
    strongest = next((n for n, s in strengths.items() if s == best), None) if best > 0 else None
    return Interaction(feature, strongest, strengths, n_bins)


def _sort_key(column: pd.Series, spec) -> np.ndarray:
    if spec.is_continuous:
        return column.astype(float).to_numpy()
    return pd.Categorical(column.astype(str), categories=[str(v) for v in spec.levels]).codes


@dataclass(frozen=True)
class CaseAgreement:
    """One case's SHAP contributions beside the features its counterfactuals change.

    Attributes
    ----------
    row : int
    labels : tuple of str
        Display labels of the features.
    immutable : tuple of bool
    contributions : ndarray of shape (n_features,)
        The case's signed SHAP values (positive pushes toward the undesirable outcome).
    frequency : ndarray of shape (n_features,)
        Local FLEX: the share of the case's counterfactuals that change each feature (at τ).
    agree, flex_only, shap_only : tuple of str
        Display labels: the mutable features among SHAP's k largest pushes toward the undesirable outcome that
        its counterfactuals change; changed but not among them; among them but never changed
        (k = the number of features the counterfactuals change).
    sentence : str
    """

    row: int
    labels: tuple
    immutable: tuple
    contributions: np.ndarray
    frequency: np.ndarray
    agree: tuple
    flex_only: tuple
    shap_only: tuple
    sentence: str


def case_agreement(
    labels: Sequence[str],
    contributions: np.ndarray,
    frequency: np.ndarray,
    *,
    immutable: Sequence[bool],
    undesirable: str,
    row: int,
) -> CaseAgreement:
    """Where SHAP and FLEX agree on one case, and where they do not.

    Over the features that may change: FLEX's set is those the case's counterfactuals change (F_j > 0, k of
    them); SHAP's is its k largest positive contributions (pushes toward ``undesirable``; fewer when fewer push
    that way), ties broken by column order. They agree on the features in both.
    """
    contributions, frequency = np.asarray(contributions, float), np.asarray(frequency, float)
    mutable = [j for j in range(len(labels)) if not immutable[j]]
    changed = sorted((j for j in mutable if frequency[j] > 0), key=lambda j: (-frequency[j], j))
    pushes = sorted((j for j in mutable if contributions[j] > 0), key=lambda j: (-contributions[j], j))
    top = pushes[: len(changed)]
    agree = tuple(labels[j] for j in top if j in changed)
    flex_only = tuple(labels[j] for j in changed if j not in top)
    shap_only = tuple(labels[j] for j in top if j not in changed)
    sentence = _sentence(agree, flex_only, shap_only, changed=len(changed), undesirable=undesirable)
    return CaseAgreement(int(row), tuple(labels), tuple(bool(v) for v in immutable), contributions, frequency, agree, flex_only, shap_only, sentence)


def _sentence(agree, flex_only, shap_only, *, changed: int, undesirable: str) -> str:
    pushes = "largest push" if changed == 1 else f"{changed} largest pushes"
    if not changed:
        return "FLEX found no way out for this case, so there is nothing to set beside SHAP."
    parts = []
    if agree:
        parts.append(f"SHAP and FLEX agree on {_words(agree)}: among SHAP's {pushes} toward {undesirable}, and "
                     "changed by this case's ways out")
    else:
        parts.append(f"SHAP and FLEX agree on no feature: none of SHAP's {pushes} toward {undesirable} is changed "
                     "by this case's ways out")
    if flex_only:
        parts.append(f"the ways out also change {_words(flex_only)}, which SHAP does not count among them")
    if shap_only and agree:
        parts.append(f"SHAP's push from {_words(shap_only)} is changed by no way out")
    return "; ".join(parts) + "."


def _words(items) -> str:
    """"A", "A and B", "A, B and C"."""
    items = list(items)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
