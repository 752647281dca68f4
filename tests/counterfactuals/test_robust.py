"""Robust validity and alternatives that differ (issue 32), on hand-made rows and on a learned forest.

The learned forest is ``tests/planted_learned.py``'s: undesirable exactly when speed > 60 on a rural road,
four pure-noise features (temp, age, colour, weekday), 3% of labels flipped, a random forest as
``fit_model`` trains it. Under that truth no way out involves a noise feature, and a way out through
speed ends at 60.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.counterfactuals._alternatives import ALTERNATIVE_TOLERANCE, not_alternatives
from flex_core.counterfactuals._refine import refine_counterfactuals
from flex_core.counterfactuals._validity import DEFAULT_MARGIN, DEFAULT_RADIUS, Validity
from tests.planted_learned import (
    NOISE_FEATURES,
    SPEED_LIMIT,
    planted_forest,
    planted_task,
    rule_undesirable,
    valid_under,
)

N_FACTUALS, N_CF = 200, 10


# -- the rule, by hand ---------------------------------------------------------------------------
def test_the_margin_by_hand_and_never_at_a_tie():
    robust = Validity(0.15, 0.0)
    assert robust.threshold == pytest.approx(0.35)
    np.testing.assert_array_equal(robust.desirable([0.5, 0.35, 0.349, 0.0, 0.49]), [False, False, True, True, False])
    paper = Validity(0.0, 0.0)  # the paper's setting: P < 0.5, and still a tie is not valid
    np.testing.assert_array_equal(paper.desirable([0.5, 0.49, 0.51]), [False, True, False])
    assert paper.describe()["setting"] == "paper" and Validity().describe()["setting"] == "robust"
    assert (Validity().margin, Validity().radius) == (DEFAULT_MARGIN, DEFAULT_RADIUS) == (0.15, 0.01)
    for bad in (-0.1, 0.5):
        with pytest.raises(fc.ConfigError, match="margin"):
            Validity(bad)
    with pytest.raises(fc.ConfigError, match="radius"):
        Validity(0.1, 1.0)


def test_the_neighbourhood_by_hand():
    """x (range 100, so the radius 0.01 is one unit) flips the model below 50; colour is a level (no neighbourhood)."""
    task = fc.make_task(pd.DataFrame({"x": [0.0, 100.0, 40.0, 70.0], "colour": ["red", "blue", "red", "blue"],
                                      "y": ["good", "bad", "good", "bad"]}), target="y", undesirable="bad")
    rule = Validity(0.15, 0.01).on(task)
    np.testing.assert_allclose(rule.steps, [1.0, 0.0])

    def p_undesirable(codes):  # 0.2 at x <= 50, 0.9 above it, whatever the colour
        return np.where(codes[:, 0] <= 50, 0.2, 0.9)

    factual = np.array([80.0, 1.0])
    rows = np.array([
        [50.0, 1.0],  # P 0.2, but one unit nearer the factual (51) P is 0.9: invalid
        [49.0, 1.0],  # pulled back to 50: still 0.2, valid
        [80.0, 0.0],  # only a level changed: nothing to pull back, P 0.9: invalid
        [40.0, 0.0],  # valid, and its corner (41, red) too
    ])
    factuals = np.tile(factual, (len(rows), 1))
    np.testing.assert_array_equal(rule.check(p_undesirable, rows, factuals), [False, True, False, True])
    np.testing.assert_allclose(rule.score(p_undesirable, rows, factuals), [0.9, 0.2, 0.9, 0.2])
    # A change smaller than the radius is pulled back to the factual's value itself.
    np.testing.assert_allclose(rule.pulled(np.array([[50.0, 1.0]]), np.array([[50.5, 1.0]])), [[50.5, 1.0]])
    # The paper's rule counts the first row (P 0.2 < 0.5).
    assert Validity(0.0, 0.0).on(task).check(p_undesirable, rows, factuals).tolist() == [True, True, False, True]


# -- alternatives that differ, by hand -----------------------------------------------------------
def test_a_counterfactual_that_only_adds_features_to_a_sparser_one_is_not_another_way_out():
    """speed (range 100: the tolerance is 2 units) and colour (a level, code 0 = the factual's)."""
    factual = np.array([80.0, 0.0])
    spans, ordered = np.array([100.0, np.nan]), np.array([True, False])
    rows = np.array([
        [59.0, 0.0],  # A: speed alone
        [59.5, 1.0],  # A's speed change, 0.5 smaller (< 2), plus colour: dropped
        [57.0, 2.0],  # a larger speed change plus colour: no reduction at all, dropped
        [70.0, 3.0],  # speed reduced by 11 (>= 2) for colour 3: a real trade-off, kept
        [80.0, 4.0],  # colour alone: kept
        [61.0, 4.0],  # colour 4 as the row above, plus speed: adds a feature to it, same level, dropped
        [61.0, 3.0],  # speed reduced by exactly 2 = the tolerance (not less) for colour 3: kept
    ])
    assert ALTERNATIVE_TOLERANCE == 0.02
    drop = not_alternatives(rows, factual, spans, ordered)
    np.testing.assert_array_equal(drop, [False, True, True, False, False, True, False])
    # A level is compared as a level: another colour than the sparser one's is a different change.
    np.testing.assert_array_equal(not_alternatives(rows[[4, 3]], factual, spans, ordered), [False, False])


def _alternative_by_the_rule(rows, factual, spans, ordered, tolerance=ALTERNATIVE_TOLERANCE):
    """The module's rule read literally, one pair (A, B) at a time."""
    drop = []
    for b in rows:
        changed_b = set(np.flatnonzero(b != factual))
        hit = False
        for a in rows:
            changed_a = set(np.flatnonzero(a != factual))
            if not changed_a < changed_b:
                continue
            same = True
            for j in changed_a:
                if ordered[j]:
                    scale = spans[j] if np.nan_to_num(spans[j]) > 0 else 1.0
                    da, db = a[j] - factual[j], b[j] - factual[j]
                    same &= bool(np.sign(da) == np.sign(db) and abs(da) - abs(db) < tolerance * scale)
                else:
                    same &= bool(a[j] == b[j])
            hit |= same
        drop.append(hit)
    return np.array(drop, dtype=bool)


def test_alternatives_match_the_rule_read_pair_by_pair_on_random_sets():
    """Random small sets (numbers, ordinal and categorical codes, changes near the tolerance, NaN and 0 spans):
    the vectorised rule, which compares only sets with fewer changes against sets with more, is the literal one."""
    rng = np.random.default_rng(0)
    for _ in range(400):
        n_f, n = int(rng.integers(1, 6)), int(rng.integers(0, 12))
        factual = rng.integers(0, 3, n_f).astype(float)
        rows = factual + rng.integers(-2, 3, (n, n_f)) * (rng.random((n, n_f)) < 0.4)
        rows = rows + rng.choice([0.0, 0.01, -0.01, 0.03], (n, n_f)) * (rows != factual)
        spans, ordered = rng.choice([0.0, 1.0, 2.0, np.nan], n_f), rng.random(n_f) < 0.5
        np.testing.assert_array_equal(not_alternatives(rows, factual, spans, ordered),
                                      _alternative_by_the_rule(rows, factual, spans, ordered))


def test_a_change_the_others_make_up_for_within_the_tolerance_is_reverted():
    """By hand: speed (range 100, tolerance 2% = 2 units) and colour. P(undesirable) is 0.2 when speed - 2 x [red] <= 57,
    else 0.9. {speed 59, red} is valid and its colour cannot be reverted alone ({speed 59}: 0.9), yet {speed 57} is valid:
    it is the sparser way out, 2 units (the tolerance) further. {speed 50, red} where speed alone needs 45 is a real
    trade-off (8 units more than the tolerance buys) and keeps its colour."""
    from flex_core.counterfactuals._refine import MinimalPlan, minimal_rows, revert_stretched

    task = fc.make_task(pd.DataFrame({"speed": [0.0, 100.0, 40.0, 70.0], "colour": ["red", "blue", "red", "blue"],
                                      "y": ["good", "bad", "good", "bad"]}), target="y", undesirable="bad")
    red = task.features[1].levels.index("red")

    def p_undesirable(codes):
        return np.where(codes[:, 0] - 2 * (codes[:, 1] == red) <= 57, 0.2, 0.9)

    plan = MinimalPlan.build(task, {})
    rule = Validity(0.15, 0.0).on(task)
    blue = 1 - red
    factual = np.array([[80.0, blue]])
    cfs = np.array([[59.0, red]])
    assert rule.check(p_undesirable, cfs, factual).all() and not rule.check(p_undesirable, np.array([[59.0, blue]]), factual).all()
    np.testing.assert_array_equal(revert_stretched(p_undesirable, cfs, factual, plan, rule), [[57.0, blue]])
    refined = minimal_rows(p_undesirable, cfs, factual, plan, validity=rule)
    assert refined[0, 1] == blue and refined[0, 0] == pytest.approx(57.0, abs=0.2)

    def trade_off(codes):  # speed alone needs 45; with red, 55 will do
        return np.where(codes[:, 0] - 10 * (codes[:, 1] == red) <= 45, 0.2, 0.9)

    real = np.array([[50.0, red]])  # reverting red needs speed 45: 5 units, more than the 2 the tolerance allows
    np.testing.assert_array_equal(revert_stretched(trade_off, real, factual, plan, rule), real)
    refined = minimal_rows(trade_off, real, factual, plan, validity=rule)
    assert refined[0, 1] == red and refined[0, 0] == pytest.approx(55.0, abs=0.2)


def test_refinement_drops_them_and_the_set_counts_them():
    """A rule with a knife-edge trade-off: desirable when x <= 50, or x <= 50.5 with colour blue (x's range is 100).

    Refined, {x 80 -> 40} becomes {x 50} and {x 80 -> 45, blue} would become {x 50.5, blue}: colour is needed
    there (red at 50.5 is undesirable) and x cannot shrink further. It only buys 0.5 of x (less than 2% of 100)
    with a colour change, so it is no other way out: the refinement reverts the colour with x 2 units further
    (``revert_stretched``), shrinks it onto {x 50} and merges the copy; with that step skipped, the alternatives
    rule drops it. Either way one is left, and the set counts the other.
    """
    frame = pd.DataFrame({"x": np.linspace(0, 100, 41), "colour": ["red", "blue"] * 20 + ["red"]})

    def bad(X):
        x = X["x"].to_numpy(dtype=float)
        return (x > 50) & ~((X["colour"].to_numpy() == "blue") & (x <= 50.5))

    frame["y"] = np.where(bad(frame), "bad", "good")
    task = fc.make_task(frame, target="y", undesirable="bad")

    class Rule:
        classes_ = np.array(["good", "bad"])

        def predict_proba(self, X):
            p = bad(X).astype(float)
            return np.column_stack([1 - p, p])

    model = fc.FittedModel("rule", "none", 0, Rule(), task.frame.index.to_numpy(), np.empty(0, int))
    row = int(task.frame.index[(task.frame.x == 80) & (task.frame.colour == "red")][0])
    codes = fc.counterfactuals.encode_rows(task, pd.DataFrame({"x": [40.0, 45.0], "colour": ["red", "blue"]}))
    factual = fc.counterfactuals.encode_rows(task, task.frame.loc[[row], task.feature_names])
    cfset = fc.counterfactuals.CounterfactualSet(
        ("x", "colour"), np.array([row]), factual, codes[None], np.ones((1, 2), bool), np.ones((1, 2), bool), "hand", 0.0)
    refined = refine_counterfactuals(cfset, task, model, validity=Validity(0.15, 0.0).on(task))
    kept = refined.to_frame(task).query("cf >= 0 and valid")
    assert kept[["x", "colour"]].values.tolist() == [[50.0, "red"]]
    assert refined.copy_counts.tolist() == [1] and refined.dropped.tolist() == [0]
    assert refined.config["alternatives_tolerance"] == ALTERNATIVE_TOLERANCE

    import flex_core.counterfactuals._refine as refine_module

    with pytest.MonkeyPatch.context() as patch:  # the alternatives rule alone, as for a set refined elsewhere
        patch.setattr(refine_module, "revert_stretched", lambda p, cfs, *args, **kwargs: cfs)
        refined = refine_counterfactuals(cfset, task, model, validity=Validity(0.15, 0.0).on(task))
    kept = refined.to_frame(task).query("cf >= 0 and valid")
    assert kept[["x", "colour"]].values.tolist() == [[50.0, "red"]]
    assert refined.dropped.tolist() == [1] and refined.coverage()["alternatives_dropped"] == 1


# -- the learned forest --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def learned():
    task = planted_task(seed=0)
    model = planted_forest(task, 0)
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=N_CF, seed=0)
    rows = fc.importance.sample_factuals(store.factual_rows, N_FACTUALS, seed=0)
    return task, model, store, rows, store.ensure(rows)


def _noise_frequency(task, store, cfset) -> float:
    result = fc.importance.flex_importance(cfset, task, tau=0.1, ranges=store.ranges, intervals=False)
    return max(float(result.frequency_mean[task.feature_names.index(f)]) for f in NOISE_FEATURES)


def test_noise_features_are_not_drivers_with_the_default_generator(learned):
    task, _, store, _, cfset = learned
    assert cfset.valid.any()
    # Measured 0.016 (seed 0); the old knife-edge search gave 0.245 (colour).
    assert _noise_frequency(task, store, cfset) <= 0.02


def test_counterfactuals_stay_valid_under_refits_and_none_sits_at_a_tie(learned):
    task, model, _, _, cfset = learned
    refits = [planted_forest(task, seed) for seed in (1, 2, 3)]
    held = valid_under(refits, task, cfset).mean(axis=0)
    assert (held >= 0.95).all(), held  # measured 1.0, 1.0, 1.0; the old search: 0.21, 0.80, 0.27
    query, slot = np.nonzero(cfset.valid)
    p = model.predict_proba(fc.counterfactuals.decode_rows(task, cfset.counterfactuals[query, slot]))[:, 1]
    assert (p < 0.5 - DEFAULT_MARGIN).all() and not (p == 0.5).any()


def test_magnitudes_stay_near_the_rules_boundary(learned):
    """A way out through speed ends just below 60: at the robust boundary, one radius (1% of speed's range of
    about 100, so one unit) past where the forest splits, never above 60 and within 2 units of it."""
    task, _, _, _, cfset = learned
    j = task.feature_names.index("speed")
    query, slot = np.nonzero(cfset.valid)
    moved = cfset.counterfactuals[query, slot, j] != cfset.factuals[query, j]
    speeds = cfset.counterfactuals[query, slot, j][moved]
    assert len(speeds) >= 50
    assert SPEED_LIMIT - 2 <= np.median(speeds) <= SPEED_LIMIT  # measured 59.0


def test_the_paper_setting_is_one_setting_away_and_the_json_names_the_rule(learned):
    task, model, store, rows, _ = learned
    result = fc.importance.run_global(store, n_factuals=20)
    block = result.to_dict()["generator"]
    assert block["validity_rule"]["margin"] == DEFAULT_MARGIN and block["validity_rule"]["radius"] == DEFAULT_RADIUS
    assert block["validity_rule"]["setting"] == "robust" and block["alternatives_tolerance"] == ALTERNATIVE_TOLERANCE
    assert block["alternatives_dropped"] >= 0
    paper = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch", margin=0.0, radius=0.0),
                                   n_cf=N_CF, seed=0)
    assert paper.key != store.key and paper.validity.describe()["setting"] == "paper"
    ties = paper.ensure(rows[:40])
    query, slot = np.nonzero(ties.valid)
    p = model.predict_proba(fc.counterfactuals.decode_rows(task, ties.counterfactuals[query, slot]))[:, 1]
    assert (p < 0.5).all()  # the paper's rule: below 0.5, a tie never counts


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_on_every_seed_noise_stays_out_over_all_factuals(seed):
    """Over *all* factuals (not only those the rule agrees with), noise F <= 0.02 on seeds 0-3: the factuals are
    the cases the forest rejects with the margin, also out of bag, so the training rows whose flipped label it
    memorised are left out (measured max noise F 0, 0.012, 0.010, 0.002; before: 0.016, 0.030, 0.050, 0.031)."""
    task = planted_task(seed=seed)
    model = planted_forest(task, seed)
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=N_CF, seed=0)
    rows = fc.importance.sample_factuals(store.factual_rows, N_FACTUALS, seed=0)
    cfset = store.ensure(rows)
    assert _noise_frequency(task, store, cfset) <= 0.02
    selection = store.factual_selection
    assert selection["out_of_bag"] and selection["memorised"] > 0
    refits = [planted_forest(task, seed + k) for k in (1, 2, 3)]
    assert (valid_under(refits, task, cfset).mean(axis=0) >= 0.95).all()


def test_factuals_are_rejected_with_the_margin_and_out_of_bag(learned):
    """Seed 0's forest: every candidate case it rejects is either kept, borderline or memorised; the rows the rule
    disagrees with (memorised flipped labels, 26 of 572 candidates) are all left out; the paper's setting keeps all."""
    task, model, store, _, _ = learned
    selection = store.factual_selection
    p = model.predict_proba(task.X)[:, 1]
    assert selection["candidates"] == int((p > 0.5).sum())
    assert len(store.factual_rows) == selection["candidates"] - selection["borderline"] - selection["memorised"]
    assert (p[task.frame.index.get_indexer(store.factual_rows)] > 0.5 + DEFAULT_MARGIN).all()
    candidates = task.frame.index.to_numpy()[p > 0.5]
    assert (~rule_undesirable(task.frame.loc[candidates])).sum() > 0
    assert rule_undesirable(task.frame.loc[store.factual_rows]).all()
    paper = fc.counterfactuals.factual_rows(task, model, Validity(0.0, 0.0))
    np.testing.assert_array_equal(paper, candidates)
    result = fc.importance.run_local(store, int(store.factual_rows[0]))
    assert result.config["factuals"] == selection
    assert any("left out of the cases to explain" in note for note in result.notes)
    left_out = np.setdiff1d(candidates, store.factual_rows)
    with pytest.raises(fc.ConfigError, match="not by more than the margin"):
        fc.importance.run_local(store, int(left_out[0]))


def test_the_notes_and_the_reading_say_how_many_cases_were_left_out_and_never_call_them_unpredicted(learned):
    """A global run asking for more factuals than there are: the note counts the model's rejections and the cases
    left out (it used to say 'Only N rows are predicted undesirable', which is false once cases are left out), and
    the page's reading says the cases are those rejected with the margin, of how many."""
    from ui.reporting import describe_global

    task, model, store, _, _ = learned
    selection = store.factual_selection
    pool, left = len(store.factual_rows), selection["borderline"] + selection["memorised"]
    assert left > 0
    result = fc.importance.run_global(store, n_factuals=pool + 50, tau=0.1)
    expected = (f"Only {pool:,} cases can be explained (the model predicts bad for {selection['candidates']:,}; the "
                f"{left:,} others are borderline or memorised); all {pool:,} were used instead of {pool + 50:,}.")
    assert expected in result.notes and not [n for n in result.notes if "rows are predicted undesirable" in n]
    reading = describe_global(result, undesirable=["bad"])
    assert reading.startswith(f"Across {pool:,} cases predicted bad with the margin (of {selection['candidates']:,} "
                              f"predicted so; the {left:,} others are borderline or memorised")
    paper = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch", margin=0.0, radius=0.0),
                                   n_cf=2, seed=0)
    n_paper = len(paper.factual_rows)
    assert paper.pool_note(10**6) == (f"Only {n_paper:,} cases can be explained: the model predicts bad for no more; "
                                      f"all {n_paper:,} were used instead of 1,000,000.")


def test_no_change_of_a_returned_counterfactual_can_move_five_steps_nearer_and_stay_valid(learned):
    """Minimality on the learned forest, through the stretched reverts: every changed number of every returned
    counterfactual, moved five grid steps (0.5% of its range) toward the factual with the rest held, fails the rule
    (a revert in the refinement's last cycle once left {cibil 566} where 556 does, on loan: ten steps). One step is
    not asked: bisection assumes the rule is monotone between two grid points, and a forest's is not (issue 33)."""
    from flex_core.counterfactuals._refine import MinimalPlan
    from flex_core.counterfactuals._scoring import scorer_for

    task, model, store, _, cfset = learned
    plan = MinimalPlan.build(task, {}, store.ranges)
    query, slot = np.nonzero(cfset.valid)
    cfs, factuals = cfset.counterfactuals[query, slot], cfset.factuals[query]
    rows, features = np.nonzero((cfs != factuals) & np.array([f.is_continuous for f in task.features]))
    nearer = cfs[rows].copy()
    step = np.sign(factuals[rows, features] - cfs[rows, features]) * 5 * plan.tolerance[features]
    past = np.abs(step) >= np.abs(factuals[rows, features] - cfs[rows, features])  # one step reaches the factual
    nearer[np.arange(len(rows)), features] = np.where(past, factuals[rows, features], cfs[rows, features] + step)
    still = store.validity.check(scorer_for(model, task), nearer, factuals[rows])
    assert len(rows) > 100 and not still.any(), f"{int(still.sum())} of {len(rows)} changes could move nearer"


def test_out_of_bag_by_hand():
    """A forest of two constant trees on eight training rows with hand-set bootstraps: a row's out-of-bag P is the
    vote of the trees that did not draw it; a row both trees drew keeps the forest's own P (0.5 here)."""
    from flex_core.counterfactuals._factuals import out_of_bag_undesirable, select_factuals, selection_note

    frame = pd.DataFrame({"x": np.arange(10.0), "y": ["good"] * 5 + ["bad"] * 5})
    task = fc.make_task(frame, target="y", undesirable="bad")
    model = fc.models.fit_model(task, model="rf", seed=0, cv_folds=0)

    class Constant:  # a tree that says "bad" with probability p for every row
        def __init__(self, p):
            self.p = p

        def predict_proba(self, X):
            return np.tile([1 - self.p, self.p], (X.shape[0], 1))

    class Forest:
        classes_ = model.pipeline.classes_
        bootstrap = True
        estimators_ = [Constant(1.0), Constant(0.0)]
        # tree 1 leaves out training rows 4-7, tree 2 rows 1, 2, 3, 6, 7
        estimators_samples_ = [np.array([0, 1, 2, 3, 0, 1, 2, 3]), np.array([0, 4, 5, 0, 4, 5, 0, 4])]

        def predict_proba(self, X):
            return np.mean([tree.predict_proba(X) for tree in self.estimators_], axis=0)

        def fit(self, X, y):  # never called: scikit-learn's fitted check wants an estimator
            raise AssertionError

        def __sklearn_is_fitted__(self):
            return True

    model.pipeline.steps[1] = ("model", Forest())
    train = task.frame.index.get_indexer(model.train_index)
    assert len(train) == 8
    expected = np.full(10, 0.5)  # the forest's own P: rows outside the training set, and training row 0
    expected[train[[1, 2, 3]]] = 0.0
    expected[train[[4, 5]]] = 1.0
    np.testing.assert_allclose(out_of_bag_undesirable(task, model), expected)
    rows, selection = select_factuals(task, model, Validity(0.15, 0.0))
    assert len(rows) == 0 and selection["candidates"] == 0  # P 0.5 everywhere: a tie is no rejection
    assert selection_note({"candidates": 10, "borderline": 2, "memorised": 1, "margin": 0.15}).startswith(
        "Of the 10 cases the model predicts undesirable, 2 as borderline (P(undesirable) at most 0.5 + 0.15) and 1 as "
        "memorised")
    assert selection_note({"candidates": 10, "borderline": 2, "memorised": 0, "margin": 0.15}, "Rejected") == (
        "Of the 10 cases the model predicts Rejected, 2 as borderline (P(Rejected) at most 0.5 + 0.15) were left out "
        "of the cases to explain: a way out of them would be the model's noise (the paper's setting, margin 0 and radius 0, "
        "keeps them).")
    assert selection_note({"candidates": 3, "borderline": 0, "memorised": 0, "margin": 0.15}) is None


@pytest.mark.slow
def test_loan_counterfactuals_stay_valid_under_refits(loan_path):
    task = fc.data.load_loan(loan_path)
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=N_CF, seed=0)
    cfset = store.ensure(fc.importance.sample_factuals(store.factual_rows, N_FACTUALS, seed=0))
    refits = [fc.fit_model(task, model="rf", seed=seed, cv_folds=0) for seed in (1, 2, 3)]
    held = valid_under(refits, task, cfset).mean(axis=0)
    assert (held >= 0.95).all(), held  # measured 0.989, 0.974, 0.985; the old search: 0.68, 0.70, 0.78
    query, slot = np.nonzero(cfset.valid)
    p = model.predict_proba(fc.counterfactuals.decode_rows(task, cfset.counterfactuals[query, slot]))[:, 1]
    assert not (p == 0.5).any()  # the old search: 39% at exactly 0.5


@pytest.mark.slow
@pytest.mark.parametrize("generator", ["dice-random", "dice-genetic", "dice-kdtree"])
def test_dice_generators_refined_keep_noise_out(learned, generator):
    task, model, _, rows, _ = learned
    settings = {"time_limit": 60.0}
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator(generator, **settings), n_cf=4,
                                   seed=0, refine="minimal")
    cfset = store.ensure(rows[:30])
    assert cfset.valid.any()
    assert _noise_frequency(task, store, cfset) <= 0.05


def test_a_rule_coded_as_a_model_keeps_every_case_it_rejects():
    """A rule's P is 0 or 1: no case is borderline, and without a bootstrap there is no out-of-bag vote."""
    from flex_core.counterfactuals._factuals import select_factuals
    from tests.factories import planted

    frame = pd.DataFrame({"x": np.linspace(0, 100, 101), "colour": ["red", "blue"] * 50 + ["red"]})
    task, model = planted(frame, lambda X: X["x"].astype(float) > 60)
    rows, selection = select_factuals(task, model, Validity())
    assert selection == {"criterion": "P(undesirable) > 0.5 + margin", "margin": DEFAULT_MARGIN, "out_of_bag": False,
                         "candidates": 40, "borderline": 0, "memorised": 0}
    np.testing.assert_array_equal(rows, task.frame.index[task.frame.x > 60])
