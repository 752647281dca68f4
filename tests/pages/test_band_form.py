"""Issue 38: a number column picked as the outcome on the CSV form asks for its band of undesirable values (a
histogram with the band drawn, the side, the threshold(s), the edge in words); a reversed range is one error and
nothing changes; a reload (an upload link) brings the band back to the form."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import APP, chart, errors, shown, start

pytestmark = pytest.mark.slow  # the real app through AppTest (seconds each)


def planted(n: int = 160, seed: int = 0) -> pd.DataFrame:
    """y = 3·x1 + 2·[x2 = a] + noise, with two noise features."""
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, 10, n).round(2)
    x2 = rng.choice(["a", "b"], n)
    return pd.DataFrame({"x1": x1, "x2": x2, "noise1": rng.normal(0, 1, n).round(3),
                         "noise2": rng.choice(["p", "q", "r"], n),
                         "y": (3 * x1 + 2 * (x2 == "a") + rng.normal(0, 0.3, n)).round(3)})


def upload(at: AppTest, frame: pd.DataFrame, name: str = "planted.csv") -> AppTest:
    at.sidebar.radio(key="w_sb_source").set_value("CSV upload").run()
    at.sidebar.get("file_uploader")[0].set_value((name, frame.to_csv(index=False).encode(), "text/csv")).run()
    return at


def test_a_number_target_asks_for_its_band_and_draws_it_on_the_histogram():
    frame = planted()
    at = upload(start("toy2d"), frame)
    target = at.sidebar.selectbox(key="sb_csv_target")
    assert "y (a number)" in target.options
    target.set_value("y").run()
    assert not at.exception and not errors(at)
    assert not [m for m in at.sidebar.multiselect if m.key == "sb_csv_undesirable"]  # no value against the rest
    assert at.sidebar.radio(key="w_band_side").value == "above"
    threshold = at.sidebar.number_input(key="w_band_low").value
    assert np.quantile(frame["y"], 0.7) < threshold < np.quantile(frame["y"], 0.8)  # the upper quartile, rounded
    spec = chart(at, "sb_band_chart")
    assert sum(spec["data"][0]["y"]) == len(frame)  # every row in the histogram
    lines = [s for s in spec["layout"]["shapes"] if s["type"] == "line"]
    shaded = [s for s in spec["layout"]["shapes"] if s["type"] == "rect"]
    assert [line["x0"] for line in lines] == [threshold]
    assert len(shaded) == 1 and shaded[0]["x0"] == threshold and shaded[0]["x1"] >= frame["y"].max()
    assert any(f"y above {threshold:,.4g}" in shown(m.value) for m in at.sidebar.markdown)
    # Below, at or below: the words and the drawing follow.
    at.sidebar.radio(key="w_band_side").set_value("below").run()
    at.sidebar.number_input(key="w_band_high").set_value(12.0).run()
    at.sidebar.radio(key="w_band_edge").set_value(True).run()
    assert any("y at or below 12" in shown(m.value) for m in at.sidebar.markdown)
    spec = chart(at, "sb_band_chart")
    assert [s["x1"] for s in spec["layout"]["shapes"] if s["type"] == "rect"] == [12.0]
    # Outside a range: two shaded areas, two lines.
    at.sidebar.radio(key="w_band_side").set_value("outside").run()
    at.sidebar.number_input(key="w_band_low").set_value(8.0).run()
    at.sidebar.number_input(key="w_band_high").set_value(20.0).run()
    spec = chart(at, "sb_band_chart")
    assert sorted(s["x0"] for s in spec["layout"]["shapes"] if s["type"] == "line") == [8.0, 20.0]
    assert len([s for s in spec["layout"]["shapes"] if s["type"] == "rect"]) == 2
    assert any("y outside 8 to 20 (ends included)" in shown(m.value) for m in at.sidebar.markdown)
    assert not at.exception and not errors(at)


def test_a_range_whose_low_end_is_not_below_its_high_end_is_one_error_and_nothing_changes():
    at = upload(start("toy2d"), planted())
    at.sidebar.selectbox(key="sb_csv_target").set_value("y").run()
    at.sidebar.radio(key="w_band_side").set_value("outside").run()
    at.sidebar.number_input(key="w_band_low").set_value(10.0).run()
    at.sidebar.number_input(key="w_band_high").set_value(20.0).run()
    drawn = chart(at, "sb_band_chart")["layout"]["shapes"]
    at.sidebar.number_input(key="w_band_low").set_value(25.0).run()
    assert not at.exception
    shown_errors = errors(at)
    assert len(shown_errors) == 1 and shown_errors[0].startswith("The band's low end (25) must be below its high end (20).")
    assert shown_errors[0].endswith("the previous dataset stays active.")
    assert at.sidebar.button(key="sb_csv_load").disabled
    assert chart(at, "sb_band_chart")["layout"]["shapes"] == drawn  # the last band that could be used stays drawn
    assert at.session_state["dataset"] == {"kind": "builtin", "name": "toy2d"} and at.session_state["band"] is None


@pytest.mark.parametrize(("side", "low", "high"), [("above", 9.3, None), ("below", None, 21.8), ("outside", 9.3, 21.8)])
def test_a_box_on_the_histogram_sets_the_sides_thresholds(side, low, high):
    """Above: the threshold moves to where the box starts; below: where it ends; a range: the box is the fine part.
    The ends are rounded to about a two-hundredth of the values' span (y runs over about 33: to 0.1)."""
    at = upload(start("toy2d"), planted())
    at.sidebar.selectbox(key="sb_csv_target").set_value("y").run()
    at.sidebar.radio(key="w_band_side").set_value(side).run()
    at.session_state["sb_band_chart"] = {"selection": {"points": [], "box": [{"x": [21.77, 9.31]}], "lasso": []}}
    at.run()
    assert not at.exception and not errors(at)
    boxes = {k: at.sidebar.number_input(key=f"w_band_{k}").value for k, v in (("low", low), ("high", high)) if v is not None}
    assert boxes == {k: v for k, v in (("low", low), ("high", high)) if v is not None}
    words = {"above": "y above 9.3", "below": "y below 21.8", "outside": "y outside 9.3 to 21.8"}[side]
    assert any(words in shown(m.value) for m in at.sidebar.markdown)
    at.run()  # the same selection, repeated by Streamlit on a rerun, does not undo a number typed since
    key = "w_band_low" if side != "below" else "w_band_high"
    at.sidebar.number_input(key=key).set_value(15.0).run()
    assert at.sidebar.number_input(key=key).value == 15.0


def test_a_selection_on_the_histogram_sets_the_thresholds():
    from ui.band import selected_span

    bars = {"points": [{"customdata": [4.0, 5.0]}, {"customdata": [6.0, 7.0]}]}
    assert selected_span({"selection": bars}) == (4.0, 7.0)  # clicked bars: their outer edges
    box = {"box": [{"x": [9.5, 2.25], "y": [0, 9]}], "points": [{"customdata": [3.0, 4.0]}]}
    assert selected_span({"selection": box}) == (2.25, 9.5)  # a box: its ends, whichever way it was drawn
    assert selected_span({"selection": {"points": [], "box": []}}) is None and selected_span(None) is None


def test_an_upload_link_brings_the_band_back_to_the_form():
    at = AppTest.from_file(APP, default_timeout=120)
    band = '{"above":20,"below":8,"inclusive":true,"target":"y"}'
    at.query_params.update({"dataset": "upload:planted.csv", "band": band, "n_factuals": "8", "n_cf": "2"})
    at.run()
    assert not at.exception
    assert any("band of its target" in shown(w.value) for w in at.sidebar.warning)
    assert at.session_state["band"] == {"target": "y", "above": 20.0, "below": 8.0, "inclusive": True}
    at.sidebar.get("file_uploader")[0].set_value(("planted.csv", planted().to_csv(index=False).encode(), "text/csv")).run()
    assert at.sidebar.selectbox(key="sb_csv_target").value == "y"
    assert at.sidebar.radio(key="w_band_side").value == "outside" and at.sidebar.radio(key="w_band_edge").value is True
    assert (at.sidebar.number_input(key="w_band_low").value, at.sidebar.number_input(key="w_band_high").value) == (8, 20)
    assert at.query_params["band"] == [band] or at.query_params["band"] == band  # still in the address bar


@pytest.mark.parametrize("band", [{"above": 24.0}, {"below": 12.5, "inclusive": True},
                                  {"above": 20.0, "below": 8.0}, {"above": 20.0, "below": 8.0, "inclusive": True}])
def test_the_forms_words_are_the_loaded_tasks(band):
    """The form words a band before any task exists (naming the column); once loaded, the pages say the task's words:
    the same band, after the target's label."""
    import flex_core as fc
    from ui.band import band_words
    from ui.url_state import library_band

    app_band = {"target": "y", "above": None, "below": None, "inclusive": False, **band}
    task = fc.data.make_task(planted(), target="y", undesirable=library_band(app_band))
    assert task.undesirable_words == f"{task.target_label} {band_words(app_band)}"


def test_a_band_no_row_falls_in_is_refused_at_load_and_the_previous_dataset_stays():
    at = upload(start("toy2d"), planted())
    at.sidebar.selectbox(key="sb_csv_target").set_value("y").run()
    at.sidebar.number_input(key="w_band_low").set_value(1000.0).run()
    assert not errors(at)  # a band is a band; whether rows fall in it is the data's to say, at Load
    at.sidebar.button(key="sb_csv_load").click().run()
    assert not at.exception
    shown_errors = errors(at)
    assert len(shown_errors) == 1 and "No row's y is above 1,000" in shown_errors[0], shown_errors
    assert shown_errors[0].endswith("The previous dataset stays active.")
    assert at.session_state["dataset"] == {"kind": "builtin", "name": "toy2d"} and at.session_state["band"] is None


def test_a_number_column_named_as_markdown_is_shown_as_text():
    frame = planted().rename(columns={"y": "[amount](http://phish.example/)"})
    at = upload(start("toy2d"), frame)
    at.sidebar.selectbox(key="sb_csv_target").set_value("[amount](http://phish.example/)").run()
    assert not at.exception and not errors(at)
    drawn = [m.value for m in at.sidebar.markdown if "holds numbers" in m.value or m.value.startswith("Undesirable")]
    assert len(drawn) == 2 and not any("](http" in m for m in drawn), drawn  # escaped: no link
    assert all("[amount](http://phish.example/)" in shown(m) for m in drawn)
