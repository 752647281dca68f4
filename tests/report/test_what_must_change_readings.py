"""Readings that use the 95% intervals and name passenger features, on hand-made results."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from ui import reporting


@pytest.fixture(scope="module")
def five_features():
    frame = pd.DataFrame({name: np.arange(10.0) for name in ("a", "b", "c", "d", "e")})
    frame["y"] = ["bad"] * 5 + ["good"] * 5
    task = fc.make_task(frame, target="y", undesirable="bad", kinds={n: "continuous" for n in "abcde"})
    n = 5
    cfset = fc.counterfactuals.CounterfactualSet(
        tuple(task.feature_names), np.arange(n), np.zeros((n, 5)), np.zeros((n, 1, 5)), np.ones((n, 1), bool),
        np.ones((n, 1), bool), "hand", 0.0,
    )
    return fc.importance.flex_importance(cfset, task, tau=0.0, intervals=False)


def with_scores(result, frequency, ranks, necessary=None):
    frequency = np.asarray(frequency, float)
    return replace(
        result,
        frequency_mean=frequency,
        frequency_ci=np.column_stack([frequency - 0.01, frequency + 0.01]),
        rank_interval=np.asarray(ranks, float),
        necessary_frequency=None if necessary is None else np.asarray(necessary, float),
    )


def test_rank_text_shows_a_range_only_when_uncertain():
    assert reporting.rank_text(4, [4, 7]) == "4–7"
    assert reporting.rank_text(2, [2, 2]) == "2"
    assert reporting.rank_text(3, None) == "3"
    assert reporting.with_interval(0.731, (0.61, 0.852)) == "0.73 (0.61 to 0.85)"
    assert reporting.with_interval(0.5, (float("nan"), 0.6)) == "0.50"


def test_certainty_names_a_clear_leader_and_indistinguishable_ranks(five_features):
    result = with_scores(five_features, [0.6, 0.08, 0.07, 0.06, 0.3], [[1, 1], [3, 5], [3, 5], [3, 5], [2, 2]])
    text = reporting.describe_certainty(result)
    assert "A is first (its interval lies above every other feature's)" in text
    assert "ranks 3–5 (B, C and D) are indistinguishable" in text
    clear = with_scores(five_features, [0.5, 0.4, 0.3, 0.2, 0.1], [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]])
    assert "every rank is clear" in reporting.describe_certainty(clear)


def test_passengers_are_named_with_how_often_they_were_needed(five_features):
    result = with_scores(
        five_features, [0.6, 0.08, 0.07, 0.01, 0.3], [[1, 1]] * 5, necessary=[0.6, 0.005, 0.06, 0.0, 0.29]
    )
    text = reporting.describe_passengers(result)
    # c: 0.06 of its 0.07 is needed, a driver; d: too rare to mention.
    assert text.endswith(": B (changed in 8%, needed in 0.5%).")
    assert reporting.describe_passengers(replace(result, necessary_frequency=None)) == ""
    assert "Changed but not needed" in reporting.describe_global(result)
    assert "assenger" not in reporting.describe_global(result)  # a domain word (people in a car)


def test_what_must_change_frame_orders_by_rank_and_leaves_missing_scores_empty(five_features):
    result = with_scores(five_features, [0.6, 0.08, 0.07, 0.06, 0.3], [[1, 1], [3, 5], [3, 5], [3, 5], [2, 2]],
                         necessary=[0.5, 0.0, 0.0, 0.0, 0.3])
    frame = reporting.what_must_change_frame(result)
    assert list(frame["feature"]) == ["A", "E", "B", "C", "D"]
    assert list(frame["rank"]) == ["1", "2", "3–5", "3–5", "3–5"]
    assert "flips it alone (95% interval)" not in frame and frame.loc[0, "changed and needed"] == "50%"
    assert "None" not in frame.to_string()
    # Plain words by default; the paper's symbols only when the reader asks for the analyst's terms.
    assert list(frame.columns) == ["feature", "rank", "changed (95% interval)", "changed and needed"]
    with_terms = reporting.what_must_change_frame(result, terms=True)
    assert list(with_terms.columns) == ["feature", "rank", "F (95% interval)", "necessary F"]
    assert with_terms.iloc[:, 2:].equals(frame.iloc[:, 2:].set_axis(with_terms.columns[2:], axis=1))
    plain, terms = reporting.what_must_change_reading(), reporting.what_must_change_reading(terms=True)
    assert [s.split(":")[0] for s in plain] == ["changed", "changed and needed", "flips it alone", "needed",
                                                "necessity ratio (Kommiya Mothilal et al. 2021)",
                                                "sufficiency ratio (same paper)"]
    assert terms[0].startswith("changed (F):") and terms[1].startswith("changed and needed (necessary F):")
    assert not any(word in " ".join(plain) for word in ("F:", "necessary F", "N_cf", "{"))


def test_what_must_change_reads_the_top_shares_of_each_kind_word_for_word(five_features):
    nan = float("nan")
    result = replace(
        five_features,
        display_names=("a", "b", "c", "d", "surface"),
        immutable=(False, False, False, True, False),
        # d is immutable (left out though its shares are high); b was not computed for flips alone.
        flip_alone=np.array([0.05, nan, 0.4, 0.9, 0.27]),
        flip_alone_interval=np.array([[0.01, 0.1], [nan, nan], [nan, nan], [0.8, 1.0], [0.22, 0.33]]),
        needed=np.array([0.0, 0.0, 0.1, 0.9, 0.0]),
        needed_interval=np.array([[0.0, 0.0], [0.0, 0.0], [0.05, 0.15], [0.8, 1.0], [0.0, 0.0]]),
    )
    assert reporting.describe_what_must_change(result, cases="the sampled cases") == (
        "Changing c alone flips 40% of the sampled cases. "
        "Changing surface alone flips 27% of the sampled cases (22–33%). "
        "Changing a alone flips 5% of the sampled cases (1–10%). "
        "For 10% of the sampled cases (5–15%) no way out was found that keeps c as it is."
    )
    neither = replace(result, flip_alone=np.zeros(5), needed=np.zeros(5))
    assert reporting.describe_what_must_change(neither) == (
        "No single feature flips any of these cases on its own: every way out changes several. "
        "Every feature has a way around it: for each of these cases, some way out keeps it as it is."
    )
    assert reporting.describe_what_must_change(replace(result, needed=None)) == ""


def test_what_must_change_frame_writes_f_and_necessary_f_the_same_way(five_features):
    # The case: F read "0.48" beside a necessary F of "48%" for the same feature.
    result = with_scores(five_features, [0.48, 0.08, 0.07, 0.06, 0.3], [[1, 1], [3, 5], [3, 5], [3, 5], [2, 2]],
                         necessary=[0.48, 0.0, 0.0, 0.0, 0.3])
    first = reporting.what_must_change_frame(result).iloc[0]
    assert first["changed (95% interval)"] == "48% (47–49%)" and first["changed and needed"] == "48%"
