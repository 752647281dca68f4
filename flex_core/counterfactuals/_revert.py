"""Reverting one feature of a counterfactual to the factual's value, scored in one batched model call.

Shared by everything that asks "does this counterfactual still work without that change?":
FLEX's necessary-change frequency and the minimal-magnitude refinement.
"""

from __future__ import annotations

import numpy as np

from ..data import TaskSpec
from ..models import FittedModel
from ._set import CounterfactualSet, decode_rows
from ._validity import Validity

__all__ = ["revert_single_features", "necessary_changes"]


def revert_single_features(
    task: TaskSpec, model: FittedModel, factuals: np.ndarray, counterfactuals: np.ndarray, cells: np.ndarray,
    validity: Validity | None = None,
) -> np.ndarray:
    """Whether each counterfactual stays desirable with one feature set back to the factual's value.

    Every requested (counterfactual, feature) revert is one row of a single ``predict_proba`` call.

    Parameters
    ----------
    task : TaskSpec the codes belong to
    model : FittedModel
    factuals : ndarray of shape (n_queries, n_features), codes
    counterfactuals : ndarray of shape (n_queries, n_cf, n_features), codes
    cells : bool ndarray of shape (n_queries, n_cf, n_features)
        The reverts to score: cell (i, c, j) reverts feature j of counterfactual c of query i.
    validity : Validity, optional
        What "still desirable" means (default :class:`~._validity.Validity` on the data's ranges).

    Returns
    -------
    still_desirable : bool ndarray of shape (n_queries, n_cf, n_features)
        True where the reverted counterfactual is still predicted desirable; False outside ``cells``.
    """
    cells = np.asarray(cells, dtype=bool)
    out = np.zeros(cells.shape, dtype=bool)
    query, slot, feature = np.nonzero(cells)
    if len(query) == 0:
        return out
    rows = counterfactuals[query, slot].copy()
    rows[np.arange(len(rows)), feature] = factuals[query, feature]
    validity = Validity().on(task) if validity is None else validity

    def p_undesirable(codes):
        return model.p_off_goal(decode_rows(task, codes))

    out[query, slot, feature] = validity.check(p_undesirable, rows, factuals[query])
    return out


def necessary_changes(cfset: CounterfactualSet, task: TaskSpec, model: FittedModel, validity: Validity | None = None) -> np.ndarray:
    """Which changes of each valid counterfactual are necessary: reverting that change alone breaks it.

    A cell is necessary when the counterfactual is valid, feature j differs from the
    factual's value, and setting j back to the factual's value (all else kept) makes
    the model predict the undesirable outcome again. An unchanged feature is never
    necessary. The answer does not depend on τ, so callers compute it once per set.

    Returns
    -------
    necessary : bool ndarray of shape (n_queries, n_cf, n_features)
    """
    with np.errstate(invalid="ignore"):
        differs = cfset.counterfactuals != cfset.factuals[:, None, :]
    cells = differs & ~np.isnan(cfset.counterfactuals) & cfset.valid[:, :, None]
    return cells & ~revert_single_features(task, model, cfset.factuals, cfset.counterfactuals, cells, validity)
