"""The tree form of regressors (issue 38): every supported regressor read exactly, checked against its own predict.

At random coded points (numbers in and beyond their range, missing values where the model takes them, every
level) the form's prediction equals the model's ``predict`` to 1e-9 (XGBoost's float32 sum to the bit), and its
P(undesirable) the band's off-band score: FLEX's own pipelines, scikit-learn's forests and boosting in a pipeline,
and XGBoost, LightGBM and HistGradientBoosting on native categories.
"""

from __future__ import annotations

import numpy as np
import pytest

import flex_core as fc
from flex_core.counterfactuals import decode_rows
from flex_core.counterfactuals._treeform import tree_form
from tests.counterfactuals.test_treeform import _frame, _native, _points
from tests.tree_checks import compiled_and_numpy, native_booster

BAND = {"above": 4.0}


def _numbers(seed=0, *, missing=False):
    """test_treeform's frame with its score as the target, a number (the label dropped)."""
    frame = _frame(seed, missing=missing)
    rng = np.random.default_rng(seed + 100)
    score = (frame["x"].fillna(50) / 25 + (frame["colour"] == "red") * 2 - (frame["size"] == "L") + frame["z"] / 10
             + rng.normal(0, 0.8, len(frame)))
    return frame.drop(columns=["label"]).assign(amount=score)


def _task(frame, band=None):
    return fc.make_task(frame.dropna(subset=["amount"]).dropna(), target="amount", undesirable=band or BAND,
                        kinds={"z": "continuous"}, ordinal_orders={"size": ["S", "M", "L"]})


def _reads_exactly(model, task, *, missing=True):
    form = tree_form(model, task)
    codes = _points(task, missing=missing)
    rows = decode_rows(task, codes)
    predicted = form.prediction(form.raw(codes))
    if form.float32:  # XGBoost sums its trees in float32 from its base score: reproduced to the bit
        np.testing.assert_array_equal(predicted.astype(np.float32), model.predict_value(rows).astype(np.float32))
    else:
        np.testing.assert_allclose(predicted, model.predict_value(rows), rtol=0, atol=1e-9)
    np.testing.assert_allclose(form(codes), model.p_off_goal(rows), rtol=0, atol=1e-9)
    return form


@pytest.mark.parametrize("model", ["rf", "gb"])
@pytest.mark.parametrize("encoding", ["onehot", "label"])
def test_flex_regression_pipelines_read_exactly(model, encoding):
    task = _task(_numbers())
    fitted = fc.fit_model(task, model=model, encoding=encoding, cv_folds=0)
    form = _reads_exactly(fitted, task)
    assert form.link == ("band-mean" if model == "rf" else "band")


@pytest.mark.parametrize("kind", ["extra", "gradient", "hist", "forest", "decision-tree", "extra-tree"])
def test_sklearn_regressors_in_a_pipeline(kind):
    from sklearn.ensemble import (
        ExtraTreesRegressor,
        GradientBoostingRegressor,
        HistGradientBoostingRegressor,
        RandomForestRegressor,
    )

    task = _task(_numbers(2), band={"below": 1.5, "above": 4.0, "inclusive": True})
    from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor

    estimator = {"decision-tree": DecisionTreeRegressor(max_depth=6, random_state=0),
                 "extra-tree": ExtraTreeRegressor(max_depth=6, random_state=0),
                 "extra": ExtraTreesRegressor(20, random_state=0),
                 "gradient": GradientBoostingRegressor(n_estimators=30, learning_rate=0.2, random_state=0),
                 "hist": HistGradientBoostingRegressor(max_iter=30, random_state=0),
                 "forest": RandomForestRegressor(20, random_state=0)}[kind]
    pipeline = fc.models.build_pipeline(task, model="rf").set_params(classify=estimator).fit(task.X, task.frame["amount"])
    model = fc.FittedModel.from_estimator(pipeline, task, fitted_on="task")
    form = _reads_exactly(model, task, missing=kind != "gradient")  # GradientBoostingRegressor takes no missing values
    assert (form.n_trees == 1) == kind.endswith("-tree")


@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "hist"])
def test_native_categorical_regressors_with_missing_values(library):
    frame = _numbers(3, missing=True)
    task = _task(frame, band={"below": 2.0})
    model = fc.FittedModel.from_estimator(native_booster(library, _native(frame.rename(columns={"amount": "label"})), frame["amount"], regressor=True), task)
    form = _reads_exactly(model, task)
    assert (~form.numeric[form.feature >= 0]).any()  # it did read category splits


@pytest.mark.parametrize("band", [{"below": 2.0}, {"below": 1.5, "above": 4.0}])
def test_tree_generator_counterfactuals_of_a_regressor_land_in_the_band(band):
    """Below a threshold or outside a band the score falls as the prediction rises: read exactly all the same."""
    frame = _numbers(4)
    task = _task(frame, band=band)
    model = fc.FittedModel.from_estimator(
        native_booster("lightgbm", _native(frame.rename(columns={"amount": "label"})), frame["amount"], regressor=True), task)
    explainer = fc.FlexExplainer.from_task(task, model, generator="tree", n_cf=3)
    result = explainer.explain_global(n_factuals=12)
    assert result.generator["tree"]["ran"] == "tree"
    cfs = explainer.counterfactuals(result.query_index)
    query, slot = np.nonzero(cfs.valid)
    assert len(query) >= len(result.query_index)
    predicted = model.predict_value(decode_rows(task, cfs.counterfactuals[query, slot]))
    margin = model.margin_in_units(result.generator["validity_rule"]["margin"])
    inside = -task.band.distance(predicted)  # how far inside the desired band
    assert (inside >= margin).all(), inside.min()


def test_a_loss_whose_prediction_is_not_the_trees_sum_is_not_read():
    from sklearn.ensemble import HistGradientBoostingRegressor

    frame = _numbers(5)
    frame["amount"] = frame["amount"].abs() + 0.1
    task = _task(frame, band={"above": 4.0})
    pipeline = fc.models.build_pipeline(task, model="rf").set_params(
        classify=HistGradientBoostingRegressor(loss="poisson", max_iter=10)).fit(task.X, task.frame["amount"])
    model = fc.FittedModel.from_estimator(pipeline, task, fitted_on="task")
    with pytest.raises(fc.ConfigError, match="does not read the loss 'poisson'"):
        tree_form(model, task)


@pytest.mark.parametrize(("band", "skips"), [({"above": 4.0}, True), ({"below": 2.0}, False),
                                            ({"below": 1.5, "above": 4.0}, True)])
def test_the_bound_on_a_bands_score_skips_pairs_without_losing_a_counterfactual(band, skips, monkeypatch):
    """Pairs whose lowest reachable score misses the rule are skipped: the same counterfactuals as reading all."""
    from flex_core.counterfactuals import _treeprofile

    task = _task(_numbers(7), band=band)
    model = fc.fit_model(task, model="rf", cv_folds=0)
    runs = []
    for bounded in (True, False):
        if not bounded:  # no bound: every pair is read
            monkeypatch.setattr(_treeprofile, "lowest_band_score",
                                lambda form, factuals, short, pairs, near: np.full(len(short) * len(pairs), -np.inf))
        explainer = fc.FlexExplainer.from_task(task, model, generator="tree", n_cf=8)  # short of one-feature ways
        result = explainer.explain_global(n_factuals=10)
        runs.append((result.generator["tree"], explainer.counterfactuals(result.query_index)))
    (bounded, with_bound), (unbounded, without) = runs
    assert (bounded["pairs_skipped"] > 0) == skips and unbounded["pairs_skipped"] == 0  # below 2 every pair may reach
    np.testing.assert_array_equal(with_bound.valid, without.valid)
    np.testing.assert_array_equal(with_bound.counterfactuals, without.counterfactuals)


@pytest.mark.parametrize("library", ["forest", "lightgbm", "hist"])
@pytest.mark.parametrize("band", [{"above": 4.0}, {"below": 1.5, "above": 4.0, "inclusive": True}])
def test_regressors_two_feature_tradeoffs_compiled_equal_numpy(library, band, monkeypatch):
    """A regressor's pairs go through the compiled search with the band's score (forests and boosting in float64):
    it gives what the numpy pair profiles give (the same counterfactuals of every case; two equally small ones may
    come in the other order, which follows their scores' last bits, summed in another order there)."""
    frame = _numbers(8)
    task = _task(frame, band=band)
    if library == "forest":
        model = fc.fit_model(task, model="rf", cv_folds=0)
    else:
        estimator = native_booster(library, _native(frame.rename(columns={"amount": "label"})), frame["amount"], regressor=True)
        model = fc.FittedModel.from_estimator(estimator, task)
    compiled, numpy_read = compiled_and_numpy(model, task, monkeypatch)
    np.testing.assert_array_equal(compiled.valid, numpy_read.valid)
    for q in range(len(compiled.valid)):
        found = [sorted(map(tuple, run.counterfactuals[q][run.valid[q]].tolist())) for run in (compiled, numpy_read)]
        assert found[0] == found[1], q
    assert compiled.coverage()["tree"]["pairs_read"] > 0
