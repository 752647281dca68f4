"""Reading a result back refuses what the shipped schema refuses, with one DataError saying where (issue 31, finding 10):
a missing key, a wrong type, a frequency outside [0, 1], NaN or Infinity; never a KeyError, TypeError or StopIteration."""

from __future__ import annotations

import copy
import json

import pytest

import flex_core as fc
from flex_core import read_result
from flex_core._kinds import result_classes


@pytest.fixture(scope="module")
def written(toy_task, toy_model) -> dict:
    """A global FLEX result's dict (toy2d, 10 factuals: well under a second)."""
    explainer = fc.FlexExplainer.from_task(toy_task, toy_model, n_cf=3)
    return explainer.explain_global(n_factuals=10).to_dict()


def _changed(data: dict, change) -> dict:
    data = copy.deepcopy(data)
    change(data)
    return data


def test_a_written_result_still_reads_back(written):
    assert fc.FlexResult.from_dict(written).to_dict() == written


@pytest.mark.parametrize("change, where, why", [
    (lambda d: d["features"][0].update(frequency_mean=7.5), "features/0/frequency_mean", "greater than the maximum of 1"),
    (lambda d: d["features"][1].update(frequency_mean=-0.25), "features/1/frequency_mean", "less than the minimum of 0"),
    (lambda d: d["features"][0].pop("rank"), "features/0", "'rank' is a required property"),
    (lambda d: d.pop("features"), r"\(top\)", "'features' is a required property"),
    (lambda d: d["features"][0].update(rank="first"), "features/0/rank", "not of type 'integer'"),
    (lambda d: d.update(features=None), "features", "not of type 'array'"),
    (lambda d: d["local"].pop("frequencies"), "local", "'frequencies' is a required property"),
])
def test_a_dict_the_schema_refuses_is_one_data_error_naming_the_place(written, change, where, why):
    with pytest.raises(fc.DataError, match=f"not a valid flex result at {where}: .*{why}"):
        fc.FlexResult.from_dict(_changed(written, change))
    with pytest.raises(fc.DataError, match=where):  # from JSON text, and through the reader of any kind
        read_result(json.dumps(_changed(written, change)))


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_in_the_json_are_refused(written, token):
    text = json.dumps(_changed(written, lambda d: d["features"][0].update(frequency_mean=0.5)))
    text = text.replace('"frequency_mean": 0.5', f'"frequency_mean": {token}', 1)
    with pytest.raises(fc.DataError, match=f"holds {token}, which is not JSON"):
        fc.FlexResult.from_json(text)


def test_a_non_finite_number_in_a_dict_is_refused(written):
    data = _changed(written, lambda d: d["local"]["frequencies"][0].__setitem__(0, float("inf")))
    with pytest.raises(fc.DataError, match="local/frequencies/0/0 is not finite"):
        fc.FlexResult.from_dict(data)


@pytest.mark.parametrize("kind", sorted(result_classes()))
def test_every_kind_refuses_an_empty_result_with_a_data_error(kind):
    cls = result_classes()[kind]
    with pytest.raises(fc.DataError, match="is a required property"):
        cls.from_dict({"format_version": "2.0", "kind": kind})
    if kind == "generator_sensitivity":
        return  # a plain dict of whatever it holds: without a header there is nothing it must have
    # Without a header there is no kind to check against the schema: still one clear error, never a KeyError.
    with pytest.raises(fc.FlexError, match=f"{cls.__name__}.from_dict cannot read this dict|Not a .* result"):
        cls.from_dict({"features": [{"name": "x"}]})


def test_a_1x_result_is_checked_as_the_2x_result_it_is(written):
    old = {**written, "format_version": "1.3"}
    assert fc.FlexResult.from_dict(old).feature_names == fc.FlexResult.from_dict(written).feature_names
    with pytest.raises(fc.DataError, match="frequency_mean"):
        fc.FlexResult.from_dict(_changed(old, lambda d: d["features"][0].update(frequency_mean=7.5)))


def test_a_later_minor_version_with_a_new_key_is_still_read(written):
    """2.x promises that a newer minor version only adds optional keys: this reader does not hold them against it."""
    newer = _changed(written, lambda d: d.update(format_version="2.7", a_key_added_later=[1, 2]))
    assert fc.FlexResult.from_dict(newer).feature_names == fc.FlexResult.from_dict(written).feature_names
    with pytest.raises(fc.DataError, match="not finite"):  # still never NaN
        fc.FlexResult.from_dict(_changed(newer, lambda d: d["features"][0].update(frequency_mean=float("nan"))))
