"""The Global page (also the page the app opens on)."""

import json
import re

import numpy as np
import pytest

import flex_core as fc
from tests.pages.conftest import chart, errors, metric, shown, start

# Every test here drives the real app through AppTest (seconds each): not in the fast run.
pytestmark = pytest.mark.slow


def test_opens_on_a_builtin_and_draws_the_sorted_importances_with_dice_beside():
    at = start("toy2d")
    assert at.title[0].value == "Global feature importance"
    assert not errors(at)
    spec = chart(at, "global_chart")
    flex, mu, dice = spec["data"]
    assert flex["name"] == "change frequency (FLEX)" and dice["name"] == "DiCE frequency"
    assert "F_j" not in json.dumps(spec) and "μ_j" not in json.dumps(spec)  # plain words unless asked for
    at.toggle(key="w_terms").set_value(True).run()  # the sidebar's switch: the paper's symbols after the words
    named = chart(at, "global_chart")
    assert named["data"][0]["name"] == "change frequency F_j (FLEX)" and "μ_j" in named["data"][1]["name"]
    assert named["layout"]["xaxis"]["title"]["text"].startswith("FLEX change frequency F_j (95% interval)")
    assert flex["x"] == sorted(flex["x"], reverse=True)
    assert set(flex["customdata"]) == {"vehicle_speed", "visibility"}
    assert all(0 <= v <= 1 for v in flex["x"] + dice["x"])
    # μ_j markers exist for the continuous features (both of toy2d's)
    assert set(mu["customdata"]) == {"vehicle_speed", "visibility"}
    # The chart's numbers are the core's result for the same settings.
    task = fc.data.load_builtin("toy2d")
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=3)
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator(fc.counterfactuals.DEFAULT_GENERATOR), n_cf=3, seed=0,
                                   directory=None)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), 12, seed=0)
    assert metric(at, "Cases explained (factuals)") == str(len(rows))  # the analyst's terms are on here
    result = fc.importance.flex_importance(store.ensure(rows), task, tau=0.1, ranges=fc.counterfactuals.training_ranges(task, model))
    by_name = dict(zip(flex["customdata"], flex["x"]))
    np.testing.assert_allclose([by_name[n] for n in result.feature_names], result.frequency_mean)


def test_sidebar_shows_cross_validated_accuracy_and_f1():
    at = start("toy2d")
    accuracy = float(metric(at, "CV accuracy").rstrip("%"))
    # The F1 shown is the explained outcome's own (named), not the row-weighted one a majority guess inflates.
    (f1_label,) = [m.label for m in at.metric if m.label.startswith("CV F1")]
    assert f1_label == f"CV F1 ({fc.data.load_builtin('toy2d').undesirable_words})"
    f1 = float(metric(at, f1_label).rstrip("%"))
    assert 50 < accuracy <= 100 and 50 < f1 <= 100


def test_changing_the_model_retrains_and_keeps_the_chart():
    at = start("toy2d")
    before = metric(at, "CV accuracy")
    at.sidebar.selectbox(key="w_sb_model").set_value("lr").run()
    assert not at.exception and not errors(at)
    assert metric(at, "CV accuracy") != before
    assert chart(at, "global_chart")["data"][0]["x"]


@pytest.mark.parametrize("setting", ["sb_n_factuals", "sb_n_cf"])
def test_sample_sizes_come_from_the_sidebar(setting):
    at = start("toy2d")
    at.sidebar.number_input(key=f"w_{setting}").set_value(5).run()
    assert not at.exception
    if setting == "sb_n_factuals":
        assert metric(at, "Cases explained") == "5"
    else:
        found = next(m for m in at.metric if m.label == "Different ways out")
        assert f"{5 * 12} requested" in found.help


def test_bars_show_the_bootstrap_interval_by_default_and_std_on_request():
    at = start("synthetic-regional")
    flex = chart(at, "global_chart")["data"][0]
    assert flex["error_x"]["symmetric"] is False and "arrayminus" in flex["error_x"]
    at.radio(key="global_whiskers").set_value("std").run()
    assert not at.exception
    spec = chart(at, "global_chart")
    assert "± std" in spec["layout"]["xaxis"]["title"]["text"]
    # ± std is clipped to the share axis: no whisker leaves [0, 1].
    bars = spec["data"][0]
    for x, up, down in zip(bars["x"], bars["error_x"]["array"], bars["error_x"]["arrayminus"]):
        assert x + up <= 1 + 1e-9 and x - down >= -1e-9


def test_counting_only_necessary_changes_never_raises_a_bar():
    at = start("synthetic-regional")
    every = dict(zip(*(chart(at, "global_chart")["data"][0][k] for k in ("customdata", "x"))))
    at.toggle(key="global_necessary_only").set_value(True).run()
    assert not at.exception
    necessary = dict(zip(*(chart(at, "global_chart")["data"][0][k] for k in ("customdata", "x"))))
    assert all(necessary[name] <= every[name] + 1e-12 for name in every)


def test_what_must_change_runs_necessity_and_sufficiency_only_when_asked():
    at = start("synthetic-regional")
    spec = chart(at, "global_must_change_chart")
    assert [trace["name"].split(":")[0] for trace in spec["data"]] == ["changed", "changed and needed"]
    buttons = [b for b in at.button if b.key == "global_sufficiency"]
    assert buttons and "8 generator runs" in buttons[0].label
    buttons[0].click().run()
    assert not at.exception and not errors(at)
    spec = chart(at, "global_must_change_chart")
    assert [trace["name"].split(":")[0] for trace in spec["data"]] == ["changed", "changed and needed", "flips it alone",
                                                                      "needed"]
    assert not [b for b in at.button if b.key == "global_sufficiency"]  # cached: no second request
    # The plain sentence: "Changing speed alone flips 67% of the sampled cases (35–89%)."
    sentences = " ".join(shown(m.value) for m in at.markdown)
    assert re.search(r"Changing \w+ alone flips \d+% of the sampled cases \(\d+–\d+%\)", sentences)


def test_the_same_cases_rerun_with_another_generator_on_request():
    at = start("synthetic-regional")
    assert not [m for m in at.markdown if "Rerun with" in shown(m.value)]
    at.selectbox(key="w_generator_check").set_value("batch-plausible").run()
    [b for b in at.button if b.key == "global_compare_generators"][0].click().run()
    assert not at.exception and not errors(at)
    sentence = " ".join(shown(m.value) for m in at.markdown if "Rerun with batch-plausible instead of tree" in shown(m.value))
    assert sentence
    assert any("F, batch-plausible" in frame.value.columns for frame in at.dataframe)


def test_the_chart_code_loads_before_the_first_run_computes():
    # The browser loads Plotly's code only for a chart: a hidden one, drawn before the sidebar computes the
    # analysis, overlaps that load with the computation, so the Global chart shows with its text.
    from ui.components import CHART_CODE_KEY

    at = start("toy2d")
    charts = [c.proto.id for c in at.get("plotly_chart")]
    assert charts[0].endswith(f"-{CHART_CODE_KEY}_chart") and any(c.endswith("-global_chart") for c in charts)
    assert any(f".st-key-{CHART_CODE_KEY} {{display: none;}}" in h.proto.body for h in at.get("html"))


def test_the_model_refitted_on_request_says_what_is_stable():
    at = start("synthetic-regional")
    assert not [m for m in at.markdown if "Refitted" in m.value]
    at.number_input(key="w_retrain_k").set_value(2).run()
    [b for b in at.button if b.key == "global_retrain"][0].click().run()
    assert not at.exception and not errors(at)
    sentence = " ".join(m.value for m in at.markdown if m.value.startswith("Refitted 2 times"))
    assert "Valid under each refit" in sentence and "Rule: stable" in sentence
    assert any("F, refit 2" in frame.value.columns and "stable" in frame.value.columns for frame in at.dataframe)


def test_the_sample_sizes_keep_their_values_when_the_terms_switch_renames_them():
    """The sidebar's "Cases to explain" and "Ways out per case" become "… (N_F)" and "… (N_cf)" with the analyst's
    terms on: a value typed before the switch stays."""
    at = start("toy2d", page="app_pages/global.py")
    at.session_state["terms"] = False
    at.run()
    [box] = [n for n in at.sidebar.number_input if n.label == "Cases to explain"]
    box.set_value(10).run()
    at.session_state["terms"] = True
    at.run()
    labels = {n.label: n.value for n in at.sidebar.number_input}
    assert labels["Cases to explain (N_F)"] == 10 and labels["Ways out per case (N_cf)"] == 3
    assert not errors(at)
