"""The JSON Schema of results: valid draft 2020-12, shipped in the package, in step with FORMAT_VERSION,
strict enough to catch a missing or unknown key, and the docs page generated from it."""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path

import jsonschema
import pytest

from flex_core._contract import FORMAT_VERSION, SCHEMA_FILE, result_schema
from flex_core._kinds import DATA_KINDS, result_classes
from tests.contract import assert_valid, validator
from tools import json_docs

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = Path(__file__).with_name("schema_snapshot.json")


def test_the_schema_is_valid_draft_2020_12_and_knows_every_kind():
    schema = result_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(schema["properties"]["kind"]["enum"]) == set(result_classes()) | set(DATA_KINDS)
    for kind in schema["properties"]["kind"]["enum"]:
        assert f"{kind}_kind" in schema["$defs"], kind


def test_the_schema_declares_the_format_version_the_library_writes():
    assert result_schema()["$defs"]["format_version"]["const"] == FORMAT_VERSION, (
        "flex_core/schema/result.schema.json's format_version const and FORMAT_VERSION in flex_core/_contract.py "
        "must be the same version"
    )


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


def test_a_breaking_change_bumps_the_format_version():
    """The keys every kind has (with their types, and which are required) are recorded per format version.

    Changing them without a new version fails here; so does a bump too small for the change.
    """
    snapshots = json.loads(SNAPSHOT.read_text())
    keys = json_docs.key_snapshot(result_schema())
    how = ("Bump FORMAT_VERSION in flex_core/_contract.py and the format_version const in "
           "flex_core/schema/result.schema.json (MINOR for a new optional key; MAJOR for a removed, renamed or "
           "retyped key, or one newly required), then add the new version's keys to tests/schema_snapshot.json "
           "(python -m tools.json_docs --keys prints them) and rewrite the docs (python -m tools.json_docs).")
    if FORMAT_VERSION in snapshots:
        bump, changes = json_docs.needed_bump(snapshots[FORMAT_VERSION], keys)
        assert not changes, (f"The result format changed but format_version is still {FORMAT_VERSION}:\n  "
                             + "\n  ".join(changes) + f"\n{how}")
        return
    latest = max(snapshots, key=_version)
    bump, changes = json_docs.needed_bump(snapshots[latest], keys)
    (old_major, old_minor), (major, minor) = _version(latest), _version(FORMAT_VERSION)
    big_enough = {"major": major > old_major, "minor": (major, minor) > (old_major, old_minor), None: True}[bump]
    assert big_enough, f"From {latest} to {FORMAT_VERSION} is too small a bump for:\n  " + "\n  ".join(changes) + f"\n{how}"
    pytest.fail(f"Format {FORMAT_VERSION} has no recorded keys yet. {how}")


def test_needed_bump_tells_minor_from_major():
    old = {"flex": {"a": "int, required", "b": "text"}}
    assert json_docs.needed_bump(old, old) == (None, [])
    assert json_docs.needed_bump(old, {"flex": {**old["flex"], "c": "bool"}})[0] == "minor"
    assert json_docs.needed_bump(old, {"flex": {**old["flex"], "c": "bool, required"}})[0] == "major"
    assert json_docs.needed_bump(old, {"flex": {"a": "int, required"}}) == ("major", ["flex: b removed"])
    assert json_docs.needed_bump(old, {"flex": {"a": "number, required", "b": "text"}})[0] == "major"


def test_the_docs_page_is_generated_from_the_schema():
    page = REPO / "docs" / "json-format.md"
    assert page.read_text() == json_docs.render(result_schema()), "docs/json-format.md is out of date: python -m tools.json_docs"
    assert "json-format.md" in (REPO / "README.md").read_text()


def test_the_schema_ships_inside_the_package():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["flex_core"]
    shipped = {p for pattern in patterns for p in (REPO / "flex_core").glob(pattern)}
    assert SCHEMA_FILE in shipped and all(p in shipped for p in SCHEMA_FILE.parent.glob("*.json"))


@pytest.fixture(scope="module")
def a_flex_dict(toy_task, toy_model) -> dict:
    import flex_core as fc

    store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.make_generator("batch"), n_cf=3, seed=0)
    return fc.importance.run_global(store, n_factuals=8).to_dict()


def test_the_schema_accepts_a_result_and_refuses_what_breaks_the_format(a_flex_dict):
    assert_valid(a_flex_dict)

    def errors(change) -> list[str]:
        data = copy.deepcopy(a_flex_dict)
        change(data)
        return [e.message for e in validator().iter_errors(data)]

    assert errors(lambda d: d.pop("factuals"))  # a required key is missing
    assert errors(lambda d: d["features"][0].pop("rank"))  # ... also inside a feature
    assert errors(lambda d: d["features"][0].update(rnak=1))  # an unknown (misspelt) key
    assert errors(lambda d: d.update(surprise=True))
    assert errors(lambda d: d.update(format_version="0.9"))
    assert errors(lambda d: d.update(kind="shap"))  # a flex dict is not a SHAP result
    assert errors(lambda d: d["features"][0].update(frequency_mean="0.5"))  # a number written as text
    assert errors(lambda d: d["features"][0].update(frequency_ci=[0.1]))  # an interval has two ends
    assert not errors(lambda d: d["features"][0].update(frequency_mean=None))  # NaN is written as null
    assert not errors(lambda d: d["config"].update(my_option=1))  # config records any option


def test_the_tree_generators_block_is_described_and_a_misspelt_key_in_it_refused(toy_task, toy_model):
    """2.6: the ``tree`` block (which generator ran, why, what it counted) and the settings beside it are in the
    schema, so a reader knows what each means; an unknown key inside the block is refused like any other."""
    import flex_core as fc

    store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.make_generator("tree"), n_cf=3, seed=0)
    data = fc.importance.run_global(store, n_factuals=8).to_dict()
    block = data["generator"]["tree"]
    described = result_schema()["$defs"]["generator"]["properties"]
    assert block["ran"] == "tree" and "pairs_read" in block and set(block) <= set(described["tree"]["properties"])
    assert {k for k in data["generator"] if k != "tree"} <= set(described)  # every setting the generator wrote
    assert_valid(data)
    bad = copy.deepcopy(data)
    bad["generator"]["tree"]["pairs_raed"] = 3
    assert [e.message for e in validator().iter_errors(bad)]
    bad = copy.deepcopy(data)
    bad["generator"]["tree"]["pairs_read"] = -1
    assert [e.message for e in validator().iter_errors(bad)]
