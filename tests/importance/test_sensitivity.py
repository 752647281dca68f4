"""Generator sensitivity: the same factuals rerun with another generator, each one's F_j and r side by side."""

from __future__ import annotations

import json

import numpy as np
import pytest

import flex_core as fc
from tests.importance.test_flip_needed import planted


@pytest.fixture(scope="module")
def or_model():
    """Desirable when x1 <= 60 and x2 = 0; x4 plays no part, so only DiCE random (unrefined) changes it."""
    return planted(lambda X: (X["x1"].astype(float) > 60) | (X["x2"] == "1"), seed=3)


def test_a_passenger_only_one_generator_counts_is_flagged(or_model):
    task, model = or_model
    store = fc.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=4, seed=0)
    result = fc.run_global(store, n_factuals=40, tau=0.0, generators=["dice-random"])
    sensitivity = result.generator_sensitivity
    assert sensitivity["generators"] == ["batch", "dice-random"]
    assert sensitivity["refine"] == {"batch": "minimal", "dice-random": "none"}
    x4 = next(f for f in sensitivity["features"] if f["name"] == "x4")
    assert x4["frequency"]["batch"] == 0.0 and x4["frequency"]["dice-random"] > 0.2
    assert x4["intervals_overlap"] is False and "x4" in sensitivity["differ"]
    low, high = x4["frequency_ci"]["dice-random"]
    assert low <= x4["frequency"]["dice-random"] <= high
    # Plain data: it travels in the JSON and back.
    back = fc.FlexResult.from_dict(json.loads(result.to_json()))
    assert back.generator_sensitivity == json.loads(json.dumps(sensitivity))


def test_a_region_gets_each_generators_r_against_its_own_global_f(synthetic_task, synthetic_model):
    store = fc.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=3,
                                   seed=0)
    base = fc.run_global(store, n_factuals=20)
    regional = fc.run_regional(store, base, query=int(base.query_index[0]), k=4, generators=["batch-plausible"])
    part = regional.importance.generator_sensitivity["regional"]
    assert set(part["r"]) == {"batch", "batch-plausible"}
    assert part["r"]["batch"] == pytest.approx(regional.pearson_r, nan_ok=True)
    assert isinstance(part["r_intervals_overlap"], (bool, type(None)))
    assert len(part["features"]) == sum(not f.immutable for f in synthetic_task.features)


def test_only_the_own_generator_is_refused(synthetic_task, synthetic_model):
    store = fc.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=3,
                                   seed=0)
    base = fc.run_global(store, n_factuals=5)
    with pytest.raises(fc.ConfigError, match="other than 'batch'"):
        fc.importance.generator_sensitivity(store, base, ["batch"])
    assert np.isnan(base.frequency_ci).sum() == 0
