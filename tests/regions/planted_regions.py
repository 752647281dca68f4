"""Planted data for the region tests: models whose regional drivers are written down in advance."""

from __future__ import annotations

import numpy as np
import pandas as pd

import flex_core as fc
from tests.factories import planted


def red_region_task(n: int = 900, seed: int = 0):
    """Undesirable when (colour is not red and a = 1 and b = 1) or (colour is red and c = 1).

    colour is immutable: a red factual can only flip c, any other only a or b. So the region
    ``colour = red`` has F = (a 0, b 0, c 1) against a global F near (1/3, 1/3, 1/3): its drivers
    differ. ``district`` and ``x`` play no part: their regions have the same drivers as global.
    """
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "a": rng.choice(["0", "1"], n, p=[0.3, 0.7]),
        "b": rng.choice(["0", "1"], n, p=[0.3, 0.7]),
        "c": rng.choice(["0", "1"], n),
        "colour": rng.choice(["red", "green", "blue"], n),
        "district": rng.choice(["north", "south", "east"], n),
        "x": rng.uniform(0, 100, n).round(1),
    })

    def rule(X):
        red = X["colour"] == "red"
        return (~red & (X["a"] == "1") & (X["b"] == "1")) | (red & (X["c"] == "1"))

    return planted(frame, rule, immutable=["colour"])


KEYS = tuple("abcdef")


def no_effect_task(n: int = 500, seed: int = 0):
    """Undesirable when all six binary keys are 1: every factual has the same six ways out.

    With n_cf = 2 the generator takes two of them in a seeded random order per factual, so which
    features a factual must change does not depend on anything about it: no region differs.
    """
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({key: rng.choice(["0", "1"], n, p=[0.1, 0.9]) for key in KEYS})
    frame["colour"] = rng.choice(["red", "green", "blue"], n)
    frame["x"] = rng.uniform(0, 100, n).round(1)
    frame["z"] = rng.uniform(0, 1, n).round(3)
    return planted(frame, lambda X: np.logical_and.reduce([X[k] == "1" for k in KEYS]))


def costly_group_task(n: int = 800, seed: int = 0):
    """Undesirable when x > 50 in a town, x > 20 in the country (zone immutable).

    A country factual must bring x down to 20, a town one only to 50: over x uniform on [0, 100]
    the median change is 0.40 of x's range in the country against 0.25 in town.
    """
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "x": rng.uniform(0, 100, n).round(2),
        "zone": rng.choice(["town", "country"], n),
        "colour": rng.choice(["red", "green"], n),
        "z": rng.uniform(0, 1, n).round(3),
    })

    def rule(X):
        x = X["x"].astype(float)
        return np.where(X["zone"] == "country", x > 20, x > 50)

    return planted(frame, rule, immutable=["zone"])


def explainer(task_model, *, n_cf: int = 4, seed: int = 0) -> fc.FlexExplainer:
    task, model = task_model
    return fc.FlexExplainer.from_task(task, model, n_cf=n_cf, seed=seed)
