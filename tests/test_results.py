"""The result contract: every result writes format_version, kind, config and versions, validates against the
schema, reads back exactly what it wrote (from a dict, JSON text, a path or a file), and gives a tidy frame."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core import read_result
from flex_core._contract import FORMAT_VERSION, Result
from flex_core._kinds import result_classes
from flex_core._results import importance_rank
from tests.contract import assert_same_result, assert_valid, strict_json

# Every test here shares one fixture that runs SHAP, LIME and the flip-alone/needed search (about 6 s,
# 14 s for the module): in the full suite, not the fast run.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def every_result(user_explainer, toy_task, toy_model) -> dict:
    """One result of every kind (and FLEX at every level), with every optional score present."""
    ex = user_explainer
    flex = ex.explain_global(n_factuals=20, sufficiency=True, repeats=2, generators=["batch-plausible"])
    region = ex.explain_region(where="lighting=dark", k=3, n_factuals=20, generators=["batch-plausible"])
    rows = flex.query_index
    shap = ex.shap(rows[:6])
    local = fc.importance.flex_importance(ex.counterfactuals(rows[:1]), ex.task, level="local")
    return {
        "flex (global)": flex,
        "flex (local)": local,
        "flex (necessary only)": flex.only_necessary(),
        "regional": region,
        "shap": shap,
        "lime": ex.lime(rows[:3], num_samples=100),
        "rank_agreement": fc.compare.rank_agreement(flex.frequency_mean, flex.dice_frequency, names=flex.feature_names),
        "rank_agreement (FLEX-SHAP)": fc.compare.flex_shap_agreement(flex, shap, n_boot=50),
        "necessity_sufficiency": fc.importance.necessity_sufficiency(ex.store, rows[:5]),
        "generator_sensitivity": flex.generator_sensitivity,
        "generator_sensitivity (regional)": region.importance.generator_sensitivity,
        "regional (rule)": ex.explain_region(rule=["lighting=dark"], n_factuals=20),
        "regions": ex.find_regions(n_factuals=60, n_permutations=100, min_support=5, top=3),
        "groups": ex.compare_groups(ex.task.feature_names[0], n_factuals=40),
        # Both need held-out rows, which the user's model from a file has not: a model trained here has them.
        "model_quality": fc.models.model_curves(toy_task, toy_model),
        "permutation": fc.compare.permutation_importance(toy_task, toy_model, n_repeats=2),
    }


def test_every_kind_is_covered(every_result):
    assert {r.kind for r in every_result.values()} == set(result_classes())
    assert {r.level for r in every_result.values() if isinstance(r, fc.FlexResult)} == {"global", "local"}
    assert all(isinstance(r, Result) for r in every_result.values())


def test_every_result_writes_the_header_and_validates_against_the_schema(every_result):
    for name, result in every_result.items():
        data = result.to_dict()
        assert data["format_version"] == FORMAT_VERSION and data["kind"] == result.kind, name
        assert isinstance(data["config"], dict) and {"python", "flex_core", "numpy", "pandas", "scikit-learn"} <= set(data["versions"])
        assert_valid(data)
        assert strict_json(result.to_json()) == data  # strict JSON: NaN is null
    assert "shap" in every_result["shap"].to_dict()["versions"] and "lime" in every_result["lime"].to_dict()["versions"]
    assert every_result["rank_agreement (FLEX-SHAP)"].to_dict()["config"]["bootstrap"]["resamples"] == 50


@pytest.mark.parametrize("how", ["text", "path", "str path", "file", "dict"])
def test_every_result_round_trips_through_json(every_result, tmp_path, how):
    for result in every_result.values():
        cls = type(result)
        if how == "text":
            again = cls.from_json(result.to_json())
        elif how in ("path", "str path"):
            path = tmp_path / f"{result.kind}.json"
            result.to_json(path)
            again = cls.from_json(path if how == "path" else str(path))
        elif how == "file":
            again = cls.from_json(io.StringIO(result.to_json()))
        else:
            again = cls.from_dict(json.loads(json.dumps(result.to_dict())))
        assert_same_result(again, result)
        assert_same_result(read_result(result.to_json()), result)


def test_a_result_read_back_keeps_the_versions_it_was_computed_with(every_result):
    data = every_result["flex (global)"].to_dict()
    data["versions"] = {**data["versions"], "numpy": "1.0.0"}
    again = fc.FlexResult.from_dict(data)
    assert again.to_dict()["versions"]["numpy"] == "1.0.0" and again.versions["numpy"] == "1.0.0"
    assert fc.RegionalResult.from_dict({**every_result["regional"].to_dict(), "versions": data["versions"]}).versions == data["versions"]


def test_every_result_gives_a_tidy_frame(every_result):
    for name, result in every_result.items():
        frame = result.to_frame()
        assert isinstance(frame, pd.DataFrame) and len(frame) > 0, name
        assert frame.columns.is_unique, name
    flex = every_result["flex (global)"]
    assert len(flex.to_frame()) == len(flex.feature_names)
    assert list(every_result["rank_agreement"].to_frame()["statistic"]) == ["spearman", "kendall", "top_k_overlap"]
    sensitivity = every_result["generator_sensitivity (regional)"].to_frame()
    assert set(sensitivity["scope"]) == {"global", "regional"} and set(sensitivity["generator"]) == {fc.counterfactuals.DEFAULT_GENERATOR, "batch-plausible"}


def test_a_dict_written_before_format_versions_is_still_read(every_result):
    flex = every_result["flex (global)"]
    legacy = {k: v for k, v in flex.to_dict().items() if k not in ("format_version", "kind")}
    assert_same_result(fc.FlexResult.from_dict(legacy), flex)


def test_another_kind_or_another_major_version_is_refused(every_result):
    lime = every_result["lime"].to_dict()
    with pytest.raises(fc.ConfigError, match="ShapImportance.from_dict reads 'shap'"):
        fc.compare.ShapImportance.from_dict(lime)
    with pytest.raises(fc.ConfigError, match=r"written in format 3\.0; this flex_core reads formats 1\.x and 2\.x"):
        fc.compare.LimeImportance.from_dict({**lime, "format_version": "3.0"})
    minor = fc.compare.LimeImportance.from_dict({**lime, "format_version": "2.7"})  # a newer minor version adds keys only
    np.testing.assert_array_equal(minor.scores, every_result["lime"].scores)
    older = fc.compare.LimeImportance.from_dict({**lime, "format_version": "1.0"})  # 2.0 only widened 1.0's keys
    np.testing.assert_array_equal(older.scores, every_result["lime"].scores)
    # A regional dict holds the region's FlexResult, which FlexResult reads.
    region = every_result["regional"]
    np.testing.assert_array_equal(fc.FlexResult.from_dict(region.to_dict()).frequency_mean, region.importance.frequency_mean)
    with pytest.raises(fc.ConfigError, match="Unknown result kind"):
        read_result({"kind": "nonsense"})
    with pytest.raises(fc.DataError, match="No result file"):
        fc.FlexResult.from_json("no/such/file.json")
    with pytest.raises(fc.DataError, match="not a result's JSON"):
        fc.FlexResult.from_json("{not json")


def test_one_feature_score_base_ranks_every_result(every_result):
    # Hand-computed: ties share the best rank, NaN ranks last.
    np.testing.assert_array_equal(importance_rank(np.array([0.5, np.nan, 0.5, 0.9])), [2, 4, 2, 1])
    result, lime = every_result["flex (global)"], every_result["lime"]
    for scores in (result, lime):
        assert isinstance(scores, fc.FeatureScores)
        np.testing.assert_array_equal(scores.rank, importance_rank(scores.scores))
    np.testing.assert_array_equal(result.scores, result.frequency_mean)
    assert lime.score_of("speed") == lime.mean_abs[lime.feature_names.index("speed")]
    assert issubclass(fc.compare.ShapImportance, fc.FeatureScores)


def test_shap_keeps_its_signed_values_and_columns(every_result):
    shap = every_result["shap"]
    again = fc.compare.ShapImportance.from_dict(shap.to_dict())
    np.testing.assert_array_equal(again.values, shap.values)
    assert again.column_names == shap.column_names


def test_generator_sensitivity_is_still_a_plain_dict(every_result):
    sensitivity = every_result["generator_sensitivity"]
    assert isinstance(sensitivity, dict) and json.loads(json.dumps(sensitivity)) == sensitivity.to_dict(header=False)
    assert sensitivity["config"]["factuals"] == [int(r) for r in every_result["flex (global)"].query_index]
    region = every_result["generator_sensitivity (regional)"]["config"]["region"]
    assert region["members"] == list(every_result["regional"].members)
