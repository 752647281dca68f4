"""refine="minimal": changes shrink to the model's threshold, stay valid, integers stay integers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.counterfactuals import refine_counterfactuals
from flex_core.counterfactuals._set import RELATIVE_TOLERANCE
from flex_core.counterfactuals._validity import Validity
from tests.factories import make_set

#: The paper's validity (P < 0.5, no neighbourhood): these tests check the shrinking at the model's own boundary;
#: the robust boundary (the default) is checked in test_robust.py.
PAPER = Validity(0.0, 0.0)


class Rule:
    """A hand-built model: desirable where ``rule(X)`` holds (P(undesirable) = 0), else undesirable."""

    def __init__(self, rule):
        self.rule = rule

    def predict_proba(self, X):
        desirable = np.asarray(self.rule(X), dtype=float)
        return np.column_stack([desirable, 1 - desirable])


@pytest.fixture(scope="module")
def task():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "x": np.r_[0.0, 100.0, rng.uniform(0, 100, 38)].round(2),  # continuous, range 100
            "n": np.r_[0, 60, rng.integers(0, 61, 38)],  # integer, range 60
            "grade": rng.choice(["low", "mid", "high"], 40),  # ordinal
            "colour": rng.choice(["red", "blue"], 40),  # categorical
            "y": ["bad", "good"] * 20,
        }
    )
    return fc.make_task(frame, target="y", undesirable="bad", kinds={"grade": "ordinal"},
                        ordinal_orders={"grade": ["low", "mid", "high"]})


def model_of(task, rule):
    return fc.FittedModel("rule", "none", 0, Rule(rule), task.frame.index.to_numpy(), np.array([], dtype=int))


def set_factuals(task, rows_values):
    """Put chosen factual values into the task's first rows (a copy of the task)."""
    frame = task.frame.copy()
    for i, values in enumerate(rows_values):
        for name, value in values.items():
            frame.at[i, name] = value
    return fc.make_task(frame, target="y", undesirable="bad", kinds={"grade": "ordinal"},
                        ordinal_orders={"grade": ["low", "mid", "high"]})


def test_each_change_stops_within_one_step_of_the_threshold_and_integers_stay_integers(task):
    task = set_factuals(task, [{"x": 10.0, "n": 5, "grade": "low", "colour": "red"},
                               {"x": 60.0, "n": 5, "grade": "low", "colour": "red"}])
    model = model_of(task, lambda X: (X["x"] >= 50.3) & (X["n"] >= 17) & (X["grade"] != "low"))
    cfset = make_set(task, [0, 1], [
        [(90.0, 35, "high", "blue"), (77.7, 60, "mid", "red")],
        [(95.0, 30, "high", "red")],  # x need not change for row 1 (its factual is 60): it goes back to 60
    ], n_cf=2)
    refined = refine_counterfactuals(cfset, task, model, validity=PAPER)
    out = refined.to_frame(task).query("cf >= 0")
    step = 100 * RELATIVE_TOLERANCE  # one bisection step at the end: range/1000
    first = out[out.row == 0]
    assert ((first.x >= 50.3) & (first.x <= 50.3 + step)).all()
    assert (first.n == 17).all() and first.n.map(float.is_integer).all()
    assert len(first) == 1
    assert (first.grade == "mid").all()  # an ordinal level moves to the nearest level that works
    # colour plays no part in the rule: a passenger, reverted to the factual's red.
    assert list(first.colour) == ["red"]
    # Both counterfactuals of row 0 became the same one (x at the threshold, n = 17, grade mid): merged.
    assert refined.counts[0] == 1 and refined.copy_counts[0] == 1
    second = out[out.row == 1].iloc[0]
    assert second.x == 60.0 and second.n == 17
    # Every refined counterfactual is still valid, and the set says so.
    assert refined.valid.sum() == 2 and (model.predict_undesirable(out[task.feature_names]) == 0).all()
    # bisection on the grid: about a dozen calls per cycle of shrinking and reverting
    assert refined.config["refine"] == "minimal" and refined.config["refine_model_calls"] <= 30
    assert refined.model_rows == cfset.model_rows or cfset.model_rows < 0


def test_a_single_shrunk_change_is_not_scored_again_once_shrunk():
    """The shrunk row was scored valid by its own search: combining one change needs no further call."""
    from flex_core.counterfactuals._refine import MinimalPlan, minimal_rows

    frame = pd.DataFrame({"x": [0.0, 100.0, 20.0, 70.0], "y": ["bad", "good", "bad", "good"]})
    task = fc.make_task(frame, target="y", undesirable="bad")
    scored: list[bytes] = []

    def p_undesirable(codes):
        scored.extend(row.tobytes() for row in codes)
        return np.where(codes[:, 0] >= 41.0, 0.0, 1.0)

    plan = MinimalPlan.build(task, {})
    out = minimal_rows(p_undesirable, np.array([[90.0]]), np.array([[10.0]]), plan)
    assert 41.0 <= out[0, 0] <= 41.0 + 100 * RELATIVE_TOLERANCE
    assert len(scored) == len(set(scored))  # every row scored once: the bisection's points, nothing repeated


def test_interacting_changes_keep_the_longest_valid_prefix_and_stay_valid(task):
    task = set_factuals(task, [{"x": 10.0, "n": 10, "grade": "low", "colour": "red"}])
    # Each change alone can shrink a lot (x to 40 with n at 60, n to 20 with x at 80), but not both at once.
    model = model_of(task, lambda X: X["x"] + X["n"] >= 100)
    cfset = make_set(task, [0], [[(80.0, 60, "low", "red")]], n_cf=1)
    refined = refine_counterfactuals(cfset, task, model, validity=PAPER)
    x, n = refined.counterfactuals[0, 0, :2]
    assert x + n >= 100 and refined.valid.all()
    assert (x, n) == (80.0, 20.0)  # n's reduction (40 of 60) is the larger share, so it is kept first


def test_permitted_range_invalid_counterfactuals_and_the_store_key(task):
    task = set_factuals(task, [{"x": 10.0, "n": 5, "grade": "low", "colour": "red"}])
    model = model_of(task, lambda X: X["x"] >= 30)
    cfset = make_set(task, [0], [[(90.0, 5, "low", "red"), (70.0, 5, "low", "red")]], n_cf=2)
    cfset = fc.counterfactuals.CounterfactualSet(
        cfset.feature_names, cfset.query_index, cfset.factuals, cfset.counterfactuals, cfset.found,
        np.array([[True, False]]), "hand", 0.0,
    )
    refined = refine_counterfactuals(cfset, task, model, permitted_range={"x": [55, 100]})
    assert refined.counterfactuals[0, 0, 0] == 55.0  # the factual's 10 is outside [55, 100]: the nearest permitted
    assert refined.counterfactuals[0, 1, 0] == 70.0 and not refined.valid[0, 1]  # invalid ones are left alone
    assert fc.counterfactuals.default_refine("batch") == "minimal"
    assert fc.counterfactuals.default_refine("dice-random") == "none"
    gen = fc.counterfactuals.make_generator("batch")
    keys = {r: fc.counterfactuals.CounterfactualStore(task, model, gen, n_cf=2, refine=r).key["refine"] for r in ("minimal", "none")}
    assert keys == {"minimal": "minimal", "none": "none"}
    assert fc.counterfactuals.CounterfactualStore(task, model, gen, n_cf=2).key["refine"] == "minimal"
    with pytest.raises(fc.ConfigError, match="refine"):
        fc.counterfactuals.CounterfactualStore(task, model, gen, n_cf=2, refine="smallest")
