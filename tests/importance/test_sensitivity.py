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
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=4, seed=0)
    result = fc.importance.with_extras(fc.importance.run_global(store, n_factuals=40, tau=0.0), store, tau=0.0, generators=["dice-random"])
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
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=3,
                                   seed=0)
    base = fc.importance.run_global(store, n_factuals=20)
    regional = fc.importance.run_regional(store, base, query=int(base.query_index[0]), k=4, generators=["batch-plausible"])
    part = regional.importance.generator_sensitivity["regional"]
    assert set(part["r"]) == {"batch", "batch-plausible"}
    assert part["r"]["batch"] == pytest.approx(regional.pearson_r, nan_ok=True)
    assert isinstance(part["r_intervals_overlap"], (bool, type(None)))
    assert len(part["features"]) == sum(not f.immutable for f in synthetic_task.features)


def test_only_the_own_generator_is_refused(synthetic_task, synthetic_model):
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=3,
                                   seed=0)
    base = fc.importance.run_global(store, n_factuals=5)
    with pytest.raises(fc.ConfigError, match="other than 'batch'"):
        fc.importance.generator_sensitivity(store, base, ["batch"])
    assert np.isnan(base.frequency_ci).sum() == 0


# -- verdicts and rank changes (issue 32 item 5) --------------------------------------------------
def test_verdicts_by_hand():
    from flex_core.importance._sensitivity import verdict

    assert verdict(np.array([[0.1, 0.3], [0.4, 0.6]]), span=1.0) == "depends"  # separate
    assert verdict(np.array([[0.1, 0.3], [0.3, 0.5]]), span=1.0) == "same"  # touch at 0.3, both 0.2 wide
    assert verdict(np.array([[0.0, 0.51], [0.2, 0.3]]), span=1.0) == "cannot tell"  # one wider than 0.5
    assert verdict(np.array([[-1.0, 1.0], [0.5, 0.9]]), span=2.0) == "cannot tell"  # r with five factuals
    assert verdict(np.array([[0.0, 1.0], [0.5, 0.9]]), span=2.0) == "same"  # r: exactly 1 wide is not "most"
    assert verdict(np.array([[np.nan, 0.3], [0.4, 0.6]]), span=1.0) is None


def test_rank_changes_by_hand(synthetic_task):
    from types import SimpleNamespace

    from flex_core.importance._sensitivity import rank_changes

    names = ("a", "b", "c", "d", "e")
    def result(f):
        return SimpleNamespace(feature_names=names, immutable=(False, False, False, False, True),
                               frequency_mean=np.array(f, dtype=float))
    own = result([0.9, 0.5, 0.3, 0.1, 0.99])  # e is immutable: never ranked
    other = result([0.2, 0.6, 0.4, 0.8, 0.0])  # top 3: d, b, c
    same = result([0.8, 0.4, 0.2, 0.0, 0.0])
    ranks = rank_changes({"x": own, "y": other, "z": same}, ["x", "y", "z"])
    assert ranks["k"] == 3 and ranks["top"]["x"] == ["a", "b", "c"] and ranks["top"]["y"] == ["d", "b", "c"]
    assert ranks["top_overlap"] == {"y": pytest.approx(2 / 3), "z": 1.0}
    assert ranks["top_feature_same"] == {"y": False, "z": True}
    # ranks of own (a..d): 4, 3, 2, 1; of other: 1, 3, 2, 4: d = (9, 0, 0, 9), rho = 1 - 6 * 18 / (4 * 15) = -0.8
    assert ranks["spearman"]["y"] == pytest.approx(-0.8) and ranks["spearman"]["z"] == pytest.approx(1.0)


def test_a_generator_that_counts_a_passenger_depends_and_the_ranks_say_so(or_model):
    """The rule coded as a model: dice-random (unrefined) changes x4, the batch generator never does."""
    task, model = or_model
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=4, seed=0)
    sensitivity = fc.importance.with_extras(fc.importance.run_global(store, n_factuals=40, tau=0.0), store, tau=0.0, generators=["dice-random"]).generator_sensitivity
    x4 = next(f for f in sensitivity["features"] if f["name"] == "x4")
    assert x4["verdict"] == "depends"
    ranks = sensitivity["ranks"]
    assert ranks["k"] == 3 and "x4" in ranks["top"]["dice-random"] and "x4" not in ranks["top"]["batch"]
    assert ranks["top_overlap"]["dice-random"] < 1
    assert "verdict_rule" in sensitivity


def test_five_members_cannot_tell(synthetic_task, synthetic_model):
    """A region of five: r's intervals span most of [-1, 1], so the verdict is "cannot tell", never "same"."""
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=3,
                                   seed=0)
    base = fc.importance.run_global(store, n_factuals=20)
    regional = fc.importance.run_regional(store, base, query=int(base.query_index[0]), k=4, generators=["batch-plausible"])
    part = regional.importance.generator_sensitivity["regional"]
    widths = [high - low for low, high in part["r_interval"].values() if low is not None]
    assert max(widths) > 1 and part["r_verdict"] in ("cannot tell", "depends")
    if part["r_intervals_overlap"]:
        assert part["r_verdict"] == "cannot tell"


def test_on_the_learned_forest_the_rules_features_lead_under_both_generators():
    """The planted forest: batch and batch-plausible agree on the top two (speed and road), noise features are
    never "depends"."""
    from tests.planted_learned import NOISE_FEATURES, planted_forest, planted_task

    task = planted_task(seed=0)
    store = fc.counterfactuals.CounterfactualStore(task, planted_forest(task, 0), fc.counterfactuals.make_generator("batch"), n_cf=5,
                                   seed=0)
    sensitivity = fc.importance.with_extras(fc.importance.run_global(store, n_factuals=60), store, generators=["batch-plausible"]).generator_sensitivity
    ranks = sensitivity["ranks"]
    assert set(ranks["top"]["batch"][:2]) == set(ranks["top"]["batch-plausible"][:2]) == {"speed", "road"}
    for feature in sensitivity["features"]:
        if feature["name"] in NOISE_FEATURES:
            assert feature["verdict"] in ("same", "cannot tell")
