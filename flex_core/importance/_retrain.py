"""Does a finding survive retraining? The model refitted K times, F and the counterfactuals scored under each refit.

One fitted forest allows knife-edge trade-offs another fit of the same data does not (Pawelczyk et
al. 2020, predictive multiplicity). :func:`refit_models` refits the model K times on a bootstrap of
its training rows with another seed each (a model FLEX trained: the same pipeline, seed + 1 ... seed
+ K; a user's model: ``sklearn.base.clone`` of it, given the labels); :func:`retrain_stability`
reruns FLEX on the same factuals with each refit (the same generator and settings) and reports

- per feature, F_j under each refit and their range, and a ``stable`` verdict: **every refit's F_j
  lies within the original F_j's 95% interval, widened to at least ± 0.02** (:data:`STABLE_FLOOR`:
  a difference below 0.02, the noise-F target of issue 32, is not read as instability);
- the original counterfactuals' validity under each refit: the share the refit predicts desirable
  (P(undesirable) < 0.5: the refit's own answer, a tie is not valid).

Each refit's factuals are the original factuals it also rejects (under the same factual rule);
the others are counted per refit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np
from sklearn.base import clone

from .._contract import json_number
from .._errors import ConfigError
from .._results import FlexResult
from ..counterfactuals import CounterfactualStore, decode_rows
from ..data import TaskSpec
from ..limits import LIMITS, check
from ..models import FittedModel
from ._flex import DEFAULT_TAU, flex_importance

__all__ = ["MAX_REFITS", "STABLE_FLOOR", "refit_models", "refit_one", "retrain_stability", "stable_verdicts",
           "check_refits"]

#: The most refits one call may ask for (each refit is a full model fit and a counterfactual run): the limits table's.
MAX_REFITS = int(LIMITS["retrain"].high)
#: A refit's F_j within this of the original's is never read as unstable (see the module docstring).
STABLE_FLOOR = 0.02


def check_refits(k) -> int:
    """K as an int in [1, MAX_REFITS] (checked against ``flex_core.limits``), or a one-line ConfigError."""
    k = check("retrain", k, label="the number of refits")
    if k < 1:
        raise ConfigError(f"The number of refits must be a whole number from 1 to {MAX_REFITS} (got {k!r}).")
    return int(k)


def refit_models(task: TaskSpec, model: FittedModel, k: int, *, labelled: bool = True,
                 progress: Callable[[int, int], None] | None = None, cluster: bool = False) -> list[FittedModel]:
    """K refits of ``model``: each on a bootstrap of its training rows (seeded), with its own seed.

    A model FLEX trained is rebuilt as :func:`~flex_core.models.build_pipeline` builds it (seed + i); a user's
    model is ``sklearn.base.clone``-d (its ``random_state`` set to seed + i where it has one). Without labels
    (``labelled=False``: the outcome column holds the model's own predictions) a user's model cannot be refitted.
    ``cluster=True`` fits them on the connected Dask cluster, one task per refit (the task and the model sent to each
    worker once); each refit is seeded by its number, so they are the same models.
    """
    from ..models import MODELS

    k = check_refits(k)
    ours = model.trained_here and model.name in MODELS
    if not ours and not labelled:
        raise ConfigError("The model cannot be refitted: no outcomes (y) were given, so there is nothing to train on "
                          "(pass y to refit it).")
    if cluster:
        from ..counterfactuals._spread import on_cluster

        return on_cluster(refit_one, list(range(1, k + 1)), {"task": task, "model": model, "ours": ours},
                          sizes=[1] * k, progress=progress)
    refits = []
    for i in range(1, k + 1):
        refits.append(refit_one(i, task=task, model=model, ours=ours))
        if progress is not None:
            progress(i, k)
    return refits


def refit_one(i: int, *, task: TaskSpec, model: FittedModel, ours: bool) -> FittedModel:
    """Refit ``i`` of :func:`refit_models` (on bootstrap seed ``model.seed + i``), where it runs."""
    from ..models import build_pipeline

    rng = np.random.default_rng(model.seed + i)
    train = np.asarray(model.train_index)
    rows = train[rng.integers(0, len(train), len(train))]
    X = task.frame.loc[rows, task.feature_names]
    if ours:
        estimator = build_pipeline(task, model=model.name, encoding=model.encoding, seed=model.seed + i)  # type: ignore[arg-type]
        estimator.fit(X, task.model_labels[task.frame.index.get_indexer(rows)])  # as fit_model trained it
    else:
        try:
            estimator = clone(model.pipeline)
            if "random_state" in estimator.get_params():
                estimator.set_params(random_state=model.seed + i)
            estimator.fit(model.estimator_input(X), task.frame.loc[rows, task.target].to_numpy())
        except Exception as exc:  # a user's estimator: its own error, on one line
            raise ConfigError(f"Refitting the model failed: {_first_line(exc)}") from None
    identity = f"{model.identity}-refit{i}" if model.identity else ""
    return replace(model, pipeline=estimator, seed=model.seed + i, train_index=rows, identity=identity, metrics={})


def stable_verdicts(frequency: np.ndarray, interval: np.ndarray, refits: np.ndarray) -> np.ndarray:
    """Per feature: every refit's F_j (``refits``, shape (K, F)) within the original's interval widened to ± floor.

    NaN refit values (a refit with no factual) are ignored; a feature with no refit value is not stable.
    """
    low = np.minimum(interval[:, 0], frequency - STABLE_FLOOR)
    high = np.maximum(interval[:, 1], frequency + STABLE_FLOOR)
    inside = (refits >= low - 1e-12) & (refits <= high + 1e-12)
    known = ~np.isnan(refits)
    return (inside | ~known).all(axis=0) & known.any(axis=0)


def retrain_stability(store: CounterfactualStore, result: FlexResult, k: int, *, labelled: bool = True,
                      tau: float | Mapping[str, float] = DEFAULT_TAU,
                      progress: Callable[[int, int], None] | None = None) -> dict:
    """F and the counterfactuals of ``result`` (from ``store``) under K refits, as plain data (module docstring).

    Returns a dict: ``refits`` (K), ``seeds``, ``rule`` (the stable rule in words), ``floor``, ``validity`` (per
    refit: the share of ``result``'s valid counterfactuals it predicts desirable), ``factuals`` (per refit: how
    many of the factuals it also rejects), and ``features`` (per feature: ``name``, ``frequency`` (the original),
    ``refits`` (F_j per refit), ``range`` ([min, max] over the refits) and ``stable``).
    """
    from ..models import MODELS

    if result.frequency_ci is None:
        raise ConfigError("The result has no intervals for F; compute it with intervals (run_global does).")
    task = store.task
    cfset = store.ensure(result.query_index)
    models = refit_models(task, store.model, k, labelled=labelled, cluster=getattr(store.generator, "backend", "") == "dask",
                          progress=None if progress is None else (lambda i, n: progress(i, 2 * n)))
    query, slot = np.nonzero(cfset.valid)
    rows = decode_rows(task, cfset.counterfactuals[query, slot])
    frequencies, validity, factuals = [], [], []
    for i, refit in enumerate(models, start=1):
        validity.append(float((refit.p_off_goal(rows) < 0.5).mean()) if len(rows) else float("nan"))
        other = CounterfactualStore(task, refit, store.generator, n_cf=store.n_cf, seed=store.seed,
                                    features_to_vary=store.features_to_vary, permitted_range=store.permitted_range,
                                    refine=store.refine)
        kept = np.intersect1d(result.query_index, other.factual_rows)
        factuals.append(int(len(kept)))
        if len(kept):
            scores = flex_importance(other.ensure(kept), task, tau=tau, ranges=store.ranges, intervals=False)
            frequencies.append(scores.frequency_mean)
        else:
            frequencies.append(np.full(len(task.features), np.nan))
        if progress is not None:
            progress(len(models) + i, 2 * len(models))
    per_refit = np.vstack(frequencies)
    stable = stable_verdicts(result.frequency_mean, result.frequency_ci, per_refit)
    features = []
    for j, name in enumerate(task.feature_names):
        values = per_refit[:, j]
        known = values[~np.isnan(values)]
        features.append({
            "name": name,
            "frequency": json_number(result.frequency_mean[j]),
            "refits": [json_number(v) for v in values],
            "range": [json_number(known.min()), json_number(known.max())] if len(known) else [None, None],
            "stable": bool(stable[j]),
        })
    return {
        "refits": len(models),
        "seeds": [m.seed for m in models],
        "rule": (f"stable: every refit's F lies within the original F's 95% interval, widened to at least "
                 f"± {STABLE_FLOOR:g}"),
        "floor": STABLE_FLOOR,
        "how": ("a model FLEX trained: the same pipeline on a bootstrap of its training rows, seed + i"
                if store.model.trained_here and store.model.name in MODELS else "sklearn.base.clone of the model on a bootstrap of the training rows"),
        "validity": [json_number(v) for v in validity],
        "factuals": factuals,
        "features": features,
    }


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
