"""Checks of the result contract shared by the tests: schema validation, strict JSON, and sameness after a round trip."""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache

import numpy as np

from flex_core._contract import json_safe, result_schema


@lru_cache(maxsize=1)
def validator():
    import jsonschema

    return jsonschema.Draft202012Validator(result_schema())


def assert_valid(data: dict) -> dict:
    """``data`` validates against flex_core/schema/result.schema.json; the errors, with their paths, when not."""
    errors = sorted(validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}" for e in errors[:10])
    return data


def strict_json(text: str) -> dict:
    """Parse JSON refusing NaN and Infinity, which are not JSON (the contract writes null)."""

    def refuse(token):
        raise AssertionError(f"{token} in the JSON: the contract writes null for numbers that are not finite")

    return json.loads(text, parse_constant=refuse)


def assert_same_result(again, result) -> None:
    """Every field of ``again`` equals ``result``'s: arrays element by element (NaN equal to NaN), config as JSON."""
    assert type(again) is type(result)
    assert again.to_dict() == result.to_dict()
    if isinstance(result, dict):  # GeneratorSensitivity: a dict
        assert dict(again) == json_safe(dict(result))
        return
    _same_fields(again, result)


def _same_fields(again, result) -> None:
    for f in dataclasses.fields(result):
        if f.name in ("counterfactual_set", "features", "versions"):
            continue  # not written (the counterfactuals, the task's features) or regenerated (versions)
        mine, theirs = getattr(again, f.name), getattr(result, f.name)
        if dataclasses.is_dataclass(theirs):
            assert_same_result(mine, theirs)
        elif isinstance(theirs, tuple) and theirs and all(dataclasses.is_dataclass(t) for t in theirs):
            assert len(mine) == len(theirs), f.name  # regions, groups: each part field by field
            for part, expected in zip(mine, theirs):
                assert type(part) is type(expected), f.name
                _same_fields(part, expected)
        elif isinstance(theirs, np.ndarray):
            np.testing.assert_array_equal(mine, theirs, err_msg=f.name)
        elif isinstance(theirs, dict | tuple | list) or f.name == "config":
            assert json_safe(mine) == json_safe(theirs), f.name
        elif isinstance(theirs, float) and np.isnan(theirs):
            assert np.isnan(mine), f.name
        else:
            assert mine == theirs, f.name
