"""Planted data for a *learned* model: a two-feature rule, four pure-noise features, 3% label noise.

The truth, by construction (``planted_frame``):

- undesirable ("bad") exactly when ``speed > 60`` and ``road == "rural"``, before label noise;
- ``temp`` (continuous), ``age`` (integer), ``colour`` (nominal, five levels) and ``weekday`` (ordinal,
  Mon < ... < Sun) are drawn independently of everything else: pure noise;
- 3% of the labels are flipped at random (``LABEL_NOISE``).

So every undesirable case has exactly two minimal ways out under the rule: speed down to 60, or the road
to urban, and no way out involves a noise feature. A random forest trained on it as ``fit_model`` trains
one (``"rf"``: 100 trees, the seed's 80/20 split) learns the rule but also memorises some of the flipped
labels: the knife-edge trade-offs issue 32 describes. Seeds are fixed; ``refits`` gives the same kind of
forest fitted with other seeds, to score counterfactuals under retraining.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import flex_core as fc

#: The rule's threshold on speed: undesirable above it (with a rural road).
SPEED_LIMIT = 60.0
#: Share of labels flipped at random.
LABEL_NOISE = 0.03
#: The features that play no part in the rule.
NOISE_FEATURES = ("temp", "age", "colour", "weekday")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def planted_frame(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """The planted rows (see the module docstring); ``outcome`` is "bad" or "good"."""
    rng = np.random.default_rng(seed)
    speed = rng.uniform(20, 120, n).round(1)
    road = rng.choice(["urban", "rural"], n)
    frame = pd.DataFrame({
        "speed": speed,
        "road": road,
        "temp": rng.normal(15, 8, n).round(1),
        "age": rng.integers(18, 81, n),
        "colour": rng.choice(["red", "green", "blue", "white", "black"], n),
        "weekday": rng.choice(WEEKDAYS, n),
    })
    bad = (speed > SPEED_LIMIT) & (road == "rural")
    flip = rng.random(n) < LABEL_NOISE
    frame["outcome"] = np.where(bad ^ flip, "bad", "good")
    return frame


def planted_task(n: int = 2000, seed: int = 0) -> fc.TaskSpec:
    return fc.make_task(planted_frame(n, seed), target="outcome", undesirable="bad",
                        kinds={"age": "continuous"}, ordinal_orders={"weekday": list(WEEKDAYS)})


def planted_forest(task: fc.TaskSpec, seed: int = 0) -> fc.FittedModel:
    """The random forest ``fit_model`` trains (no cross-validation: only the fitted forest is used)."""
    return fc.models.fit_model(task, model="rf", seed=seed, cv_folds=0)


def rule_undesirable(frame: pd.DataFrame) -> np.ndarray:
    """The planted truth on any rows: speed above the limit on a rural road."""
    return ((frame["speed"].astype(float) > SPEED_LIMIT) & (frame["road"] == "rural")).to_numpy()


def valid_under(models, task: fc.TaskSpec, cfset) -> np.ndarray:
    """Per valid counterfactual of ``cfset`` (in ``np.nonzero(cfset.valid)`` order) and model: still desirable.

    Shape (n_valid, len(models)). Desirable under a refit is its own prediction, P(undesirable) <= 0.5.
    """
    query, slot = np.nonzero(cfset.valid)
    rows = fc.counterfactuals.decode_rows(task, cfset.counterfactuals[query, slot])
    return np.column_stack([m.predict_undesirable(rows) == 0 for m in models]) if len(rows) else np.zeros((0, len(models)), bool)
