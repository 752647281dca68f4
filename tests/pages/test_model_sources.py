"""The app on a model trained elsewhere: an uploaded .skops file, and a project folder from FlexExplainer.save."""

from __future__ import annotations

import os

import pytest
import skops.io as sio
from streamlit.testing.v1 import AppTest

import flex_core as fc
from tests.factories import accident_frame, user_pipeline
from tests.pages.conftest import APP, chart, errors, metric, shown, start, start_csv

# Every test here drives the real app through AppTest (seconds each): not in the fast run.
pytestmark = pytest.mark.slow


def upload_model(at: AppTest, name: str, data: bytes) -> AppTest:
    at.sidebar.radio(key="w_sb_model_source").set_value("Load a model file").run()
    uploader = next(u for u in at.sidebar.get("file_uploader") if u.proto.id.endswith("sb_model_upload"))
    uploader.set_value((name, data, "application/octet-stream")).run()
    at.sidebar.button(key="sb_model_use").click().run()
    assert not at.exception, at.exception
    return at


def test_an_uploaded_skops_model_is_explained_and_a_hostile_one_refused(tmp_path):
    task = fc.data.load_builtin("synthetic-regional")
    model = user_pipeline(task.frame)
    at = start("synthetic-regional")
    upload_model(at, "users_model.skops", sio.dumps(model))
    assert not errors(at)
    assert at.session_state["model_file"]["name"] == "users_model.skops"
    captions = [shown(c.value).replace("**", "") for c in at.sidebar.caption]
    assert "Active model file: users_model.skops" in captions
    assert not any("not yet in use" in c for c in captions)  # the chosen file is the one in use
    assert metric(at, "Accuracy").endswith("%")
    assert chart(at, "global_chart")["data"][0]["x"]
    # A hostile file: one error naming the type, nothing run, the uploaded model stays active.
    upload_model(at, "evil.skops", sio.dumps({"run": os.system}))
    (message,) = errors(at)
    assert message.startswith("The model file was refused: it names the type posix.system")
    assert "Nothing in it was built or run. The previous model stays active." in message and "not loaded" not in message
    assert at.session_state["model_file"]["name"] == "users_model.skops"
    captions = [shown(c.value).replace("**", "") for c in at.sidebar.caption]
    assert "Active model file: users_model.skops" in captions  # the refused file is chosen, and said to be unused
    assert any(c.startswith("Chosen, not yet in use: evil.skops.") for c in captions), captions
    assert chart(at, "global_chart")["data"][0]["x"]
    # The view link cannot carry the file, and the Report page says so where the link is shown.
    at.switch_page("app_pages/report.py").run()
    assert not at.exception, at.exception
    assert any("model was loaded from a file" in shown(w.value) for w in at.warning)


def test_a_model_that_does_not_fit_the_data_is_refused_with_one_error():
    other = accident_frame(200)
    at = start("synthetic-regional")
    upload_model(at, "other.skops", sio.dumps(user_pipeline(other)))
    (message,) = errors(at)
    assert "the model needs: " in message
    assert at.session_state["model_file"] is None


def open_project(folder) -> AppTest:
    """The app on a saved project folder (as the sidebar's "Project folder" source opens it), N_F = 12, N_cf = 3."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset"] = {"kind": "project", "path": str(folder)}
    at.session_state["sb_source"] = "Project folder"
    at.session_state["sb_n_factuals"] = 12
    at.session_state["sb_n_cf"] = 3
    return at.run()


def test_a_project_folder_opens_with_its_model(tmp_path, monkeypatch):
    monkeypatch.setenv("FLEX_DATA_ROOTS", str(tmp_path))  # the server may read below this folder
    frame = accident_frame(300)
    model = user_pipeline(frame)
    explainer = fc.FlexExplainer(model, frame.drop(columns=["severity"]), undesired="severe", y=frame["severity"],
                                 kinds={"district": "categorical"}, immutable=["zone"])
    folder = explainer.save(tmp_path / "project")
    at = open_project(folder)
    assert not at.exception, at.exception
    assert not errors(at)
    bars = chart(at, "global_chart")["data"][0]
    assert set(bars["y"]) >= {"Speed", "Lighting", "District"}  # the project's features, drawn
    assert metric(at, "Accuracy").endswith("%")


def test_project_argument_is_read_from_the_command_line():
    from ui.paths import project_argument

    assert project_argument(["--project", "/tmp/p"]) == "/tmp/p"
    assert project_argument(["--other", "x"]) is None



def test_an_uploaded_lightgbm_on_category_columns_is_explained():
    """Issue 19: a LightGBM .skops file (an OrderedDict inside) trained on pandas category columns."""
    lightgbm = pytest.importorskip("lightgbm")
    task = fc.data.load_builtin("synthetic-regional")
    X = task.frame[task.feature_names].astype({c: "category" for c in task.categorical_names})
    model = lightgbm.LGBMClassifier(n_estimators=15, verbose=-1, n_jobs=1).fit(X, task.frame[task.target])
    at = start("synthetic-regional")
    upload_model(at, "lightgbm.skops", sio.dumps(model))
    assert not errors(at)
    assert at.session_state["model_file"]["name"] == "lightgbm.skops"
    assert chart(at, "global_chart")["data"][0]["x"]


def test_an_uploaded_lightgbm_that_never_saw_a_category_of_the_data_is_one_error():
    """A category the model never saw would be taken as missing, silently: one error names it and the fix."""
    lightgbm = pytest.importorskip("lightgbm")
    task = fc.data.load_builtin("synthetic-regional")
    X = task.frame[task.feature_names].astype({c: "category" for c in task.categorical_names})
    y = task.frame[task.target]
    column = task.categorical_names[0]
    seen = X[column] != X[column].cat.categories[0]  # trained without the first level: the data still has it
    model = lightgbm.LGBMClassifier(n_estimators=15, verbose=-1, n_jobs=1).fit(
        X[seen].astype({column: str}).astype({column: "category"}), y[seen])
    at = start("synthetic-regional")
    upload_model(at, "lightgbm.skops", sio.dumps(model))
    (message,) = errors(at)
    assert message.startswith(f"That model was not used: Column '{column}' holds a value the model never saw in "
                              f"training: {X[column].cat.categories[0]}")
    assert "Drop or recode those rows" in message and "previous model stays active" in message
    assert at.session_state["model_file"] is None


def test_an_uploaded_xgboost_with_names_with_spaces_and_categories_is_explained():
    xgboost = pytest.importorskip("xgboost")
    task = fc.data.load_builtin("synthetic-regional")
    X = task.frame[task.feature_names].astype({c: "category" for c in task.categorical_names})
    X.columns = [c.replace("_", " ") for c in X.columns]
    y = (task.frame[task.target] == "Severe").astype(int)
    model = xgboost.XGBClassifier(n_estimators=15, max_depth=3, enable_categorical=True, n_jobs=1).fit(X, y)
    at = start_csv(X.assign(outcome=y), target="outcome", undesirable=["1"])
    upload_model(at, "xgboost.skops", sio.dumps(model))
    assert not errors(at)
    assert at.session_state["model_file"]["name"] == "xgboost.skops"
    assert chart(at, "global_chart")["data"][0]["x"]


def _lightgbm_with_categories(frame):
    """A LightGBM model on pandas category columns, one of them named with a space ("road zone")."""
    lightgbm = pytest.importorskip("lightgbm")
    X = frame.drop(columns=["severity"]).rename(columns={"zone": "road zone"})
    X = X.astype({"road zone": "category", "lighting": "category", "district": "category"})
    model = lightgbm.LGBMClassifier(n_estimators=20, num_leaves=7, min_child_samples=5, verbose=-1, n_jobs=1)
    return model.fit(X, frame["severity"]), X


@pytest.mark.parametrize("library", ["scikit-learn pipeline", "lightgbm"])
def test_a_project_saved_without_labels_shows_no_accuracy_or_f1(tmp_path, monkeypatch, library):
    """Issue 19 item 6: dashboard() of an explainer without y scored the model against its own predictions (100%).

    Also for a LightGBM model on category columns with a space in a name, as a data scientist brings one.
    """
    monkeypatch.setenv("FLEX_DATA_ROOTS", str(tmp_path))
    frame = accident_frame(300)
    if library == "lightgbm":
        model, X = _lightgbm_with_categories(frame)
        explainer = fc.FlexExplainer(model, X, undesired="severe")
    else:
        model = user_pipeline(frame)
        explainer = fc.FlexExplainer(model, frame.drop(columns=["severity"]), undesired="severe",
                                     kinds={"district": "categorical"})
    assert explainer.model.metrics == {"note": fc.models.NO_LABELS_NOTE}
    folder = explainer.save(tmp_path / "project")
    at = open_project(folder)
    assert not at.exception, at.exception
    assert not errors(at)
    labels = [m.label for m in at.metric]
    assert not [label for label in labels if label.startswith(("Accuracy", "F1", "CV accuracy", "CV F1"))], labels
    assert any(fc.models.NO_LABELS_NOTE in shown(c.value) for c in at.sidebar.caption)
    at.switch_page("app_pages/data_model.py").run()
    assert not at.exception, at.exception
    assert any(fc.models.NO_LABELS_NOTE in shown(i.value) for i in at.info)
    assert not any("accuracy" in str(t.value).lower() for t in at.dataframe if hasattr(t, "value"))


def saved_project(tmp_path):
    """A project folder whose notebook ran N_F = 14, N_cf = 4, seed 3, refine none, τ = 0.2 and a region with k = 3."""
    frame = accident_frame(300)
    explainer = fc.FlexExplainer(user_pipeline(frame), frame.drop(columns=["severity"]), undesired="severe",
                                 y=frame["severity"], kinds={"district": "categorical"}, n_cf=4, seed=3,
                                 refine="none")
    result = explainer.explain_global(n_factuals=14, tau=0.2)
    region = explainer.explain_region(global_result=result, k=3, tau=0.2)
    view = {"n_factuals": 14, "tau": 0.2, "query": region.query, "k": 3, "where": None}
    folder = explainer.save(tmp_path / "project", view=view)
    assert fc.FlexExplainer.read_settings(folder)["view"] == view
    return folder, explainer, view


def assert_on_the_notebooks_settings(at: AppTest, explainer, view) -> None:
    s = at.session_state
    assert (s["sb_n_factuals"], s["sb_n_cf"], s["sb_seed"], s["tau"]) == (14, 4, 3, 0.2)
    assert s["sb_refine"] == "none" and s["query"] == view["query"] and s["k"] == 3
    assert s["sb_generator"] == explainer.settings()["generator"]


def test_a_project_opens_on_the_notebooks_last_settings(tmp_path, monkeypatch):
    """Issue 19 item 6: dashboard() opened at N_F = 200 after the notebook ran another; now its last settings."""
    import sys

    folder, explainer, view = saved_project(tmp_path)
    monkeypatch.setattr(sys, "argv", ["app.py", "--project", str(folder)])  # as `flex dashboard DIR` starts it
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    assert_on_the_notebooks_settings(at, explainer, view)
    # The sidebar's model source names the model that is loaded, not "Train here".
    radio = at.sidebar.radio(key="w_sb_model_source")
    assert radio.options[0] == "The project's model" and radio.index == 0


def test_a_project_opened_from_the_sidebar_applies_the_notebooks_settings(tmp_path, monkeypatch):
    """The same settings as at start-up when the folder is opened while the app runs ("Project folder", Open)."""
    monkeypatch.setenv("FLEX_DATA_ROOTS", str(tmp_path))
    folder, explainer, view = saved_project(tmp_path)
    at = start(n_factuals=12, n_cf=3)
    assert at.session_state["sb_n_factuals"] == 12
    at.sidebar.radio(key="w_sb_source").set_value("Project folder").run()
    at.sidebar.text_input(key="w_sb_project_path").input(str(folder)).run()
    at.sidebar.button(key="sb_project_open").click().run()
    assert not at.exception, at.exception
    assert not errors(at)
    assert at.session_state["dataset"] == {"kind": "project", "path": str(folder)}
    assert_on_the_notebooks_settings(at, explainer, view)
    # The widgets show them, and the page ran on them.
    assert at.sidebar.number_input(key="w_sb_n_factuals").value == 14 and at.sidebar.number_input(key="w_sb_n_cf").value == 4
    assert at.sidebar.radio(key="w_sb_model_source").options[0] == "The project's model"
    bars = chart(at, "global_chart")["data"][0]
    assert set(bars["y"]) >= {"Speed", "Lighting", "District"}


def test_an_uploaded_decision_tree_is_read_from_its_splits():
    """A user's one-hot pipeline ending in a DecisionTreeClassifier: the tree generator reads it (the strip says so),
    not the batch search, and the Global chart is drawn."""
    from sklearn.tree import DecisionTreeClassifier

    task = fc.data.load_builtin("synthetic-regional")
    model = user_pipeline(task.frame)
    model.steps[-1] = (model.steps[-1][0], DecisionTreeClassifier(max_depth=6, random_state=0))
    model.fit(task.frame.drop(columns=[task.target]), task.frame[task.target])
    at = start("synthetic-regional")
    upload_model(at, "decision_tree.skops", sio.dumps(model))
    assert not errors(at)
    strips = [shown(c.value) for c in at.caption if "**Settings:**" in shown(c.value)]
    assert len(strips) == 1 and "ways out read from the model's trees" in strips[0], strips
    assert chart(at, "global_chart")["data"][0]["x"]
