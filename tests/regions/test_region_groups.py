"""What the model asks of each group: the planted costly group is named, with separated intervals; costs by hand."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core._format import format_number
from flex_core.regions import GroupsResult
from flex_core.regions._groups import minimal_costs
from tests.factories import make_set
from tests.regions.planted_regions import costly_group_task, explainer, red_region_task


@pytest.fixture(scope="module")
def costly():
    return explainer(costly_group_task())


@pytest.fixture(scope="module")
def by_zone(costly):
    return costly.compare_groups("zone", n_factuals=1000)


def test_the_group_planted_to_need_larger_changes_is_named_with_separated_intervals(by_zone):
    country, town = by_zone.group("country"), by_zone.group("town")
    # Planted: a median change of 0.40 of x's range in the country, 0.25 in town.
    assert country.cost_median == pytest.approx(0.40, abs=0.05) and town.cost_median == pytest.approx(0.25, abs=0.05)
    assert country.cost_interval[0] > town.cost_interval[1]  # the intervals separate
    cost = next(d for d in by_zone.differences if d["measure"] == "cost_median")
    assert (cost["higher"], cost["lower"]) == ("country", "town")
    low, high = cost["difference_interval"]
    assert 0 < low <= cost["difference"] <= high
    sentence = by_zone.verdict[0]
    assert sentence.startswith(f"Cases with Zone = country need a larger change than those with Zone = town: "
                               f"{cost['difference']:.2f} more features changed, a number counting the share of its range")
    assert f"95% interval of the difference {low:.2f}–{high:.2f}" in sentence
    # Both zones always have a way out (x may go down to 0): no difference is named there.
    assert by_zone.group("country").flip_share == 1.0 == by_zone.group("town").flip_share
    assert not any(d["measure"] == "flip_share" for d in by_zone.differences)
    assert any("Every case in every group has a way out" in s for s in by_zone.verdict)


def test_groups_that_ask_the_same_are_not_told_apart(costly):
    result = costly.compare_groups("colour", n_factuals=1000)
    assert not any(d["measure"] == "cost_median" for d in result.differences)
    assert "needs a clearly larger change" in result.verdict[0] and "overlap" in result.verdict[0]


def test_each_group_reports_counts_shares_and_f_with_intervals(by_zone):
    for group in by_zone.groups:
        assert group.factuals == len(group.members) and group.with_counterfactual <= group.factuals
        low, high = group.flip_share_interval
        assert low <= group.flip_share <= high
        assert group.cost_interval[0] <= group.cost_median <= group.cost_interval[1]
        assert group.rule == ({"feature": "zone", "op": "=", "value": group.value},)
        f = dict(zip(by_zone.feature_names, group.frequency))
        # x is the only way out (changes of it under τ = 0.1 of its range do not count); zone is immutable.
        assert f["x"] == max(f.values()) and f["x"] > 0.8 and f["zone"] == 0.0
        assert (group.frequency_ci[:, 0] <= group.frequency + 1e-12).all()
    assert sum(g.factuals for g in by_zone.groups) == len(set().union(*(g.members for g in by_zone.groups)))


def test_a_number_is_grouped_by_quantile_bins_with_edges_stated(costly):
    result = costly.compare_groups("z", bins=4, n_factuals=400)
    assert len(result.groups) == 4
    edges = [g.rule[0]["value"] for g in result.groups]
    assert all(g.rule[0]["op"] == "between" for g in result.groups)
    assert all(a[1] < b[0] for a, b in zip(edges, edges[1:]))  # consecutive, no overlap
    assert result.groups[0].value == f"{format_number(edges[0][0])}–{format_number(edges[0][1])}"
    assert sum(g.factuals for g in result.groups) == 400


def test_minimal_cost_by_hand():
    frame = pd.DataFrame({"x": [0.0, 100.0, 40.0], "colour": ["red", "green", "red"], "level": ["low", "mid", "high"],
                          "y": ["bad", "good", "bad"]})
    task = fc.make_task(frame, target="y", undesirable="bad", ordinal_orders={"level": ["low", "mid", "high"]})
    cfset = make_set(task, [0, 2], [
        # Row 0: x +30 (0.30) and colour changed (1) = 1.30; level low -> high (2/2 = 1) = 1.00: the nearest is 1.00.
        [{"x": 30.0, "colour": "green", "level": "low"}, {"x": 0.0, "colour": "red", "level": "high"}],
        [],  # row 2: no counterfactual
    ], n_cf=2)
    costs = minimal_costs(cfset, task, task.ranges())
    assert costs[0] == pytest.approx(1.0) and np.isnan(costs[1])


def test_json_round_trip_and_shape(by_zone):
    out = by_zone.to_dict()
    assert out["level"] == "groups" and out["by"] == "zone"
    assert {"generator", "model", "config", "notes", "versions", "verdict"} <= set(out)
    group = out["groups"][0]
    assert {"value", "factuals", "flip_share", "flip_share_interval", "cost_median", "cost_interval", "features"} <= set(group)
    assert {"name", "frequency", "frequency_ci"} <= set(group["features"][0])
    assert out["config"]["groups"]["cost"].startswith("distance from a factual to its nearest valid counterfactual")
    text = json.dumps(out)
    back = GroupsResult.from_dict(json.loads(text))
    assert json.dumps(back.to_dict()) == text
    assert list(by_zone.to_frame()["value"]) == [g.value for g in by_zone.groups]
    assert len(by_zone.frequency_frame()) == len(by_zone.groups) * len(by_zone.feature_names)


def test_an_unknown_feature_is_refused_before_generation(costly, monkeypatch):
    monkeypatch.setattr(costly.store, "_generate", lambda *a, **k: pytest.fail("generated before the feature was checked"))
    with pytest.raises(fc.ConfigError, match="Unknown feature 'age' to group by; the features are: x, zone"):
        costly.compare_groups("age")


def test_fewer_ways_out_in_a_group_is_named():
    # In the red-region task a red factual needs c, any other a or b; forbid changing c and red factuals have none.
    task, model = red_region_task(n=600, seed=1)
    ex = fc.FlexExplainer.from_task(task.with_overrides(immutable=["colour", "c"]), model, n_cf=4)
    result = ex.compare_groups("colour", n_factuals=400)
    assert result.group("red").flip_share == 0.0 and np.isnan(result.group("red").cost_median)
    share = next(d for d in result.differences if d["measure"] == "flip_share")
    assert share["lower"] == "red" and share["higher"] in ("green", "blue")
    assert any(s.startswith("Fewer cases with Colour = red have a way out") for s in result.verdict)


def test_the_feature_sentence_says_shares_of_ways_out_by_hand():
    """Two groups of zone; x is changed by 80% of town's ways out (interval 70–88%) and 10% of country's (4–20%):
    separated, so named in shares of ways out, not in the paper's F; y's intervals overlap and stay unnamed."""
    from types import SimpleNamespace

    from flex_core.regions._groups import Group, _feature_verdict

    by = fc.data.Feature("zone", "categorical", categories=("country", "town"))

    def group(value, f, ci):
        return Group(value=value, rule=({"feature": "zone", "op": "=", "value": value},), factuals=50,
                     with_counterfactual=50, flip_share=1.0, flip_share_interval=(0.93, 1.0), cost_median=0.2,
                     cost_interval=(0.1, 0.3), frequency=np.array(f), frequency_ci=np.array(ci), members=())

    groups = [group("town", [0.8, 0.3], [[0.70, 0.88], [0.2, 0.4]]),
              group("country", [0.1, 0.25], [[0.04, 0.20], [0.15, 0.38]])]
    result = SimpleNamespace(feature_names=["x", "y"], display_names=["X", "Y"], immutable=np.array([False, False]))
    sentences, differences = [], []
    _feature_verdict(by, groups, result, sentences, differences)
    assert sentences == ["X must change more often with Zone = town than with Zone = country: in 80% of their ways "
                         "out against 10% (95% intervals 70%–88% and 4%–20%); the largest separated gap."]
    assert [(d["feature"], d["higher"], d["lower"]) for d in differences] == [("x", "town", "country")]
    groups[1].frequency_ci[0] = [0.04, 0.75]  # now overlapping
    sentences = []
    _feature_verdict(by, groups, result, sentences, [])
    assert sentences == ["The features that must change do not differ clearly between groups of Zone (every feature's "
                         "intervals overlap)."]
