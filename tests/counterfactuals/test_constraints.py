"""Actionability constraints: direction, range, allowed values and order, on a hand-built model.

The model is a fixed rule (no training noise), so which counterfactuals can exist under a
constraint is known by hand: risk is undesirable when income < 50 or debt > 5 or grade < "B"
(grades ordered D < C < B < A), or when region is "north".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flex_core as fc
from flex_core.counterfactuals._assemble import assemble_counterfactual_set
from flex_core.models import FittedModel

GRADES = ["D", "C", "B", "A"]


class RuleModel:
    """P(undesirable) = 1 when income < 50, debt > 5, grade below B or region north; else 0."""

    classes_ = np.array([0, 1])

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        rank = X["grade"].map({g: i for i, g in enumerate(GRADES)}).to_numpy()
        bad = (X["income"].to_numpy() < 50) | (X["debt"].to_numpy() > 5) | (rank < 2) | (X["region"].to_numpy() == "north")
        return np.column_stack([1.0 - bad, bad.astype(float)])

    def predict(self, X):
        return self.predict_proba(X)[:, 1].round().astype(int)


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "income": rng.integers(0, 100, n).astype(float),
            "debt": rng.integers(0, 11, n).astype(float),
            "grade": rng.choice(GRADES, n),
            "region": rng.choice(["north", "south", "east", "west"], n),
            "age": rng.integers(18, 80, n).astype(float),
        }
    )


def make(**constraints):
    frame = _frame()
    frame["y"] = RuleModel().predict(frame)
    task = fc.make_task(
        frame, target="y", undesirable=1, immutable=["age"], ordinal_orders={"grade": GRADES}, **constraints
    )
    model = FittedModel("rule", "none", 0, RuleModel(), task.frame.index.to_numpy(), np.empty(0, int))
    return task, model


def generate(task, model, generator="batch", n=40, n_cf=5, **settings_):
    rows = fc.counterfactuals.factual_rows(task, model)[:n]
    gen = fc.counterfactuals.make_generator(generator, **settings_)
    return gen.generate(model, task, task.frame.loc[rows, task.feature_names], n_cf=n_cf, seed=0)


def _moves(task, cfset, name):
    j = task.feature_names.index(name)
    after = cfset.counterfactuals[..., j][cfset.found]
    before = np.broadcast_to(cfset.factuals[:, None, j], cfset.found.shape)[cfset.found]
    return before, after


@pytest.mark.parametrize("generator", ["batch", "batch-plausible"])
def test_direction_is_never_broken_and_still_flips(generator):
    task, model = make(monotone={"income": "increase", "debt": "decrease", "grade": "increase"})
    cfset = generate(task, model, generator)
    for name, sign in (("income", 1), ("debt", -1), ("grade", 1)):
        before, after = _moves(task, cfset, name)
        assert (np.sign(after - before) * sign >= 0).all(), name
    assert cfset.valid.sum() > 0 and (cfset.valid == cfset.found).all()
    assert not any("broke an actionability constraint" in n for n in cfset.coverage_notes)


@pytest.mark.parametrize("generator", ["batch", "batch-plausible"])
def test_range_and_allowed_values_are_never_left(generator):
    task, model = make(bounds={"income": (55, 70)}, allowed={"region": ["south", "east"], "grade": ["B"]})
    cfset = generate(task, model, generator)
    before, after = _moves(task, cfset, "income")
    moved = after != before
    assert ((after[moved] >= 55) & (after[moved] <= 70)).all() and moved.any()
    for name, levels in (("region", {"south", "east"}), ("grade", {"B"})):
        feature = task.feature(name)
        before, after = _moves(task, cfset, name)
        changed_to = {feature.categories[int(c)] for c in after[after != before]}
        assert changed_to <= levels, name
    assert cfset.valid.sum() > 0


def test_a_query_that_cannot_flip_under_the_constraints_gets_none_and_is_counted():
    # Income may only fall, so a factual with low income can never reach 50.
    task, model = make(monotone={"income": "decrease"})
    frame = task.frame
    otherwise_fine = frame["grade"].isin(["B", "A"]) & (frame["region"] != "north")
    stuck = frame.index[(frame["income"] < 50) & (frame["debt"] <= 5) & otherwise_fine]
    free = frame.index[(frame["income"] >= 50) & (frame["debt"] > 5) & otherwise_fine]  # lowering debt flips it
    rows = list(stuck[:3]) + list(free[:2])
    gen = fc.counterfactuals.make_generator("batch")
    cfset = gen.generate(model, task, frame.loc[rows, task.feature_names], n_cf=3, seed=0)
    np.testing.assert_array_equal(cfset.counts[:3], 0)
    assert (cfset.counts[3:] > 0).all()
    assert any(n.startswith("3 of these 5 cases got no valid way out; they are left out") for n in cfset.coverage_notes)


def test_dice_drops_what_breaks_a_direction_and_says_so():
    task, model = make(monotone={"income": "increase"})
    rows = fc.counterfactuals.factual_rows(task, model)[:4]
    queries = task.frame.loc[rows, task.feature_names]
    factuals = fc.counterfactuals.encode_rows(task, queries)
    # A stand-in generator's raw output: every row lowers income (breaks the direction) or raises it.
    lowered = queries.assign(income=queries["income"] - 1)
    raised = queries.assign(income=queries["income"] + 60, debt=0.0, grade="A", region="south")
    per_query = [pd.concat([lowered.iloc[[i]], raised.iloc[[i]]]) for i in range(len(queries))]
    cfset = assemble_counterfactual_set(task, model, queries, per_query, n_cf=2, generator="dice-random", seconds=0.0)
    assert cfset.found[:, 0].sum() == 0 and cfset.found[:, 1].all()
    assert any(n.startswith("4 ways out from dice-random were dropped: they broke a feature's constraint, its allowed "
                            "direction or range") for n in cfset.coverage_notes)
    np.testing.assert_array_equal(cfset.factuals, factuals)


def test_violations_by_hand():
    task, model = make(monotone={"grade": "increase"}, bounds={"income": (None, 60)}, allowed={"region": ["south"]})
    j = {n: i for i, n in enumerate(task.feature_names)}
    factual = np.zeros(len(task.features))
    factual[[j["income"], j["debt"], j["grade"], j["region"], j["age"]]] = [40, 2, 2, 0, 30]
    rows = np.tile(factual, (6, 1))
    rows[1, j["income"]] = 61  # outside the range
    rows[2, j["grade"]] = 1  # down the order
    rows[3, j["region"]] = task.feature("region").categories.index("west")  # not allowed
    rows[4, j["age"]] = 31  # immutable
    rows[5, j["grade"]] = 3  # up the order: fine
    broken = fc.counterfactuals.constraint_violations(task, np.tile(factual, (6, 1)), rows)
    np.testing.assert_array_equal(broken, [False, True, True, True, True, False])


@settings(max_examples=15, deadline=None)
@given(
    income=st.sampled_from(["increase", "decrease", "either"]),
    grade=st.sampled_from(["increase", "decrease", "either"]),
    low=st.integers(0, 90),
    width=st.integers(0, 40),
    seed=st.integers(0, 3),
)
def test_property_no_counterfactual_breaks_any_constraint(income, grade, low, width, seed):
    task, model = make(monotone={"income": income, "grade": grade}, bounds={"debt": (0, low % 11)}, allowed={"region": ["south", "west"]})
    rows = fc.counterfactuals.factual_rows(task, model)[seed * 10 : seed * 10 + 10]
    cfset = fc.counterfactuals.make_generator("batch").generate(model, task, task.frame.loc[rows, task.feature_names], n_cf=3, seed=seed)
    n_cf = cfset.n_cf
    flat_found = cfset.found.reshape(-1)
    factuals = np.repeat(cfset.factuals, n_cf, axis=0)[flat_found]
    assert not fc.counterfactuals.constraint_violations(task, factuals, cfset.counterfactuals[cfset.found]).any()
    assert not any("broke an actionability constraint" in n for n in cfset.coverage_notes)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"monotone": {"height": "increase"}}, "Unknown direction for feature: height"),
        ({"monotone": {"income": "up"}}, "must be one of increase, decrease, either"),
        ({"monotone": {"region": "increase"}}, "categorical without an order"),
        ({"bounds": {"income": (70, 60)}}, "range of 'income' is empty"),
        ({"bounds": {"region": (0, 1)}}, "not continuous"),
        ({"allowed": {"region": ["mars"]}}, "has no value 'mars'"),
        ({"allowed": {"income": ["1"]}}, "is continuous"),
        ({"allowed": {"grade": []}}, "has no value"),
        ({"monotone": {"age": "increase"}}, "immutable"),
        ({"ordinal_orders": {"grade": ["D", "C", "B", "A", "S"]}}, "has no value 'S'"),
    ],
)
def test_bad_constraints_get_one_clear_line(kwargs, message):
    frame = _frame()
    frame["y"] = RuleModel().predict(frame)
    base = {"ordinal_orders": {"grade": GRADES}}
    with pytest.raises(fc.ConfigError, match=message) as info:
        fc.make_task(frame, target="y", undesirable=1, immutable=["age"], **{**base, **kwargs})
    assert "\n" not in str(info.value)


def test_constraints_survive_overrides_and_are_in_the_store_key():
    task, model = make(monotone={"income": "increase"}, allowed={"region": ["south"]})
    assert task.constraints == {
        "income": {"direction": "increase"},
        "grade": {"order": GRADES},
        "region": {"allowed": ["south"]},
    }
    again = task.with_overrides(immutable=["age", "debt"])
    assert again.constraints == task.constraints
    assert task.with_overrides(monotone={}).constraints == {"grade": {"order": GRADES}, "region": {"allowed": ["south"]}}
    free, _ = make()
    gen = fc.counterfactuals.make_generator("batch")
    key = fc.counterfactuals.CounterfactualStore(task, model, gen).key
    assert key["constraints"] == task.constraints
    assert key["data"] != fc.counterfactuals.CounterfactualStore(free, model, gen).key["data"]


def test_dice_gets_ranges_and_allowed_values_and_loses_what_breaks_a_direction():
    task, model = make(monotone={"income": "increase"}, bounds={"debt": (0, 3)}, allowed={"region": ["south"]})
    cfset = generate(task, model, "dice-random", n=5, n_cf=4)
    assert cfset.config["permitted_range"] == {"debt": [0.0, 3.0], "region": ["south"]}
    flat = cfset.found.reshape(-1)
    factuals = np.repeat(cfset.factuals, cfset.n_cf, axis=0)[flat]
    assert not fc.counterfactuals.constraint_violations(task, factuals, cfset.counterfactuals[cfset.found]).any()
    assert cfset.valid.sum() > 0


def test_the_minimal_refinement_never_leaves_a_constraint():
    # Refining shrinks changes toward the factual; with a range the factual lies outside of
    # (income >= 60 while most factuals earn less), shrinking must stop at the range's edge.
    task, model = make(monotone={"income": "increase", "debt": "decrease"}, bounds={"income": (60, None)},
                       allowed={"region": ["east", "west"]})
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.BatchGenerator(), n_cf=5, seed=0, refine="minimal")
    cfset = store.ensure(fc.counterfactuals.factual_rows(task, model)[:40])
    assert cfset.found.any()
    factuals = np.repeat(cfset.factuals[:, None, :], cfset.counterfactuals.shape[1], axis=1)[cfset.found]
    assert not fc.counterfactuals.constraint_violations(task, factuals, cfset.counterfactuals[cfset.found]).any()
