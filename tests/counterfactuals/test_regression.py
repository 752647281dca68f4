"""Regression targets (issue 38 item 1): a band of a number as the undesirable outcome.

The band's rule and score are checked by hand; then the planted truth y = 3·x1 + 2·[x2 = a] + noise with two
noise features (n1 continuous, n2 categorical), explained with the band "above 20" on a learned random forest, a
user's gradient-boosting pipeline and the formula itself as a model: x1 is the top feature, the noise features
are (nearly) never changed, and every counterfactual's prediction is in the band.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

import flex_core as fc
from flex_core.counterfactuals import decode_rows
from flex_core.formatting import format_number

THRESHOLD = 20.0


def planted_frame(n: int = 1500, seed: int = 0, *, noise: float = 0.5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "x1": rng.uniform(0, 10, n).round(2),
        "x2": rng.choice(["a", "b", "c"], n),
        "n1": rng.normal(0, 1, n).round(3),
        "n2": rng.choice(["p", "q"], n),
    })
    frame["y"] = formula(frame) + rng.normal(0, noise, n)
    return frame


def formula(frame: pd.DataFrame) -> np.ndarray:
    return 3 * frame["x1"].to_numpy(dtype=float) + 2 * (frame["x2"] == "a").to_numpy()


class Formula:
    """The planted rule as a regressor: predicts 3·x1 + 2·[x2 = a] exactly."""

    def predict(self, X):
        return formula(X)


def _check_planted(task, model, generator: str) -> None:
    explainer = fc.FlexExplainer.from_task(task, model, seed=0, generator=generator, n_cf=3)
    result = explainer.explain_global(n_factuals=15)
    if generator == "tree":  # the regression trees were read, not searched
        assert result.generator["tree"]["ran"] == "tree", result.generator["tree"]
    frequency = dict(zip(result.feature_names, result.frequency_mean))
    assert max(frequency, key=frequency.get) == "x1", frequency
    assert frequency["n1"] <= 0.02 and frequency["n2"] <= 0.02, frequency
    cfs = explainer.counterfactuals(result.query_index)
    query, slot = np.nonzero(cfs.valid)
    assert len(query) >= len(result.query_index)  # every factual served at least once
    predicted = model.predict_value(decode_rows(task, cfs.counterfactuals[query, slot]))
    # in the band by predict, by the robust margin the generator states
    margin = explainer.model.margin_in_units(result.generator["validity_rule"]["margin"])
    assert margin > 0 and (predicted <= THRESHOLD - margin).all(), predicted.max()
    factual = model.predict_value(task.frame.loc[result.query_index, task.feature_names])
    assert (factual > THRESHOLD + margin).all()  # factuals by the same margin, on the other side
    note = explainer.store.factual_note
    assert note is None or f"predicted within {format_number(margin)} of the desired band" in note


# -- the band, by hand -------------------------------------------------------------------------------------
def test_a_band_says_which_numbers_are_undesirable_at_the_boundary_as_asked():
    above = fc.data._band.Band(above=10)
    at_or_above = fc.data._band.Band(above=10, inclusive=True)
    values = np.array([9.0, 10.0, 11.0])
    assert above.undesirable(values).tolist() == [False, False, True]  # > 10
    assert at_or_above.undesirable(values).tolist() == [False, True, True]  # ≥ 10
    below = fc.data._band.Band(below=3)
    assert below.undesirable([2.0, 3.0, 4.0]).tolist() == [True, False, False]
    outside = fc.data._band.Band(below=3, above=10)
    assert outside.distance([0.0, 5.0, 12.0]).tolist() == [3.0, -2.0, 2.0]  # max(v - 10, 3 - v)
    assert outside.undesirable([3.0, 10.0, 2.9, 10.1]).tolist() == [False, False, True, True]
    assert str(outside) == "outside 3 to 10" and outside.desired_words == "3 to 10"
    assert str(at_or_above) == "at or above 10" and at_or_above.desired_words == "below 10"


def test_the_off_band_score_is_below_a_half_exactly_inside_the_band():
    band, scale = fc.data._band.Band(above=10), 2.0
    # 0.5 + 0.5 d / (|d| + s): d = 2 -> 0.75, d = -2 -> 0.25, d = -6 -> 0.5 - 3/8 = 0.125
    np.testing.assert_allclose(band.score([12.0, 8.0, 4.0], scale), [0.75, 0.25, 0.125], rtol=0, atol=1e-15)
    at = band.score([10.0], scale)[0]
    assert at < 0.5 and at == np.nextafter(0.5, 0)  # the boundary is desirable for "above" (>)
    at = fc.data._band.Band(above=10, inclusive=True).score([10.0], scale)[0]
    assert at > 0.5 and at == np.nextafter(0.5, 1)  # and undesirable for ≥
    assert band.score([np.nextafter(10.0, 11)], scale)[0] > 0.5  # a hair above: undesirable, never a tie
    # margin m: score < 0.5 - m  <=>  d < -s m / (0.5 - m); m = 0.15, s = 2: 0.3 / 0.35
    width = band.margin_width(0.15, scale)
    assert width == pytest.approx(2 * 0.15 / 0.35)
    assert band.score([10 - width * 1.0001], scale)[0] < 0.35 < band.score([10 - width * 0.9999], scale)[0]


def test_a_band_given_wrong_is_refused_with_one_message():
    frame = planted_frame(60)
    for band, message in [({"above": 5, "below": 9}, "low end .* must be below"), ({}, "needs a threshold"),
                          ({"over": 3}, "takes the keys"), ({"above": float("nan")}, "finite number")]:
        with pytest.raises(fc.ConfigError, match=message):
            fc.make_task(frame, target="y", undesirable=band)
    with pytest.raises(fc.DataError, match="No row's y is above 1,000"):
        fc.make_task(frame, target="y", undesirable={"above": 1000})
    with pytest.raises(fc.DataError, match="Every row's y is above -100"):
        fc.make_task(frame, target="y", undesirable={"above": -100})
    with pytest.raises(fc.DataError, match="holds 'x' .*not a number"):
        fc.make_task(frame.assign(y=frame["y"].astype(object).where(frame.index != 3, "x")), target="y",
                     undesirable={"above": 10})
    with pytest.raises(fc.ConfigError, match="leave out the desired values"):
        fc.make_task(frame, target="y", undesirable={"above": 10}, desired="b")


def test_a_task_with_a_band_marks_the_true_numbers_in_it_and_words_it():
    frame = planted_frame(80)
    task = fc.make_task(frame, target="y", undesirable={"below": 10, "above": 20})
    y = frame["y"].to_numpy()
    assert task.y.tolist() == ((y < 10) | (y > 20)).astype(int).tolist()
    assert task.undesirable_words == "Y outside 10 to 20" and task.desirable_words == "Y 10 to 20"
    # a dictionary may word the target of a regression: its name, currency and unit
    worded = task.with_dictionary({"features": {"y": {"name": "Loan amount", "currency": "₹"}}})
    assert worded.target_label == "Loan amount" and worded.format_target(2500) == "₹2,500"
    assert worded.undesirable_words == "Loan amount outside ₹10 to ₹20"
    assert worded.desirable_words == "Loan amount ₹10 to ₹20"
    # a dictionary's outcome words name classes (loan.toml's Rejected / Approved): a band is said by the band, and a
    # note says why the words were not used
    classes = fc.make_task(frame, target="y", undesirable={"below": 10, "above": 20},
                           dictionary={"outcome": {"undesirable": "Rejected", "desirable": "Approved"},
                                       "features": {"y": {"name": "Loan amount", "currency": "₹"}}})
    assert classes.undesirable_words == "Loan amount outside ₹10 to ₹20"
    assert classes.desirable_words == "Loan amount ₹10 to ₹20"
    assert any("outcome words (Rejected / Approved) name classes" in note for note in classes.notes)
    kept = worded.with_overrides(features=["x1", "x2"])
    assert kept.target_label == "Loan amount"  # the target's words stay when features are left out
    # a number target without a band stays refused, now naming the three ways to give one
    with pytest.raises(fc.ConfigError, match="--above T.*--below T.*--band LO:HI"):
        fc.make_task(frame, target="y", undesirable=12.5)


# -- models ------------------------------------------------------------------------------------------------
def test_regression_scores_against_predicting_the_mean_by_hand():
    from flex_core.models._regression import regression_scores

    got = regression_scores([1, 2, 3, 4], [1, 2, 3, 5], reference=2.0)
    # errors 0, 0, 0, -1: MAE 1/4, RMSE sqrt(1/4); R² = 1 - 1 / 5 (Σ(y - 2.5)² = 5); the mean 2: errors -1, 0, 1, 2
    assert got == pytest.approx({"test_r2": 0.8, "test_mae": 0.25, "test_rmse": 0.5, "baseline_mae": 1.0,
                                 "baseline_rmse": np.sqrt(6 / 4)})


def test_fit_model_fits_a_regressor_and_scores_it_against_the_training_mean():
    task = fc.make_task(planted_frame(300), target="y", undesirable={"above": THRESHOLD})
    model = fc.models.fit_model(task, model="rf", cv_folds=3)
    assert type(model.pipeline.steps[-1][1]).__name__ == "RandomForestRegressor"
    m = model.metrics
    assert m["test_r2"] > 0.95 and m["test_mae"] < m["baseline_mae"] and m["test_rmse"] < m["baseline_rmse"]
    assert m["cv_folds"] == 3 and m["cv_r2_mean"] > 0.95
    test = task.frame.loc[model.test_index]
    train_mean = task.frame.loc[model.train_index, "y"].mean()
    assert m["baseline_mae"] == pytest.approx(np.mean(np.abs(test["y"] - train_mean)))
    summary = fc.models._fit.model_summary(model)
    assert summary["band"]["above"] == THRESHOLD and summary["test_r2"] == m["test_r2"]
    p = model.p_off_goal(test[task.feature_names])
    assert ((p > 0.5) == (model.predict_value(test[task.feature_names]) > THRESHOLD)).all()


def test_the_quality_table_puts_a_regressions_errors_beside_predicting_the_mean():
    metrics = {"cv_folds": 3, "cv_r2_mean": 0.9, "cv_accuracy_mean": 0.8, "test_r2": 0.95, "test_mae": 0.5,
               "test_rmse": 0.7, "baseline_mae": 7.5, "baseline_rmse": 8.7, "test_accuracy": 0.97}
    columns, lines = fc.models.quality_table(metrics, "test rows")
    assert columns == ["measured on", "R²", "MAE", "RMSE", "MAE of always the training mean",
                       "RMSE of always the training mean", "accuracy"]
    assert lines[0]["R²"] == 0.9 and lines[0]["MAE"] is None and lines[0]["accuracy"] == 0.8
    assert lines[1]["MAE"] == 0.5 and lines[1]["MAE of always the training mean"] == 7.5
    # a classifier's table has none of them
    assert "R²" not in fc.models.quality_table({"test_accuracy": 0.9}, "test rows")[0]


def test_the_held_out_rows_of_a_regressor_carry_its_numbers():
    task = fc.make_task(planted_frame(200), target="y", undesirable={"above": THRESHOLD})
    model = fc.models.fit_model(task, cv_folds=0)
    held = fc.models.held_out_predictions(task, model)
    rows = task.frame.loc[held.rows]
    np.testing.assert_array_equal(held.actual, rows["y"].to_numpy())
    np.testing.assert_array_equal(held.predicted, model.predict_value(rows[task.feature_names]))
    assert held.y_true.tolist() == (rows["y"] > THRESHOLD).astype(int).tolist()


def test_a_regressor_needs_a_band_and_a_band_needs_a_regressor():
    frame = planted_frame(120)
    banded = fc.make_task(frame, target="y", undesirable={"above": THRESHOLD})
    forest = fc.models.fit_model(banded, cv_folds=0)
    classes = fc.make_task(frame.assign(y=np.where(frame["y"] > THRESHOLD, "high", "low")), target="y",
                           undesirable="high")
    with pytest.raises(fc.ConfigError, match="predicts a number, not classes: give the undesirable band"):
        fc.FittedModel.from_estimator(forest.pipeline, classes, fitted_on="task")
    classifier = fc.models.fit_model(classes, cv_folds=0)
    with pytest.raises(fc.ConfigError, match="is a classifier; a band applies to a regressor"):
        fc.FittedModel.from_estimator(classifier.pipeline, banded, fitted_on="task")
    with pytest.raises(fc.ConfigError, match="give no undesired or desired classes"):
        fc.FittedModel.from_estimator(forest.pipeline, banded, undesired="high", fitted_on="task")


# -- planted -----------------------------------------------------------------------------------------------
@pytest.mark.slow  # the tree generator reads 100 deep regression trees: about 3 s
@pytest.mark.parametrize("generator", ["tree", "batch"])
def test_planted_regression_on_a_learned_forest(generator):
    task = fc.make_task(planted_frame(800), target="y", undesirable={"above": THRESHOLD})
    _check_planted(task, fc.models.fit_model(task, model="rf", cv_folds=0), generator)


@pytest.mark.parametrize("generator", ["tree", "batch"])
def test_planted_regression_on_a_users_gradient_boosting_pipeline(generator):
    """1,500 rows: on 500, depth-3 boosting learns enough of n1's noise that the tree generator's exact Pareto
    alternatives trade some of x1's change for a change of n1 (the model's truth, not the planted one)."""
    task = fc.make_task(planted_frame(), target="y", undesirable={"above": THRESHOLD})
    encode = ColumnTransformer([("levels", OneHotEncoder(sparse_output=False), ["x2", "n2"]),
                                ("numbers", "passthrough", ["x1", "n1"])], verbose_feature_names_out=False)
    pipeline = Pipeline([("encode", encode), ("boost", GradientBoostingRegressor(random_state=0))])
    pipeline.fit(task.X, task.frame["y"])
    _check_planted(task, fc.FittedModel.from_estimator(pipeline, task, fitted_on="task"), generator)


def test_planted_regression_on_the_formula_itself():
    task = fc.make_task(planted_frame(300, noise=0.0), target="y", undesirable={"above": THRESHOLD})
    _check_planted(task, fc.FittedModel.from_estimator(Formula(), task, fitted_on="task"), "batch")


@pytest.mark.parametrize(("inclusive", "lowest_x1"), [(False, 5), (True, 4)])
def test_the_boundary_is_desirable_for_above_and_undesirable_for_at_or_above(inclusive, lowest_x1):
    """Whole x1 and the formula's prediction 3·x1 hit the threshold 15 exactly at x1 = 5: under "above 15" that
    row is desirable, so a counterfactual of x1 = 7 may stop there; under "at or above 15" it must reach x1 = 4."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x1": rng.integers(0, 11, 200), "x2": rng.choice(["b", "c"], 200),
                          "n1": rng.normal(0, 1, 200).round(3), "n2": rng.choice(["p", "q"], 200)})
    frame["y"] = formula(frame)
    task = fc.make_task(frame, target="y", undesirable={"above": 15, "inclusive": inclusive},
                        immutable=["x2", "n1", "n2"])
    model = fc.FittedModel.from_estimator(Formula(), task, fitted_on="task")
    at = task.frame[task.frame["x1"] == 5].head(1)[task.feature_names]
    assert model.predict_undesirable(at).tolist() == [int(inclusive)]
    explainer = fc.FlexExplainer.from_task(task, model, generator="batch", n_cf=2,
                                           generator_settings={"margin": 0.0, "radius": 0.0})
    row = int(task.frame.index[task.frame["x1"] == 7][0])
    cfs = explainer.counterfactuals([row])
    values = decode_rows(task, cfs.counterfactuals[0][cfs.valid[0]])["x1"].astype(float)
    assert values.max() == lowest_x1, values.tolist()


def test_a_notebooks_regressor_is_explained_with_a_band():
    frame = planted_frame(300)
    X = frame.drop(columns=["y"])
    pipeline = fc.models.build_pipeline(fc.make_task(frame, target="y", undesirable={"above": THRESHOLD}))
    pipeline.fit(X, frame["y"])
    explainer = fc.FlexExplainer(pipeline, X, undesired={"above": THRESHOLD}, y=frame["y"], n_cf=2)
    assert explainer.model.band == explainer.task.band and explainer.model.metrics["test_r2"] > 0.9
    assert explainer.explain_global(n_factuals=5).rank[0] == 1  # x1, the planted driver, ranks first
    with pytest.raises(fc.ConfigError, match="predicts a number, not classes"):
        fc.FlexExplainer(pipeline, X, undesired=1)


@pytest.mark.parametrize("generator", ["dice-random", "batch-plausible"])
def test_every_generator_runs_on_the_off_band_score(generator):
    """DiCE through the model's binary view, the plausible batch search through its own checks: unchanged."""
    if generator.startswith("dice"):
        pytest.importorskip("dice_ml")
    task = fc.make_task(planted_frame(300), target="y", undesirable={"above": THRESHOLD})
    model = fc.models.fit_model(task, cv_folds=0)
    explainer = fc.FlexExplainer.from_task(task, model, generator=generator, n_cf=2)
    result = explainer.explain_global(n_factuals=4)
    cfs = explainer.counterfactuals(result.query_index)
    query, slot = np.nonzero(cfs.valid)
    assert len(query) and (model.predict_value(decode_rows(task, cfs.counterfactuals[query, slot])) <= THRESHOLD).all()


def test_a_regression_project_saves_its_numbers_and_band_and_loads_the_same(tmp_path):
    task = fc.make_task(planted_frame(200), target="y", undesirable={"above": THRESHOLD, "inclusive": True})
    explainer = fc.FlexExplainer.from_task(task, "rf", n_cf=2, fit_options={"cv_folds": 0})
    explainer.save(tmp_path)
    assert fc.FlexExplainer.read_settings(tmp_path)["undesired"] == {"above": THRESHOLD, "below": None,
                                                                     "inclusive": True}
    loaded = fc.FlexExplainer.load(tmp_path)
    assert loaded.task.band == task.band and loaded.model.band_scale == pytest.approx(explainer.model.band_scale)
    # the numbers (as data.csv writes them, to the last digit), not 0/1 labels
    np.testing.assert_allclose(loaded.task.frame[loaded.task.target], task.frame["y"], rtol=1e-14)
    X = task.X.iloc[:20]
    np.testing.assert_allclose(loaded.model.p_off_goal(X), explainer.model.p_off_goal(X), rtol=1e-12)


def test_a_regressors_borderline_cases_are_said_in_the_targets_units():
    from flex_core.counterfactuals._factuals import selection_note

    selection = {"candidates": 229, "borderline": 9, "memorised": 0, "margin": 0.15}
    note = selection_note(selection, "y above 20", margin_units=0.3717)
    assert note.startswith("Of the 229 cases the model predicts y above 20, 9 as borderline (predicted within 0.3717 "
                           "of the desired band) were left out")
    assert "P(" in selection_note(selection, "Rejected")  # a classifier's stays a probability


@pytest.mark.slow  # the flip-alone shares rerun the generator per feature, then a region and the report: about 3 s
def test_every_level_what_if_and_the_report_run_on_a_band(tmp_path):
    task = fc.make_task(planted_frame(300), target="y", undesirable={"below": 8, "above": THRESHOLD})
    model = fc.models.fit_model(task, cv_folds=0)
    explainer = fc.FlexExplainer.from_task(task, model, generator="batch", n_cf=2)
    result = explainer.explain_global(n_factuals=8, sufficiency=True)
    assert result.flip_alone is not None and result.necessary_frequency is not None
    region = explainer.explain_region(global_result=result, where={"x2": "a"}, k=3)
    assert len(region.members) == 4 and region.to_dict()["mode_shift"]
    row = int(result.query_index[0])
    answer = explainer.what_if({"x1": 9.5}, row=row)
    assert answer.predicted_undesirable and answer.probability > 0.5
    found = decode_rows(task, answer.counterfactuals.counterfactuals[0][answer.counterfactuals.valid[0]])
    inside = -task.band.distance(model.predict_value(found))
    assert len(found) and (inside > 0).all()  # in [8, 20]
    assert explainer.report(tmp_path / "report.html").exists()


# -- factuals a regression forest memorised ------------------------------------------------------------------
def test_a_regression_forests_out_of_bag_score_is_scikit_learns_out_of_bag_prediction_through_the_band():
    """Independent of our loop over trees: the same forest refitted with ``oob_score=True`` (same seed, same rows,
    so the same bootstraps) gives scikit-learn's ``oob_prediction_``; ours is its off-band score."""
    from sklearn.base import clone

    from flex_core.counterfactuals._factuals import out_of_bag_undesirable

    task = fc.make_task(planted_frame(400), target="y", undesirable={"above": THRESHOLD})
    model = fc.models.fit_model(task, model="rf", seed=0, cv_folds=0)
    encoder, forest = model.pipeline.steps[0][1], model.pipeline.steps[1][1]
    train = task.frame.loc[model.train_index]
    twin = clone(forest).set_params(oob_score=True).fit(encoder.transform(model.estimator_input(train[task.feature_names])),
                                                         train["y"].to_numpy(dtype=float))
    ours = pd.Series(out_of_bag_undesirable(task, model), index=task.frame.index)
    expected = model.band.score(twin.oob_prediction_, model.band_scale)
    np.testing.assert_allclose(ours.loc[model.train_index].to_numpy(), expected, rtol=0, atol=1e-12)
    # Rows outside the training set keep the forest's own score.
    held_out = task.frame.index.difference(model.train_index)
    np.testing.assert_allclose(ours.loc[held_out].to_numpy(),
                               model.predict_proba(task.frame.loc[held_out, task.feature_names])[:, 1], atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_learned_regression_forest_leaves_out_rows_it_memorised_as_factuals(seed):
    """Label noise for a number: 5% of the rows get y + 15. A forest memorises some of those whose planted rule
    keeps them clearly inside the band (3·x1 + 2·[x2 = a] ≤ 18.5). With leaves of at least five rows (the regressor
    FLEX fits) the margin alone took 2-13 of them as factuals (seeds 0-3), the out-of-bag check as well 0-10 of
    550-560; the rest are rows whose leaf shares a spiked neighbour, which every tree predicts high, seen or not.
    (With one-row leaves: 19-24 and 5-7.) Measured 2026-11-28."""
    from unittest import mock

    from flex_core.counterfactuals import _factuals
    from flex_core.counterfactuals._validity import Validity

    frame = planted_frame(1500, seed)
    spiked = np.random.default_rng(100 + seed).random(len(frame)) < 0.05
    frame.loc[spiked, "y"] += 15
    task = fc.make_task(frame, target="y", undesirable={"above": THRESHOLD})
    model = fc.models.fit_model(task, model="rf", seed=seed, cv_folds=0)
    rule = Validity(0.15, 0.01)
    rows, selection = _factuals.select_factuals(task, model, rule)
    with mock.patch.object(_factuals, "out_of_bag_undesirable", lambda task, model: None):
        margin_only, _ = _factuals.select_factuals(task, model, rule)
    clearly_in = pd.Series(formula(task.frame) <= THRESHOLD - 1.5, index=task.frame.index)
    assert selection["out_of_bag"] and selection["memorised"] == len(margin_only) - len(rows) > 0
    assert clearly_in.loc[rows].sum() < clearly_in.loc[margin_only].sum()
    assert clearly_in.loc[rows].sum() <= 0.02 * len(rows)
    note = _factuals.selection_note(selection, margin_units=model.margin_in_units(rule.margin))
    assert "as memorised (the trees that did not train on the row do not predict it that far outside" in note


def test_the_planted_rule_as_a_regressor_has_no_out_of_bag_check_and_keeps_its_clear_factuals():
    """The rule coded as a model has no bootstrap: its factuals are those off the band by the margin, every one of
    them off the band by the rule itself, and the selection says no out-of-bag check applied."""
    from flex_core.counterfactuals import _factuals
    from flex_core.counterfactuals._validity import Validity

    task = fc.make_task(planted_frame(600, 0), target="y", undesirable={"above": THRESHOLD})
    model = fc.FittedModel.from_estimator(Formula(), task, fitted_on="task")
    assert _factuals.out_of_bag_undesirable(task, model) is None
    rows, selection = _factuals.select_factuals(task, model, Validity(0.15, 0.01))
    assert not selection["out_of_bag"] and selection["memorised"] == 0 and len(rows) > 0
    margin = model.margin_in_units(0.15)
    assert (formula(task.frame.loc[rows]) > THRESHOLD + margin).all()
