"""The sentence the Global and Regional pages open with, on hand-made counterfactuals."""

from __future__ import annotations

import pandas as pd

import flex_core as fc
from tests.factories import make_set
from ui.glossary import mean_versus_pooled
from ui.lead import lead_reading

WORDS = '[outcome]\nundesirable = "Rejected"\ndesirable = "Approved"\n[features.loan_term]\nname = "Loan term"\nunit = "years"\n'


def _task():
    frame = pd.DataFrame({"loan_term": [20, 14, 16, 2, 3, 4], "colour": ["red", "red", "blue", "blue", "red", "blue"],
                          "status": ["Rejected"] * 3 + ["Approved"] * 3})
    return fc.make_task(frame, target="status", undesirable="Rejected", dictionary=WORDS)


def test_the_lead_names_the_commonest_change_its_direction_and_its_median_size_in_units():
    task = _task()
    cfset = make_set(task, [0, 1, 2], [
        [{"loan_term": 12, "colour": "red"}, {"loan_term": 14, "colour": "red"}],   # -8, -6: both change the term
        [{"loan_term": 10, "colour": "red"}, {"loan_term": 14, "colour": "blue"}],  # -4; the other changes the colour
        [{"loan_term": 6, "colour": "blue"}, {"loan_term": 11, "colour": "blue"}],  # -10, -5
    ], n_cf=2)
    result = fc.importance.flex_importance(cfset, task, tau=0.1)
    # F = (2/2 + 1/2 + 2/2) / 3 = 0.833 -> 83 in 100; the five changes -8, -6, -4, -10, -5 all shorten: median 6.
    assert lead_reading(result, task) == ("To become Approved, the ways out most often change Loan term: 83 in 100 on "
                                          "average, shortening it by 6 years (the median of the 5 ways out that "
                                          "change it).")


def test_the_lead_gives_no_direction_from_too_few_changes_and_nothing_without_changes():
    task = _task()
    few = make_set(task, [0], [[{"loan_term": 12, "colour": "red"}]], n_cf=1)
    assert lead_reading(fc.importance.flex_importance(few, task, tau=0.1), task) == (
        "To become Approved, the ways out most often change Loan term: 100 in 100 on average.")
    none = make_set(task, [0], [[]], n_cf=1)
    assert lead_reading(fc.importance.flex_importance(none, task, tau=0.1), task) == ""


def test_mean_versus_pooled_says_when_the_two_counts_agree_and_why_they_differ():
    # Counts 1 and 3: a feature changed by the first case's only way out and by 1 of the second's 3 has FLEX
    # F = (1/1 + 1/3) / 2 = 0.67 and DiCE's pooled share 2/4 = 0.5: they differ because the counts differ.
    text = mean_versus_pooled([0, 1, 3])
    assert "FLEX at τ = 0 takes each case's share of its own ways out and averages the cases" in text
    assert text.endswith("Here the 2 cases with a way out have 1 to 3 (2.0 on average), so the two differ; features "
                         "changed mostly in cases with many ways out score higher in DiCE Alg. 2.")
    assert mean_versus_pooled([2, 2, 0]).endswith("Here every case with a way out has 2, so the two agree.")
    assert mean_versus_pooled([0, 0]) == "No case has a way out yet, so FLEX at τ = 0 and DiCE Alg. 2 are both empty."


def test_a_region_under_the_minimum_size_is_said_to_be_no_finding():
    from ui.lead import MIN_REGION_CASES, small_region_note

    assert small_region_note(MIN_REGION_CASES) is None
    assert small_region_note(1).startswith("This region rests on 1 case with ways out, fewer than 5: its agreement with "
                                           "all cases, its shares and intervals")
    assert "no case with ways out" in small_region_note(0) and "4 cases" in small_region_note(4)


def test_the_mode_shift_table_names_levels_in_the_dictionarys_words(tmp_path):
    from tests.factories import accident_frame
    from ui import reporting

    words = '[features.zone]\nname = "Area"\nlevels = { rural = "countryside", urban = "town" }\n'
    task = fc.make_task(accident_frame(300), target="severity", undesirable="severe", dictionary=words)
    explainer = fc.FlexExplainer.from_task(task, "rf", n_cf=2, cache_dir=tmp_path)
    region = explainer.explain_region(query=int(explainer.sample_factuals(20)[0]), k=4, n_factuals=20)
    line = reporting.mode_shift_table(region).set_index("feature").loc["Area"]
    assert line["region's most common"] in {"countryside", "town"}
    assert line["most common in the ways out"] in {"countryside", "town", "–"}


def test_a_bands_lead_says_the_predicted_number_to_reach():
    frame = pd.DataFrame({"loan_term": [20, 14, 16, 2, 3, 4], "colour": ["red", "red", "blue", "blue", "red", "blue"],
                          "amount": [30.0, 28.0, 26.0, 5.0, 7.0, 9.0]})
    task = fc.make_task(frame, target="amount", undesirable={"above": 20}, dictionary=WORDS)
    few = make_set(task, [0], [[{"loan_term": 12, "colour": "red"}]], n_cf=1)
    assert lead_reading(fc.importance.flex_importance(few, task, tau=0.1), task) == (
        "To reach a predicted Amount at most 20, the ways out most often change Loan term: 100 in 100 on average.")
