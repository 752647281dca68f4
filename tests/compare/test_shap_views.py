"""The SHAP views' numbers (issue 40 item 2): the dependence plot's suggested colour and one case's agreement
sentence, each checked by hand, and the figures drawing them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.compare._shap_views import association


def _shap(task: fc.TaskSpec, values: np.ndarray) -> fc.compare.ShapImportance:
    """A SHAP result with these values on every row of ``task`` (as shap_importance returns one)."""
    magnitude = np.abs(values)
    return fc.compare.ShapImportance(
        feature_names=tuple(task.feature_names), display_names=tuple(f.label for f in task.features),
        immutable=tuple(f.immutable for f in task.features), values=values, mean_abs=magnitude.mean(0),
        std_abs=magnitude.std(0), column_names=tuple(task.feature_names), column_mean_abs=magnitude.mean(0),
        base_value=0.5, query_index=task.frame.index.to_numpy(), explainer="test", seconds=0.0)


@pytest.fixture
def six_rows():
    frame = pd.DataFrame({"j": [1.0, 2, 3, 4, 5, 6], "k": [0.0, 1, 0, 1, 1, 0], "m": [5.0, 5, 5, 1, 2, 3],
                          "c": list("abaabb"), "y": ["bad", "good"] * 3})
    task = fc.make_task(frame, target="y", undesirable="bad", kinds={"k": "continuous"})
    values = np.zeros((6, 4))
    values[:, 0] = [0, 1, 0, 2, 2, 0]  # j's SHAP values
    return task, _shap(task, values)


def test_association_is_abs_r_for_a_number_and_eta_for_levels_by_hand():
    # r([2,2,0], [1,2,3]): deviations (2/3, 2/3, -4/3) and (-1, 0, 1): -2 / sqrt(24/9 * 2) = -sqrt(3)/2.
    assert association(np.array([2.0, 2, 0]), np.array([1.0, 2, 3]), categorical=False) == pytest.approx(np.sqrt(3) / 2)
    # Levels a:[2], b:[2,0]: between = (2-4/3)^2 + 2 (1-4/3)^2 = 6/9, total 24/9, eta = sqrt(1/4).
    assert association(np.array([2.0, 2, 0]), np.array(["a", "b", "b"]), categorical=True) == pytest.approx(0.5)
    assert association(np.array([0.0, 1, 0]), np.array(["a", "b", "a"]), categorical=True) == pytest.approx(1.0)
    assert association(np.array([1.0, 1, 1]), np.array([1.0, 2, 3]), categorical=False) == 0.0  # nothing to explain
    assert association(np.array([1.0, 2, 3]), np.array([5.0, 5, 5]), categorical=False) == 0.0  # nothing explains it


def test_the_suggested_colour_is_the_feature_explaining_most_of_the_spread_within_bins(six_rows):
    task, shap = six_rows
    # Two bins of three rows by j: rows 1-3 (SHAP 0,1,0) and 4-6 (SHAP 2,2,0).
    # k: |r| = 1 in both bins -> 1. m: constant in bin 1 (0), sqrt(3)/2 in bin 2 -> sqrt(3)/4.
    # c: eta = 1 in bin 1 (a,b,a), 1/2 in bin 2 (a,b,b) -> 3/4.
    found = fc.compare.strongest_interaction(shap, task, "j", min_rows=3)
    assert found.n_bins == 2 and found.strongest == "k"
    assert found.strengths == pytest.approx({"k": 1.0, "m": np.sqrt(3) / 4, "c": 0.75})
    # One bin (fewer rows than min_rows): deviations of SHAP (-5/6, 1/6, -5/6, 7/6, 7/6, -5/6) against k's
    # (-1/2, 1/2, -1/2, 1/2, 1/2, -1/2): products sum to 30/12, squares to 174/36 and 6/4.
    whole = fc.compare.strongest_interaction(shap, task, "j")
    assert whole.n_bins == 1 and whole.strengths["k"] == pytest.approx(2.5 / np.sqrt(174 / 36 * 1.5))
    with pytest.raises(fc.ConfigError, match="no feature 'q'"):
        fc.compare.strongest_interaction(shap, task, "q")


def test_a_case_where_shap_and_flex_agree_on_one_feature_and_differ_on_two():
    labels = ["A", "B", "C", "D", "E"]
    # Mutable A-D (E fixed). FLEX changes A and B (k = 2); SHAP's two largest pushes toward Rejected are A and C
    # (E's 0.4 is larger but fixed; B pushes away). Agree: A; FLEX only: B; SHAP only: C.
    agreement = fc.compare.case_agreement(labels, np.array([0.3, -0.1, 0.2, 0.05, 0.4]),
                                          np.array([0.5, 0.4, 0.0, 0.0, 0.0]),
                                          immutable=[False, False, False, False, True], undesirable="Rejected", row=7)
    assert (agreement.agree, agreement.flex_only, agreement.shap_only) == (("A",), ("B",), ("C",))
    assert agreement.sentence == (
        "SHAP and FLEX agree on A: among SHAP's 2 largest pushes toward Rejected, and changed by this case's ways "
        "out; the ways out also change B, which SHAP does not count among them; SHAP's push from C is changed by "
        "no way out.")
    none = fc.compare.case_agreement(labels[:2], np.array([0.3, 0.1]), np.array([0.0, 0.0]), immutable=[False] * 2,
                                     undesirable="Rejected", row=7)
    assert none.sentence.startswith("FLEX found no way out")
    apart = fc.compare.case_agreement(labels[:2], np.array([0.3, -0.1]), np.array([0.0, 1.0]), immutable=[False] * 2,
                                      undesirable="Rejected", row=7)
    assert apart.sentence == ("SHAP and FLEX agree on no feature: none of SHAP's largest push toward Rejected is "
                              "changed by this case's ways out; the ways out also change B, which SHAP does not count "
                              "among them.")


def test_the_figures_draw_every_case_and_the_chosen_colour(six_rows):
    task, shap = six_rows
    bees = fc.plotting.shap_beeswarm_figure(shap, task)
    assert bees.data[0].name == "J" and list(bees.data[0].x) == [0, 1, 0, 2, 2, 0]  # largest mean |SHAP| first
    assert list(bees.data[0].customdata) == list(task.frame.index)
    assert list(bees.data[0].marker.color) == pytest.approx([0, 0.2, 0.4, 0.6, 0.8, 1.0])  # j's value, scaled
    dependence = fc.plotting.shap_dependence_figure(shap, task, "j", "c")
    assert [t.name for t in dependence.data] == ["C = a", "C = b"]  # levels: one trace each
    assert list(dependence.data[0].y) == [0, 0, 2] and list(dependence.data[0].customdata) == [0, 2, 3]
    numbers = fc.plotting.shap_dependence_figure(shap, task, "j", "k")
    assert list(numbers.data[0].marker.color) == [0, 1, 0, 1, 1, 0]
    agreement = fc.compare.case_agreement(["J", "K"], np.array([0.1, -0.3]), np.array([1.0, 0.0]),
                                          immutable=[False, False], undesirable="bad", row=3)
    case = fc.plotting.case_contributions_figure(agreement)
    assert list(case.data[0].y) == ["K", "J"] and list(case.data[0].x) == [-0.3, 0.1]  # by |SHAP|
    assert list(case.data[1].x) == [0.0, 1.0]
