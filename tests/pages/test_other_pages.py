"""Data & model, Counterfactuals and Report pages; bad uploads and settings; the view link."""

import re
from urllib.parse import parse_qs, urlparse

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import APP, chart, errors, metric, shown, start, start_csv
from ui import paths
from ui.reporting import table_constraints

# Every test here drives the real app through AppTest (seconds each): not in the fast run.
pytestmark = pytest.mark.slow


def test_data_page_shows_balance_metrics_and_applies_feature_overrides():
    at = start("synthetic-regional", n_factuals=10, n_cf=2, page="app_pages/data_model.py")
    assert metric(at, "Rows used") == "2,000" and metric(at, "Rows lost to missing values") == "0"
    balance = next(df.value for df in at.dataframe if "outcome" in df.value.columns)
    assert balance["rows"].sum() == 2000 and balance["explained by FLEX"].sum() == 1
    # Make "speed" immutable through the same path the editor's Apply uses.
    at.session_state["overrides"] = {"kinds": {}, "immutable": ["driver_age_band", "road_type", "speed"]}
    at.switch_page("app_pages/global.py").run()
    assert not at.exception
    labels = chart(at, "global_chart")["data"][0]["y"]
    assert "Speed (fixed)" in labels


def test_constraints_from_the_features_table_reach_the_counterfactuals():
    at = start("synthetic-regional", n_factuals=10, n_cf=2, page="app_pages/data_model.py")
    edited = next(df.value for df in at.dataframe if "direction" in df.value.columns)
    assert list(edited["feature"]) == ["Speed", "Road type", "Lighting", "Noise (number)", "Noise (category)",
                                       "Driver's age"]  # the dictionary's names; the page maps them back by position
    edited = edited.assign(feature=["speed", "road_type", "lighting", "noise_continuous", "noise_categorical",
                                    "driver_age_band"])
    edited.loc[edited["feature"] == "speed", "direction"] = "decrease"
    edited.loc[edited["feature"] == "noise_categorical", "limits"] = "A, B"
    constraints = table_constraints(edited)
    assert constraints["monotone"] == {"speed": "decrease"} and constraints["allowed"] == {"noise_categorical": ["A", "B"]}
    # The state the Apply button leaves behind (the editor's cells cannot be typed into from AppTest).
    at.session_state["overrides"] = {"kinds": {}, "immutable": ["driver_age_band", "road_type"], "constraints": constraints}
    at.run()
    assert not at.exception
    shown = next(df.value for df in at.dataframe if "direction" in df.value.columns).set_index("feature")
    assert shown.loc["Speed", "direction"] == "decrease" and shown.loc["Noise (category)", "limits"] == "A, B"


def test_counterfactual_page_highlights_changed_cells_and_shows_predictions():
    at = start("toy2d", page="app_pages/counterfactuals.py")
    assert not errors(at)
    table = at.dataframe[0].value
    assert table.index[0] == "this case" and table.index[1] == "way out 1"
    assert table["P(Severe)"].iloc[0] > 0.5
    valid = table["valid"].iloc[1:]
    assert (table["P(Severe)"].iloc[1:][valid] <= 0.5).all()
    # Exactly the cells that differ from the factual's line are highlighted.
    styles = at.dataframe[0].proto.arrow_data.styler.styles
    highlighted = {(int(r), int(c)) for r, c in re.findall(r"row(\d+)_col(\d+)", styles)}
    features = ["Vehicle speed (km/h)", "Visibility (0-1)"]  # labels, as in the charts
    differing = {
        (i, list(table.columns).index(name)) for i in range(1, len(table)) for name in features
        if abs(table[name].iloc[i] - table[name].iloc[0]) > 1e-6
    }
    assert highlighted == differing and differing
    # What changes comes first, then the outcome: the most often changed feature is the first column.
    changes = {name: sum(j == list(table.columns).index(name) for _, j in differing) for name in features}
    assert table.columns[0] == max(features, key=lambda n: (changes[n], -features.index(n)))
    assert list(table.columns).index("P(Severe)") == sum(c > 0 for c in changes.values())
    # Any factual works, also one whose counterfactuals were not generated yet (they are made on demand).
    last = int(at.selectbox(key="w_cf_row").options[-1].split()[1])
    at.selectbox(key="w_cf_row").set_value(last).run()
    assert not at.exception and at.session_state["cf_row"] == last
    assert at.dataframe[0].value.index[0] == "this case"


def test_the_counterfactual_page_says_when_a_case_has_more_smallest_ways_out_than_asked_for():
    """toy2d's first case (row 6) has three smallest ways out (speed alone, visibility alone, a trade-off of the
    two); with one asked for, the page says that more exist and which it shows (the tree generator's per-case tally)."""
    at = start("toy2d", n_cf=1, page="app_pages/counterfactuals.py")
    said = [c.value for c in at.caption if c.value.startswith("This case has more smallest ways out than the 1 asked")]
    assert said == ["This case has more smallest ways out than the 1 asked for: those that change the fewest features, "
                    "with the smallest changes, are shown."], [c.value for c in at.caption]


def test_report_page_offers_csvs_the_html_report_and_a_reproducing_link():
    at = start("toy2d", page="app_pages/report.py")
    names = {b.proto.label for b in at.get("download_button")}
    assert {"global_importance.csv", "local_frequencies.csv", "counterfactuals.csv", "tau_sweep.csv"} <= names
    link = at.code[0].value
    params = {k: v[0] for k, v in parse_qs(urlparse(link).query).items()}
    assert params["dataset"] == "builtin:toy2d" and params["n_factuals"] == "12" and params["n_cf"] == "3"
    at.button(key="build_report").click().run()
    assert not at.exception
    html = at.session_state["report_html"]
    assert "<table" in html and "plotly" in html and "What would have to change" in html


def test_report_page_builds_the_interactive_report_of_the_view_and_marks_it_out_of_date():
    at = start("toy2d", page="app_pages/report.py")
    at.button(key="build_snapshot").click().run()
    assert not at.exception
    html = at.session_state["report_snapshot"]["html"]
    assert 'id="flex-data"' in html and "FlexMath" in html and "Plotly" in html
    assert "Download interactive_report.html" in {b.proto.label for b in at.get("download_button")}
    at.session_state["tau"] = 0.4
    at.run()
    assert "Download interactive_report.html" not in {b.proto.label for b in at.get("download_button")}
    assert any("out of date" in shown(w.value) for w in at.warning)


def test_a_link_reproduces_the_view():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "builtin:toy2d", "n_factuals": "8", "n_cf": "2", "k": "3", "tau": "0.3",
                            "tau.visibility": "0.5"})
    at.run()
    assert not at.exception
    assert at.session_state["dataset"] == {"kind": "builtin", "name": "toy2d"}
    assert at.session_state["tau"] == 0.3 and at.session_state["tau_features"] == {"visibility": 0.5}
    assert metric(at, "Cases explained") == "8"


def test_a_bad_link_says_what_to_fix_and_opens_the_defaults():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"k": "many", "dataset": "builtin:toy2d"})
    at.session_state["sb_n_factuals"] = 8
    at.session_state["sb_n_cf"] = 2
    at.run()
    assert not at.exception
    assert any("k='many'" in shown(w.value) for w in at.warning)


def test_a_bad_upload_shows_an_error_and_keeps_the_previous_dataset():
    at = start("toy2d")
    before = chart(at, "global_chart")["data"][0]["x"]
    at.sidebar.radio(key="w_sb_source").set_value("CSV upload").run()
    at.sidebar.get("file_uploader")[0].set_value(("empty.csv", b"", "text/csv")).run()
    assert not at.exception
    assert any("empty" in e for e in errors(at))
    # A CSV whose outcome 'bad' has a single row cannot be split into training and test data: said at upload.
    rows = "x,y\n" + "\n".join(f"{i},{'bad' if i == 0 else 'good'}" for i in range(30))
    at.sidebar.get("file_uploader")[0].set_value(("one_bad.csv", rows.encode(), "text/csv")).run()
    assert not at.exception
    assert [e for e in errors(at) if e.startswith("No column looks like an outcome") and "'bad' in one row only" in e]
    assert at.session_state["dataset"] == {"kind": "builtin", "name": "toy2d"}
    assert chart(at, "global_chart")["data"][0]["x"] == before


def test_a_wrong_file_for_a_paper_adapter_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("FLEX_DATA_ROOTS", str(tmp_path))
    at = start("toy2d")
    at.sidebar.radio(key="w_sb_source").set_value("Loan approval (paper)").run()
    at.sidebar.get("file_uploader")[0].set_value(("loan.csv", b"a,b\n1,2\n3,4\n", "text/csv")).run()
    at.sidebar.button(key="sb_loan_load").click().run()
    assert any("loan_status" in e for e in errors(at))
    at.sidebar.radio(key="w_sb_source").set_value("Road accidents (paper)").run()
    at.sidebar.text_input(key="w_sb_accidents_path").set_value(str(tmp_path / "RTA_Dataset.csv")).run()
    at.sidebar.button(key="sb_accidents_load").click().run()
    # A missing file inside the allowed folders gets the one refusal, as one outside does: the message cannot be
    # used to tell which files exist on the server.
    assert any(paths.OUTSIDE in e for e in errors(at))
    assert at.session_state["dataset"] == {"kind": "builtin", "name": "toy2d"}


def test_a_good_csv_upload_loads_and_explains():
    rows = "speed,wet,outcome\n" + "\n".join(
        f"{20 + (i * 7) % 100},{'yes' if i % 3 == 0 else 'no'},{'severe' if (20 + (i * 7) % 100) > 70 else 'mild'}"
        for i in range(200)
    )
    at = start("toy2d")
    at.sidebar.radio(key="w_sb_source").set_value("CSV upload").run()
    at.sidebar.get("file_uploader")[0].set_value(("roads.csv", rows.encode(), "text/csv")).run()
    at.sidebar.selectbox(key="sb_csv_target").set_value("outcome").run()
    at.sidebar.multiselect(key="sb_csv_undesirable").set_value(["severe"]).run()
    at.sidebar.button(key="sb_csv_load").click().run()
    assert not at.exception and not errors(at)
    assert set(chart(at, "global_chart")["data"][0]["customdata"]) == {"speed", "wet"}


def test_a_model_below_the_majority_baseline_is_warned_about_on_every_page():
    from tests.factories import noise_frame

    at = start_csv(noise_frame(), target="outcome", undesirable=["bad"])
    for page in ("app_pages/data_model.py", "app_pages/global.py", "app_pages/thresholds.py", "app_pages/compare.py", "app_pages/report.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert [w for w in at.warning if "does not beat always predicting" in shown(w.value)], page
        assert not [i for i in at.info if "does not beat" in shown(i.value)], page  # once, as a warning
    at.switch_page("app_pages/data_model.py").run()
    table = next(df.value for df in at.dataframe if "balanced accuracy" in df.value.columns)
    test_line = table.iloc[-1]  # the held-out test part; the table shows shares as text ("83%")
    share = {column: float(str(test_line[column]).rstrip("%")) for column in ("always the most common outcome", "accuracy",
                                                                             "balanced accuracy")}
    assert share["always the most common outcome"] >= share["accuracy"]
    assert 40 < share["balanced accuracy"] < 60


def test_size_of_changes_control_rebuilds_the_store_and_travels_in_the_link():
    at = start("toy2d", page="app_pages/global.py")
    assert at.selectbox(key="w_sb_refine").value == "auto"
    minimal = chart(at, "global_chart")
    at.selectbox(key="w_sb_refine").set_value("none").run()
    assert not at.exception and not errors(at)
    assert chart(at, "global_chart") != minimal  # other counterfactual sizes, other μ
    at.switch_page("app_pages/report.py").run()
    params = {k: v[0] for k, v in parse_qs(urlparse(at.code[0].value).query).items()}
    assert params["refine"] == "none"


def test_constraints_between_features_are_checked_live_applied_and_kept_in_the_link():
    at = start("synthetic-regional", n_factuals=10, n_cf=2, page="app_pages/data_model.py")
    box = next(t for t in at.text_area if t.label == "Constraints, one per line")
    box.set_value("cf.speed <= x.speed - 5\ncf.speeed > 1").run()
    assert not at.exception
    checks = next(df.value for df in at.dataframe if "check" in df.value.columns)
    assert checks["check"].iloc[0] == "ok" and "unknown feature 'speeed'" in checks["check"].iloc[1]
    assert any("1 constraint cannot be applied" in e for e in errors(at))
    assert at.button(key="apply_constraints").disabled
    box = next(t for t in at.text_area if t.label == "Constraints, one per line")
    box.set_value("cf.speed <= x.speed - 5  # slower only").run()
    at.button(key="apply_constraints").click().run()
    assert not at.exception and at.session_state["overrides"]["between"] == ["cf.speed <= x.speed - 5"]
    effect = next(df.value for df in at.dataframe if "candidates it rejected" in df.value.columns)
    assert effect["constraint"].tolist() == ["cf.speed <= x.speed - 5"]
    assert effect["candidates it rejected"].iloc[0] > 0
    # Every case breaks the rule at its own speed; the run's note saying so is shown with the others on constraints.
    assert any("10 of the 10 cases break" in info.value for info in at.info)
