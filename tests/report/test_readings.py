"""The plain-language readings: each feature in one list only, magnitudes said against τ, words and numbers."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flex_core as fc
from ui import reporting

LABELS = ("speed", "lighting", "rain", "junction", "traffic", "age", "sex")
KINDS = ("continuous", "categorical", "categorical", "categorical", "continuous", "categorical", "categorical")


def _result(frequency, *, magnitude=None, tau=0.1, immutable=(False,) * 5 + (True, True), level="global"):
    """A hand-made FlexResult over seven features (speed and traffic are numbers)."""
    n = len(LABELS)
    frequency = np.asarray(frequency, float)
    continuous = np.array([k == "continuous" for k in KINDS])
    magnitude = np.where(continuous, 0.02 if magnitude is None else magnitude, np.nan)
    return fc.FlexResult(
        level=level, feature_names=tuple(f"f{j}" for j in range(n)), display_names=LABELS, kinds=KINDS,
        immutable=tuple(immutable), tau=np.where(continuous, tau, np.nan), frequency_mean=frequency,
        frequency_std=np.zeros(n), magnitude_mean=magnitude, dice_frequency=frequency,
        local_frequencies=frequency[None], local_magnitudes=magnitude[None], query_index=np.array([0]),
        counts=np.array([10] * 1),
    )


def _lists(text: str) -> dict[str, set[str]]:
    """The labels named in each list of a reading."""
    found = {}
    patterns = {"often": r"most often involve (.*?)\.(?:\s|$)", "rarely": r"Rarely changed \(.*?\): (.*?)\.(?:\s|$)",
                "fixed": r"cannot be changed: (.*?)\.(?:\s|$)"}
    for name, pattern in patterns.items():
        match = re.search(pattern, text)
        found[name] = {label for label in LABELS if match and re.search(rf"\b{label}\b", match.group(1))}
    return found


def test_the_issue_case_top_three_include_a_rare_feature_yet_it_is_listed_once():
    # Loan-like: one big driver, then features far under 5%; before, the third was in "most often" and "rarely".
    text = reporting.describe_global(_result([0.85, 0.2, 0.04, 0.01, 0.0, 0, 0]), undesirable=("Rejected",))
    lists = _lists(text)
    assert lists["often"] == {"speed", "lighting"}
    assert lists["rarely"] == {"rain", "junction", "traffic"}
    assert lists["fixed"] == {"age", "sex"}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=7, max_size=7), st.lists(st.booleans(), min_size=7, max_size=7))
def test_no_feature_is_in_two_lists(frequency, immutable):
    result = _result(frequency, immutable=immutable)
    lists = reporting.feature_lists(result)
    groups = [set(lists.often), set(lists.rarely), set(lists.fixed)]
    assert sum(len(g) for g in groups) == len(set().union(*groups))
    assert all(frequency[j] >= 0.05 for j in lists.often)
    named = _lists(reporting.describe_global(result))
    for a, b in (("often", "rarely"), ("often", "fixed"), ("rarely", "fixed")):
        assert not named[a] & named[b], (named, frequency)


@pytest.mark.parametrize(
    ("mu", "tau", "says"),
    [(0.02, 0.1, "speed 2% of its range (below its threshold of 10%)"),
     (0.4, 0.65, "speed 40% of its range (below its threshold of 65%)"),
     (0.4, 0.1, "speed 40% of its range (at or above its threshold of 10%)")],
)
def test_the_magnitude_sentence_says_what_it_averages_and_agrees_with_tau(mu, tau, says):
    text = reporting.describe_global(_result([0.5, 0.3, 0, 0, 0, 0, 0], magnitude=mu, tau=tau))
    assert says in text
    assert "over all ways out (including those that leave it alone or move it by less than the threshold)" in text
    assert f"counts only when it exceeds {100 * tau:.0f}% of the number's range (the threshold)" in text
    assert "τ" not in text  # plain words for the domain expert (the Glossary names τ)
    assert "typically" not in text


def test_the_magnitude_sentence_follows_tau_on_real_counterfactuals(synthetic_task, synthetic_model):
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=5, seed=0)
    for tau in (0.1, 0.65):
        result = fc.importance.run_global(store, n_factuals=30, tau=tau)
        text = reporting.describe_global(result, undesirable=synthetic_task.undesirable)
        for j in reporting.feature_lists(result).often:
            mu = result.magnitude_mean[j]
            if not math.isnan(mu):
                side = "below" if mu < tau else "at or above"
                assert f"{result.display_names[j]} {100 * mu:.0f}% of its range ({side} its threshold of {100 * tau:.0f}%)" in text
        named = _lists(text)
        assert not (named["often"] & named["rarely"])


def test_wording_counts_and_thousands():
    one = reporting.describe_global(_result([0.5, 0, 0, 0, 0, 0, 0]))
    assert one.startswith("Across 1 case predicted") and "(s)" not in one
    coverage = {"queries": 1200, "counterfactuals_found": 11990, "counterfactuals_requested": 12000,
                "validity": 1.0, "queries_without": 1}
    text = reporting.describe_coverage(coverage)
    assert text.startswith("1,200 cases explained; 11,990 distinct ways out were found (12,000 requested)")
    assert text.endswith("1 case got none.")
    coverage.update(distinct_mean=9.99, queries_with_copies=3)
    text = reporting.describe_coverage(coverage)
    assert "10.0 per case on average" in text and "copies for 3 cases; each was counted once" in text
    assert reporting.format_number(21_500_000.0) == "21,500,000"
    assert reporting.format_number(0.012345) == "0.01235"
    assert reporting.format_number(39.8612) == "39.86"
    assert "e+" not in reporting.format_number(2.15e7)


def test_regional_reading_uses_labels_and_never_calls_a_rarely_changed_feature_a_driver(toy_task):
    base = _result([0.04, 0.02, 0.01, 0.0, 0.0, 0, 0], level="regional")
    regional = fc.RegionalResult(
        base, 3, (3, 4), (0.0, 0.1), {"feature": "f1", "value": "dark"}, (), np.array([0.9, 0.5, 0.1, 0.1, 0.1, 0, 0]),
        0.8, ("C", "C", "B", "B", "B", None, None), (0.3, 0.01),
    )
    text = reporting.describe_regional(regional, undesirable=("Severe",))
    assert "around row 3 with lighting = dark" in text and "2 similar cases" in text
    assert "quadrant C" not in text  # both "high" features are changed by under 5% here


def test_model_quality_is_said_next_to_the_majority_baseline(toy_task):
    share = reporting.majority_outcome(toy_task)[1]
    text = reporting.describe_model({"test_accuracy": 0.83}, toy_task)
    assert "right 83% of the time" in text and f"would be right {100 * share:.0f}% of the time" in text
    given_baseline = reporting.describe_model({"test_accuracy": 0.83, "majority_baseline": 0.85,
                                               "balanced_accuracy": 0.61}, toy_task)
    assert "would be right 85%" in given_baseline and "balanced accuracy" in given_baseline
    assert "hardly better than always guessing" in given_baseline


def test_regional_reading_says_how_far_r_can_move_and_when_it_has_no_interval():
    from dataclasses import replace

    base = replace(_result([0.9, 0.5, 0.1, 0.1, 0.1, 0, 0], level="regional"),
                   local_frequencies=np.tile([0.9, 0.5, 0.1, 0.1, 0.1, 0, 0], (5, 1)), counts=np.full(5, 10))
    regional = fc.RegionalResult(
        base, 3, (3, 4, 5, 6, 7), (0.0, 0.1, 0.1, 0.2, 0.2), None, (), np.array([0.8, 0.4, 0.2, 0.1, 0.0, 0, 0]),
        0.8, ("C", "C", "B", "B", "B", None, None), (0.3, 0.3), pearson_r_interval=(0.35, 1.0),
    )
    text = reporting.describe_regional(regional)
    assert "(agreement 0.80 on a scale from −1 to 1)" in text and "Pearson" not in text
    assert ("From 5 cases, the agreement's 95% interval runs from 0.35 to 1.00; with so wide a range, read it as "
            "rough.") in text
    # The analyst's terms name it r.
    assert "(Pearson r = 0.80). From 5 cases, r's 95% interval runs from 0.35 to 1.00" in reporting.describe_regional(
        regional, terms=True)
    anything = replace(regional, pearson_r_interval=(-1.0, 1.0))
    assert "so few cases cannot pin the agreement down at all" in reporting.describe_regional(anything)
    assert "so few cases cannot pin r down at all" in reporting.describe_regional(anything, terms=True)
    # r defined but no interval (one case with counterfactuals): said in words, never shown as [r, r].
    one = replace(regional, importance=replace(base, counts=np.array([10, 0, 0, 0, 0])),
                  pearson_r_interval=(float("nan"), float("nan")))
    assert "With 1 case with ways out, the agreement has no honest interval" in reporting.describe_regional(one)
    undefined = replace(regional, pearson_r=float("nan"), pearson_r_interval=(float("nan"), float("nan")))
    assert "agreement undefined" in reporting.describe_regional(undefined)
    assert "r undefined" in reporting.describe_regional(undefined, terms=True)
    assert reporting.describe_r_interval(undefined) == ""


def test_readings_lead_with_one_sentence_and_cap_long_lists():
    """The breast-cancer case: 23 indistinguishable features were all listed; now three and "N more"."""
    n = 26
    names = tuple(f"feature {j}" for j in range(n))
    frequency = np.linspace(0.5, 0.4, n)
    result = fc.FlexResult(
        level="global", feature_names=tuple(f"f{j}" for j in range(n)), display_names=names, kinds=("categorical",) * n,
        immutable=(False,) * n, tau=np.full(n, np.nan), frequency_mean=frequency, frequency_std=np.zeros(n),
        magnitude_mean=np.full(n, np.nan), dice_frequency=frequency, local_frequencies=frequency[None],
        local_magnitudes=np.full((1, n), np.nan), query_index=np.array([0, 1]), counts=np.array([10, 10]),
        rank_interval=np.array([[1, n]] * n),
    )
    text = reporting.describe_global(result, undesirable=("malignant",))
    lead, _, details = text.partition("\n\n")
    assert lead.count(". ") == 0 and lead.endswith("."), "the lead is one sentence"
    assert "feature 0, feature 1, feature 2 and 23 more) are indistinguishable" in details
    assert "feature 5" not in details


def test_quadrant_words_are_not_domain_words():
    """Accident data has drivers and passengers: the readings must not call features that."""
    words = " ".join([reporting.quadrant_legend(), *reporting.what_must_change_reading()])
    assert "important here only" in words and "important everywhere" in words and "changed but not needed" in words
    assert "driver" not in words.lower() and "passenger" not in words.lower()


def _region(text: str, *, significant: bool, replicated) -> fc.regions.Region:
    """A hand-made found region of 10 cases (only what the table and the readings show is meaningful)."""
    return fc.regions.Region(
        rule=({"feature": "f0", "op": ">=", "value": 1.0},), text=text, size=10, members=tuple(range(10)),
        frequency=np.zeros(3), divergence=0.4, divergence_interval=(0.1, 0.7), pearson_r=0.6,
        pearson_r_interval=(0.3, 0.9), l1_shift=0.2, top_up=(), top_down=(), p_value=0.001, q_value=0.01,
        significant=significant, replicated=replicated,
    )


def test_a_q_value_reads_as_a_number_or_a_share_never_in_exponent_form():
    from ui.reporting._checks import q_value_text

    # hand-computed: two significant digits; 7e-05 is below the last shown step either way
    assert [q_value_text(q) for q in (7e-05, 0.0013, 0.02149, 0.1234, 1.0)] == ["< 0.0001", "0.0013", "0.021", "0.12", "1"]
    assert [q_value_text(q, plain=True) for q in (7e-05, 0.0013, 0.02149, 0.1234, 0.999, 1.0)] == [
        "below 0.01%", "0.13%", "2.1%", "12%", "100%", "100%"]
    assert q_value_text(float("nan")) == q_value_text(float("nan"), plain=True) == "n/a"


def test_a_divergence_interval_above_zero_never_reads_like_one_reaching_it():
    """Significance needs the interval's lower end above 0: loan's significant regions had lower ends 0.0013-0.0021,
    which two decimals showed as "0.00", the same as the intervals that reach 0 (cut at 0 exactly)."""
    from ui.reporting._checks import divergence_text, significance_text

    assert [divergence_text(v) for v in (0.0, 0.0013, 0.00496, 0.005, 0.1234, 0.23, float("nan"))] == [
        "0", "0.0013", "0.005", "0.01", "0.12", "0.23", "n/a"]  # 0.005 rounds half to even: 0.01 (two decimals)
    significant = _region("a", significant=True, replicated=None)  # q = 0.01
    reaching = _region("b", significant=False, replicated=None)
    assert significance_text(significant, 0.1) == "yes"
    assert significance_text(reaching, 0.1) == "no: its interval reaches 0"  # q 0.01 <= 0.1, yet not significant
    assert significance_text(reaching, 0.005) == significance_text(reaching, None) == "no"
    from types import SimpleNamespace

    rows = (dataclasses.replace(significant, q_value=7e-05, divergence=0.12, divergence_interval=(0.0013, 0.23)),
            dataclasses.replace(reaching, q_value=7e-05, divergence=0.004, divergence_interval=(0.0, 0.021)))
    found = SimpleNamespace(regions=rows, factuals=np.arange(40), config={"discovery": {"fdr": 0.1}})
    table = reporting.found_regions_table(found)
    assert list(table["divergence 1 − r (95% interval)"]) == ["0.12 (0.0013–0.23)", "0.004 (0–0.02)"]
    assert list(table["significant"]) == ["yes", "no: its interval reaches 0"]
    assert list(table["q-value"]) == ["< 0.0001", "< 0.0001"]
    assert list(reporting.found_regions_table(found, plain=True)["q-value"]) == ["below 0.01%", "below 0.01%"]
    found.significant = rows[:1]
    found.config["discovery"].update(max_conditions=2, min_support=8)
    assert "divergence 0.12 (95% interval 0.0013–0.23, q < 0.0001)" in reporting.describe_found_regions(found)


def test_the_found_regions_counts_say_why_a_significant_region_or_a_low_q_is_not_in_the_list():
    """Loan (1,000 cases): 3 significant, 2,222 more below the rate with an interval reaching 0, 2 near copies; one
    significant region was a near copy, so the table's "yes" rows (2) must be explained against the count (3)."""
    from types import SimpleNamespace

    yes, no = (_region(t, significant=s, replicated=None) for t, s in (("a", True), ("b", False)))
    found = SimpleNamespace(regions=(yes, yes, no), counts={"significant": 3, "tested": 3095,
                                                            "interval_reaches_zero": 2222, "near_copies": 2})
    assert reporting.describe_found_counts(found, 0.1) == (
        "**3 of 3,095 candidate regions differ significantly** at FDR 0.1 (2,222 more pass that rate, but how much "
        "they differ could be 0 within the 95% interval: not counted); 2 of them are listed, the other one repeats a "
        "listed region or adds nothing to one of its two conditions. The 3 regions shown are ranked, significant ones "
        "first (2 regions left out: at least 95% of their cases those of a region above, the same finding under another "
        "rule).")
    full = SimpleNamespace(regions=(yes, yes), counts={"significant": 5, "tested": 40})  # the list is too short
    assert reporting.describe_found_counts(full, 0.05) == (
        "**5 of 40 candidate regions differ significantly** at FDR 0.05; the first 2 are listed. The 2 regions shown "
        "are ranked, significant ones first.")
    none = SimpleNamespace(regions=(no,), counts={"significant": 0, "tested": 9, "interval_reaches_zero": 1})
    assert reporting.describe_found_counts(none, 0.1) == (
        "**0 of 9 candidate regions differ significantly** at FDR 0.1 (1 more passes that rate, but how much it "
        "differs could be 0 within the 95% interval: not counted). The region shown is the one ranked first.")


def test_found_regions_say_how_many_refits_each_replicates_in():
    from types import SimpleNamespace

    found = SimpleNamespace(regions=(_region("speed ≥ 60", significant=True, replicated=(True, True, True)),
                                     _region("rain = yes", significant=True, replicated=(True, False, False)),
                                     _region("age < 30", significant=False, replicated=(False, False, False))),
                            factuals=np.arange(40), config={"discovery": {"max_conditions": 2, "min_support": 8}})
    found.significant = found.regions[:2]
    table = reporting.found_regions_table(found)
    assert list(table["replicates"]) == ["in 3 of 3 refits", "in 1 of 3 refits", "in 0 of 3 refits"]
    said = reporting.describe_region_replication(found)
    assert said == ("1 of the 2 significant regions does not replicate under all 3 refits of the model, so it depends "
                    "on this fit: rain = yes (replicates in 1 of 3 refits).")
    assert reporting.describe_found_regions(found).endswith(said)
    found.regions = (found.regions[0],)
    found.significant = found.regions
    assert reporting.describe_region_replication(found) == (
        "Every significant region also diverges beyond chance under each of the 3 refits of the model.")
    found.regions = (_region("speed ≥ 60", significant=True, replicated=None),)  # not asked: no column, no words
    assert "replicates" not in reporting.found_regions_table(found) and reporting.describe_region_replication(found) == ""


def test_the_groups_reading_names_the_differences_that_do_not_replicate():
    from types import SimpleNamespace

    cost = {"measure": "cost_median", "higher": "rural", "lower": "urban", "replicated": [True, True]}
    speed = {"measure": "frequency", "feature": "f0", "higher": "urban", "lower": "rural", "replicated": [False, True]}
    groups = SimpleNamespace(by_label="road type", feature_names=("f0", "f1"), display_names=("speed", "rain"),
                             differences=(cost, speed), config={"groups": {"replication": "..."}})
    assert reporting.describe_group_replication(groups) == (
        "Not replicated under every refit of the model (they depend on this fit): how often speed must change, "
        "higher for road type urban than rural (holds in 1 of 2 refits).")
    groups.differences = (cost,)
    assert reporting.describe_group_replication(groups) == (
        "Every named difference is named again under each of the 2 refits of the model.")
    groups.differences = ()
    assert reporting.describe_group_replication(groups) == (
        "No difference is named, so none is checked under the refits of the model.")
    groups.config = {"groups": {}}  # not asked
    assert reporting.describe_group_replication(groups) == ""


def test_regional_reading_names_corners_and_the_mode_shift_in_words_unless_terms_are_asked_for():
    """The scatter's corners and the mode shift δ: the chart's letter and the shares in plain words; the paper's
    "quadrant" and δ only with the analyst's terms switched on."""
    base = _result([0.9, 0.5, 0.1, 0.1, 0.1, 0, 0], level="regional")
    shift = ({"name": "f1", "mode": "dark", "p_orig": 0.8, "p_cf": 0.2, "delta": -0.75, "cf_mode": "daylight"},)
    regional = fc.RegionalResult(
        base, 3, (3, 4), (0.0, 0.1), None, shift, np.array([0.8, 0.1, 0.2, 0.1, 0.0, 0, 0]),
        0.8, ("C", "A", "B", "B", "B", None, None), (0.3, 0.3),
    )
    plain = reporting.describe_regional(regional)
    name = base.display_names[0]
    assert f"Important everywhere (C on the chart): {name}." in plain
    assert f"move away from {base.display_names[1]} = dark (its share falls from 80% of the cases to 20% of their ways out)" in plain
    assert "quadrant" not in plain and "δ" not in plain
    terms = reporting.describe_regional(regional, terms=True)
    assert f"Important everywhere (quadrant C): {name}." in terms and "(δ = -0.75: its share falls from 80%" in terms
    table = reporting.mode_shift_table(regional)
    assert table.loc[0, "relative change"] == "−75%" and "δ" not in table.columns
    assert reporting.mode_shift_table(regional, terms=True).loc[0, "δ"] == "-0.75"


def test_the_tau_sweep_reading_by_hand_most_often_changed_first_and_rare_ones_grouped():
    """Worked by hand: four numbers over τ = 0, 0.2, 0.4. Term starts at 0.6 and is at 0.3 (half) by 0.2; Score starts
    at 0.3 and stays above 0.15 throughout; Income (0.02) and Assets (0) are under 5% at τ = 0, so their half-lives,
    resting on a handful of ways out, are not read as findings; Score and Term are named by how often they change."""
    taus = [0.0, 0.2, 0.4]
    rows = {"Income": [0.02, 0.0, 0.0], "Score": [0.3, 0.25, 0.2], "Assets": [0.0, 0.0, 0.0], "Term": [0.6, 0.3, 0.1]}
    sweep = pd.DataFrame([{"label": label, "tau": t, "frequency_mean": f} for label, fs in rows.items()
                          for t, f in zip(taus, fs)])
    text = reporting.describe_tau_sweep(sweep)
    assert text == (
        "τ decides how large a change to a number must be (as a share of its range) to count. Term loses half its changes "
        "by τ = 0.2; Score keeps most of its changes even at τ = 0.4 (large changes). A feature that keeps its frequency "
        "at high τ needs big changes to flip the prediction. Rarely changed even at τ = 0 (under 5% of the ways out), so "
        "how fast they fall says little: Income and Assets.")
    only_rare = reporting.describe_tau_sweep(sweep[sweep["label"].isin(["Income", "Assets"])])
    assert only_rare.endswith("so how fast they fall says little: Income and Assets.") and "loses" not in only_rare
    assert reporting.describe_tau_sweep(sweep.iloc[:0]) == "This dataset has no continuous feature, so τ has no effect."
