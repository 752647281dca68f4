"""A factual and its counterfactuals as a table in original values, changed cells marked."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data import TaskSpec
from ..models import FittedModel
from ._set import CounterfactualSet, decode_rows

__all__ = ["counterfactual_table"]

#: Below this a continuous difference is float noise, not a change (DiCE's ε).
_CHANGE_EPSILON = 1e-6


def counterfactual_table(task: TaskSpec, model: FittedModel, cfset: CounterfactualSet, row: int):
    """One factual and its counterfactuals, in original values, with the changed cells marked.

    Returns
    -------
    table : DataFrame
        First line ``factual``, then ``counterfactual 1..m`` (the found ones); the feature
        columns, then ``P(undesirable)`` (one batched model call), ``prediction`` and ``valid``.
    changed : DataFrame of bool, same index, feature columns only
        True where a counterfactual differs from the factual (continuous: by more than
        float noise). The factual's own line is all False.
    """
    sub = cfset.subset([int(row)])
    found = sub.found[0]
    codes = np.vstack([sub.factuals, sub.counterfactuals[0][found]])
    table = decode_rows(task, codes)
    table.index = ["factual"] + [f"counterfactual {i + 1}" for i in range(int(found.sum()))]
    delta = np.abs(codes - codes[0])
    continuous = np.array([f.is_continuous for f in task.features])
    changed = np.where(continuous, delta > _CHANGE_EPSILON, delta != 0)
    changed = pd.DataFrame(changed, index=table.index, columns=task.feature_names)
    probability = model.predict_proba(table[task.feature_names])[:, 1]
    # Integer features are stored as floats in the code space; show them as integers again.
    for f in task.features:
        if f.is_continuous and f.integer:
            table[f.name] = table[f.name].round().astype("Int64")
    undesirable = ", ".join(str(v) for v in task.undesirable)
    table["P(undesirable)"] = probability
    table["prediction"] = np.where(probability > 0.5, undesirable, "not " + undesirable)
    table["valid"] = [False] + [bool(v) for v in sub.valid[0][found]]
    return table, changed


