"""Models trained elsewhere with LightGBM and XGBoost (issue 19): names with spaces, pandas category
columns and .skops files, through the API and the CLI."""

from __future__ import annotations

import collections
import json

import numpy as np
import pandas as pd
import pytest
import skops.io as sio

import flex_core as fc
from flex_core.cli import main
from flex_core.models._files import untrusted_names

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def cancer():
    """sklearn's breast-cancer frame: every column name has spaces ("mean radius")."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer(as_frame=True)
    X, y = data.data.iloc[::3].reset_index(drop=True), data.target.iloc[::3].reset_index(drop=True)
    return X, y.map({0: "malignant", 1: "benign"})


@pytest.fixture(scope="module")
def penguins():
    """A small synthetic frame with pandas category columns (one with a space in its name)."""
    rng = np.random.default_rng(0)
    n = 240
    X = pd.DataFrame({
        "bill length": rng.normal(44, 5, n).round(1),
        "species": pd.Categorical(rng.choice(["Adelie", "Gentoo", "Chinstrap"], n)),
        "island": pd.Categorical(rng.choice(["Biscoe", "Dream", "Torgersen"], n)),
    })
    heavy = (X["bill length"] > 45) | (X["species"] == "Gentoo")
    return X, pd.Series(np.where(heavy, "heavy", "light"), name="mass")


def lightgbm_model(X, y):
    return lgb.LGBMClassifier(n_estimators=15, num_leaves=7, min_child_samples=5, verbose=-1, n_jobs=1).fit(X, y)


def xgboost_model(X, y):
    codes = (y == y.iloc[0]).astype(int)  # XGBoost wants 0/1 labels
    return xgb.XGBClassifier(n_estimators=15, max_depth=3, enable_categorical=True, tree_method="hist", n_jobs=1).fit(X, codes)


def test_lightgbm_takes_the_datas_names_with_spaces(cancer):
    X, y = cancer
    model = lightgbm_model(X, y)
    assert model.feature_name_[0] == "mean_radius"
    explainer = fc.FlexExplainer(model, X, y=y, undesired="malignant")
    assert explainer.task.feature_names == list(X.columns)
    assert explainer.model.schema.renames["mean radius"] == "mean_radius"
    np.testing.assert_allclose(explainer.model.predict_proba(explainer.task.X)[:, 1],
                               model.predict_proba(X)[:, list(model.classes_).index("malignant")])
    result = explainer.explain_global(n_factuals=8)
    assert len(result.frequency_mean) == X.shape[1] and np.isfinite(result.frequency_mean).all()


@pytest.mark.parametrize("make", [lightgbm_model, xgboost_model], ids=["lightgbm", "xgboost"])
def test_category_columns_get_the_training_categories(penguins, make):
    X, y = penguins
    model = make(X, y)
    undesired = "heavy" if make is lightgbm_model else 1
    explainer = fc.FlexExplainer(model, X, y=y if make is lightgbm_model else (y == y.iloc[0]).astype(int),
                                 undesired=undesired)
    schema = explainer.model.schema
    assert schema.categories["species"] == ("Adelie", "Chinstrap", "Gentoo")
    given = explainer.model.estimator_input(explainer.task.X)
    assert isinstance(given["species"].dtype, pd.CategoricalDtype)
    assert list(given["species"].cat.categories) == ["Adelie", "Chinstrap", "Gentoo"]
    expected = model.predict_proba(X)[:, list(model.classes_).index(undesired)]
    np.testing.assert_allclose(explainer.model.predict_proba(explainer.task.X)[:, 1], expected, rtol=1e-6)
    result = explainer.explain_global(n_factuals=8)
    assert len(result.frequency_mean) == 3 and np.isfinite(result.frequency_mean).all()


def test_a_missing_column_is_named_with_the_fix(cancer):
    X, y = cancer
    model = lightgbm_model(X, y)
    with pytest.raises(fc.DataError, match=r"lacks a column the model needs: mean_radius\..*LightGBM stores names"):
        fc.FlexExplainer(model, X.drop(columns=["mean radius"]), y=y, undesired="malignant")


@pytest.mark.parametrize("make", [lightgbm_model, xgboost_model], ids=["lightgbm", "xgboost"])
def test_booster_skops_files_load_and_predict_the_same(tmp_path, penguins, make):
    X, y = penguins
    model = make(X, y)
    path = fc.models.save_model(model, tmp_path / "model.skops")
    loaded = fc.models.load_model(path)
    np.testing.assert_allclose(loaded.predict_proba(X), model.predict_proba(X))


def test_collections_is_trusted_by_exact_type_only(tmp_path):
    path = tmp_path / "hostile.skops"
    sio.dump({"counts": collections.Counter("aab")}, path)
    assert untrusted_names(path.read_bytes()) == ["the type collections.Counter"]
    with pytest.raises(fc.ConfigError, match="refused: it names the type collections.Counter, which FLEX does not trust"):
        fc.models.load_model(path)


def run_model_file(tmp_path, frame: pd.DataFrame, model, target: str, undesired: str) -> dict:
    csv, model_file, out = tmp_path / "data.csv", tmp_path / "model.skops", tmp_path / "out.json"
    frame.to_csv(csv, index=False)
    fc.models.save_model(model, model_file)
    code = main(["global", "--data", str(csv), "--target", target, "--undesired", undesired, "--model-file",
                 str(model_file), "--n-factuals", "10", "--n-cf", "3", "--quiet", "--out", str(out)])
    assert code == 0
    return json.loads(out.read_text())


def test_cli_explains_a_lightgbm_file_on_names_with_spaces(tmp_path, cancer):
    X, y = cancer
    result = run_model_file(tmp_path, X.assign(diagnosis=y), lightgbm_model(X, y), "diagnosis", "malignant")
    assert {f["name"] for f in result["features"]} == set(X.columns)
    assert result["model"]["name"] == "model.skops"


@pytest.mark.parametrize("make", [lightgbm_model, xgboost_model], ids=["lightgbm", "xgboost"])
def test_cli_explains_a_booster_file_on_category_columns(tmp_path, penguins, make):
    X, y = penguins
    target = y if make is lightgbm_model else (y == y.iloc[0]).astype(int)
    result = run_model_file(tmp_path, X.assign(mass=target), make(X, y), "mass",
                            "heavy" if make is lightgbm_model else "1")
    assert {f["name"] for f in result["features"]} == {"bill length", "species", "island"}


@pytest.mark.parametrize("make", [lightgbm_model, xgboost_model], ids=["lightgbm", "xgboost"])
def test_a_bare_booster_gets_treeshap_on_its_category_columns(penguins, make):
    X, y = penguins
    model = make(X, y)
    target = y if make is lightgbm_model else (y == y.iloc[0]).astype(int)
    undesired = model.classes_[0]  # the sign flips: SHAP explains the undesirable class's log-odds
    explainer = fc.FlexExplainer(model, X, y=target, undesired=undesired)
    rows = list(explainer.task.frame.index[:12])
    shap = explainer.shap(rows)
    assert shap.explainer == "tree (TreeExplainer)" and shap.config["output"].startswith("log-odds")
    # The libraries' own TreeSHAP, for classes_[1]: ours is its negation, in the task's feature order.
    if make is lightgbm_model:
        native = model.predict(X.iloc[rows], pred_contrib=True)[:, :-1]
    else:
        native = model.get_booster().predict(xgb.DMatrix(X.iloc[rows], enable_categorical=True), pred_contribs=True)[:, :-1]
    np.testing.assert_allclose(shap.values, -native, rtol=1e-4, atol=1e-5)
    kernel = explainer.shap(rows[:2], explainer="kernel")
    assert kernel.explainer == "kernel (KernelExplainer)"


def test_cli_shap_names_treeshap_for_a_booster_file(tmp_path, cancer):
    X, y = cancer
    frame = X.assign(diagnosis=(y == y.iloc[0]).astype(int))  # XGBoost's 0/1 labels
    csv, model_file, out = tmp_path / "data.csv", tmp_path / "model.skops", tmp_path / "out.json"
    frame.to_csv(csv, index=False)
    fc.models.save_model(xgboost_model(X, y), model_file)
    code = main(["global", "--data", str(csv), "--target", "diagnosis", "--undesired", "1", "--model-file",
                 str(model_file), "--n-factuals", "10", "--n-cf", "3", "--shap", "--quiet", "--out", str(out)])
    assert code == 0
    result = json.loads(out.read_text())
    assert result["shap"]["explainer"] == "tree (TreeExplainer)"
    assert all(np.isfinite(f["shap_mean_abs"]) for f in result["features"])


def test_a_bare_sklearn_forest_gets_treeshap_for_the_probability(cancer):
    from sklearn.ensemble import RandomForestClassifier

    X, y = cancer
    forest = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0, n_jobs=1).fit(X, y)
    explainer = fc.FlexExplainer(forest, X, y=y, undesired="malignant")
    rows = list(explainer.task.frame.index[:6])
    shap = explainer.shap(rows)
    assert shap.explainer == "tree (TreeExplainer)" and shap.config["output"] == "P(undesirable)"
    # Additive: the base value plus the row's SHAP values is P(malignant).
    p = forest.predict_proba(X.iloc[rows])[:, list(forest.classes_).index("malignant")]
    np.testing.assert_allclose(shap.base_value + shap.values.sum(axis=1), p, atol=1e-6)


@pytest.mark.parametrize("library", ["lightgbm", "xgboost"])
def test_a_multiclass_booster_is_explained_one_against_the_rest(library):
    """Iris, three classes: one is undesired, the other two count as desired; the sidebar says so."""
    from sklearn.datasets import load_iris

    from ui.sidebar import multiclass_note

    data = load_iris(as_frame=True)
    X, y = data.data, data.target  # names with spaces: "sepal length (cm)"
    if library == "lightgbm":
        model = lgb.LGBMClassifier(n_estimators=10, min_child_samples=5, verbose=-1, n_jobs=1).fit(X, y)
    else:
        model = xgb.XGBClassifier(n_estimators=10, max_depth=3, n_jobs=1).fit(X, y)
    explainer = fc.FlexExplainer(model, X, y=y, undesired=2)
    p = explainer.model.predict_proba(explainer.task.X)[:, 1]
    np.testing.assert_allclose(p, model.predict_proba(X)[:, 2], rtol=1e-6)
    result = explainer.explain_global(n_factuals=8)
    assert np.isfinite(result.frequency_mean).all()
    assert multiclass_note(explainer.model) == (" The model has 3 classes: 2 counts as undesired, the others (0, 1) as "
                                                "desired (one against the rest).")
    assert explainer.shap(list(result.query_index[:3]), explainer="auto").explainer == "tree (TreeExplainer)"


def multiclass_booster(library: str, X, y):
    if library == "lightgbm":
        return lgb.LGBMClassifier(n_estimators=10, min_child_samples=5, verbose=-1, n_jobs=1).fit(X, y)
    return xgb.XGBClassifier(n_estimators=10, max_depth=3, n_jobs=1).fit(X, y)


def raw_scores(library: str, model, X) -> np.ndarray:
    """The booster's own per-class raw scores (softmax margins), shape (n_rows, n_classes)."""
    if library == "lightgbm":
        return model.predict(X, raw_score=True)
    return model.predict(X, output_margin=True)


@pytest.mark.parametrize("library", ["lightgbm", "xgboost"])
@pytest.mark.parametrize("dataset", ["iris", "wine"])
def test_a_multiclass_booster_gets_treeshap_for_the_undesired_class(library, dataset):
    """TreeSHAP on the undesired class's own output: base value + a row's SHAP values is the booster's raw score
    for that class (not another class's), and a positive value pushes towards the undesired class, as in the binary case."""
    from sklearn import datasets

    data = getattr(datasets, f"load_{dataset}")(as_frame=True)
    X, y = data.data, data.target
    model = multiclass_booster(library, X, y)
    explainer = fc.FlexExplainer(model, X, y=y, undesired=1)
    rows = list(explainer.task.frame.index[::15])
    shap = explainer.shap(rows)
    written = shap.to_dict()
    assert written["explainer"] == "tree (TreeExplainer)"
    assert written["config"]["output"].startswith("raw score of the undesirable class")
    scores = raw_scores(library, model, X.iloc[rows])
    np.testing.assert_allclose(shap.base_value + shap.values.sum(axis=1), scores[:, 1], rtol=1e-4, atol=1e-4)
    assert not np.allclose(scores[:, 1], scores[:, 0])  # another class's score would fail the check above
    # The meaning matches the binary case: rows the model calls class 1 have the highest explained output.
    p_undesired = model.predict_proba(X.iloc[rows])[:, 1]
    explained = shap.base_value + shap.values.sum(axis=1)
    assert np.corrcoef(p_undesired, explained)[0, 1] > 0.5
    assert list(shap.feature_names) == list(X.columns)


def test_a_multiclass_booster_with_two_undesired_classes_falls_back_to_kernelshap():
    """Per-class margins do not add up to the margin of two classes together: KernelSHAP explains P(undesirable)."""
    from sklearn.datasets import load_iris

    data = load_iris(as_frame=True)
    model = multiclass_booster("lightgbm", data.data, data.target)
    explainer = fc.FlexExplainer(model, data.data, y=data.target, undesired=[1, 2])
    shap = explainer.shap([0, 60], nsamples=50)
    assert shap.explainer == "kernel (KernelExplainer)" and shap.config["output"] == "P(undesirable)"


def test_a_multiclass_forest_gets_treeshap_for_the_summed_probability():
    """A forest's probabilities add up: two undesired classes of three, TreeSHAP explains P(either)."""
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier

    data = load_wine(as_frame=True)
    forest = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0, n_jobs=1).fit(data.data, data.target)
    explainer = fc.FlexExplainer(forest, data.data, y=data.target, undesired=[0, 2])
    rows = list(explainer.task.frame.index[::20])
    shap = explainer.shap(rows)
    assert shap.explainer == "tree (TreeExplainer)" and shap.config["output"] == "P(undesirable)"
    p = forest.predict_proba(data.data.iloc[rows])[:, [0, 2]].sum(axis=1)
    np.testing.assert_allclose(shap.base_value + shap.values.sum(axis=1), p, atol=1e-6)


def test_cli_shap_on_a_lightgbm_file_with_category_columns(tmp_path, penguins):
    X, y = penguins
    csv, model_file, out = tmp_path / "data.csv", tmp_path / "model.skops", tmp_path / "out.json"
    X.assign(mass=y).to_csv(csv, index=False)
    fc.models.save_model(lightgbm_model(X, y), model_file)
    code = main(["global", "--data", str(csv), "--target", "mass", "--undesired", "heavy", "--model-file",
                 str(model_file), "--n-factuals", "10", "--n-cf", "3", "--shap", "--quiet", "--out", str(out)])
    assert code == 0
    result = json.loads(out.read_text())
    assert result["shap"]["explainer"] == "tree (TreeExplainer)" and result["shap"]["config"]["output"].startswith("log-odds")
    assert {f["name"] for f in result["features"]} == {"bill length", "species", "island"}


def penguins_with(frame: pd.DataFrame, column: str, value: str, every: int = 7) -> pd.DataFrame:
    """``frame`` with ``value`` in ``column`` on every ``every``-th row (text, as a CSV holds it)."""
    text = frame[column].astype(str)
    return frame.assign(**{column: text.where(np.arange(len(frame)) % every != 0, value)})


@pytest.mark.parametrize("make", [lightgbm_model, xgboost_model], ids=["lightgbm", "xgboost"])
@pytest.mark.parametrize("labelled", [True, False], ids=["with-y", "without-y"])
def test_a_category_the_model_never_saw_is_refused(penguins, make, labelled):
    """A native-categorical booster would take "Emperor" as missing, silently: FLEX names the column, the value and the fix."""
    X, y = penguins
    model = make(X, y)
    target = y if make is lightgbm_model else (y == y.iloc[0]).astype(int)
    with pytest.raises(fc.UnseenCategoryError, match=r"Column 'species' holds a value the model never saw in "
                       r"training: Emperor \(it knows Adelie, Chinstrap, Gentoo\).*Drop or recode") as caught:
        fc.FlexExplainer(model, penguins_with(X, "species", "Emperor"), y=target if labelled else None,
                         undesired=model.classes_[0])
    assert caught.value.column == "species" and caught.value.values == ("Emperor",)
    assert isinstance(caught.value, fc.DataError)


@pytest.mark.parametrize("make", [lightgbm_model, xgboost_model], ids=["lightgbm", "xgboost"])
def test_rows_with_an_unseen_category_never_reach_the_model(penguins, make):
    """What-ifs and counterfactuals reach the model through the adapter: a value outside the training categories stops there."""
    X, y = penguins
    model = make(X, y)
    explainer = fc.FlexExplainer(model, X, y=y if make is lightgbm_model else (y == y.iloc[0]).astype(int),
                                 undesired=model.classes_[0])
    rows = explainer.task.X.iloc[:3].assign(island="Atlantis")
    with pytest.raises(fc.UnseenCategoryError, match="Column 'island'.*Atlantis"):
        explainer.model.predict_proba(rows)


def test_cli_refuses_an_unseen_category_in_one_line(tmp_path, penguins, capsys):
    X, y = penguins
    csv, model_file = tmp_path / "data.csv", tmp_path / "model.skops"
    penguins_with(X, "species", "Emperor").assign(mass=y).to_csv(csv, index=False)
    fc.models.save_model(lightgbm_model(X, y), model_file)
    code = main(["global", "--data", str(csv), "--target", "mass", "--undesired", "heavy", "--model-file",
                 str(model_file), "--n-factuals", "5", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "Column 'species' holds a value the model never saw in training: Emperor" in err
    assert "Traceback" not in err


def integer_coded(X: pd.DataFrame) -> pd.DataFrame:
    """``X`` with each category column replaced by its integer codes: how many models are trained."""
    return X.assign(**{c: X[c].cat.codes for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)})


def code_models(X: pd.DataFrame, y: pd.Series) -> dict:
    """Real models trained on integer codes, each told (where it can be) that the codes are categories."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

    codes = integer_coded(X)
    return {
        "lightgbm": lgb.LGBMClassifier(n_estimators=10, min_child_samples=5, verbose=-1, n_jobs=1).fit(
            codes, y, categorical_feature=["species", "island"]),
        "xgboost": xgb.XGBClassifier(n_estimators=10, max_depth=3, n_jobs=1).fit(codes, (y == "heavy").astype(int)),
        "histogram boosting": HistGradientBoostingClassifier(max_iter=10, categorical_features=["species", "island"],
                                                             random_state=0).fit(codes, y),
        "random forest": RandomForestClassifier(n_estimators=10, random_state=0, n_jobs=1).fit(codes, y),
    }


def test_text_where_a_model_was_trained_on_integer_codes_is_refused(penguins):
    """No model records which code stands for which text: FLEX names the column and the fix instead of guessing
    (HistGradientBoosting would otherwise take every text value as missing, silently)."""
    X, y = penguins
    for library, model in code_models(X, y).items():
        undesired = 1 if library == "xgboost" else "heavy"
        for labels in (None, y if library != "xgboost" else (y == "heavy").astype(int)):
            with pytest.raises(fc.DataError, match=r"Column '(species|island)' holds text \((Adelie, Chinstrap, Gentoo|"
                               r"Biscoe, Dream, Torgersen)\), but the model was trained on numbers there \(integer "
                               r"codes\?\).*Give the data the codes"):
                fc.FlexExplainer(model, X, y=labels, undesired=undesired)
        # Given the codes it was trained on, the same model is explained.
        codes = integer_coded(X)
        explainer = fc.FlexExplainer(model, codes, undesired=undesired)
        np.testing.assert_allclose(explainer.model.predict_proba(explainer.task.X)[:, 1],
                                   model.predict_proba(codes)[:, list(model.classes_).index(undesired)], rtol=1e-6)


def test_histogram_boosting_on_category_columns_gets_its_training_categories(penguins):
    """scikit-learn's HistGradientBoosting keeps the text categories it learnt; FLEX reads them like a booster's."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = penguins
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    explainer = fc.FlexExplainer(model, X, y=y, undesired="heavy")
    assert explainer.model.schema.categories["island"] == ("Biscoe", "Dream", "Torgersen")
    np.testing.assert_allclose(explainer.model.predict_proba(explainer.task.X)[:, 1],
                               model.predict_proba(X)[:, list(model.classes_).index("heavy")])
    with pytest.raises(fc.UnseenCategoryError, match="Column 'island'.*Atlantis"):
        fc.FlexExplainer(model, penguins_with(X, "island", "Atlantis"), y=y, undesired="heavy")


def test_cli_refuses_text_for_a_model_file_trained_on_codes(tmp_path, penguins, capsys):
    X, y = penguins
    csv, model_file = tmp_path / "data.csv", tmp_path / "model.skops"
    X.assign(mass=(y == "heavy").astype(int)).to_csv(csv, index=False)
    fc.models.save_model(code_models(X, y)["xgboost"], model_file)
    code = main(["global", "--data", str(csv), "--target", "mass", "--undesired", "1", "--model-file",
                 str(model_file), "--n-factuals", "5", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "Column 'species' holds text (Adelie, Chinstrap, Gentoo), but the model was trained on numbers" in err


@pytest.mark.parametrize("library", ["lightgbm", "xgboost"])
def test_integer_categories_are_levels_the_model_knows_also_after_a_project_round_trip(tmp_path, library):
    """Categories 1, 2, 3 of a pandas category column: FLEX reads the column as categorical (not a number to move
    along), its values match the model's categories (2.0 read back from a CSV is the category 2, not an unseen
    value), and a project saved without y reloads: the model labels the CSV's rows through the adapter.

    Planted: severe when speed > 80 or in district 2. A factual of district 2 is severe whatever its speed, so
    every minimal counterfactual of it leaves district 2 and no other factual's does: F of district is the
    share of factuals in district 2. At τ = 0.5 that holds only for a level: were district read as a number,
    leaving 2 for 1 or 3 moves it half its range, which τ = 0.5 does not count, and F would be 0."""
    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"speed": rng.uniform(20, 120, n).round(1), "district": pd.Categorical(rng.choice([1, 2, 3], n)),
                      "road zone": pd.Categorical(rng.choice(["rural", "urban"], n))})
    severe = (X["speed"] > 80) | (X["district"] == 2)
    y = np.where(severe, "severe", "mild")
    if library == "lightgbm":
        model = lgb.LGBMClassifier(n_estimators=20, num_leaves=7, min_child_samples=5, verbose=-1, n_jobs=1).fit(X, y)
        undesired = "severe"
    else:
        model = xgb.XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True, tree_method="hist",
                                  n_jobs=1).fit(X, severe.astype(int))
        undesired = 1
    explainer = fc.FlexExplainer(model, X, undesired=undesired, n_cf=3)
    district = explainer.task.features[explainer.task.feature_names.index("district")]
    assert district.kind == "categorical" and set(district.levels) == {"1", "2", "3"}
    before = explainer.explain_global(n_factuals=10, tau=0.5)
    in_district_2 = (X.loc[before.query_index, "district"] == 2).mean()
    assert 0 < in_district_2 < 1  # the factuals mix both ways to be severe
    frequency = dict(zip(before.feature_names, before.frequency_mean))
    assert frequency["district"] == pytest.approx(in_district_2) and frequency["road zone"] == 0
    reloaded = fc.FlexExplainer.load(explainer.save(tmp_path / "project"))
    after = reloaded.explain_global(n_factuals=10, tau=0.5)
    np.testing.assert_array_equal(before.query_index, after.query_index)
    np.testing.assert_allclose(before.frequency_mean, after.frequency_mean)
