"""The HTML report: self-contained, readable, printable, and holding every result the session computed."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from ui import reporting
from ui.cache import TAU_PANELS
from ui.reporting import counterfactual_table


def test_html_report_is_self_contained_and_holds_every_table(toy_task):
    result = _toy_result(toy_task)
    html = reporting.build_html_report(
        [reporting.ReportSection("Global <view>", "Reading & more.\n\nSecond paragraph.",
                                 figures=(fc.plotting.importance_figure(result),),
                                 tables=(reporting.importance_table(result),)),
         reporting.ReportSection("Balance", "Only a table.", tables=(pd.DataFrame({"outcome": ["a"], "rows": [3]}),))],
        title="Report", meta={"dataset": "builtin:toy2d", "generator settings": {"max_steps": 3}},
        intro=reporting.HOW_TO_READ,
    )
    assert html.count("<table") == 3 and html.count("<h2>") == 2  # the settings table and the two sections'
    assert "Global &lt;view&gt;" in html and "Reading &amp; more." in html  # text is escaped
    assert html.count("<p>Second paragraph.</p>") == 1
    assert html.count("window.PlotlyConfig") == 1  # plotly.js embedded once
    assert '<script src="http' not in html and "<script src='http" not in html  # nothing fetched online
    assert "builtin:toy2d" in html and "max_steps: 3" in html and "How to read FLEX" in html
    assert "break-before:page" in html  # each section starts a printed page
    # Human headers and values: no raw column names, booleans, None or a 0..n index column.
    for raw in ("frequency_mean", "magnitude_mean", ">True<", ">False<", ">None<", "<th></th>"):
        assert raw not in html


def _toy_result(task):
    cfset = fc.counterfactuals.CounterfactualSet(
        tuple(task.feature_names), np.arange(2), np.array([[100.0, 0.2], [90.0, 0.5]]),
        np.array([[[70.0, 0.2], [100.0, 0.9]], [[90.0, 0.95], [85.0, 0.5]]]), np.ones((2, 2), bool),
        np.ones((2, 2), bool), "hand", 0.0,
    )
    return fc.importance.flex_importance(cfset, task, tau=0.1, ranges=np.array([100.0, 1.0]))


@pytest.fixture(scope="module")
def session(synthetic_task, synthetic_model):
    """A session on the synthetic data where everything ran: region, saved regions, example, SHAP and LIME."""
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"),
                                   n_cf=4, seed=0)
    global_result = fc.importance.run_global(store, n_factuals=20, tau=0.1)
    query = int(global_result.query_index[0])
    regional = fc.importance.run_regional(store, global_result, query=query, k=3, tau=0.1)
    other = fc.importance.run_regional(store, global_result, query=int(global_result.query_index[1]), k=3, tau=0.1)
    shap = fc.compare.shap_importance(synthetic_model, synthetic_task, [int(r) for r in global_result.query_index[:8]],
                                      seed=0)
    lime = fc.compare.lime_importance(synthetic_model, synthetic_task, list(regional.members), num_samples=200, seed=0)
    example = counterfactual_table(synthetic_task, synthetic_model, store.ensure([query]), query)
    return reporting.SessionResults(
        task=synthetic_task, model=synthetic_model, global_result=global_result,
        coverage=store.ensure(global_result.query_index).coverage(),
        tau_sweep=fc.importance.tau_sweep(store.ensure(global_result.query_index), synthetic_task, ranges=store.ranges),
        tau_panels={t: fc.importance.run_global(store, n_factuals=20, tau=t) for t in TAU_PANELS},
        regional=regional, saved={"second": other}, examples={query: example}, shap=shap,
        lime={"the region": (regional, lime)}, curves=fc.models.model_curves(synthetic_task, synthetic_model),
        permutation=fc.compare.permutation_importance(synthetic_task, synthetic_model, n_repeats=2),
    )


@pytest.mark.slow  # runs SHAP or LIME
def test_the_report_has_a_section_with_a_reading_for_every_computed_result(session):
    titles = [s.title for s in reporting.session_sections(session)]
    regional = session.regional
    assert titles == [
        "The data and the model",
        "What would have to change, across all cases",
        "How large a change must be to count (τ)",
        f"The region around row {regional.query}",
        f"The region around row {regional.query}: which values the ways out move away from",
        "Saved region: second",
        "Saved region: second: which values the ways out move away from",
        "Saved regions compared",
        "Counterfactual examples",
        "FLEX next to SHAP and DiCE's own count",
        "FLEX next to permutation importance",
        "FLEX next to LIME: the region",
    ]
    for section in reporting.session_sections(session):
        assert section.reading.strip() and (section.figures or section.tables), section.title
        # Every section and every figure names the settings (dataset, model, generator, N_F, N_cf, seed, τ).
        assert section.settings.startswith("synthetic-regional · random forest") and "τ = 0.10" in section.settings
        assert all(f.layout.title.subtitle.text.replace("<br>", " · ") == section.settings for f in section.figures), section.title
    html = reporting.build_html_report(reporting.session_sections(session))
    assert html.count("<p class='settings'>Settings: ") == len(titles)


@pytest.mark.slow  # runs SHAP or LIME
def test_results_that_did_not_run_have_no_section(session):
    from dataclasses import replace

    bare = replace(session, tau_sweep=None, tau_panels=None, regional=None, saved={}, examples={}, shap=None, lime={},
                   permutation=None, curves=None, curves_note="No ROC, precision-recall or gain curves: no held-out rows.")
    sections = reporting.session_sections(bare)
    assert [s.title for s in sections] == ["The data and the model", "What would have to change, across all cases"]
    assert not sections[0].figures and sections[0].reading.endswith("curves: no held-out rows.")


@pytest.mark.slow  # runs SHAP or LIME
def test_the_model_section_draws_the_held_out_curves_and_permutation_ranks_beside_flex(session):
    data, *_, permutation, _ = reporting.session_sections(session)
    assert data.figures[0].layout.annotations[0].text.startswith("ROC: AUC")
    assert f"AUC {session.curves.roc_auc:.3f}: of one Severe" in data.reading and "red point" not in data.reading
    assert list(permutation.tables[0].columns) == ["feature", "FLEX", "Permutation (AUC drop)"]
    assert "Permutation importance shuffles one feature at a time" in permutation.reading


@pytest.mark.slow  # runs SHAP or LIME
def test_report_tables_read_like_text(session):
    html = reporting.build_html_report(reporting.session_sections(session), meta={"seed": 0})
    assert "frequency_mean" not in html and ">True<" not in html and ">None<" not in html
    sections = reporting.session_sections(session)
    text = " ".join([s.reading for s in sections] + [t.to_html() for s in sections for t in s.tables])
    assert not re.search(r"\de[+-]\d\d", text)  # no 2.15e+07 in a reading or a table
    example = reporting.counterfactual_examples_table(session.task, *next(iter(session.examples.values())))
    assert (example.iloc[1:] == "·").any().any()  # unchanged cells of the ways out are dots
    assert example.iloc[:2, 0].tolist() == ["this case", "way out 1"]  # the lines named as in the app
    saved = next(s for s in sections if s.title == "Saved regions compared").reading  # the session saved a region
    assert " r with" not in saved and "agreement with the whole population" in saved


def test_the_report_names_a_data_file_without_the_folders_it_sits_in(tmp_path):
    csv = tmp_path / "private" / "clients.csv"
    csv.parent.mkdir()
    pd.DataFrame({"age": [30, 40, 50, 60] * 10, "bad": ["y", "n"] * 20}).to_csv(csv, index=False)
    task = fc.data.load_csv(csv, target="bad", undesirable="y")
    label = reporting.dataset_label(task)
    assert "clients.csv" in label and str(tmp_path) not in label and "private" not in label
    assert reporting.dataset_label(fc.data.load_builtin("toy2d")) == fc.data.load_builtin("toy2d").name


def test_a_case_table_puts_what_changes_first_most_often_changed_first(synthetic_task):
    """Worked by hand: three ways out over six features; lighting changes twice, speed and driver's age once each
    (a tie broken by the dictionary's order: speed before driver's age), the others never; an edited feature counts
    as changed even where no way out changes it."""
    names = synthetic_task.feature_names  # speed, road_type, lighting, noise_continuous, noise_categorical, driver_age_band
    marks = pd.DataFrame(False, index=["factual", "counterfactual 1", "counterfactual 2", "counterfactual 3"], columns=names)
    marks.loc["counterfactual 1", ["lighting", "driver_age_band"]] = True
    marks.loc["counterfactual 2", "lighting"] = True
    marks.loc["counterfactual 3", "speed"] = True
    moved, still = reporting.changed_first(synthetic_task, marks)
    assert moved == ["lighting", "speed", "driver_age_band"]
    assert still == ["road_type", "noise_continuous", "noise_categorical"]
    moved, still = reporting.changed_first(synthetic_task, marks, edited=["noise_categorical"])
    assert moved == ["lighting", "speed", "driver_age_band", "noise_categorical"]
    assert reporting.changed_first(synthetic_task, marks.iloc[:1]) == ([], names)  # the case alone: nothing moved

    table = pd.DataFrame([synthetic_task.frame[names].iloc[0]] * 4, index=marks.index)  # the marks say what changed
    table = table.assign(**{"P(undesirable)": [0.9, 0.3, 0.4, 0.2], "valid": [False, True, True, True]})
    example = reporting.counterfactual_examples_table(synthetic_task, table, marks)
    labels = {f.name: f.label for f in synthetic_task.features}
    probability = reporting.probability_label(synthetic_task)
    assert list(example.columns) == ["", labels["lighting"], labels["speed"], labels["driver_age_band"], probability,
                                     "flips the prediction", labels["road_type"], labels["noise_continuous"],
                                     labels["noise_categorical"]]
    assert (example[labels["road_type"]].iloc[1:] == "·").all()
