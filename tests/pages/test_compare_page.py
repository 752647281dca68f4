"""The Compare page: FLEX vs DiCE vs SHAP (SHAP only when asked), and FLEX vs LIME for the current region."""

from __future__ import annotations

import pytest

import flex_core as fc
from tests.pages.conftest import chart, shown, start

# Every test here drives the real app through AppTest (seconds each): not in the fast run.
pytestmark = pytest.mark.slow


def test_compare_page_runs_shap_and_lime_only_when_asked():
    at = start("synthetic-regional", page="app_pages/compare.py")
    bars = chart(at, "compare_bars")
    # FLEX at the session's τ, then FLEX at τ = 0 labelled beside it; no SHAP before the button.
    assert [t["name"] for t in bars["data"]] == ["FLEX at τ = 0.10", "FLEX at τ = 0", "DiCE Alg. 2"]
    # Before it starts, the page says how long SHAP will take and what runs.
    assert any("It will take" in shown(i.value) and "TreeSHAP on 12 rows" in shown(i.value) for i in at.info)
    # SHAP and permutation importance say what they cost in one box, each with its button (two boxes said it twice)
    offers = [shown(i.value) for i in at.info if "runs only when asked" in shown(i.value)]
    assert len(offers) == 1 and "Permutation importance runs only when asked" in offers[0], offers
    assert at.button(key="run_permutation") and at.button(key="run_shap")
    at.button(key="run_shap").click().run()
    assert not at.exception, at.exception
    bars = chart(at, "compare_bars")
    assert [t["name"] for t in bars["data"]] == ["FLEX at τ = 0.10", "FLEX at τ = 0", "DiCE Alg. 2", "SHAP"]
    chart(at, "compare_rank_scatter")  # raises when the chart is missing
    assert any(m.label == "Spearman (FLEX at τ = 0.10 vs SHAP)" for m in at.metric)
    # No region picked yet: the page says where to pick one.
    assert any("Regional explorer" in shown(i.value) for i in at.info)

    task = fc.data.load_builtin("synthetic-regional")
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=3)
    at.session_state["query"] = int(fc.counterfactuals.factual_rows(task, model)[0])
    at.run()
    at.select_slider(key="compare_lime_samples").set_value(500).run()
    lime_button = [b for b in at.button if "LIME" in b.label]
    drawn = [e.proto.id for e in at.get("plotly_chart")]
    assert lime_button and not any(i.endswith("-compare_lime_chart") for i in drawn)  # LIME only when asked
    assert any("It will take" in shown(c.value) and "500 samples each" in shown(c.value) for c in at.caption)
    lime_button[0].click().run()
    assert not at.exception, at.exception
    lime = chart(at, "compare_lime_chart")
    assert [t["name"] for t in lime["data"]][1] == "LIME (normalised)"
    assert lime["data"][0]["name"] in ("FLEX change frequency (95% interval)", "FLEX change frequency (± std)")
    assert max(lime["data"][1]["x"]) == 1.0


def test_compare_says_the_tau_and_why_flex_is_all_zero_at_a_high_tau():
    """The issue's case: τ = 0.70 set on Thresholds, then Compare; the page must say the τ it shows FLEX at."""
    at = start("synthetic-regional", page="app_pages/compare.py")
    at.session_state["tau"] = 0.7
    at.run()
    assert not at.exception, at.exception
    names = [t["name"] for t in chart(at, "compare_bars")["data"]]
    assert names[:2] == ["FLEX at τ = 0.70", "FLEX at τ = 0"]
    assert any("changes under 70% of a number" in shown(c.value) and "Settings" in shown(c.value)
               for c in at.caption)  # the strip, τ in words
    assert any("FLEX is shown at the current τ = 0.70" in shown(c.value) for c in at.caption)
    table = at.dataframe[0].value
    assert "FLEX at τ = 0.70" in " ".join(map(str, table.columns))


def test_permutation_importance_joins_the_ranking_as_a_fourth_method_only_when_asked():
    at = start("synthetic-regional", page="app_pages/compare.py")
    table = at.dataframe[0].value
    assert "Permutation (AUC drop)" not in table.columns
    assert any("Permutation importance runs only when asked" in shown(i.value) for i in at.info)
    next(b for b in at.button if b.key == "run_permutation").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table.columns)[-1] == "Permutation (AUC drop)"
    # The planted driver: speed is dangerous above 80 (on every road), so the model leans on it most.
    assert table["Permutation (AUC drop)"]["Speed"].startswith("1 (")
    assert "±" in table["Permutation (AUC drop)"]["Speed"]
    assert any(m.label == "Spearman (FLEX at τ = 0.10 vs permutation)" for m in at.metric)
    assert any("Permutation importance shuffles one feature at a time" in shown(c.value) for c in at.caption)


def test_compare_shows_shaps_own_views_one_case_beside_its_ways_out_and_its_ice_curve():
    """Issue 40 items 2 and 3 on the page: beeswarm, dependence with the suggested colour, the case's SHAP beside
    its counterfactuals with the agreement sentence, and ICE with the case's curve; ICE without SHAP too."""
    at = start("synthetic-regional", page="app_pages/compare.py")
    drawn = {e.proto.id.rsplit("-", 1)[-1] for e in at.get("plotly_chart")}
    assert "compare_ice" in drawn and "compare_shap_beeswarm" not in drawn  # partial dependence needs no SHAP
    ice = chart(at, "compare_ice")
    assert ice["layout"]["title"]["text"].startswith("How P(Severe) moves with")  # the outcome's words, unescaped
    assert [t["name"] for t in ice["data"]][:2] == ["200 cases (ICE)", "average (partial dependence)"]
    case = at.selectbox(key="w_compare_case").value
    assert ice["data"][2]["name"].startswith(f"row {case} ")
    next(b for b in at.button if b.key == "run_shap").click().run()
    assert not at.exception, at.exception
    bees = chart(at, "compare_shap_beeswarm")
    assert bees["data"][0]["name"] == "Speed" and len(bees["data"][0]["x"]) == 12  # planted driver on top, 12 factuals
    assert at.selectbox(key="w_compare_dependence_feature").value == "speed"
    colour = at.selectbox(key="w_compare_dependence_colour_speed")
    assert colour.value == "road_type" and "(suggested)" in colour.format_func(colour.value)
    assert any("Suggested colour: Road type" in shown(c.value) for c in at.caption)
    chart(at, "compare_shap_dependence")
    contributions = chart(at, "compare_case_shap")
    assert [t["name"] for t in contributions["data"]] == ["SHAP", "FLEX"]
    assert any(shown(m.value).startswith("SHAP and FLEX agree") for m in at.markdown)
    assert any("Here any change counts, as in the table below" in shown(c.value) for c in at.caption)
    at.selectbox(key="w_compare_ice_feature").set_value("lighting").run()
    assert not at.exception, at.exception
    assert chart(at, "compare_ice")["layout"]["xaxis"]["title"]["text"] == "Lighting"
