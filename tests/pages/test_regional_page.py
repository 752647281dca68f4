"""Regional explorer: k sets the region size; the scatter, map, mode shift and saved regions."""

import math
import re

import pytest

import flex_core as fc
from tests.pages.conftest import chart, errors, metric, shown, start, start_csv
from ui import state as S
from ui import url_state as ui_url_state

# Every test here drives the real app through AppTest (seconds each): not in the fast run.
pytestmark = pytest.mark.slow


def test_changing_k_changes_the_region_size():
    at = start("synthetic-regional", n_factuals=15, n_cf=3, page="app_pages/regional.py")
    assert not errors(at)
    at.slider(key="w_k").set_value(2).run()
    assert metric(at, "Region size") == "3"
    map_spec = chart(at, "factual_map")
    assert len(map_spec["data"][1]["customdata"]) == 2  # the ringed neighbours
    at.slider(key="w_k").set_value(6).run()
    assert not at.exception
    assert metric(at, "Region size") == "7"
    assert len(chart(at, "factual_map")["data"][1]["customdata"]) == 6
    regional = chart(at, "regional_chart")["data"][0]
    assert regional["x"] and all(0 <= v <= 1 for v in regional["x"])


def test_scatter_has_the_identity_line_r_in_the_title_and_quadrant_labels():
    at = start("synthetic-regional", n_factuals=15, n_cf=3, page="app_pages/regional.py")
    spec = chart(at, "regional_scatter")
    points, line = spec["data"][0], spec["data"][1]
    assert line["x"] == line["y"]
    assert "agreement with all cases = " in spec["layout"]["title"]["text"]
    # Immutable features (road type, driver age band) are left out; every other one carries its quadrant.
    assert set(points["customdata"]) == {"speed", "lighting", "noise_continuous", "noise_categorical"}
    assert all(re.search(r" \([A-D]: [a-z ,]+\)$", text) for text in points["hovertext"]), points["hovertext"]
    shown_r = metric(at, "Agreement with all cases")
    assert shown_r == "n/a" or -1 <= float(shown_r) <= 1


def test_a_criterion_restricts_the_region_and_regions_can_be_saved_and_compared():
    at = start("synthetic-regional", n_factuals=15, n_cf=3, page="app_pages/regional.py")
    at.selectbox(key="w_where_feature").set_value("road_type").run()
    at.selectbox(key="w_where_value").set_value("rural").run()
    assert not at.exception and not errors(at)
    assert at.session_state["where"] == fc.importance.Condition.criterion("road_type", "rural")  # a value, not text
    members = at.dataframe[-1].value  # the members table
    assert set(members["Road type"]) == {"rural"}  # labels, as the charts, not column names
    assert "road_type" not in members.columns
    at.button(key="save_region").click().run()
    at.selectbox(key="w_where_value").set_value("urban").run()
    at.button(key="save_region").click().run()
    heat = chart(at, "regions_heatmap")["data"][0]
    assert len(heat["y"]) == 3 and heat["y"][0].startswith("global")
    assert all("agreement =" in label for label in heat["y"][1:])
    assert all(len(line) == 6 for line in heat["z"])


def test_mode_shift_table_has_delta_for_every_feature():
    at = start("synthetic-regional", n_factuals=15, n_cf=3, page="app_pages/regional.py")
    mode_shift = next(df.value for df in at.dataframe if "relative change" in df.value.columns)
    assert len(mode_shift) == 6
    assert "Road type" in set(mode_shift["feature"])  # labels, not column names
    for delta, before, after in zip(mode_shift["relative change"], mode_shift["share of cases"],
                                    mode_shift["share of ways out"]):
        if delta != "–":
            # Shares are shown rounded to whole percent: δ = (after - before) / before up to that rounding.
            before, after = float(before.rstrip("%")), float(after.rstrip("%"))
            delta = float(delta.replace("−", "-").rstrip("%")) / 100
            assert math.isclose(delta, (after - before) / before, abs_tol=0.5 / before + 0.01)
    # the paper's δ, as the analyst's terms name it, only with the sidebar's switch on
    at.session_state["terms"] = True
    at.run()
    assert any("δ" in df.value.columns for df in at.dataframe)


def test_regional_page_offers_lime_beside_flex_only_when_asked():
    at = start("synthetic-regional", page="app_pages/regional.py")
    assert not at.exception, at.exception
    drawn = [e.proto.id for e in at.get("plotly_chart")]
    assert not any(i.endswith("-regional_lime_chart") for i in drawn)
    at.select_slider(key="regional_lime_samples").set_value(500).run()
    [b for b in at.button if "LIME" in b.label][0].click().run()
    assert not at.exception, at.exception
    lime = chart(at, "regional_lime_chart")
    flex = lime["data"][0]
    assert len(flex["x"]) == len(fc.data.load_builtin("synthetic-regional").features)
    assert max(lime["data"][1]["x"]) == 1.0


def test_a_model_change_forgets_stale_queries_and_regions_with_a_warning():
    at = start("toy2d", page="app_pages/regional.py")
    task = fc.data.load_builtin("toy2d")
    rf = set(fc.counterfactuals.factual_rows(task, fc.fit_model(task, model="rf", seed=0, cv_folds=3)).tolist())
    lr = set(fc.counterfactuals.factual_rows(task, fc.fit_model(task, model="lr", seed=0, cv_folds=3)).tolist())
    only_rf = min(rf - lr)  # a factual under the forest, not under logistic regression
    at.session_state["query"] = only_rf
    at.session_state["saved_regions"] = [{"name": "rf only", "query": only_rf, "k": 2, "where": None}]
    at.run()
    assert not at.exception and not errors(at)
    at.sidebar.selectbox(key="w_sb_model").set_value("lr").run()
    for page in ("app_pages/regional.py", "app_pages/report.py", "app_pages/compare.py"):
        at.switch_page(page).run()
        assert not at.exception and not errors(at), (page, at.exception, errors(at))
    assert at.session_state["saved_regions"] == []
    assert at.session_state["query"] != only_rf


def test_a_criterion_met_by_one_case_needs_no_slider():
    # One severe case on a "rare" road: the region is that case alone, and the page says so.
    rows = [f"{s},{'rare' if i == 0 else 'common'},{'bad' if s > 50 else 'ok'}" for i, s in enumerate(range(99, 0, -1))]
    data = ("speed,road,y\n" + "\n".join(rows) + "\n").encode()
    at = start("toy2d")
    at.sidebar.radio(key="w_sb_source").set_value("CSV upload").run()
    at.sidebar.get("file_uploader")[0].set_value(("rare.csv", data, "text/csv")).run()
    at.sidebar.selectbox(key="sb_csv_target").set_value("y").run()
    at.sidebar.multiselect(key="sb_csv_undesirable").set_value(["bad"]).run()
    at.sidebar.button(key="sb_csv_load").click().run()
    assert not at.exception and not errors(at), (at.exception, errors(at))
    at.session_state["where"] = fc.importance.Condition.criterion("road", "rare")
    at.session_state["query"] = 0
    at.switch_page("app_pages/regional.py").run()
    assert not at.exception and not errors(at), (at.exception, errors(at))
    assert metric(at, "Region size") == "1"
    assert any("the region holds all of them" in shown(c.value) for c in at.caption)


@pytest.mark.parametrize("where", ["lighting=purple", "weather=rain", "speed=80", "lighting"])
def test_an_unknown_criterion_from_a_link_is_dropped_with_a_warning(where):
    """An unknown level or feature, a number, a criterion without "=": one warning, the criterion dropped."""
    at = start("synthetic-regional", n_factuals=15, n_cf=3)
    at.session_state["where"] = S.criterion_of(where)  # as a link with this where= gives it
    at.switch_page("app_pages/regional.py").run()
    assert not at.exception and not errors(at), (at.exception, errors(at))
    assert any("was dropped" in shown(w.value) for w in at.warning)
    assert at.session_state["where"] is None


def test_regional_page_has_the_what_must_change_view_and_toggles():
    at = start("synthetic-regional", page="app_pages/regional.py")
    assert chart(at, "regional_must_change_chart")["data"]
    assert chart(at, "regional_chart")["data"][0]["error_x"]["symmetric"] is False
    # The region's own shares, on request: computed over its members, read in a sentence.
    [b for b in at.button if b.key == "regional_sufficiency"][0].click().run()
    assert not at.exception and not errors(at)
    names = [trace["name"].split(":")[0] for trace in chart(at, "regional_must_change_chart")["data"]]
    assert names[-2:] == ["flips it alone", "needed"]
    assert any("of the region's cases" in shown(m.value) for m in at.markdown)


def test_neighbours_drawn_among_ties_are_reported_in_a_sentence():
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({c: rng.choice(["p", "q", "r"], 300) for c in "abcd"})
    frame["out"] = np.where(frame["a"] == "p", "bad", "good")
    at = start_csv(frame, target="out", undesirable=["bad"], page="app_pages/regional.py")
    assert not errors(at)
    sentence = [shown(c.value) for c in at.caption if "tie at distance" in shown(c.value)]
    assert sentence and "were drawn at random (seed 0)" in sentence[0]


def test_saving_a_region_never_overwrites_one_and_suggests_a_fresh_name():
    at = start("toy2d", page="app_pages/regional.py")
    at.text_input(key="w_region_name").set_value("fast roads").run()
    at.button(key="save_region").click().run()
    assert at.text_input(key="w_region_name").value == ""  # emptied for the next one
    at.slider(key="w_k").set_value(3).run()  # another region, the same name typed
    at.text_input(key="w_region_name").set_value("fast roads").run()
    at.button(key="save_region").click().run()
    names = [r["name"] for r in at.session_state["saved_regions"]]
    assert names == ["fast roads", "fast roads (2)"]
    assert any("saved as 'fast roads (2)'" in shown(t.value) for t in at.toast)
    at.button(key="save_region").click().run()  # the same region again: not a second line
    assert len(at.session_state["saved_regions"]) == 2
    assert any("saved already, as 'fast roads (2)'" in shown(t.value) for t in at.toast)
    at.slider(key="w_k").set_value(2).run()
    at.button(key="save_region").click().run()  # no name typed: the suggestion, itself unique
    names = [r["name"] for r in at.session_state["saved_regions"]]
    assert len(names) == len(set(names)) == 3
    # They are part of the address bar, so a reload keeps them.
    link_regions = ui_url_state.view_from_query_params(dict(at.query_params.items()))["regions"]
    assert link_regions == at.session_state["saved_regions"]


def test_more_factuals_than_the_map_draws_still_list_and_choose_any_case():
    # 12,000 rows, about half predicted severe: more factuals than the map's 5,000 points and the table's 2,000 rows.
    import numpy as np
    import pandas as pd

    from ui.selection import TABLE_ROWS

    rng = np.random.default_rng(0)
    n = 12_000
    speed = rng.uniform(20, 120, n).round(0)
    frame = pd.DataFrame({"speed": speed, "lighting": rng.choice(["day", "dark"], n),
                          "severity": np.where(speed > 70, "Severe", "Slight")})
    at = start_csv(frame, target="severity", undesirable=["Severe"], page="app_pages/regional.py")
    assert not at.exception, at.exception
    assert any("seeded random sample of 5,000" in shown(c.value) for c in at.caption)
    assert any(f"lists {TABLE_ROWS:,} of them" in shown(c.value) for c in at.caption)
    drawn = {int(r[0]) if isinstance(r, list) else int(r) for r in chart(at, "factual_map")["data"][0]["customdata"]}
    candidates = [int(r) for r in frame.index[frame["speed"] > 75]]  # surely predicted severe
    off_map = next(r for r in candidates if r not in drawn)
    at.number_input(key="w_query_row").set_value(off_map).run()
    assert not at.exception, at.exception
    assert at.session_state["query"] == off_map
    assert any(f"Region around row {off_map}" in shown(h.value) for h in at.subheader)
    # The sample left it out, but the map draws the query (and its region) where they belong.
    on_chart = {int(r[0]) if isinstance(r, list) else int(r)
                for trace in chart(at, "factual_map")["data"] for r in (trace.get("customdata") or [])}
    assert off_map in on_chart
    at.number_input(key="w_query_row").set_value(int(frame.index[frame["speed"] < 30][0])).run()  # not a factual
    assert at.session_state["query"] == off_map
    (message,) = errors(at)
    assert "not among the cases" in message and f"stays row {off_map}" in message


def test_the_table_lists_the_drawn_cases_first_and_always_the_query():
    import numpy as np

    from ui.selection import rows_to_list

    candidates = np.arange(100)
    listed, total = rows_to_list(candidates, lassoed=candidates[:0], drawn=np.array([90, 95, 99]), query=50, limit=10)
    assert total == 100 and len(listed) == 10
    assert {90, 95, 99, 50} <= set(listed.tolist()) and list(listed) == sorted(listed)
    few, total = rows_to_list(candidates[:5], lassoed=candidates[:0], drawn=np.array([]), query=None, limit=10)
    assert total == 5 and list(few) == [0, 1, 2, 3, 4]
    lassoed, total = rows_to_list(candidates, lassoed=np.array([3, 7]), drawn=np.array([]), query=50, limit=10)
    assert total == 2 and list(lassoed) == [3, 7]
