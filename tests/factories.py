"""Builders shared by the tests: hand-made counterfactual sets."""

from __future__ import annotations

import numpy as np
import pandas as pd

import flex_core as fc


def make_set(task, factual_rows, cf_rows, n_cf):
    """A CounterfactualSet from frames: cf_rows[i] is the list of query i's counterfactuals (all valid)."""
    n_f = len(task.features)
    cfs = np.full((len(factual_rows), n_cf, n_f), np.nan)
    found = np.zeros((len(factual_rows), n_cf), bool)
    for i, rows in enumerate(cf_rows):
        if rows:
            cfs[i, : len(rows)] = fc.counterfactuals.encode_rows(task, pd.DataFrame(rows, columns=task.feature_names))
            found[i, : len(rows)] = True
    factuals = task.frame.loc[factual_rows, task.feature_names]
    return fc.counterfactuals.CounterfactualSet(
        tuple(task.feature_names), np.array(factual_rows), fc.counterfactuals.encode_rows(task, factuals), cfs, found, found.copy(), "hand", 0.0
    )


def noise_frame(n: int = 600, *, minority: float = 0.15, seed: int = 0) -> pd.DataFrame:
    """Features unrelated to an imbalanced outcome: no model can beat always predicting the majority."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x1": rng.normal(size=n).round(3),
            "x2": rng.integers(0, 50, n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "outcome": np.where(rng.random(n) < minority, "bad", "good"),
        }
    )
