"""Regions (Hamming neighbours), the mode-shift table, Pearson r and quadrants, and planted drivers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

import flex_core as fc
from flex_core._uncertainty import pearson_interval
from flex_core.importance._region_runs import hamming_distances, select_region
from flex_core.importance._runs import random_query
from tests.factories import make_set
from ui import reporting


@pytest.fixture(scope="module")
def categorical_task():
    frame = pd.DataFrame(
        {
            "a": ["x", "x", "y", "x", "y", "x", "x"],
            "b": ["x", "x", "y", "y", "x", "x", "y"],
            "c": ["x", "y", "y", "x", "x", "x", "y"],
            "s": [0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 10.0],
            "out": ["bad"] * 6 + ["good"],
        }
    )
    return fc.make_task(frame, target="out", undesirable="bad")


def test_hamming_distance_by_hand(categorical_task):
    d = hamming_distances(categorical_task, 0, [1, 2, 3, 4, 5, 6])
    # Categorical mismatches count 1 each; s adds |Δ|/range(s) = |Δ|/10 (row 5: .5, row 6: 1).
    np.testing.assert_allclose(d, [1, 3, 1, 1, 0.5, 1 + 1 + 1])


def test_neighbours_sorted_by_distance_ties_drawn_with_the_seed_and_reported(categorical_task):
    members, distances, criterion, n, ties = select_region(categorical_task, 0, [0, 1, 2, 3, 4, 5], k=3)
    # 5 at .5, then two of the three rows at distance 1 (1, 3, 4), drawn at random
    assert members[:2] == [0, 5] and set(members[2:]) < {1, 3, 4} and len(set(members[2:])) == 2
    np.testing.assert_allclose(distances, [0, 0.5, 1, 1])
    assert criterion is None and n == 5
    assert ties == {"distance": 1.0, "candidates": 3, "drawn": 2}
    # The same seed gives the same region whatever the candidates' order; other seeds draw others.
    again = select_region(categorical_task, 0, [5, 4, 3, 2, 1, 0], k=3)
    assert again[0] == members
    left_out = {({1, 3, 4} - set(select_region(categorical_task, 0, range(6), k=3, seed=s)[0])).pop()
                for s in range(30)}
    assert left_out == {1, 3, 4}  # not decided by row id
    # No draw needed: the k-th distance is unique, or every tied candidate fits.
    assert select_region(categorical_task, 0, range(6), k=1)[4] is None
    assert select_region(categorical_task, 0, range(6), k=4)[4] is None


def test_neighbours_meet_the_criterion(categorical_task):
    members, _, criterion, n, ties = select_region(categorical_task, 0, [0, 1, 2, 3, 4, 5], k=10, where="a=x")
    assert criterion == {"feature": "a", "value": "x"}
    assert members[:2] == [0, 5] and set(members[2:]) == {1, 3} and n == 3  # rows 2 and 4 have a = y
    assert ties is None  # every candidate fits: nothing was drawn
    with pytest.raises(fc.ConfigError, match="not 'y'"):
        select_region(categorical_task, 0, [0, 1, 2], k=2, where="a=y")
    with pytest.raises(fc.ConfigError, match="has no value"):
        select_region(categorical_task, 0, [0, 1], k=1, where="a=z")
    with pytest.raises(fc.ConfigError, match="continuous"):
        select_region(categorical_task, 0, [0, 1], k=1, where="s=0")
    with pytest.raises(fc.ConfigError, match="FEATURE=VALUE"):
        select_region(categorical_task, 0, [0, 1], k=1, where="a")
    with pytest.raises(fc.ConfigError, match="not a factual"):
        select_region(categorical_task, 6, [0, 1], k=1)


def test_mode_shift_by_hand():
    movement = ["Turnover", "Turnover", "Turnover", "Going straight", "Going straight"]
    frame = pd.DataFrame({"move": movement + ["Reversing"], "speed": [1.0] * 5 + [2.0], "y": ["bad"] * 5 + ["ok"]})
    task = fc.make_task(frame, target="y", undesirable="bad", kinds={"speed": "continuous"})
    # 10 counterfactuals: "Turnover" survives in 1 of them.
    cfs = [[("Going straight", 1.0), ("Reversing", 1.0)]] * 4 + [[("Turnover", 1.0), ("Reversing", 1.0)]]
    cfset = make_set(task, [0, 1, 2, 3, 4], cfs, n_cf=2)
    table = {row["name"]: row for row in fc.importance.mode_shift(task, cfset)}
    move = table["move"]
    assert move["mode"] == "Turnover" and move["p_orig"] == pytest.approx(0.6)
    assert move["p_cf"] == pytest.approx(0.1)
    assert move["delta"] == pytest.approx((0.1 - 0.6) / 0.6)  # Eq. 5
    assert move["cf_mode"] == "Reversing"


def test_mode_shift_tie_goes_to_first_level():
    frame = pd.DataFrame({"k": ["b", "a", "b", "a"], "y": ["bad", "bad", "bad", "ok"]})
    task = fc.make_task(frame, target="y", undesirable="bad", kinds={"k": "categorical"})
    cfset = make_set(task, [0, 1], [[("a",)], [("a",)]], n_cf=1)
    row = fc.importance.mode_shift(task, cfset)[0]
    assert row["mode"] == "a" and row["p_orig"] == 0.5 and row["p_cf"] == 1.0 and row["delta"] == 1.0


def test_pearson_matches_scipy_and_quadrants_by_hand():
    rng = np.random.default_rng(1)
    regional, global_ = rng.random(9), rng.random(9)
    r, quadrants, _ = fc.importance.compare_with_global(regional, global_, np.ones(9, bool))
    assert r == pytest.approx(pearsonr(regional, global_).statistic)

    global_ = np.array([0.1, 0.1, 0.5, 0.5, 0.0])
    regional = np.array([0.6, 0.1, 0.6, 0.1, 0.0])
    r, quadrants, (g_mid, r_mid) = fc.importance.compare_with_global(regional, global_, np.array([1, 1, 1, 1, 0], bool))
    assert (g_mid, r_mid) == pytest.approx((0.3, 0.35))
    assert quadrants == ("A", "B", "C", "D", None)  # the immutable last feature takes no part
    assert r == pytest.approx(pearsonr(regional[:4], global_[:4]).statistic)


def test_pearson_undefined_for_constant_side():
    r, _, _ = fc.importance.compare_with_global(np.ones(4), np.arange(4.0), np.ones(4, bool))
    assert np.isnan(r)


# -- real model, real DiCE ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def synthetic_store(synthetic_task, synthetic_model):
    return fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("dice-random"), n_cf=5, seed=0)


@pytest.fixture(scope="module")
def synthetic_global(synthetic_store):
    return fc.importance.run_global(synthetic_store, n_factuals=40, tau=0.1)


def test_planted_global_driver_ranks_first(synthetic_global):
    frame = synthetic_global.to_frame()
    assert frame.iloc[0]["feature"] == "speed"
    immutable = frame[frame["immutable"]]
    assert set(immutable["feature"]) == {"road_type", "driver_age_band"}
    assert (immutable["frequency_mean"] == 0).all()  # immutable features never change


def test_planted_regional_driver_ranks_first(synthetic_task, synthetic_model, synthetic_store, synthetic_global):
    frame = synthetic_task.frame
    factuals = set(fc.counterfactuals.factual_rows(synthetic_task, synthetic_model).tolist())
    # Inside the region "rural road", a dark, slow accident is severe because of the lighting alone.
    query = next(
        r for r in frame.index[(frame.road_type == "rural") & (frame.lighting == "dark") & (frame.speed < 60)]
        if r in factuals
    )
    region = fc.importance.run_regional(synthetic_store, synthetic_global, query=query, k=4, where="road_type=rural")
    ranked = region.to_frame()
    assert ranked.iloc[0]["feature"] == "lighting"
    assert ranked.iloc[0]["frequency_mean"] >= 0.9
    assert len(region.members) == 5 and region.members[0] == query
    assert all(frame.loc[m, "road_type"] == "rural" for m in region.members)
    assert region.quadrants[synthetic_task.feature_names.index("lighting")] in ("A", "C")
    assert -1 <= region.pearson_r <= 1
    # r's interval is the region's F and size through pearson_interval, the global F held as given.
    assert region.pearson_r_interval == pearson_interval(
        region.importance.frequency_mean, region.importance.n_factuals_used, synthetic_global.frequency_mean,
        ~np.array(region.importance.immutable),
    )
    low, high = region.pearson_r_interval
    assert np.isnan(region.pearson_r) or (low <= region.pearson_r <= high)
    assert region.importance.config["pearson_r_interval"]["over"].startswith("the region's factuals")
    # The region reuses stored counterfactuals: asking again generates nothing new.
    before = len(synthetic_store.stored_rows)
    fc.importance.run_regional(synthetic_store, synthetic_global, query=query, k=2, where="road_type=rural", tau=0.5)
    assert len(synthetic_store.stored_rows) == before


def test_regional_json_has_the_documented_keys(synthetic_store, synthetic_global):
    query = random_query(synthetic_store, where="lighting=dark", seed=3)
    out = fc.importance.run_regional(synthetic_store, synthetic_global, query=query, k=3, where="lighting=dark").to_dict()
    assert {"members", "mode_shift", "pearson_r", "level", "features", "generator", "model", "config"} <= set(out)
    assert out["level"] == "regional" and out["members"][0] == query
    assert {"name", "mode", "p_orig", "p_cf", "delta"} <= set(out["mode_shift"][0])
    assert all("quadrant" in f for f in out["features"])
    assert "neighbour_ties" in out
    region = fc.importance.run_regional(synthetic_store, synthetic_global, query=query, k=3, where="lighting=dark")
    for record, regional_f in zip(out["features"], region.importance.frequency_mean):
        if record["quadrant"] is None:
            assert record["diagonal"] is None
        else:  # the side of y = x the point lies on: the sign of regional - global
            gap = regional_f - record["global_frequency"]
            assert record["diagonal"] == ("above" if gap > 1e-12 else "below" if gap < -1e-12 else "on")


def test_run_regional_reports_the_draw_among_tied_neighbours():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({c: rng.choice(["p", "q", "r"], 300) for c in "abcd"})
    frame["out"] = np.where(frame["a"] == "p", "bad", "good")
    task = fc.make_task(frame, target="out", undesirable="bad")
    store = fc.counterfactuals.CounterfactualStore(task, fc.fit_model(task, cv_folds=2), fc.counterfactuals.make_generator("batch"),
                                   n_cf=2, seed=4)
    query = int(store.factual_rows[0])
    region = fc.importance.run_regional(store, fc.importance.run_global(store, n_factuals=20), query=query, k=4)
    ties = region.neighbour_ties  # ~100 factuals on 4 three-level features: many tie at the 4th distance
    assert ties["candidates"] > ties["drawn"] >= 1 and ties["distance"] == max(region.distances)
    assert region.to_dict()["neighbour_ties"] == ties
    reading = reporting.describe_neighbour_ties(region)
    verb = "was" if ties["drawn"] == 1 else "were"
    assert reading.startswith(f"{ties['candidates']} cases tie at distance {reporting.format_number(ties['distance'])}; "
                              f"{ties['drawn']} of them {verb} drawn at random")
    assert sum(d == ties["distance"] for d in region.distances) == ties["drawn"]
    # Drawn with the store's seed: the same members as select_region with that seed.
    assert list(region.members) == select_region(task, query, store.factual_rows, k=4, ranges=store.ranges, seed=4)[0]
def test_interval_of_r_does_not_collapse_on_identical_factuals():
    global_ = np.array([0.1, 0.3, 0.5, 0.7, 0.0])
    include = np.array([1, 1, 1, 1, 0], bool)
    regional = np.array([0.2, 0.1, 0.6, 0.9, 0.0])
    # Five factuals with the same f_j(i) say little about the next five: a resample of them always
    # gave the same F (an interval of width 0); the interval from the region's size does not collapse.
    r, _, _ = fc.importance.compare_with_global(regional, global_, include)
    low, high = pearson_interval(regional, 5, global_, include)
    assert low < r < high and high - low > 0.2
    assert all(np.isnan(pearson_interval(regional, 1, global_, include)))


def test_r_needs_three_features_and_constant_continuous_mode_shift_works():
    r, quadrants, _ = fc.importance.compare_with_global(np.array([0.2, 0.8]), np.array([0.1, 0.9]), np.ones(2, bool))
    assert np.isnan(r)  # two points always give r = ±1, which says nothing
    frame = pd.DataFrame({"flat": [5.0] * 4, "c": ["a", "b", "a", "b"], "y": ["bad", "bad", "ok", "ok"]})
    task = fc.make_task(frame, target="y", undesirable="bad", kinds={"flat": "continuous"})
    cfset = make_set(task, [0, 1], [[(5.0, "b")], [(5.0, "a")]], n_cf=1)
    flat = fc.importance.mode_shift(task, cfset)[0]
    assert flat["mode"] == "5 to 5" and flat["p_orig"] == 1.0 and flat["p_cf"] == 1.0


def test_an_ordinal_feature_uses_its_order_in_distances_and_the_mode_shift():
    frame = pd.DataFrame({"exp": ["none", "low", "mid", "high", "none", "low"], "town": ["a", "a", "b", "a", "a", "b"],
                          "y": ["bad", "bad", "bad", "bad", "bad", "ok"]})
    task = fc.make_task(frame, target="y", undesirable="bad", ordinal_orders={"exp": ["none", "low", "mid", "high"]})
    # exp adds |Δ rank| / 3; a town mismatch adds 1 (Hamming).
    np.testing.assert_allclose(hamming_distances(task, 0, [1, 2, 3, 4]), [1 / 3, 2 / 3 + 1, 1, 0])
    # Factual ranks 0 and 1 (mean 0.5); counterfactual ranks 2, 3, 3, 2 (mean 2.5): two levels up.
    cfset = make_set(task, [0, 1], [[("mid", "a"), ("high", "a")], [("high", "a"), ("mid", "a")]], n_cf=2)
    table = {row["name"]: row for row in fc.importance.mode_shift(task, cfset)}
    assert table["exp"]["rank_shift"] == pytest.approx(2.0)
    assert np.isnan(table["town"]["rank_shift"])


def test_random_query_without_any_factual_is_one_error(toy_task):
    from types import SimpleNamespace

    store = SimpleNamespace(task=toy_task, factual_rows=np.array([], dtype=int))
    with pytest.raises(fc.ConfigError, match="No row is a factual"):
        random_query(store)


def test_a_subsets_coverage_note_counts_its_own_cases_not_the_generation_calls(toy_task, toy_model):
    # Seven rows generated in one call, a "region" of three of them: its note must speak of those three.
    rows = [int(r) for r in fc.counterfactuals.factual_rows(toy_task, toy_model)[:7]]
    cfset = fc.counterfactuals.make_generator("batch").generate(
        toy_model, toy_task, toy_task.X.loc[rows], n_cf=40, seed=0)
    short = int(((cfset.counts > 0) & (cfset.counts < 40)).sum())
    assert (cfset.counts[:3] < 40).all() and short > 3  # two features, minimal changes: mostly fewer than 40
    region = fc.importance.flex_importance(cfset.subset(rows[:3]), toy_task, level="regional")
    coverage = [n for n in region.notes if "different valid ways out" in n]
    assert coverage == ["3 of these 3 cases got fewer than 40 different valid ways out "
                        "(with every change as small as it can be, there are often no more)."]
    whole = fc.importance.flex_importance(cfset, toy_task)
    assert [n for n in whole.notes if "different valid" in n][0].startswith(f"{short} of these 7 cases")
