"""The what-if editor page: edit a value, the prediction and counterfactuals follow; send an unedited factual to Regional."""

from tests.pages.conftest import errors, metric, shown, start


def _page():
    return start("synthetic-regional", page="app_pages/what_if.py")


def test_editing_a_value_updates_the_prediction_and_counterfactuals_and_a_reset_undoes_it():
    at = _page()
    row = at.session_state["whatif_row"]
    assert at.selectbox(key="w_wi_row").value == row
    before = metric(at, "P(Severe)")
    assert metric(at, "Prediction") != "none"
    # Immutable features are shown, disabled.
    assert at.selectbox(key="w_wi.road_type").disabled and at.selectbox(key="w_wi.driver_age_band").disabled
    assert not at.number_input(key="w_wi.speed").disabled
    # The region button works for the unedited factual.
    assert not at.button(key="w_wi_region").disabled
    speed = at.number_input(key="w_wi.speed")
    low = speed.min
    speed.set_value(low).run()
    assert not at.exception and not errors(at)
    assert at.session_state["whatif_edits"] == {"speed": low}
    after = metric(at, "P(Severe)")
    assert after != before or metric(at, "Smallest ways out") == "none needed"
    # An edited case is not a row of the data: the button is off and says why.
    assert at.button(key="w_wi_region").disabled
    assert any("not a row of the data" in shown(c.value) for c in at.caption)
    at.button(key="w_wi_reset").click().run()
    assert at.session_state["whatif_edits"] == {}
    assert metric(at, "P(Severe)") == before


def test_explore_this_cases_region_makes_the_row_the_regional_query():
    at = _page()
    row = at.session_state["whatif_row"]
    at.button(key="w_wi_region").click().run()
    assert not at.exception and not errors(at)
    assert at.session_state["query"] == row
    assert at.title[0].value == "Regional explorer"


def test_an_edit_of_a_feature_made_immutable_later_is_dropped_with_a_warning():
    at = _page()
    at.number_input(key="w_wi.speed").set_value(at.number_input(key="w_wi.speed").min).run()
    assert "speed" in at.session_state["whatif_edits"]
    at.session_state["overrides"] = {"kinds": {}, "immutable": ["road_type", "driver_age_band", "speed"]}
    at.run()
    assert not at.exception and not errors(at)
    assert at.session_state["whatif_edits"] == {}
    assert any("Edits dropped" in shown(w.value) for w in at.warning)
    assert at.number_input(key="w_wi.speed").disabled


def test_a_link_opens_the_same_edited_case():
    import json

    from streamlit.testing.v1 import AppTest

    from tests.pages.conftest import APP

    at = _page()
    speed = at.number_input(key="w_wi.speed")
    speed.set_value(speed.min).run()
    row, edits = at.session_state["whatif_row"], at.session_state["whatif_edits"]
    shown = metric(at, "P(Severe)")
    assert edits == {"speed": speed.min} and json.loads(at.query_params["whatif_edits"]) == edits
    fresh = AppTest.from_file(APP, default_timeout=120)  # a new session, given only the link
    fresh.query_params.update({k: v[-1] if isinstance(v, list) else v for k, v in at.query_params.items()})
    fresh.run()
    fresh.switch_page("app_pages/what_if.py").run()
    assert not fresh.exception and not errors(fresh)
    assert (fresh.session_state["whatif_row"], fresh.session_state["whatif_edits"]) == (row, edits)
    assert fresh.number_input(key="w_wi.speed").value == speed.min
    assert metric(fresh, "P(Severe)") == shown


def test_a_large_number_is_shown_grouped_by_thousands_beneath_its_box():
    """st.number_input cannot group thousands: a number whose range reaches 10,000 shows its value beneath the box
    as the reader reads it ("2,200,000"), and follows an edit; a small number shows nothing more."""
    import numpy as np
    import pandas as pd

    from tests.pages.conftest import start_csv

    rng = np.random.default_rng(0)
    income = rng.integers(200_000, 9_900_000, 300)
    term = rng.integers(2, 20, 300)
    frame = pd.DataFrame({"income": income, "term": term,
                          "status": np.where(income + rng.normal(0, 1e6, 300) < 5_000_000, "Rejected", "Approved")})
    at = start_csv(frame, target="status", undesirable=["Rejected"], page="app_pages/what_if.py")
    assert not at.exception and not errors(at)
    row = at.session_state["whatif_row"]
    captions = [shown(c.value) for c in at.caption]
    assert f"{int(frame.loc[row, 'income']):,}" in captions
    assert str(int(frame.loc[row, "term"])) not in captions
    at.number_input(key="w_wi.income").set_value(1_234_567).run()
    assert "1,234,567" in [shown(c.value) for c in at.caption]


def test_the_what_if_page_says_when_a_case_has_more_smallest_ways_out_than_asked_for():
    """toy2d's row 6 has three smallest ways out (speed alone, visibility alone, a trade-off of the two); with one
    asked for, What-if says that more exist, as the Counterfactuals page does, for the row and for it edited."""
    at = start("toy2d", n_cf=1, page="app_pages/what_if.py")
    at.selectbox(key="w_wi_row").set_value(6).run()
    sentence = ("This case has more smallest ways out than the 1 asked for: those that change the fewest features, "
                "with the smallest changes, are shown.")
    assert [c.value for c in at.caption].count(sentence) == 1
    at.number_input(key="w_wi.vehicle_speed").set_value(85.0).run()  # faster still: an edited case, searched anew
    assert not at.exception and not errors(at) and at.session_state["whatif_edits"] == {"vehicle_speed": 85.0}
    assert [c.value for c in at.caption].count(sentence) == 1
