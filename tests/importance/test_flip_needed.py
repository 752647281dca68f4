"""flip_alone and needed on planted models: the truth written down from each rule, and every interval holding it.

x1 is a number in [0, 100], x2 a binary feature, x3 (categorical) and x4 (a number) play no part.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core._uncertainty import INTERVAL_METHOD, wilson_interval
from tests.factories import planted as planted_task


def planted(rule, *, seed=0, n=400):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "x1": rng.uniform(0, 100, n).round(2),
        "x2": rng.choice(["0", "1"], n),
        "x3": rng.choice(["a", "b", "c"], n),
        "x4": rng.uniform(0, 1, n).round(3),
    })
    return planted_task(frame, rule)


def scores(task, model, rows, *, n_cf=4):
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=n_cf, seed=0)
    return fc.importance.necessity_sufficiency(store, rows)


def by_name(result, attribute):
    return dict(zip(result.feature_names, getattr(result, attribute)))


def assert_holds(result, truth: dict[str, tuple[float, float]]):
    """Each feature's (flip_alone, needed) equals the truth, and each interval contains it."""
    for name, (flip, needed) in truth.items():
        j = result.feature_names.index(name)
        assert result.flip_alone[j] == flip, name
        assert result.needed[j] == needed, name
        low, high = result.flip_alone_interval[j]
        assert low <= flip <= high, name
        low, high = result.needed_interval[j]
        assert low <= needed <= high, name


def test_and_rule_each_feature_flips_alone_and_neither_is_needed():
    """Undesirable = (x1 > 60) AND (x2 = 1): lowering x1 alone flips it, so does x2 alone; so neither is needed."""
    task, model = planted(lambda X: (X["x1"].astype(float) > 60) & (X["x2"] == "1"))
    rows = fc.counterfactuals.factual_rows(task, model)[:30]
    result = scores(task, model, rows)
    assert_holds(result, {"x1": (1.0, 0.0), "x2": (1.0, 0.0), "x3": (0.0, 0.0), "x4": (0.0, 0.0)})
    # Kommiya Mothilal et al.'s necessity ratio is capped by the levels: binary x2 has one possible change.
    assert by_name(result, "necessity_ratio")["x2"] <= 1 / 4 + 1e-12
    # Every 'needed' of this rule was answered by a stored counterfactual, without a search.
    assert result.witnessed > 0


def test_or_rule_no_feature_flips_alone_and_both_are_needed():
    """Undesirable = (x1 > 60) OR (x2 = 1), factuals meeting both: both must change, so each is needed."""
    task, model = planted(lambda X: (X["x1"].astype(float) > 60) | (X["x2"] == "1"), seed=1)
    facts = task.frame.loc[fc.counterfactuals.factual_rows(task, model)]
    rows = facts.index[(facts.x1 > 60) & (facts.x2 == "1")][:30]
    result = scores(task, model, rows)
    assert_holds(result, {"x1": (0.0, 1.0), "x2": (0.0, 1.0), "x3": (0.0, 0.0), "x4": (0.0, 0.0)})


def test_shares_are_per_factual_and_the_interval_is_wilson():
    """Half the factuals can be flipped by x2 alone (x1 low), half cannot (x1 high needs x1 too)."""
    task, model = planted(lambda X: ((X["x1"].astype(float) > 60) & (X["x2"] == "1")) | (X["x1"].astype(float) > 80),
                          seed=2)
    facts = task.frame.loc[fc.counterfactuals.factual_rows(task, model)]
    low_x1 = facts.index[(facts.x1 > 60) & (facts.x1 <= 80) & (facts.x2 == "1")][:10]
    high_x1 = facts.index[(facts.x1 > 80) & (facts.x2 == "1")][:10]
    result = scores(task, model, list(low_x1) + list(high_x1))
    j = result.feature_names.index("x2")
    assert result.flip_alone[j] == 0.5
    np.testing.assert_array_equal(result.local_flip_alone[:, j], [1.0] * 10 + [0.0] * 10)
    np.testing.assert_allclose(result.flip_alone_interval[j], wilson_interval(np.array([0.5]), np.array([20]))[0])


def test_the_scores_reach_the_json_and_the_result(synthetic_task, synthetic_model):
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=3, seed=0)
    result = fc.importance.with_extras(fc.importance.run_global(store, n_factuals=8), store, sufficiency=True)
    records = {r["name"]: r for r in json.loads(result.to_json())["features"]}
    keys = {"flip_alone", "flip_alone_interval", "needed", "needed_interval", "necessity_ratio", "sufficiency_ratio"}
    assert keys <= set(records["speed"])
    for name in synthetic_task.immutable_names:
        assert records[name]["flip_alone"] is None and records[name]["needed"] is None
    assert 0 <= records["speed"]["flip_alone"] <= 1
    summary = result.config["necessity_sufficiency"]
    assert summary["interval"]["method"] == INTERVAL_METHOD and summary["search"]["generator"] == "batch"
    back = fc.FlexResult.from_dict(json.loads(result.to_json()))
    np.testing.assert_array_equal(back.flip_alone_interval, result.flip_alone_interval)
    np.testing.assert_array_equal(back.needed, result.needed)


def test_order_of_factuals_does_not_matter():
    task, model = planted(lambda X: (X["x1"].astype(float) > 60) & (X["x2"] == "1"))
    rows = list(fc.counterfactuals.factual_rows(task, model)[:12])
    forward, backward = scores(task, model, rows), scores(task, model, rows[::-1])
    np.testing.assert_array_equal(forward.flip_alone, backward.flip_alone)
    np.testing.assert_array_equal(forward.needed, backward.needed)
    np.testing.assert_array_equal(forward.local_needed, backward.local_needed[::-1])


@pytest.mark.parametrize("rows", [[]])
def test_no_factuals_is_a_config_error(rows):
    task, model = planted(lambda X: X["x1"].astype(float) > 60)
    with pytest.raises(fc.ConfigError, match="at least one factual"):
        scores(task, model, rows)
