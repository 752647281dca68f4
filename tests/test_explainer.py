"""FlexExplainer and FittedModel.from_estimator: a model trained outside the project, explained end to end."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from tests.factories import accident_frame, user_pipeline
from ui.factual_map import project_factuals

N = dict(n_factuals=20)


def test_predictions_go_through_the_users_own_types(user_explainer, user_model, accident_data):
    # district is an integer code: the task holds it as text, the model must get integers back.
    task, model = user_explainer.task, user_explainer.model
    assert task.feature("district").kind == "categorical" and task.frame["district"].iloc[0] in ("1", "2", "3")
    X = accident_data.drop(columns=["severity"])
    severe = list(user_model.classes_).index("severe")
    np.testing.assert_allclose(model.predict_proba(task.X)[:, 1], user_model.predict_proba(X)[:, severe])
    assert model.metrics["test_accuracy"] > 0.9 and model.metrics["test_rows"] == len(X)


def test_explain_global_and_region_on_a_users_pipeline(user_explainer):
    result = user_explainer.explain_global(**N)
    assert isinstance(result, fc.FlexResult) and result.level == "global"
    frequency = dict(zip(result.feature_names, result.frequency_mean))
    assert frequency["zone"] == 0  # immutable
    assert frequency["speed"] == max(frequency.values())  # the planted global driver
    assert result.model["identity"] and result.model["undesired"] == ["severe"]
    region = user_explainer.explain_region(where={"lighting": "dark"}, k=3, **N)
    assert isinstance(region, fc.RegionalResult) and len(region.members) == 4
    assert region.criterion == {"feature": "lighting", "value": "dark"}
    cfs = user_explainer.counterfactuals(region.members[:2])
    assert cfs.n_queries == 2 and cfs.valid.any()


def test_the_three_lines_of_the_readme_give_the_cli_json(user_explainer):
    result = user_explainer.explain_global(**N)
    out = result.to_dict()
    assert fc.FlexResult.from_dict(out).to_dict() == out


def test_undesired_must_be_a_class_of_the_model(user_model, accident_data):
    X = accident_data.drop(columns=["severity"])
    with pytest.raises(fc.ConfigError, match="its classes are: mild, severe"):
        fc.FlexExplainer(user_model, X, undesired="fatal")


def test_data_lacking_the_models_columns_is_refused(user_model, accident_data):
    X = accident_data.drop(columns=["severity", "lighting"])
    with pytest.raises(fc.DataError, match="lacks a column the model needs: lighting"):
        fc.FlexExplainer(user_model, X, undesired="severe")


def test_columns_the_model_does_not_take_are_left_out_and_said_so(user_model, accident_data):
    X = accident_data.drop(columns=["severity"]).assign(case_id=np.arange(len(accident_data)))
    explainer = fc.FlexExplainer(user_model, X, undesired="severe", kinds={"district": "categorical"})
    assert "case_id" not in explainer.task.feature_names
    assert any("case_id" in note for note in explainer.task.notes)
    assert any("predictions" in note for note in explainer.task.notes)  # no y: outcome = the model's predictions


def test_not_a_classifier_is_refused(accident_data):
    with pytest.raises(fc.ConfigError, match="predict_proba and classes_"):
        fc.FlexExplainer(object(), accident_data, undesired="severe")


def test_a_number_as_y_is_refused_naming_y(accident_data):
    """A classifier fitted on a measured number (each value a class) with one value undesired: refused, not explained."""
    from sklearn.tree import DecisionTreeClassifier

    X = accident_data[["speed", "noise"]]
    amount = (accident_data["speed"] * 1000).round()
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, amount)
    with pytest.raises(fc.ConfigError, match=r"^The target 'y' holds numbers \(\d+ different values"):
        fc.FlexExplainer(model, X, y=amount, undesired=amount.iloc[0])


def test_own_models_go_through_from_estimator_too(synthetic_model):
    assert synthetic_model.trained_here and synthetic_model.classes == (0, 1) and synthetic_model.undesired == (1,)
    assert synthetic_model.metrics["evaluated_on"] == "the held-out 20% test split"


def test_several_undesired_classes_of_a_multiclass_model(accident_data):
    frame = accident_data.assign(severity=np.where(accident_data["speed"] > 100, "fatal", accident_data["severity"]))
    model = user_pipeline(frame)
    explainer = fc.FlexExplainer(model, frame.drop(columns=["severity"]), undesired=["severe", "fatal"],
                                 y=frame["severity"], kinds={"district": "categorical"})
    proba = model.predict_proba(frame.drop(columns=["severity"]))
    classes = list(model.classes_)
    expected = proba[:, classes.index("severe")] + proba[:, classes.index("fatal")]
    np.testing.assert_allclose(explainer.model.predict_proba(explainer.task.X)[:, 1], expected)
    assert explainer.explain_global(**N).n_factuals_used > 0


# LightGBM sizes its thread pool to the physical cores whatever OMP_NUM_THREADS says: 2.5-11 s on this
# shared 2-core machine, so it is in the full suite, not the fast run.
@pytest.mark.parametrize("library", ["xgboost", pytest.param("lightgbm", marks=pytest.mark.slow)])
def test_xgboost_and_lightgbm_through_their_sklearn_api(library):
    frame = accident_frame(400).drop(columns=["zone", "lighting"])
    X, y = frame.drop(columns=["severity"]), (frame["severity"] == "severe").astype(int)
    if library == "xgboost":
        from xgboost import XGBClassifier

        model = XGBClassifier(n_estimators=30, max_depth=3, random_state=0).fit(X, y)
    else:
        from lightgbm import LGBMClassifier

        model = LGBMClassifier(n_estimators=30, random_state=0, verbose=-1).fit(X, y)
    explainer = fc.FlexExplainer(model, X, undesired=1, y=y, kinds={"district": "categorical"}, n_cf=3)
    result = explainer.explain_global(n_factuals=10)
    assert result.rank[result.feature_names.index("speed")] == 1  # the planted driver (zone and lighting left out)
    from sklearn.metrics import accuracy_score

    assert explainer.model.metrics["test_accuracy"] == pytest.approx(accuracy_score(y, model.predict(X)))


@pytest.mark.slow  # runs SHAP or LIME
def test_shap_lime_and_the_map_without_the_projects_encode_step(user_explainer):
    # The user's pipeline names its steps differently and passes numbers through: SHAP still
    # reads its encoder; a model with no separate encoder falls back to KernelSHAP on the features.
    rows = user_explainer.explain_global(**N).query_index[:3]
    shap = user_explainer.shap(rows, nsamples=60, background_size=5)
    assert shap.config["path"] == "encoded" and shap.values.shape == (3, 5)
    lime = user_explainer.lime(rows, num_samples=200)
    assert lime.config["path"] == "original" and lime.local_weights.shape == (3, 5)
    factual_map = project_factuals(user_explainer.task, user_explainer.model, rows)
    assert factual_map.space == "encoded"


@pytest.mark.slow  # runs SHAP or LIME
def test_a_model_without_an_encoder_step_uses_the_model_agnostic_paths(accident_data):
    three_steps = user_pipeline(accident_data, steps=3)
    X = accident_data.drop(columns=["severity"])
    explainer = fc.FlexExplainer(three_steps, X, undesired="severe", kinds={"district": "categorical"})
    assert explainer.model.encoder_and_classifier() is None
    rows = explainer.explain_global(n_factuals=3).query_index
    shap = explainer.shap(rows, nsamples=60, background_size=5)
    assert shap.config["path"] == "original" and shap.explainer.startswith("kernel")
    # KernelSHAP's values add up to the model's P(undesirable) minus the base value.
    p = explainer.model.predict_proba(explainer.task.frame.loc[rows, explainer.task.feature_names])[:, 1]
    np.testing.assert_allclose(shap.values.sum(axis=1) + shap.base_value, p, atol=1e-6)
    with pytest.raises(fc.ConfigError, match="TreeExplainer"):
        explainer.shap(rows, explainer="tree")
    factual_map = project_factuals(explainer.task, explainer.model, rows)
    assert factual_map.space == "original" and len(factual_map.frame) == len(rows)


def test_save_and_load_give_the_same_results(user_explainer, tmp_path):
    folder = user_explainer.save(tmp_path / "project")
    assert sorted(p.name for p in folder.iterdir()) == ["data.csv", "model.skops", "settings.json"]
    loaded = fc.FlexExplainer.load(folder)
    assert loaded.task.feature_names == user_explainer.task.feature_names
    assert loaded.task.immutable_names == ["zone"] and loaded.task.raw_dtypes == user_explainer.task.raw_dtypes
    np.testing.assert_array_equal(loaded.model.predict_proba(loaded.task.X), user_explainer.model.predict_proba(user_explainer.task.X))
    first, second = user_explainer.explain_global(**N), loaded.explain_global(**N)
    np.testing.assert_array_equal(first.query_index, second.query_index)
    np.testing.assert_array_equal(first.frequency_mean, second.frequency_mean)


def test_a_model_trained_here_on_a_text_outcome_is_saved_and_loaded_as_it_was(accident_data, tmp_path):
    """The outcome column is written as the classes the model learned, and how FLEX trained it (split, seed, scores)
    goes with it: the loaded explainer takes the same factuals (the out-of-bag check needs the training rows) and
    gives the same numbers. Before, loading failed on the text outcome ('Unable to parse string')."""
    task = fc.data.make_task(accident_data, target="severity", undesirable=["severe"], kinds={"district": "categorical"})
    first = fc.FlexExplainer.from_task(task, "rf", seed=0, fit_options={"cv_folds": 0})
    loaded = fc.FlexExplainer.load(first.save(tmp_path / "project"))
    assert loaded.model.label == first.model.label and loaded.model.metrics == first.model.metrics
    np.testing.assert_array_equal(loaded.model.train_index, first.model.train_index)
    assert loaded.model.trained_here and loaded.model.identity  # cache keys still tell it by its content
    np.testing.assert_array_equal(loaded.store.factual_rows, first.store.factual_rows)
    a, b = first.explain_global(**N), loaded.explain_global(**N)
    np.testing.assert_array_equal(a.query_index, b.query_index)
    np.testing.assert_array_equal(a.frequency_mean, b.frequency_mean)


def test_a_damaged_training_record_is_refused(accident_data, tmp_path):
    task = fc.data.make_task(accident_data, target="severity", undesirable=["severe"], kinds={"district": "categorical"})
    folder = fc.FlexExplainer.from_task(task, "rf", seed=0, fit_options={"cv_folds": 0}).save(tmp_path / "project")
    settings = json.loads((folder / "settings.json").read_text())
    settings["model"]["train_rows"] = [10**9]
    (folder / "settings.json").write_text(json.dumps(settings))
    with pytest.raises(fc.DataError, match="train_rows name rows data.csv does not have"):
        fc.FlexExplainer.load(folder)


def test_a_saved_project_keeps_formula_like_text_exactly(user_model, accident_data, tmp_path):
    X = accident_data.drop(columns=["severity"]).assign(zone=lambda f: f["zone"].replace({"rural": "=rural"}))
    explainer = fc.FlexExplainer(user_model, X, undesired="severe", kinds={"district": "categorical"})
    folder = explainer.save(tmp_path / "project")
    assert "'=rural" in (folder / "data.csv").read_text()  # safe to open in a spreadsheet
    loaded = fc.FlexExplainer.load(folder)
    assert set(loaded.task.frame["zone"]) == {"=rural", "urban"}


def test_row_ids_are_the_index_of_x(user_model, accident_data):
    X = accident_data.drop(columns=["severity"]).iloc[100:]
    explainer = fc.FlexExplainer(user_model, X, undesired="severe", kinds={"district": "categorical"})
    assert explainer.task.frame.index[0] == 100
    X_text_index = X.set_index(pd.Index([f"case{i}" for i in range(len(X))]))
    by_position = fc.FlexExplainer(user_model, X_text_index, undesired="severe", kinds={"district": "categorical"})
    assert by_position.task.frame.index[0] == 0


def test_constraints_refine_and_sufficiency_are_options_of_the_explainer(user_model, accident_data, tmp_path):
    X = accident_data.drop(columns=["severity"])
    explainer = fc.FlexExplainer(
        user_model, X, undesired="severe", y=accident_data["severity"], kinds={"district": "categorical"},
        immutable=["zone"], seed=0, n_cf=4, refine="none",
        monotone={"speed": "decrease"}, bounds={"speed": (30, None)}, allowed={"district": ["1", "2"]},
    )
    assert explainer.store.refine == "none"
    result = explainer.explain_global(n_factuals=12, sufficiency=True)
    assert result.config["constraints"]["speed"] == {"direction": "decrease", "range": [30.0, None]}
    cfset = explainer.store.ensure(result.query_index)
    speed = explainer.task.feature_names.index("speed")
    moved = cfset.counterfactuals[..., speed][cfset.found]
    before = np.repeat(cfset.factuals[:, None, speed], cfset.counterfactuals.shape[1], axis=1)[cfset.found]
    assert np.all((moved <= before) & ((moved == before) | (moved >= 30)))
    flips = dict(zip(result.feature_names, result.flip_alone))
    assert np.isnan(flips["zone"]) and flips["speed"] > 0
    # The settings travel with a saved project.
    loaded = fc.FlexExplainer.load(explainer.save(tmp_path / "project"))
    assert loaded.refine == "none" and loaded.task.constraints == explainer.task.constraints


def test_batch_scores_a_users_classes_in_their_own_order(user_model, accident_data):
    # "mild" is the model's first class: the fast scorer must read the undesired column by class, not as
    # column 1, or every "counterfactual" it finds would keep the undesired outcome.
    X = accident_data.drop(columns=["severity"])
    explainer = fc.FlexExplainer(user_model, X, undesired="mild", kinds={"district": "categorical"}, seed=0, n_cf=3)
    result = explainer.explain_global(n_factuals=15)
    cfset = explainer.store.ensure(result.query_index)
    assert cfset.found.any()
    rows = fc.counterfactuals.decode_rows(explainer.task, cfset.counterfactuals[cfset.found])
    assert (explainer.model.predict_proba(rows)[:, 1] < 0.5).all()


def test_dashboard_starts_the_app_on_the_saved_project(user_explainer, tmp_path):
    import time
    import urllib.request

    url = user_explainer.dashboard(directory=tmp_path / "project")
    try:
        assert (tmp_path / "project" / "model.skops").is_file()
        deadline, healthy = time.monotonic() + 120, False
        while time.monotonic() < deadline and not healthy:
            assert user_explainer.dashboard_process.poll() is None, "the app exited"
            try:
                healthy = urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok"
            except OSError:
                time.sleep(0.5)
        assert healthy, "the app did not answer its health check within two minutes"
        command = user_explainer.dashboard_process.args
        assert command[-2:] == ["--project", str(tmp_path / "project")]
    finally:
        user_explainer.dashboard_process.terminate()
        user_explainer.dashboard_process.wait(timeout=30)


def test_one_pipeline_the_cli_and_from_task_give_the_same_numbers(tmp_path):
    # The CLI builds its pipeline through FlexExplainer.from_task: same data, options and seed, same JSON numbers.
    import json

    from flex_core.cli import main

    out = tmp_path / "global.json"
    assert main(["global", "--data", "builtin:toy2d", "--n-factuals", "12", "--n-cf", "3", "--cv-folds", "0",
                 "--quiet", "--out", str(out)]) == 0
    by_cli = json.loads(out.read_text())
    task = fc.data.load_builtin("toy2d")
    explainer = fc.FlexExplainer.from_task(task, "rf", n_cf=3, fit_options={"cv_folds": 0})
    result = explainer.explain_global(n_factuals=12)
    assert by_cli["factuals"] == result.query_index.tolist()
    assert [f["frequency_mean"] for f in by_cli["features"]] == pytest.approx(result.frequency_mean.tolist())


def test_from_task_takes_a_fitted_model_a_name_or_an_estimator(accident_data, user_model):
    task = fc.make_task(accident_data, target="severity", undesirable="severe", kinds={"district": "categorical"})
    fitted = fc.fit_model(task, model="lr", seed=0, cv_folds=0)
    assert fc.FlexExplainer.from_task(task, fitted).model is fitted
    assert fc.FlexExplainer.from_task(task, "lr", fit_options={"cv_folds": 0}).model.key == fitted.key
    external = fc.FlexExplainer.from_task(task, user_model, model_name="theirs.skops")
    assert external.model.name == "theirs.skops" and "optimistically" in external.model.metrics["evaluated_on"]
    with pytest.raises(fc.ConfigError, match="Unknown model"):
        fc.FlexExplainer.from_task(task, "no-such-model")
    with pytest.raises(fc.ConfigError, match="fit_options"):
        fc.FlexExplainer.from_task(task, user_model, fit_options={"cv_folds": 0})


def test_no_result_depends_on_which_call_ran_before(user_model, accident_data):
    X = accident_data.drop(columns=["severity"])

    def fresh():
        return fc.FlexExplainer(user_model, X, undesired="severe", kinds={"district": "categorical"}, seed=0, n_cf=3)

    first, second = fresh(), fresh()
    region_first = first.explain_region(where="lighting=dark", k=3, n_factuals=15)
    second.explain_global(n_factuals=30, tau=0.5)  # another global run before: the region must not change
    region_second = second.explain_region(where="lighting=dark", k=3, n_factuals=15)
    assert region_first.members == region_second.members
    np.testing.assert_array_equal(region_first.importance.frequency_mean, region_second.importance.frequency_mean)
    assert region_first.pearson_r == pytest.approx(region_second.pearson_r, nan_ok=True)
    # An explicit global result is the one compared with.
    base = second.explain_global(n_factuals=15)
    given = second.explain_region(global_result=base, query=region_second.query, k=3, where="lighting=dark")
    assert given.pearson_r == pytest.approx(region_second.pearson_r, nan_ok=True)


def test_explain_local_is_one_factual_and_its_counterfactuals(user_explainer):
    rows = user_explainer.explain_global(**N).query_index[:2]
    local = user_explainer.explain_local(rows)
    assert [r.level for r in local] == ["local", "local"] and [r.query_index.tolist() for r in local] == [[rows[0]], [rows[1]]]
    cfset = user_explainer.counterfactuals([rows[0]])
    changed = (cfset.counterfactuals[0] != cfset.factuals[0])[cfset.valid[0]]
    # With τ = 0 a feature's local F is the share of the valid counterfactuals that change it.
    at_zero = user_explainer.explain_local([rows[0]], tau=0.0)[0]
    np.testing.assert_allclose(at_zero.frequency_mean, changed.mean(axis=0))
    not_a_factual = next(r for r in user_explainer.task.frame.index if r not in set(user_explainer.store.factual_rows))
    with pytest.raises(fc.ConfigError, match="not a factual"):
        user_explainer.explain_local([not_a_factual])


def test_without_y_the_model_is_not_scored_against_its_own_predictions():
    """Issue 19 item 6: no accuracy or F1 anywhere, and the JSON and a reloaded project say quality was not measured."""
    frame = accident_frame(200)
    explainer = fc.FlexExplainer(user_pipeline(frame), frame.drop(columns=["severity"]), undesired="severe",
                                 kinds={"district": "categorical"})
    assert explainer.model.metrics == {"note": "No labels given: quality not measured."}
    model = explainer.explain_global(n_factuals=6).to_dict()["model"]
    assert model["test_accuracy"] is None and model["test_f1"] is None and model["note"] == fc.models.NO_LABELS_NOTE


def test_a_folder_that_is_no_project_is_named_by_its_last_part_not_its_server_path(tmp_path):
    # The app shows this message: the path it resolved would name server folders (the app's own, a data root).
    folder = tmp_path / "deep" / "not-a-project"
    folder.mkdir(parents=True)
    with pytest.raises(fc.DataError) as refused:
        fc.FlexExplainer.load(folder)
    assert str(refused.value).startswith("'not-a-project' is not a FLEX project folder: data.csv, model.skops")
    assert str(tmp_path) not in str(refused.value)


def test_a_project_whose_data_csv_is_too_wide_is_refused_before_it_is_parsed(user_explainer, tmp_path, monkeypatch):
    """A project folder can come from anyone: its data.csv meets the same column limit as an upload, checked from the header."""
    from flex_core.limits import LIMITS

    user_explainer.save(tmp_path / "project")
    wide = LIMITS["columns"].high + 1
    header = ",".join(["__row__", *[f"c{i}" for i in range(wide - 1)]])
    (tmp_path / "project" / "data.csv").write_text(header + "\n" + ",".join(["0"] * wide) + "\n")
    monkeypatch.setattr(pd, "read_csv", lambda *a, **k: pytest.fail("data.csv was parsed before its size was checked"))
    with pytest.raises(fc.DataError, match=f"This file has {wide:,} columns; the limit is {LIMITS['columns'].high:,}"):
        fc.FlexExplainer.load(tmp_path / "project")


def test_a_projects_view_is_checked_and_nothing_else_is_remembered(user_explainer, tmp_path):
    """Issue 34 item 2: the view is given to save, checked once, and read back; explain_* leave nothing on the explainer."""
    before = user_explainer.settings()
    user_explainer.explain_global(n_factuals=5, tau=0.3)
    assert user_explainer.settings() == before and before["view"] == {}
    folder = user_explainer.save(tmp_path / "project", view={"tau": 0.3, "n_factuals": 5, "where": {"district": "north"}})
    assert fc.FlexExplainer.read_settings(folder)["view"] == {"tau": 0.3, "n_factuals": 5, "where": "district=north"}
    for view, message in (({"colour": 1}, "view has no setting 'colour'"), ({"k": 2.5}, "view's k must be a whole number"),
                          ({"tau": {"speed": 0.2}}, "view's tau must be a number"), ({"n_factuals": 0}, "n_factuals")):
        with pytest.raises(fc.ConfigError, match=message):
            user_explainer.save(tmp_path / "refused", view=view)
    assert not (tmp_path / "refused").exists()  # refused before anything was written


def test_a_criterion_given_as_a_mapping_reaches_the_run_as_one_not_as_text(user_explainer, accident_data):
    """Issue 34 item 4: {feature: value} is never written as "feature=value" and split again, so a column whose
    name holds "=" (a CSV may have one) can be a criterion; text gives the same region as the mapping."""
    from tests.factories import user_pipeline

    as_text = user_explainer.explain_region(where="lighting=dark", k=3, **N)
    as_mapping = user_explainer.explain_region(where={"lighting": "dark"}, k=3, **N)
    assert as_mapping.members == as_text.members and as_mapping.criterion == as_text.criterion
    np.testing.assert_array_equal(as_mapping.importance.frequency_mean, as_text.importance.frequency_mean)

    frame = accident_data.rename(columns={"lighting": "light=level"})
    explainer = fc.FlexExplainer(user_pipeline(frame), frame.drop(columns=["severity"]), undesired="severe",
                                 y=frame["severity"], kinds={"district": "categorical"}, seed=0, n_cf=2)
    region = explainer.explain_region(where={"light=level": "dark"}, k=2, n_factuals=10)
    assert region.criterion == {"feature": "light=level", "value": "dark"}


def test_the_rows_a_front_end_generates_first_are_the_ones_the_runs_take(user_explainer):
    """Issue 34 item 1: the app generates these under its own progress bar, then runs; the rows must be the runs'."""
    explainer = user_explainer
    result = explainer.explain_global(**N)
    np.testing.assert_array_equal(explainer.sample_factuals(N["n_factuals"]), result.query_index)
    assert explainer.not_generated(result.query_index) == []
    query = explainer.random_query(where={"lighting": "dark"})
    assert explainer.task.frame.loc[query, "lighting"] == "dark"
    region = explainer.explain_region(global_result=result, query=query, k=3, where="lighting=dark")
    assert explainer.region_members(query, k=3, where={"lighting": "dark"}) == list(region.members)
    assert explainer.region_members(query, k=3, where="lighting=dark")[0] == query  # the query first
    dark = explainer.factuals_meeting("lighting=dark")
    factuals = explainer.factual_rows
    expected = factuals[explainer.task.frame.loc[factuals, "lighting"].to_numpy() == "dark"]
    np.testing.assert_array_equal(dark, expected)
    assert list(explainer.factuals_meeting(None, [5, 3])) == [5, 3]
    with pytest.raises(fc.ConfigError, match="lighting"):
        explainer.factuals_meeting("lighting=purple")


def test_readings_of_the_same_counterfactuals_match_the_runs(user_explainer):
    explainer = user_explainer
    result = explainer.explain_global(tau=0.1, **N)
    again = explainer.explain_factuals(result.query_index, tau=0.1)
    np.testing.assert_array_equal(again.frequency_mean, result.frequency_mean)
    sweep = explainer.tau_sweep(n_factuals=N["n_factuals"], taus=[0.1])
    j = result.feature_names.index("speed")
    assert sweep.set_index("feature").loc["speed", "frequency_mean"] == pytest.approx(result.frequency_mean[j])
    proba = explainer.factual_probabilities()
    assert list(proba.index) == list(explainer.factual_rows) and (proba > 0.5).all()
    X = explainer.model.estimator_input(explainer.task.X.loc[proba.index[:3]])
    severe = list(explainer.model.pipeline.classes_).index("severe")
    np.testing.assert_allclose(proba.iloc[:3], explainer.model.pipeline.predict_proba(X)[:, severe])


def test_a_what_if_case_is_checked_without_running(user_explainer):
    explainer = user_explainer
    low, high = explainer.feature_range("speed")
    frame = explainer.task.frame
    assert (low, high) == (frame["speed"].min(), frame["speed"].max())
    row = int(explainer.factual_rows[0])
    other = "dark" if frame.loc[row, "lighting"] != "dark" else "daylight"
    assert explainer.check_case({"lighting": other}, row=row) == ("lighting",)
    with pytest.raises(fc.ConfigError, match="outside the data's range"):
        explainer.check_case({"speed": high + 1}, row=row)
    with pytest.raises(fc.ConfigError, match="immutable"):
        explainer.check_case({"zone": "urban" if frame.loc[row, "zone"] == "rural" else "rural"}, row=row)


def test_counterfactuals_refined_to_minimal_changes_and_read_at_any_tau(user_explainer):
    """What the reproduction's τ panels take from the explainer: the training ranges, the same counterfactuals
    shrunk toward the factual, and F over a given set."""
    explainer = user_explainer
    train = explainer.task.frame.loc[explainer.model.train_index]
    j = explainer.task.feature_names.index("speed")
    assert explainer.ranges[j] == train["speed"].max() - train["speed"].min()
    rows = explainer.sample_factuals(10)
    generated, refined = explainer.counterfactuals(rows), explainer.minimal_counterfactuals(rows)
    assert refined.config["refine"] == "minimal" and refined.valid.any()
    # Every refined change of speed is no larger than the largest generated one of its factual (hand: |Δ| per slot).
    for q in range(len(rows)):
        before = np.abs(generated.counterfactuals[q, generated.valid[q], j] - generated.factuals[q, j])
        after = np.abs(refined.counterfactuals[q, refined.valid[q], j] - refined.factuals[q, j])
        assert after.size == 0 or after.max() <= before.max() + 1e-9
    # F_speed by hand: the share of each factual's valid refined counterfactuals changing speed by more than τ x range.
    tau = 0.2
    share = [(np.abs(refined.counterfactuals[q, refined.valid[q], j] - refined.factuals[q, j]) / explainer.ranges[j] > tau).mean()
             for q in range(len(rows)) if refined.valid[q].any()]
    result = explainer.explain_counterfactuals(refined, tau=tau)
    assert result.frequency_mean[j] == pytest.approx(np.mean(share))
    assert explainer.not_generated(rows) == []  # refining stored nothing new and generated nothing twice


def test_a_project_gives_its_task_and_model_without_building_the_pipeline(user_explainer, tmp_path, monkeypatch):
    """What the app opens a project with (issue 34): the task, the model and y_given, no generator and no store."""
    folder = user_explainer.save(tmp_path / "project")
    loaded = fc.FlexExplainer.load(folder)

    def no_generator(*args, **kwargs):
        raise AssertionError("load_parts built a generator")

    monkeypatch.setattr(fc.counterfactuals, "make_generator", no_generator)
    task, model, y_given = fc.FlexExplainer.load_parts(folder)
    assert task.fingerprint == loaded.task.fingerprint and y_given is loaded.y_given is True
    np.testing.assert_array_equal(model.predict_proba(task.X), loaded.model.predict_proba(loaded.task.X))
    assert model.metrics == loaded.model.metrics
    with pytest.raises(AssertionError, match="built a generator"):
        fc.FlexExplainer.load(folder)  # the whole explainer does build one
    with pytest.raises(fc.DataError, match="not a FLEX project folder"):
        fc.FlexExplainer.load_parts(tmp_path)


def test_what_construction_fixed_is_read_from_the_explainer(user_model, accident_data, monkeypatch):
    """The settings strip, the sidebar and the memory check read these, never the store."""
    X = accident_data.drop(columns=["severity"])
    batch, again, reseeded = (fc.FlexExplainer(user_model, X, undesired="severe", kinds={"district": "categorical"},
                                               immutable=["zone"], seed=seed, n_cf=3) for seed in (0, 0, 1))
    assert batch.key == again.key and batch.key != reseeded.key and batch.key["seed"] == 0
    assert batch.refine is None and batch.refine_mode == "minimal"  # the batch generators' default
    dice = fc.FlexExplainer(user_model, X, undesired="severe", generator="dice-random", n_cf=3)
    assert dice.refine_mode == "none"
    assert batch.varying_features == [n for n in batch.task.feature_names if n != "zone"]
    selection = batch.factual_selection
    assert selection["candidates"] >= len(batch.factual_rows) and selection["margin"] == 0.15
    monkeypatch.setenv("FLEX_MEMORY_BUDGET_MB", "0.001")
    with pytest.raises(fc.ConfigError, match=r"reduce the cases to explain \(N_F\)"):
        batch.check_memory(200)
    assert batch.not_generated(batch.sample_factuals(5)) == list(batch.sample_factuals(5))  # nothing was generated


def test_constraints_between_features_on_the_explainer_hold_and_survive_save_and_load(user_model, accident_data, tmp_path):
    rules = ["cf.speed >= x.speed - 30", 'if cf.lighting != x.lighting then cf.speed <= x.speed']
    explainer = fc.FlexExplainer(user_model, accident_data.drop(columns=["severity"]), undesired="severe",
                                 y=accident_data["severity"], kinds={"district": "categorical"}, immutable=["zone"],
                                 seed=0, n_cf=3, constraints=rules)
    assert explainer.task.rule_texts == rules
    result = explainer.explain_global(n_factuals=8)
    cfset = result.counterfactual_set
    factuals = np.repeat(cfset.factuals, cfset.n_cf, axis=0)[cfset.found.reshape(-1)]
    assert explainer.task.rules_hold(cfset.counterfactuals[cfset.found], factuals).all()
    assert result.config["constraints_between"] == rules
    from flex_core.snapshot._payload import snapshot_payload

    assert ["constraints between features", "; ".join(rules)] in snapshot_payload(explainer, result)["settings"]
    folder = explainer.save(tmp_path / "project")
    assert fc.FlexExplainer.read_settings(folder)["constraints"] == rules
    assert fc.FlexExplainer.load(folder).task.rule_texts == rules
    with pytest.raises(fc.ConfigError, match="unknown feature 'sped'"):
        fc.FlexExplainer(user_model, accident_data.drop(columns=["severity"]), undesired="severe",
                         constraints=["cf.sped > 1"])
