"""State the user built is never lost: the address bar follows the view, links carry every setting
that changes a number (or say what they cannot carry), and a report out of date is marked."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import flex_core as fc
from tests.conftest import data_dir
from tests.pages.conftest import APP, chart, shown, start

# Every test here drives the real app through AppTest (seconds each): not in the fast run.
pytestmark = pytest.mark.slow


def params(at: AppTest) -> dict:
    return {k: v[-1] if isinstance(v, list) else v for k, v in at.query_params.items()}


def test_the_address_bar_follows_the_view():
    at = start("toy2d", page="app_pages/thresholds.py")
    shown = params(at)
    assert shown["dataset"] == "builtin:toy2d" and shown["n_factuals"] == "12" and shown["cv_folds"] == "3"
    at.session_state["tau"] = 0.4
    at.session_state["overrides"] = {"kinds": {}, "immutable": ["visibility"]}
    at.run()
    assert not at.exception
    shown = params(at)
    assert shown["tau"] == "0.4" and shown["immutable"] == "visibility"


def _an_integer_setting() -> str:
    defaults = fc.counterfactuals.generator_defaults(fc.counterfactuals.DEFAULT_GENERATOR)
    return next(k for k, v in defaults.items() if isinstance(v, int) and not isinstance(v, bool))


def test_a_link_carries_feature_overrides_cv_folds_and_generator_settings():
    setting = _an_integer_setting()
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "builtin:toy2d", "n_factuals": "8", "n_cf": "2", "immutable": "visibility",
                            "cv_folds": "2", f"gen.{setting}": "7"})
    at.run()
    assert not at.exception and not at.warning
    assert at.session_state["overrides"] == {"kinds": {}, "immutable": ["visibility"]}
    assert at.session_state["sb_cv_folds"] == 2
    assert at.session_state["generator_settings"] == {at.session_state["sb_generator"]: {setting: 7}}
    labels = chart(at, "global_chart")["data"][0]["y"]
    assert any("(fixed)" in label and "isibility" in label for label in labels)
    assert params(at)[f"gen.{setting}"] == "7" and params(at)["immutable"] == "visibility"


def test_a_link_for_other_data_drops_its_feature_settings_with_a_warning():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "builtin:toy2d", "n_factuals": "8", "n_cf": "2", "immutable": "speed"})
    at.run()
    assert not at.exception
    assert any("feature settings" in shown(w.value) and "speed" in shown(w.value) for w in at.warning)
    assert at.session_state["overrides"] == {"kinds": {}, "immutable": None}


def test_an_upload_link_on_a_fresh_session_warns_and_applies_the_rest():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "upload:roads.csv", "n_factuals": "8", "n_cf": "2", "model": "lr"})
    at.run()
    assert not at.exception
    assert any("uploaded file (roads.csv)" in shown(w.value) and "upload it again" in shown(w.value) for w in at.sidebar.warning)
    assert at.session_state["sb_model"] == "lr"


def test_the_report_is_marked_out_of_date_when_a_setting_changes():
    at = start("toy2d", page="app_pages/report.py")
    at.button(key="build_report").click().run()
    assert [b.proto.label for b in at.get("download_button") if b.proto.label.endswith(".html")]
    at.session_state["tau"] = 0.4
    at.run()
    assert not at.exception
    assert not [b for b in at.get("download_button") if b.proto.label.endswith(".html")]
    assert any("out of date" in shown(w.value) and "tau: 0.1 → 0.4" in shown(w.value) for w in at.warning)
    at.button(key="build_report").click().run()
    assert [b for b in at.get("download_button") if b.proto.label.endswith(".html")] and not at.warning


RTA = data_dir() / "RTA_Dataset.csv"


@pytest.mark.skipif(not RTA.exists(), reason=f"{RTA} not found (set FLEX_DATA_DIR to the paper's data folder)")
def test_a_link_carries_the_missing_value_policy():
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"dataset": f"accidents:{RTA}", "missing": "impute", "n_factuals": "6", "n_cf": "2",
                            "cv_folds": "2", "model": "lr"})
    at.run()
    assert not at.exception
    assert at.session_state["dataset"] == {"kind": "accidents", "path": str(RTA), "missing": "impute"}
    assert params(at)["missing"] == "impute"
    at.switch_page("app_pages/data_model.py").run()
    assert any("Imputed" in shown(i.value) for i in at.info)


def test_cross_validation_on_a_sample_is_said_in_the_metrics_and_carried_by_the_link():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "builtin:toy2d", "n_factuals": "6", "n_cf": "2", "cv_folds": "2",
                            "cv_rows": "100"})
    at.run()
    assert not at.exception
    assert any("random sample of 100 of the 480 training rows" in shown(c.value) for c in at.sidebar.caption)
    assert params(at)["cv_rows"] == "100"
    at.sidebar.number_input(key="w_sb_cv_folds").set_value(0).run()
    assert not at.exception and any("skipped" in shown(c.value) for c in at.sidebar.caption)
    assert params(at)["cv_folds"] == "0"


def test_a_link_asking_for_too_much_is_refused_and_the_session_keeps_its_view():
    """The security review's link (20 factuals x 20,000,000 candidates, about 15 GB): one warning with the range,
    nothing of the link applied, no generation (issue 31, finding 2)."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in {"sb_n_factuals": 6, "sb_n_cf": 2, "sb_cv_folds": 0}.items():  # small, and kept: not the link's
        at.session_state[key] = value
    at.query_params.update({"dataset": "builtin:toy2d", "n_factuals": "20", "gen.samples": "20000000"})
    at.run()
    assert not at.exception
    warnings = [shown(w.value) for w in at.sidebar.warning]
    assert warnings == ["The link could not be applied: Link parameter gen.samples (batch generators: candidates per "
                        "query and round) must be a whole number from 1 to 10,000; got 20,000,000."]
    assert at.session_state["dataset"] == {"kind": "builtin", "name": "synthetic-regional"}
    assert at.session_state["sb_n_factuals"] == 6
    assert at.session_state["generator_settings"] == {at.session_state["sb_generator"]: {}}


def test_a_run_over_the_memory_budget_is_refused_before_it_generates(monkeypatch):
    monkeypatch.setenv("FLEX_MEMORY_BUDGET_MB", "0.001")
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in {"dataset": {"kind": "builtin", "name": "toy2d"}, "sb_builtin": "toy2d", "sb_n_factuals": 6,
                       "sb_n_cf": 2, "sb_cv_folds": 0}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception
    assert any("Finding the ways out of 6 cases would need about" in shown(e.value)
               and "reduce the cases to explain (N_F), the ways out per case (N_cf) or the generator's samples" in shown(e.value) for e in at.error)
    assert "global_chart" not in [c.key for c in at.get("plotly_chart")]  # no FLEX chart: nothing was generated
