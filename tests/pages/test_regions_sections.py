"""Issue 22 on the Regional explorer: regions that differ (a click opens one), the rule builder, a rule in a link,
saved rule regions, the group comparison, and both analyses in the HTML report."""

import json
import re

import pytest

import flex_core as fc
from flex_core.limits import LIMITS
from tests.dictionary_scan import problems
from tests.pages.conftest import chart, errors, metric, shown, start
from ui import state as S
from ui import url_state

pytestmark = pytest.mark.slow

PAGE = "app_pages/regional.py"


def _find(at):
    at.number_input(key="w_regions_min_support").set_value(8).run()
    at.button(key="find_regions").click().run()
    assert not at.exception and not errors(at)
    return at


def _select_row(at, key: str, row: int):
    """What a click on a row of st.dataframe(on_select="rerun") puts in Session State, then a rerun."""
    at.session_state[key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    return at.run()


def test_found_regions_are_ranked_and_a_click_opens_one_as_a_rule_region():
    at = _find(start("synthetic-regional", n_factuals=60, n_cf=3, page=PAGE))
    # plain column names unless the sidebar's switch asks for the paper's terms (q-value, divergence 1 − r)
    table = next(d.value for d in at.dataframe if "how much it differs from all cases (95% interval)" in d.value.columns)
    assert list(table["rank"]) == list(range(1, len(table) + 1))
    assert {"region", "cases", "share of flukes among regions this strong", "significant"} <= set(table)
    assert all(re.fullmatch(r"below 0\.01%|\d+(\.\d+)?%", q) for q in table["share of flukes among regions this strong"]), table
    assert set(table["significant"]) <= {"yes", "no", "no: its interval reaches 0"}
    said = " ".join(shown(m.value) for m in at.markdown)
    # a region below the rate yet not significant is explained in the count's sentence
    assert ("no: its interval reaches 0" in set(table["significant"])) <= bool(re.search(r"more pass(es)? that rate", said)), said
    spec = chart(at, "regions_small_multiples")
    assert spec["data"] and spec["data"][0]["type"] == "bar"
    assert any("chance alone" in shown(c.value) for c in at.caption)  # the multiple-testing caveat, in words
    _select_row(at, "found_regions_table", 0)
    assert not at.exception and not errors(at)
    rule = at.session_state["rule"]
    assert rule and all(isinstance(c, fc.importance.Condition) for c in rule)  # values, not text or dicts
    assert any(shown(h.value) == f"Region: {table.loc[0, 'region']}" for h in at.subheader)
    assert int(metric(at, "Region size")) == int(table.loc[0, "cases"])  # the same members as the discovery pool
    # Every view works on it: F bars, scatter, mode shift, members, save and compare.
    assert chart(at, "regional_chart")["data"] and "agreement with all cases" in chart(
        at, "regional_scatter")["layout"]["title"]["text"]
    at.button(key="save_region").click().run()
    saved = at.session_state["saved_regions"]
    assert saved[-1]["rule"] == rule and saved[-1]["query"] is None
    assert len(chart(at, "regions_heatmap")["data"][0]["y"]) == 2
    at.button(key="rule_close").click().run()
    assert at.session_state["rule"] is None and any(shown(h.value).startswith("Region around row") for h in at.subheader)


def test_a_tau_change_reranks_without_generating():
    at = _find(start("synthetic-regional", n_factuals=60, n_cf=3, page=PAGE))
    before = at.session_state["region_search"]
    at.session_state["tau"] = 0.3
    at.run()
    assert not at.exception and not errors(at) and at.session_state["region_search"] == before
    assert any("how much it differs from all cases (95% interval)" in d.value.columns for d in at.dataframe)


def test_the_rule_builder_makes_a_region_and_a_link_carries_it():
    at = start("synthetic-regional", n_factuals=40, n_cf=3, page=PAGE)
    at.selectbox(key="w_rule_feature").set_value("road_type").run()
    at.selectbox(key="w_rule_value_road_type_=").set_value("rural").run()
    at.button(key="rule_add").click().run()
    at.selectbox(key="w_rule_feature").set_value("speed").run()
    at.selectbox(key="w_rule_op_speed").set_value(">=").run()
    at.number_input(key="w_rule_value_speed_>=").set_value(60.0).run()
    at.button(key="rule_add").click().run()
    assert [c["feature"] for c in at.session_state["rule_draft"]] == ["road_type", "speed"]
    at.button(key="rule_open").click().run()
    assert not at.exception and not errors(at)
    rule = at.session_state["rule"]
    assert rule == (fc.importance.Condition("road_type", "=", "rural"), fc.importance.Condition("speed", ">=", 60.0))
    assert any(shown(h.value) == "Region: Road type = rural and Speed ≥ 60 km/h" for h in at.subheader)
    params = {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}  # the address bar
    assert json.loads(params["rule"]) == [c.as_dict() for c in rule]
    assert url_state.view_from_query_params(params)["rule"] == [c.as_dict() for c in rule]


def test_a_link_with_a_rule_opens_the_rule_region_and_a_bad_one_is_dropped():
    from streamlit.testing.v1 import AppTest

    from tests.pages.conftest import APP

    rule = json.dumps([{"feature": "road_type", "op": "=", "value": "urban"}])
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "builtin:synthetic-regional", "n_factuals": "30", "n_cf": "3", "rule": rule,
                            "regions": json.dumps([["urban", None, 0, None, json.loads(rule)]])})
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception and not errors(at)
    assert any(shown(h.value) == "Region: Road type = urban" for h in at.subheader)
    assert at.session_state["saved_regions"][0]["rule"] == S.rule_of(json.loads(rule))
    assert len(chart(at, "regions_heatmap")["data"][0]["y"]) == 2
    bad = AppTest.from_file(APP, default_timeout=120)
    bad.query_params.update({"dataset": "builtin:synthetic-regional", "n_factuals": "30", "n_cf": "3",
                             "rule": json.dumps([{"feature": "colour", "op": "=", "value": "red"}])})
    bad.run()
    bad.switch_page(PAGE).run()
    assert not bad.exception and any("rule region was dropped" in shown(w.value) for w in bad.warning)


def test_the_group_comparison_shows_verdicts_a_table_and_bars_and_the_report_has_both():
    at = _find(start("synthetic-regional", n_factuals=60, n_cf=3, page=PAGE))
    at.selectbox(key="w_groups_by").set_value("road_type").run()
    assert not at.exception and not errors(at)
    table = next(d.value for d in at.dataframe if "with a way out (95% interval)" in d.value.columns)
    assert len(table) >= 2 and table.columns[0] == "Road type"
    assert chart(at, "groups_figure")["data"]
    assert any("interval" in shown(m.value) or "overlap" in shown(m.value) for m in at.markdown)
    # The verdict and the chart's title in the reader's words: no paper symbol (F 0.41), no raw column name.
    verdict = [shown(m.value) for m in at.markdown if shown(m.value).startswith("- ")]
    title = chart(at, "groups_figure")["layout"]["title"]["text"]
    assert verdict and not problems("\n".join([*verdict, title]), fc.data.load_builtin("synthetic-regional")), verdict
    at.switch_page("app_pages/report.py").run()
    assert not at.exception
    at.button(key="build_report").click().run()
    assert not at.exception
    html = at.session_state["report_html"]
    assert "Regions that differ" in html and "chance alone" in html and "What the model asks of each group" in html
    at.button(key="build_snapshot").click().run()  # the interactive report holds the regions the search found
    assert not at.exception and "discovered 1: " in at.session_state["report_snapshot"]["html"]


def test_refits_check_whether_each_found_region_and_group_difference_replicates():
    at = start("synthetic-regional", n_factuals=60, n_cf=3, page=PAGE)
    box = at.number_input(key="w_regions_retrain")
    assert box.label == "Refits to check replication" and box.value == 0 and box.min == 0
    assert box.max == int(LIMITS["retrain"].high)  # the limits table's bound, as the library and CLI refuse more
    box.set_value(2).run()
    _find(at)
    assert at.session_state["region_search"]["retrain"] == 2
    table = next(d.value for d in at.dataframe if "how much it differs from all cases (95% interval)" in d.value.columns)
    assert table["replicates"].str.fullmatch(r"in [012] of 2 refits").all()
    at.selectbox(key="w_groups_by").set_value("road_type").run()
    at.number_input(key="w_groups_retrain").set_value(2).run()
    assert not at.exception and not errors(at) and at.session_state["groups_retrain"] == 2
    said = " ".join(shown(m.value) for m in at.markdown)
    assert "refit" in said and ("holds in" in said or "named again under each of the 2 refits" in said
                                or "none is checked under the refits" in said)


def test_refits_beyond_the_limit_are_refused_by_the_widget():
    at = start("synthetic-regional", n_factuals=40, n_cf=3, page=PAGE)
    at.number_input(key="w_regions_retrain").set_value(int(LIMITS["retrain"].high) + 1).run()
    assert not at.exception and at.number_input(key="w_regions_retrain").value == 0  # refused: the box keeps 0
    at.button(key="find_regions").click().run()
    assert at.session_state["region_search"]["retrain"] == 0
    table = next(d.value for d in at.dataframe if "how much it differs from all cases (95% interval)" in d.value.columns)
    assert "replicates" not in table  # not asked, so not shown
