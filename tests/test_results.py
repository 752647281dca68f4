"""Results read back exactly what they write: to_dict -> from_dict -> to_dict, also through JSON."""

from __future__ import annotations

import json

import numpy as np

import flex_core as fc
from flex_core._results import importance_rank


def test_flex_result_round_trip(user_explainer):
    data = user_explainer.explain_global(n_factuals=20).to_dict()
    again = fc.FlexResult.from_dict(json.loads(json.dumps(data)))
    assert again.to_dict() == data
    assert again.local_frequencies.shape == (len(data["factuals"]), len(data["features"]))


def test_regional_result_round_trip(user_explainer):
    region = user_explainer.explain_region(where="lighting=dark", k=3, n_factuals=20)
    data = region.to_dict()
    again = fc.RegionalResult.from_dict(json.loads(json.dumps(data)))
    assert again.to_dict() == data
    assert again.members == region.members and again.quadrants == region.quadrants


def test_one_feature_score_base_ranks_every_result(user_explainer):
    # Hand-computed: ties share the best rank, NaN ranks last.
    np.testing.assert_array_equal(importance_rank(np.array([0.5, np.nan, 0.5, 0.9])), [2, 4, 2, 1])
    result = user_explainer.explain_global(n_factuals=20)
    lime = user_explainer.lime(result.query_index[:2], num_samples=100)
    for scores in (result, lime):
        assert isinstance(scores, fc.FeatureScores)
        np.testing.assert_array_equal(scores.rank, importance_rank(scores.scores))
    np.testing.assert_array_equal(result.scores, result.frequency_mean)
    assert lime.score_of("speed") == lime.mean_abs[lime.feature_names.index("speed")]
    assert issubclass(fc.compare.ShapImportance, fc.FeatureScores)


def test_shap_and_lime_results_round_trip_through_json(user_explainer):
    rows = user_explainer.explain_global(n_factuals=6).query_index
    for result in (user_explainer.shap(rows), user_explainer.lime(rows[:3], num_samples=100)):
        data = result.to_dict()
        again = type(result).from_dict(json.loads(json.dumps(data)))
        assert again.to_dict() == data
        np.testing.assert_array_equal(again.scores, result.scores)
        assert again.display_names == result.display_names and again.immutable == result.immutable
    shap = user_explainer.shap(rows)
    again = fc.compare.ShapImportance.from_dict(shap.to_dict())
    np.testing.assert_array_equal(again.values, shap.values)
    assert again.column_names == shap.column_names


def test_a_result_of_another_kind_is_refused_by_from_dict(user_explainer):
    import pytest

    lime = user_explainer.lime(user_explainer.explain_global(n_factuals=4).query_index[:2], num_samples=100)
    with pytest.raises(fc.ConfigError, match="SHAP"):
        fc.compare.ShapImportance.from_dict(lime.to_dict())
