"""Any class as the goal (issue 38, item 2): with a desired class, a counterfactual must reach it, not just leave the
undesired one.

Planted: three classes over two features and two noise features. "C" (desired) exactly when x2 > 0.7; else "B"
when x1 > 0.5; else "A" (undesired). From an "A" case, raising x1 leaves "A" (to "B") but only x2 reaches "C".
A learned forest, the same rule coded as a model (no tree ensemble: the tree generator hands it to batch) and a
forest FLEX trains itself each get counterfactuals from every generator; every one counted valid must be predicted
"C" with the margin (P(C) > 0.5 + 0.15) by the model's own predict_proba, and so changes x2.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.counterfactuals import decode_rows

MARGIN = 0.15  # the default robust margin: valid when P(desired) > 0.65


def planted(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"x1": rng.uniform(0, 1, n).round(3), "x2": rng.uniform(0, 1, n).round(3),
                          "noise": rng.uniform(0, 1, n).round(3), "colour": rng.choice(["red", "blue", "green"], n)})
    frame["y"] = np.where(frame["x2"] > 0.7, "C", np.where(frame["x1"] > 0.5, "B", "A"))
    return frame


class PlantedRule:
    """The rule as a 'fitted classifier' (probability 0.95 on the rule's class): no tree ensemble to read."""

    classes_ = np.array(["A", "B", "C"])

    def predict_proba(self, X):
        label = np.where(X["x2"] > 0.7, 2, np.where(X["x1"] > 0.5, 1, 0))
        proba = np.full((len(X), 3), 0.025)
        proba[np.arange(len(X)), label] = 0.95
        return proba

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


def _forest(frame):
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    encode = ColumnTransformer([("onehot", OneHotEncoder(sparse_output=False), ["colour"])], remainder="passthrough")
    model = Pipeline([("encode", encode), ("classify", RandomForestClassifier(n_estimators=60, random_state=0))])
    return model.fit(frame.drop(columns="y"), frame["y"])


def _explain(model, frame, generator: str, *, desired, n_factuals: int = 12, n_cf: int = 4):
    explainer = fc.FlexExplainer(model, frame.drop(columns="y"), y=frame["y"], undesired="A", desired=desired,
                                 generator=generator, n_cf=n_cf)
    result = explainer.explain_global(n_factuals=n_factuals)
    cfset = explainer.store.ensure(result.query_index)
    rows = decode_rows(explainer.task, cfset.counterfactuals[cfset.valid])
    return explainer, result, rows


def _assert_every_counterfactual_reaches_c(estimator, result, rows, *, minimal: bool = True):
    """Every valid counterfactual is predicted C with the margin by the estimator itself, so x2 changed; with minimal
    changes (tree, batch) nothing else does (DiCE's random draws carry passengers, as the paper's F counts them)."""
    assert len(rows) > 0
    proba = estimator.predict_proba(rows)
    c = list(estimator.classes_).index("C")
    assert (np.asarray(estimator.classes_)[proba.argmax(axis=1)] == "C").all()
    assert (proba[:, c] > 0.5 + MARGIN).all(), proba[:, c].min()
    assert (rows["x2"] > 0.7).all()  # the only way into C
    freq = dict(zip(result.feature_names, result.frequency_mean))
    assert freq["x2"] == 1.0, freq
    if minimal:
        assert freq["x1"] <= 0.1 and freq["noise"] <= 0.1 and freq["colour"] <= 0.1, freq


GENERATORS = ["tree", "batch", pytest.param("dice-random", marks=pytest.mark.slow)]


@pytest.mark.parametrize("generator", GENERATORS)
def test_a_learned_forest_reaches_the_desired_class_only_through_x2(generator):
    frame = planted()
    forest = _forest(frame)
    explainer, result, rows = _explain(forest, frame, generator, desired="C")
    _assert_every_counterfactual_reaches_c(forest, result, rows, minimal=not generator.startswith("dice"))
    assert explainer.model.desired == ("C",) and explainer.model.off_goal == ("A", "B")
    written = result.to_dict()
    assert written["model"]["desired"] == ["C"] and written["config"]["desired"]["classes"] == ["C"]
    if generator == "tree":  # the forest itself was read, not handed to batch
        assert written["generator"]["tree"]["ran"] == "tree"


def test_without_a_desired_class_leaving_a_is_enough_so_x1_counts():
    frame = planted()
    forest = _forest(frame)
    _, result, rows = _explain(forest, frame, "tree", desired=())
    predicted = forest.predict(rows)
    assert (predicted != "A").all() and (predicted == "B").any()  # some ways out stop at B
    assert dict(zip(result.feature_names, result.frequency_mean))["x1"] > 0.3


@pytest.mark.parametrize("generator", ["tree", "batch"])
def test_the_rule_coded_as_a_model_reaches_the_desired_class(generator):
    frame = planted()
    rule = PlantedRule()
    _, result, rows = _explain(rule, frame, generator, desired="C")
    _assert_every_counterfactual_reaches_c(rule, result, rows)


def test_a_forest_flex_trains_learns_the_desired_class_apart_and_reaches_it():
    frame = planted()
    task = fc.make_task(frame, target="y", undesirable="A", desired="C")
    assert task.desired == ("C",) and set(np.unique(task.model_labels)) == {0, 1, 2}
    model = fc.fit_model(task, model="rf", cv_folds=0, seed=0)
    assert model.classes == (0, 1, 2) and model.undesired == (1,) and model.desired == (2,)
    explainer = fc.FlexExplainer.from_task(task, model, n_cf=4)
    result = explainer.explain_global(n_factuals=12)
    cfset = explainer.store.ensure(result.query_index)
    rows = decode_rows(task, cfset.counterfactuals[cfset.valid])
    proba = model.pipeline.predict_proba(rows)
    assert len(rows) and (proba[:, 2] > 0.5 + MARGIN).all() and (rows["x2"] > 0.7).all()


def test_a_desired_class_is_checked_against_the_data_and_the_undesired_ones():
    frame = planted()
    with pytest.raises(fc.DataError, match="No row has the desired outcome 'D'"):
        fc.make_task(frame, target="y", undesirable="A", desired="D")
    with pytest.raises(fc.ConfigError, match="cannot be both undesirable and desired"):
        fc.make_task(frame, target="y", undesirable="A", desired="A")
    with pytest.raises(fc.ConfigError, match="The desired value .D. is not a class of the model; its classes are: A, B, C"):
        fc.FlexExplainer(_forest(frame), frame.drop(columns="y"), undesired="A", desired="D")


def test_the_cli_takes_desired_and_its_json_says_so(tmp_path, capsys):
    import json

    from flex_core.cli import main

    data, out = tmp_path / "planted.csv", tmp_path / "out.json"
    planted(300).to_csv(data, index=False)
    code = main(["global", "--data", str(data), "--target", "y", "--undesired", "A", "--desired", "C",
                 "--generator", "batch", "--n-factuals", "6", "--n-cf", "2", "--cv-folds", "0", "--quiet",
                 "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    written = json.loads(out.read_text())
    assert written["config"]["desired"]["classes"] == ["C"]
    assert dict(zip([f["name"] for f in written["features"]], [f["frequency_mean"] for f in written["features"]]))["x2"] == 1.0
    code = main(["global", "--data", str(data), "--target", "y", "--undesired", "A", "--desired", "D", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["error: No row has the desired outcome 'D'; the target values are: A, B, C."]


def test_a_saved_project_keeps_its_desired_class(tmp_path):
    frame = planted(300)
    explainer = fc.FlexExplainer(_forest(frame), frame.drop(columns="y"), y=frame["y"], undesired="A", desired="C")
    loaded = fc.FlexExplainer.load(explainer.save(tmp_path / "project"))
    assert loaded.model.desired == ("C",) and loaded.task.desired == ("C",)
    assert loaded.task.fingerprint == explainer.task.fingerprint


def test_a_project_of_a_model_flex_trained_for_a_desired_class_loads_with_the_same_numbers(tmp_path):
    """The saved outcome is what the model learned (0 other, 1 undesired, 2 desired), so the loaded explainer's goal
    is the same class and its counterfactuals are the same."""
    frame = planted(300)
    task = fc.make_task(frame, target="y", undesirable="A", desired="C")
    first = fc.FlexExplainer.from_task(task, "rf", seed=0, fit_options={"cv_folds": 0})
    loaded = fc.FlexExplainer.load(first.save(tmp_path / "project"))
    assert loaded.model.desired == first.model.desired and loaded.model.undesired == first.model.undesired
    a, b = first.explain_global(n_factuals=20), loaded.explain_global(n_factuals=20)
    np.testing.assert_array_equal(a.query_index, b.query_index)
    np.testing.assert_array_equal(a.frequency_mean, b.frequency_mean)
