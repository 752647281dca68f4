"""The model-quality view on the Data & model page: a cutoff slider recounts the confusion matrix and moves its point
on the held-out curves; a model from a file gets no curves, and the page says why."""

import pytest

from tests.pages.conftest import chart, shown, start


def _matrix(at):
    return chart(at, "confusion_matrix")["data"][0]["z"]


def test_the_cutoff_slider_recounts_the_confusion_matrix_and_the_calibration_curve_is_drawn():
    at = start("toy2d", page="app_pages/data_model.py")
    at_half = _matrix(at)
    n = sum(map(sum, at_half))
    assert n > 0
    assert any("held-out 20% test split" in shown(c.value) for c in at.caption)
    calibration = chart(at, "calibration")
    assert {t["name"] for t in calibration["data"]} >= {"model", "rows per bin", "perfectly calibrated"}
    assert sum(calibration["data"][2]["y"]) == n  # every test row is in one bin
    at.slider(key="w_cutoff").set_value(0.0).run()
    assert not at.exception
    low = _matrix(at)
    assert sum(map(sum, low)) == n
    # Cutoff 0: (almost) everything is predicted undesirable, the left column empties.
    assert low[0][0] + low[1][0] <= at_half[0][0] + at_half[1][0]
    assert low != at_half
    at.slider(key="w_cutoff").set_value(1.0).run()
    high = _matrix(at)
    assert high[0][1] == 0 and high[1][1] == 0  # nothing is above 1


def _cutoff_points(at) -> list:
    return [(t["x"][0], t["y"][0]) for t in chart(at, "model_curves")["data"] if t.get("name", "").startswith("cutoff")]


def test_the_held_out_curves_are_drawn_against_no_skill_with_the_cutoff_marked():
    at = start("toy2d", page="app_pages/data_model.py")
    curves = chart(at, "model_curves")
    titles = [a["text"] for a in curves["layout"]["annotations"][:4]]
    assert titles[0].startswith("ROC: AUC 0.9") and titles[0].endswith("(no skill 0.5)")
    assert titles[1].startswith("Precision-recall: AP ")
    assert sum(1 for t in curves["data"] if t["name"].startswith("no skill")) == 4
    assert any("of one Severe and one Slight case drawn at random" in shown(c.value) for c in at.caption)
    at.slider(key="w_cutoff").set_value(0.0).run()
    roc_point, _, gain_point = _cutoff_points(at)
    # At cutoff 0 nearly every case is predicted undesirable: the ROC point is near (1, 1), the gain point near 100%.
    assert roc_point[1] == 1.0 and gain_point[0] > 0.5


@pytest.mark.slow
def test_a_model_from_a_file_is_judged_on_every_row_and_the_page_warns_they_may_include_training_rows():
    import skops.io as sio

    import flex_core as fc
    from tests.factories import user_pipeline
    from tests.pages.test_model_sources import upload_model

    task = fc.data.load_builtin("synthetic-regional")
    at = start("synthetic-regional")
    upload_model(at, "users_model.skops", sio.dumps(user_pipeline(task.frame)))
    at.switch_page("app_pages/data_model.py").run()
    assert not at.exception, at.exception
    assert sum(map(sum, _matrix(at))) == len(task.frame)
    assert any("may include rows it was trained on" in shown(c.value) for c in at.caption)
    # No ROC, PR or gain curves on rows it may have learned from: the page says why instead.
    assert not any(e.proto.id.endswith("-model_curves") for e in at.get("plotly_chart"))
    assert any("without held-out rows" in shown(i.value) for i in at.info)
