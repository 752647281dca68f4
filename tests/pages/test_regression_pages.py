"""Issue 38: the pages on a regression task (a number target with a band). Data & model reads the model's quality
in R², MAE and RMSE against the average and draws its errors, with none of a classifier's views (saying why); the
what-if answer and the counterfactual tables give the predicted number, not the off-band score as a chance."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import APP, chart, errors, first_run, metric, shown
from tests.pages.test_band_form import planted

pytestmark = pytest.mark.slow  # the real app through AppTest (seconds each)

BAND = {"target": "y", "above": 24.0, "below": None, "inclusive": False}


def start_band(page: str | None = None) -> AppTest:
    """The app on the planted CSV loaded with the band y above 24, as after "Load CSV"."""
    dataset = {"kind": "csv", "data": planted(200).to_csv(index=False).encode(), "filename": "planted.csv",
               "target": "y", "band": BAND}
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in {"sb_source": "CSV upload", "dataset": dataset, "band": BAND, "sb_n_factuals": 8, "sb_n_cf": 2,
                       "sb_cv_folds": 2}.items():
        at.session_state[key] = value
    return first_run(at, page)


def test_data_and_model_reads_a_regressors_quality_in_words_and_draws_its_errors():
    at = start_band("app_pages/data_model.py")
    assert not errors(at)
    text = " ".join(shown(m.value) for m in at.markdown)
    assert re.search(r"Y is off by [\d.]+ on average \(mean absolute error\); always predicting the average Y would "
                     r"be off by [\d.]+", text), text
    assert re.search(r"R² = [01]\.\d\d: the model accounts for \d+% of how much Y varies", text)
    assert "Cross-validated R²" in text
    infos = " ".join(shown(i.value) for i in at.info)
    assert "The model predicts a number, not the chance of an outcome" in infos
    assert not [s for s in at.slider if s.key == "w_cutoff"]  # no decision cutoff for a regressor
    ids = [e.proto.id for e in at.get("plotly_chart")]
    assert not [i for i in ids if i.endswith(("-confusion_matrix", "-calibration", "-model_curves"))], ids
    residuals = chart(at, "residuals")
    points = residuals["data"][0]
    assert len(points["x"]) == len(points["y"]) > 0  # one point per held-out row
    vertical = [s["x0"] for s in residuals["layout"]["shapes"] if s["type"] == "line" and s["x0"] == s["x1"]]
    assert vertical == [24.0]  # the band's threshold
    assert re.fullmatch(r"[01]\.\d\d", metric(at, "R²")) and metric(at, "Mean error")
    predictions = chart(at, "predictions")  # the predictions' histogram with the band drawn
    assert sum(predictions["data"][0]["y"]) == 200
    assert [s["x0"] for s in predictions["layout"]["shapes"] if s["type"] == "line"] == [24.0]


def test_the_what_if_answer_is_the_predicted_number_and_whether_it_is_in_the_band():
    at = start_band("app_pages/what_if.py")
    assert not errors(at)
    value = metric(at, "Predicted Y")
    assert re.fullmatch(r"-?[\d,]+(\.\d+)?", value), value
    in_band = metric(at, "In the undesirable band")
    assert in_band == ("yes" if float(value.replace(",", "")) > 24 else "no")
    words = [shown(c.value) for c in at.caption if "The model predicts Y = " in shown(c.value)]
    assert words and re.search(r"Y = [\d.,]+: (not )?in the undesirable band \(Y above 24\)", words[0]), words
    assert not [m for m in at.metric if m.label.startswith("P(")]


def test_the_counterfactuals_page_gives_predicted_numbers_not_a_chance():
    at = start_band("app_pages/counterfactuals.py")
    assert not errors(at)
    now = metric(at, "predicted Y now")
    assert re.fullmatch(r"[\d,]+(\.\d+)?", now) and float(now.replace(",", "")) > 24  # a factual: in the band
    after = metric(at, "predicted Y after (mean)")
    assert after == "n/a" or float(after.replace(",", "")) <= 24  # its ways out: out of the band
    assert not [m for m in at.metric if "%" in m.value]


def test_the_html_report_reads_a_regressors_quality_as_the_page_does():
    at = start_band("app_pages/report.py")
    at.button(key="build_report").click().run()
    assert not at.exception and not errors(at)
    html = at.session_state["report_html"]
    assert "on average (mean absolute error)" in html and "R²" in html
    assert "of the time" not in html  # no accuracy reading for a regressor
    assert "No ROC, precision-recall or gain curves: the model predicts a number" in html


def test_the_sidebar_names_the_regressor_each_model_choice_fits():
    import flex_core as fc
    from ui.sidebar import REGRESSOR_LABELS

    task = fc.data.make_task(planted(120), target="y", undesirable={"above": 24.0})
    assert set(REGRESSOR_LABELS) == set(fc.models.MODELS)
    for key, label in REGRESSOR_LABELS.items():
        assert fc.fit_model(task, model=key, cv_folds=0).label == label
    at = start_band()
    box = at.sidebar.selectbox(key="w_sb_regressor")
    assert box.label == "Regressor" and box.options == list(REGRESSOR_LABELS.values())


def test_loading_a_number_target_after_a_class_one_keeps_the_model_choice():
    """The model box changes from classifiers to regressors: the setting stays the model's key (it once became the
    classifier's words, and the sidebar failed with "... is not in list")."""
    from tests.pages.conftest import start
    from tests.pages.test_band_form import upload

    at = upload(start("toy2d"), planted())
    at.sidebar.selectbox(key="sb_csv_target").set_value("y").run()
    at.sidebar.button(key="sb_csv_load").click().run()
    assert not at.exception and not errors(at)
    assert at.session_state["sb_model"] == "rf" and at.session_state["dataset"]["band"]["target"] == "y"
    assert at.sidebar.selectbox(key="w_sb_regressor").value == "rf"
    at.sidebar.selectbox(key="w_sb_regressor").set_value("lr").run()
    assert not at.exception and at.session_state["sb_model"] == "lr"
    assert metric(at, "R²")


def test_the_glossary_explains_the_off_band_score_not_a_probability():
    at = start_band("app_pages/glossary.py")
    text = " ".join(shown(m.value) for m in at.markdown)
    assert "**off-band score**: What a model that predicts a number gives FLEX in place of a probability: above 0.5 " \
           "exactly when its prediction is Y above 24" in text
    assert "P(Y above 24)" not in text
