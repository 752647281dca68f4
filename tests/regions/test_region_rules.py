"""Rule-defined regions: one check at the boundary, exact masks, and a RegionalResult that carries its rule."""

from __future__ import annotations

import json

import numpy as np
import pytest

import flex_core as fc
from flex_core.importance import check_rule, rule_mask, rule_text
from flex_core.importance._rules import parse_condition
from tests.regions.planted_regions import explainer, red_region_task


@pytest.fixture(scope="module")
def red():
    return explainer(red_region_task())


@pytest.fixture(scope="module")
def accidents_like():
    """An ordinal feature among the others (levels in their order)."""
    import pandas as pd

    frame = pd.DataFrame({
        "age": ["18-30", "31-50", "Over 51", "31-50", "18-30", "Over 51"],
        "zone": ["rural", "urban", "rural", "urban", "rural", "urban"],
        "speed": [30.0, 70.0, 80.0, 90.0, 50.0, 65.5],
        "y": ["bad", "good", "bad", "good", "bad", "bad"],
    })
    return fc.make_task(frame, target="y", undesirable="bad", ordinal_orders={"age": ["18-30", "31-50", "Over 51"]})


def test_texts_become_conditions():
    assert parse_condition("age>=70") == {"feature": "age", "op": ">=", "value": "70"}
    assert parse_condition(" speed < 80 ") == {"feature": "speed", "op": "<", "value": "80"}
    assert parse_condition("zone=rural")["op"] == "="
    with pytest.raises(fc.ConfigError, match=">= and <"):
        parse_condition("age>70")
    with pytest.raises(fc.ConfigError, match="FEATURE>=VALUE"):
        parse_condition("age")


def test_check_rule_gives_one_canonical_form(accidents_like):
    rule = check_rule(accidents_like, ["speed=60..80", "zone=rural|urban", {"feature": "age", "op": ">=", "value": "31-50"}])
    assert rule == (
        {"feature": "speed", "op": "between", "value": [60, 80]},
        {"feature": "zone", "op": "in", "value": ["rural", "urban"]},
        {"feature": "age", "op": ">=", "value": "31-50"},
    )
    # A level that looks like a range is read whole: it is one of the feature's levels.
    assert check_rule(accidents_like, ["age=18-30"]) == ({"feature": "age", "op": "=", "value": "18-30"},)
    assert check_rule(accidents_like, {"feature": "speed", "op": "<", "value": "65.5"})[0]["value"] == 65.5
    # Numbers are read as the app writes them: thousands separated by commas.
    assert check_rule(accidents_like, ["speed=1,000..2,500"])[0]["value"] == [1000, 2500]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (["colour=red"], "Unknown feature 'colour'.*the features are: age, zone, speed"),
        (["zone>=rural"], "categorical.*use = or in"),
        ([{"feature": "zone", "op": "between", "value": ["rural", "urban"]}], "categorical"),
        (["zone=suburb"], "'suburb' is not a level of 'zone'; its levels are: rural, urban"),
        (["speed>=fast"], "'speed' is a number"),
        (["speed>=1,5"], "a comma may only separate thousands"),
        (["speed=80..60"], "low end 80 lies above the high end 60"),
        (["age=Over 51..18-30"], "low end"),
        ([{"feature": "age", "op": "~", "value": 1}], "Unknown op '~'"),
        ([], "at least one condition"),
    ],
)
def test_a_bad_rule_says_what_to_fix(accidents_like, rule, message):
    with pytest.raises(fc.ConfigError, match=message):
        check_rule(accidents_like, rule)


def test_masks_follow_the_ops_both_ends_of_between_included(accidents_like):
    def rows(*conditions):
        return accidents_like.frame.index[rule_mask(accidents_like, check_rule(accidents_like, list(conditions)))].tolist()

    assert rows("speed=65.5..80") == [1, 2, 5]  # 65.5 and 80 both in
    assert rows("speed=70..70") == [1]
    assert rows("speed>=70", "speed<90") == [1, 2]
    assert rows("age>=31-50") == [1, 2, 3, 5]
    assert rows("age<31-50") == [0, 4]
    assert rows("age=18-30..31-50", "zone=rural") == [0, 4]
    assert rows("zone=rural|urban") == list(range(6))
    assert rule_mask(accidents_like, check_rule(accidents_like, ["speed=70"]), [1, 3]).tolist() == [True, False]


def test_rule_text_reads_like_the_issue(accidents_like):
    rule = check_rule(accidents_like, ["speed=70..80", "zone=rural", "age>=31-50", "speed<90", "age=18-30..31-50"])
    assert rule_text(rule) == "speed 70–80 and zone = rural and age ≥ 31-50 and speed < 90 and age from 18-30 to 31-50"
    assert rule_text(rule[:2], {"zone": "road type"}) == "speed 70–80 and road type = rural"


def test_explain_region_by_rule_takes_the_global_factuals_that_meet_it(red):
    global_result = red.explain_global(n_factuals=300)
    region = red.explain_region(rule=["colour=red"], global_result=global_result)
    frame = red.task.frame
    expected = [r for r in global_result.query_index if frame.loc[r, "colour"] == "red"]
    assert list(region.members) == expected and region.query is None and region.distances == ()
    assert region.rule == ({"feature": "colour", "op": "=", "value": "red"},) and region.rule_text == "Colour = red"
    f = dict(zip(region.feature_names, region.importance.frequency_mean))
    assert f["c"] == 1.0 and f["a"] == 0.0 and f["b"] == 0.0  # a red factual can only flip c
    assert region.pearson_r < 0.5 and region.importance.config["rule"] == [dict(c) for c in region.rule]
    # Compared with global like a Hamming region: the same global F, mode shift and quadrants.
    np.testing.assert_array_equal(region.global_frequency, global_result.frequency_mean)
    assert len(region.mode_shift) == len(region.feature_names)


def test_rule_region_json_round_trip_carries_the_rule(red):
    region = red.explain_region(rule=["colour=red", "x=0..50"], n_factuals=200)
    out = region.to_dict()
    assert out["rule"] == [{"feature": "colour", "op": "=", "value": "red"}, {"feature": "x", "op": "between", "value": [0, 50]}]
    assert out["rule_text"] == "Colour = red and X 0–50" and out["query"] is None and out["distances"] == []
    back = fc.RegionalResult.from_dict(json.loads(json.dumps(out)))
    assert back.rule == region.rule and back.query is None
    assert back.to_dict() == json.loads(json.dumps(out))


def test_hamming_regions_are_unchanged(red):
    region = red.explain_region(where="colour=red", k=3, n_factuals=100)
    assert region.rule is None and region.query is not None and "rule" not in region.to_dict()


def test_rule_with_a_query_or_no_factual_is_refused_before_generation(red, monkeypatch):
    monkeypatch.setattr(red.store, "_generate", lambda *a, **k: pytest.fail("generated before the rule was checked"))
    with pytest.raises(fc.ConfigError, match="either rule, or query"):
        red.explain_region(rule=["colour=red"], where="colour=red")
    with pytest.raises(fc.ConfigError, match="No factual.*meets X ≥ 1,000; widen the rule"):
        red.explain_region(rule=["x>=1000"])
    with pytest.raises(fc.ConfigError, match="Unknown feature 'zone'"):
        red.explain_region(rule=["zone=rural"])


def test_a_rule_no_sampled_factual_meets_says_how_many_exist(red):
    global_result = red.explain_global(n_factuals=20)
    rare = check_rule(red.task, ["x<1"])
    meeting = int(rule_mask(red.task, rare, red.store.factual_rows).sum())
    assert meeting > 0 and not rule_mask(red.task, rare, global_result.query_index).any()
    with pytest.raises(fc.ConfigError, match=f"None of the 20 sampled cases meets X < 1 \\({meeting:,} of all"):
        red.explain_region(rule=rare, global_result=global_result)


def test_on_request_scores_work_on_a_rule_region():
    ex = explainer(red_region_task(n=400))
    region = ex.explain_region(rule=["colour=red"], n_factuals=100, generators=["batch-plausible"], sufficiency=True)
    sensitivity = region.importance.generator_sensitivity
    default = fc.counterfactuals.DEFAULT_GENERATOR
    assert sensitivity["generators"] == [default, "batch-plausible"] and set(sensitivity["regional"]["r"]) == {default, "batch-plausible"}
    assert region.importance.flip_alone is not None and region.rule is not None


def test_a_condition_is_a_value_a_front_end_keeps_and_the_runs_take(accidents_like, red):
    """Issue 34 item 4: a region's rule and criterion cross to the explainer as values, not "f=v" text or JSON."""
    Condition = fc.importance.Condition
    between = Condition("speed", "between", [60, 80])
    assert between == Condition.of({"feature": "speed", "op": "between", "value": (60, 80)})  # equal fields, equal
    assert hash(between) == hash(Condition("speed", "between", (60, 80))) and between.value == (60, 80)
    assert between != {"feature": "speed", "op": "between", "value": [60, 80]}  # a value, not any mapping
    assert between.as_dict() == {"feature": "speed", "op": "between", "value": [60, 80]}  # as JSON holds it
    assert json.loads(json.dumps(between.as_dict())) == between.as_dict()
    assert str(Condition.criterion("zone", "rural")) == "zone = rural"
    # check_rule takes Conditions as it takes dicts, to the same canonical form.
    assert check_rule(accidents_like, [between, Condition("age", ">=", "31-50")]) == check_rule(
        accidents_like, [{"feature": "speed", "op": "between", "value": [60, 80]}, "age>=31-50"])
    # The explainer takes a criterion and a rule as Conditions: the same regions as from text.
    level = red.task.feature(red.task.categorical_names[0])
    name, value = level.name, level.categories[0]
    as_text = red.explain_region(where=f"{name}={value}", k=3, n_factuals=30)
    as_value = red.explain_region(where=Condition.criterion(name, value), k=3, n_factuals=30)
    assert as_value.members == as_text.members and as_value.criterion == as_text.criterion
    assert red.region_members(as_text.query, k=3, where=Condition.criterion(name, value)) == list(as_text.members)
    ruled = red.explain_region(rule=(Condition(name, "=", value),), n_factuals=30)
    assert ruled.members == red.explain_region(rule=[f"{name}={value}"], n_factuals=30).members
    with pytest.raises(fc.ConfigError, match="where takes one feature = value criterion"):
        red.explain_region(where=Condition(name, "in", (value,)), k=3, n_factuals=30)
