"""Planted regional data for a *learned* model: the way out depends on an immutable zone, 3% label noise.

Undesirable, before label noise, when ``speed > 60`` in a town and when ``load > 50`` in the country
(``zone`` immutable). A town factual's way out is speed, a country factual's is load: the region
``zone = country`` has other drivers than the whole pool. ``temp``, ``colour`` and ``weekday`` are pure
noise; 3% of the labels are flipped, and a random forest as ``fit_model`` trains it learns the rule and
memorises some of the flips.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import flex_core as fc
from tests.planted_learned import LABEL_NOISE, WEEKDAYS


def zone_frame(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    zone = rng.choice(["town", "country"], n)
    speed = rng.uniform(20, 120, n).round(1)
    load = rng.uniform(0, 100, n).round(1)
    frame = pd.DataFrame({
        "zone": zone, "speed": speed, "load": load,
        "temp": rng.normal(15, 8, n).round(1),
        "colour": rng.choice(["red", "green", "blue", "white", "black"], n),
        "weekday": rng.choice(WEEKDAYS, n),
    })
    bad = np.where(zone == "town", speed > 60, load > 50)
    flip = rng.random(n) < LABEL_NOISE
    frame["outcome"] = np.where(bad ^ flip, "bad", "good")
    return frame


def zone_task(n: int = 4000, seed: int = 0) -> fc.TaskSpec:
    return fc.make_task(zone_frame(n, seed), target="outcome", undesirable="bad", immutable=["zone"],
                        ordinal_orders={"weekday": list(WEEKDAYS)})
