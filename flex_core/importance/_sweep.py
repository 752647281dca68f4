"""τ sweeps: FLEX recomputed over a grid of thresholds from stored counterfactuals."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._errors import ConfigError
from .._typing import Numbers
from ..counterfactuals import CounterfactualSet
from ..data import TaskSpec
from ._flex import flex_importance

__all__ = ["tau_sweep"]

def tau_sweep(
    cfset: CounterfactualSet,
    task: TaskSpec,
    *,
    ranges: np.ndarray | None = None,
    taus: Numbers | None = None,
) -> pd.DataFrame:
    """F_j of every continuous feature against τ, from stored counterfactuals only.

    Returns
    -------
    DataFrame with columns ``tau``, ``feature``, ``label``, ``frequency_mean``, ``frequency_std``;
    one line per (τ, continuous feature).
    """
    taus = np.round(np.linspace(0.0, 1.0, 21), 4) if taus is None else np.asarray(taus, dtype=float)
    if np.any(taus < 0):
        raise ConfigError("τ values in a sweep must be >= 0.")
    continuous = [j for j, f in enumerate(task.features) if f.is_continuous]
    records = []
    for tau in taus:
        result = flex_importance(cfset, task, tau=float(tau), ranges=ranges, level="global", intervals=False)
        for j in continuous:
            records.append(
                {
                    "tau": float(tau),
                    "feature": result.feature_names[j],
                    "label": result.display_names[j],
                    "frequency_mean": float(result.frequency_mean[j]),
                    "frequency_std": float(result.frequency_std[j]),
                }
            )
    return pd.DataFrame(records, columns=["tau", "feature", "label", "frequency_mean", "frequency_std"])


