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


def test_association_is_the_share_of_spread_explained_adjusted_for_chance_by_hand():
    # [2,2,0] against [1,2,3]: r = -sqrt(3)/2, so the line explains 3/4 of SS_total = 24/9, i.e. 2, leaving 6/9;
    # adjusted: (2 - 1 * (6/9) / (3 - 2)) / (24/9) = 1/2.
    assert association(np.array([2.0, 2, 0]), np.array([1.0, 2, 3]), categorical=False) == pytest.approx(np.sqrt(0.5))
    # Levels a:[2], b:[2,0]: between 6/9, within 18/9; adjusted (6/9 - 1 * (18/9) / 1) < 0: nothing beyond chance.
    assert association(np.array([2.0, 2, 0]), np.array(["a", "b", "b"]), categorical=True) == 0.0
    # a:[0,0], b:[1]: the levels explain everything (nothing left within them).
    assert association(np.array([0.0, 1, 0]), np.array(["a", "b", "a"]), categorical=True) == pytest.approx(1.0)
    assert association(np.array([1.0, 1, 1]), np.array([1.0, 2, 3]), categorical=False) == 0.0  # nothing to explain
    assert association(np.array([1.0, 2, 3]), np.array([5.0, 5, 5]), categorical=False) == 0.0  # nothing explains it
    # Seven levels of pure noise in 20 rows: unadjusted eta is about 0.6; adjusted it stays near 0, as a number's does.
    rng = np.random.default_rng(0)
    noise = [association(rng.normal(size=20), rng.choice(list("abcdefg"), 20), categorical=True) for _ in range(200)]
    numbers = [association(rng.normal(size=20), rng.normal(size=20), categorical=False) for _ in range(200)]
    assert np.mean(noise) < 0.2 and np.mean(numbers) < 0.2


def test_the_suggested_colour_is_the_feature_explaining_most_of_the_spread_within_bins(six_rows):
    task, shap = six_rows
    # Two bins of three rows by j: rows 1-3 (SHAP 0,1,0) and 4-6 (SHAP 2,2,0).
    # k: [0,1,0] and [1,1,0] explain both bins exactly -> 1. m: constant in bin 1 (0), sqrt(1/2) in bin 2 (as
    # above) -> sqrt(1/2) / 2. c: a,b,a explains bin 1 (1), a,b,b nothing beyond chance in bin 2 (0) -> 1/2.
    found = fc.compare.strongest_interaction(shap, task, "j", min_rows=3)
    assert found.n_bins == 2 and found.strongest == "k"
    assert found.strengths == pytest.approx({"k": 1.0, "m": np.sqrt(0.5) / 2, "c": 0.5})
    # One bin (fewer rows than min_rows): deviations of SHAP (-5/6, 1/6, -5/6, 7/6, 7/6, -5/6) against k's
    # (-1/2, 1/2, -1/2, 1/2, 1/2, -1/2): products sum to 30/12, squares to 174/36 and 6/4; adjusted over 6 rows.
    whole = fc.compare.strongest_interaction(shap, task, "j")
    r2 = 2.5**2 / (174 / 36 * 1.5)
    assert whole.n_bins == 1 and whole.strengths["k"] == pytest.approx(np.sqrt(r2 - (1 - r2) / 4))
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


@pytest.mark.slow
def test_on_a_forest_learned_from_planted_data_the_views_find_the_planted_rule():
    """Undesirable when speed > 60 on a rural road (3% label noise, four pure-noise features): SHAP's largest mean
    |SHAP| are speed and road, speed's suggested colour is road (its effect exists only on rural roads), not a
    noise feature with many levels, and for a fast rural case SHAP and FLEX agree on both, the only two ways out."""
    from tests.planted_learned import NOISE_FEATURES, planted_forest, planted_task

    task = planted_task()
    explainer = fc.FlexExplainer.from_task(task, planted_forest(task), n_cf=4, seed=0)
    # Over rows of both roads (nearly every factual is rural, where road cannot explain anything).
    everyone = explainer.shap(task.frame.index[:300])
    top_two = {everyone.feature_names[j] for j in np.argsort(-everyone.mean_abs)[:2]}
    assert top_two == {"speed", "road"}
    found = fc.compare.strongest_interaction(everyone, task, "speed")
    assert found.strongest == "road" and all(found.strengths[n] < found.strengths["road"] / 2 for n in NOISE_FEATURES)
    result = explainer.explain_global(n_factuals=60)
    shap = explainer.shap(result.query_index)
    frame = task.frame.loc[result.query_index]
    row = int(frame.index[(frame["road"] == "rural") & (frame["speed"] > 90)][0])
    local = explainer.explain_local([row], tau=0.1)[0]
    position = list(shap.query_index).index(row)
    agreement = fc.compare.case_agreement([f.label for f in task.features], shap.values[position],
                                          local.frequency_mean, immutable=local.immutable,
                                          undesirable=task.undesirable_words, row=row)
    assert set(agreement.agree) == {"Speed", "Road"} and not agreement.flex_only and not agreement.shap_only
