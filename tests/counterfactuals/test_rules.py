"""Constraints between features held by every generator: never broken, counted per rule, reported when they bite."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flex_core as fc
from flex_core.counterfactuals._assemble import assemble_counterfactual_set
from flex_core.data.rules import constraints_from_lines
from tests.counterfactuals.test_constraints import make
from tests.planted_learned import planted_forest, planted_task

REPO = Path(__file__).resolve().parents[2]


def broken(task, cfset) -> int:
    """Returned counterfactuals that break any constraint of ``task`` (per feature or between features)."""
    factuals = np.repeat(cfset.factuals, cfset.n_cf, axis=0)[cfset.found.reshape(-1)]
    return int(fc.counterfactuals.constraint_violations(task, factuals, cfset.counterfactuals[cfset.found]).sum())


def test_a_relational_rule_that_forbids_the_only_way_out_leaves_the_case_without_one():
    # The rule model: undesirable when income < 50, debt > 5, grade below B or region north. Income may only rise
    # by twice the debt paid off: a case at income 40 and debt 2 gains at most 4, never reaching 50.
    rule = "cf.income - x.income <= 2 * (x.debt - cf.debt)"
    task, model = make(constraints=[rule])
    frame = task.frame
    fine = frame["grade"].isin(["B", "A"]) & (frame["region"] != "north")
    stuck = frame.index[(frame["income"] < 45) & (frame["debt"] <= 2) & fine][:3]
    free = frame.index[(frame["income"] >= 50) & (frame["debt"] > 5) & fine][:2]  # lowering debt alone flips these
    queries = frame.loc[[*stuck, *free], task.feature_names]
    for name in ("batch", "batch-plausible"):
        cfset = fc.counterfactuals.make_generator(name).generate(model, task, queries, n_cf=3, seed=0)
        np.testing.assert_array_equal(cfset.counts[:3], 0)
        assert (cfset.counts[3:] > 0).all() and broken(task, cfset) == 0
        assert any(n.startswith("3 of these 5 cases got no valid way out") for n in cfset.coverage_notes)
        report = cfset.coverage()["constraints_between"]["constraints"]
        assert report[0]["constraint"] == rule and report[0]["rejected_while_searching"] > 0
        assert report[0]["share_of_rejections"] == 1.0
    free_task, _ = make()  # without the rule the stuck cases flip by raising income
    assert (fc.counterfactuals.make_generator("batch").generate(model, free_task, queries, n_cf=3).counts > 0).all()


@pytest.fixture(scope="module")
def planted_learned_pair():
    """The learned forest of ``tests/planted_learned.py`` (speed > 60 on a rural road, 3% label noise); only speed
    and age may change, so the planted way out is speed down to 60."""
    task = planted_task().with_overrides(immutable=["road", "temp", "colour", "weekday"])
    return task, planted_forest(task)


@pytest.mark.parametrize("generator", ["tree", "batch", "batch-plausible", "dice-random"])
def test_on_a_learned_model_a_rule_that_forbids_the_only_way_out_leaves_the_case_without_one(planted_learned_pair,
                                                                                             generator):
    # Speed may fall by at most 2 per year of age gained. A rural case at speed >= 90 and age >= 72 needs to fall
    # 30 or more but can age 8 at most (ages end at 80), so it is stuck; at speed 65-75 and age <= 40 it is not.
    base, model = planted_learned_pair
    rule = "x.speed - cf.speed <= 2 * (cf.age - x.age)"
    task = base.with_overrides(constraints=[rule])
    factual = base.frame.loc[fc.counterfactuals.factual_rows(base, model)]
    rural = factual["road"] == "rural"
    stuck = factual.index[rural & (factual["speed"] >= 90) & (factual["age"] >= 72)][:3]
    free = factual.index[rural & factual["speed"].between(65, 75) & (factual["age"] <= 40)][:3]
    queries = task.frame.loc[[*stuck, *free], task.feature_names]
    assert len(stuck) == len(free) == 3
    cfset = fc.counterfactuals.make_generator(generator).generate(model, task, queries, n_cf=3, seed=0)
    np.testing.assert_array_equal(cfset.counts[:3], 0)
    assert (cfset.counts[3:] > 0).all() and broken(task, cfset) == 0
    assert "3 of these 6 cases got no valid way out; they are left out of the averages." in cfset.coverage_notes
    report = cfset.config["constraints_between"]["constraints"][0]
    assert report["constraint"] == rule and report["share_of_rejections"] == 1.0
    assert report["rejected_while_searching"] + report["dropped_from_output"] > 0
    without = fc.counterfactuals.make_generator(generator).generate(model, base, queries, n_cf=3, seed=0)
    assert (without.counts > 0).all()  # the rule, not the model, is what leaves the stuck cases without one


def test_what_another_generator_returns_against_a_rule_is_dropped_counted_and_listed():
    task, model = make(constraints=["cf.income <= x.income + 30", "if cf.region != x.region then cf.debt <= x.debt"])
    rows = fc.counterfactuals.factual_rows(task, model)[:4]
    queries = task.frame.loc[rows, task.feature_names]
    good = queries.assign(income=queries["income"] + 1, debt=0.0, grade="A", region=queries["region"])
    too_rich = queries.assign(income=queries["income"] + 31, debt=0.0, grade="A")
    moved = queries.assign(region="east", debt=queries["debt"] + 1)
    per_query = [pd.concat([good.iloc[[i]], too_rich.iloc[[i]], moved.iloc[[i]]]) for i in range(4)]
    cfset = assemble_counterfactual_set(task, model, queries, per_query, n_cf=3, generator="dice-random", seconds=0.0)
    keep_region = int((queries["region"] == "east").sum())  # moving to the region it is in is no move
    assert cfset.found[:, 0].all() and not cfset.found[:, 1].any()
    assert cfset.found[:, 2].sum() == keep_region
    dropped = 4 + 4 - keep_region
    assert any(n.startswith(f"{dropped} ways out from dice-random were dropped: they broke a constraint between features") and
               "'cf.income <= x.income + 30' 4" in n for n in cfset.coverage_notes)
    report = cfset.config["constraints_between"]
    assert [r["dropped_from_output"] for r in report["constraints"]] == [4, 4 - keep_region]
    assert len(report["dropped"]) == dropped
    assert report["dropped"][0] == {"row": int(rows[0]), "slot": 1, "broken": ["cf.income <= x.income + 30"]}


def breaking_as_they_are():
    """The rule-coded task with ``cf.income >= 20`` and a set packed for 5 cases, the first 2 below 20 as they are."""
    task, model = make(constraints=["cf.income >= 20"])
    frame = task.frame
    rows = list(frame.index[frame["income"] < 20][:2]) + list(frame.index[frame["income"] >= 60][:3])
    return task, assemble_counterfactual_set(task, model, frame.loc[rows, task.feature_names], [None] * 5, n_cf=2,
                                             generator="batch", seconds=0.0)


def test_cases_that_break_a_rule_as_they_are_are_reported():
    task, cfset = breaking_as_they_are()
    assert "2 of the 5 cases break 'cf.income >= 20' at their own values" in " ".join(cfset.coverage_notes)
    assert cfset.config["constraints_between"]["constraints"][0]["queries_breaking_it_as_they_are"] == 2


@pytest.fixture(scope="module")
def synthetic_pair(synthetic_task, synthetic_model):
    rows = fc.counterfactuals.factual_rows(synthetic_task, synthetic_model)
    return synthetic_task, synthetic_model, rows


#: Random constraints over synthetic-regional (speed 20-120 and noise_continuous 6-97 are numbers; lighting and
#: noise_categorical levels; road_type is immutable): linear ones and conditional ones.
TEMPLATES = (
    "cf.speed + {a} * cf.noise_continuous <= x.speed + {a} * x.noise_continuous + {b}",
    "cf.speed >= x.speed - {b}",
    "{a} * (x.speed - cf.speed) <= cf.noise_continuous - x.noise_continuous + {b}",
    "if cf.lighting != x.lighting then cf.speed >= x.speed - {b}",
    "if cf.speed < x.speed - {b} then cf.noise_categorical == x.noise_categorical",
    'if x.road_type == "urban" then cf.noise_categorical in {{A, B}}',
    "if cf.noise_continuous > x.noise_continuous then cf.speed <= x.speed - {b} or cf.lighting == x.lighting",
)


@pytest.mark.parametrize("generator", ["tree", "batch", "batch-plausible", "dice-random",
                                       pytest.param("dice-genetic", marks=pytest.mark.slow), "dice-kdtree"])
@settings(max_examples=4, deadline=None)
@given(
    picks=st.lists(st.sampled_from(range(len(TEMPLATES))), min_size=1, max_size=3, unique=True),
    a=st.sampled_from([0.5, 1, 2]),
    b=st.integers(0, 40),
    start=st.integers(0, 40),
)
def test_property_no_returned_counterfactual_breaks_a_random_rule(synthetic_pair, picks, a, b, generator, start):
    base, model, rows = synthetic_pair
    task = base.with_overrides(constraints=[TEMPLATES[k].format(a=a, b=b) for k in picks])
    n = 3 if generator.startswith("dice") else 6
    queries = task.frame.loc[rows[start:start + n], task.feature_names]
    cfset = fc.counterfactuals.make_generator(generator).generate(model, task, queries, n_cf=3, seed=start)
    assert broken(task, cfset) == 0
    assert len(cfset.config["constraints_between"]["constraints"]) == len(picks)
    if generator.startswith("batch"):  # the batch search never returns what it then has to drop (tree's pairs may)
        assert "dropped" not in cfset.config["constraints_between"]


def test_the_minimal_refinement_of_another_generator_keeps_the_rules(synthetic_pair):
    base, model, rows = synthetic_pair
    task = base.with_overrides(constraints=["cf.speed + cf.noise_continuous >= x.speed + x.noise_continuous - 10"])
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("dice-random"),
                                                   n_cf=3, seed=0, refine="minimal")
    cfset = store.ensure(rows[:4])
    assert cfset.found.any() and broken(task, cfset) == 0
    assert store.key["constraints_between"] == task.rule_texts


def test_the_tree_generators_hook_is_the_same_check(synthetic_pair):
    base, _, rows = synthetic_pair
    task = base.with_overrides(constraints=["cf.speed <= x.speed - 5"])
    x = fc.counterfactuals.encode_rows(task, task.frame.loc[rows[:3], task.feature_names])
    cf = x.copy()
    cf[:, task.feature_names.index("speed")] -= [0, 5, 6]
    np.testing.assert_array_equal(task.rules_hold(cf, x), [False, True, True])
    np.testing.assert_array_equal(base.rules_hold(cf, x), [True, True, True])


def test_loan_with_the_shipped_constraints_breaks_none(loan_path):
    texts = constraints_from_lines((REPO / "examples" / "constraints" / "loan.txt").read_text())
    task = fc.load_dataset(f"loan:{loan_path}", constraints=texts)
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
    rows = fc.counterfactuals.factual_rows(task, model)[:40]
    cfset = fc.counterfactuals.make_generator("batch").generate(model, task, task.frame.loc[rows, task.feature_names],
                                                                n_cf=10, seed=0)
    assert broken(task, cfset) == 0 and cfset.valid.sum() > 0
    report = cfset.config["constraints_between"]["constraints"]
    assert [r["constraint"] for r in report] == texts
    assert sum(r["rejected_while_searching"] for r in report) > 0  # the rules bite: without them, some would break
    free = fc.counterfactuals.make_generator("batch").generate(
        model, fc.load_dataset(f"loan:{loan_path}"), task.frame.loc[rows, task.feature_names], n_cf=10, seed=0)
    assert broken(task, free) > 0


@pytest.fixture(scope="module")
def loan_with_rules(loan_path):
    texts = constraints_from_lines((REPO / "examples" / "constraints" / "loan.txt").read_text())
    task = fc.load_dataset(f"loan:{loan_path}", constraints=texts)
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
    return task, model, fc.counterfactuals.factual_rows(task, model)


@pytest.mark.slow
@pytest.mark.parametrize("generator, n", [("batch", 200), ("batch-plausible", 200), ("tree", 200),
                                          ("dice-random", 200), ("dice-genetic", 20), ("dice-kdtree", 50)])
def test_every_generator_on_loan_with_the_shipped_constraints_breaks_none(loan_with_rules, generator, n):
    task, model, rows = loan_with_rules
    queries = task.frame.loc[rows[:n], task.feature_names]
    cfset = fc.counterfactuals.make_generator(generator).generate(model, task, queries, n_cf=10, seed=0)
    assert broken(task, cfset) == 0 and cfset.valid.sum() > 0
    assert [r["constraint"] for r in cfset.config["constraints_between"]["constraints"]] == task.rule_texts


@pytest.mark.slow
def test_accidents_with_the_shipped_constraints_breaks_none(accidents_path):
    texts = constraints_from_lines((REPO / "examples" / "constraints" / "accidents.txt").read_text())
    task = fc.load_dataset(f"accidents:{accidents_path}", constraints=texts)
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
    rows = fc.counterfactuals.factual_rows(task, model)[:40]
    cfset = fc.counterfactuals.make_generator("batch").generate(model, task, task.frame.loc[rows, task.feature_names],
                                                                n_cf=10, seed=0)
    assert broken(task, cfset) == 0 and cfset.valid.sum() > 0
