"""The CLI's rule-defined regions, region discovery and group comparison: JSON out, one-line errors with exit 2."""

from __future__ import annotations

import json
import re

import pytest

from flex_core.cli import main

FAST = ["--n-factuals", "120", "--n-cf", "3", "--cv-folds", "2", "--quiet"]
DATA = ["--data", "builtin:synthetic-regional"]


def run_cli(tmp_path, *args):
    out = tmp_path / "out.json"
    assert main([*args, "--out", str(out)]) == 0
    return json.loads(out.read_text())


def test_regional_rule_json(tmp_path):
    out = run_cli(tmp_path, "regional", *DATA, "--rule", "speed>=90", "--rule", "road_type=rural", *FAST)
    assert out["level"] == "regional" and out["query"] is None and out["distances"] == []
    assert out["rule"] == [{"feature": "speed", "op": ">=", "value": 90}, {"feature": "road_type", "op": "=", "value": "rural"}]
    assert out["rule_text"] == "speed ≥ 90 and road type = rural"
    assert out["members"] and out["factuals"] == out["members"]  # F over exactly the members
    assert "pearson_r" in out and all("quadrant" in f for f in out["features"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rule", "speed>90"], "the comparisons are >= and <"),
        (["--rule", "colour=red"], "Unknown feature 'colour' in the rule; the features are: speed, road_type"),
        (["--rule", "road_type>=rural"], "'road_type' is categorical"),
        (["--rule", "road_type=moon"], "'moon' is not a level of 'road_type'"),
        (["--rule", "speed>=1000"], "No factual .* meets speed ≥ 1,000; widen the rule"),
        (["--rule", "speed>=90", "--where", "lighting=dark"], "--rule defines the region by itself"),
        (["--rule", "speed>=90", "--neighbours", "3"], "--rule defines the region by itself"),
    ],
)
def test_a_bad_rule_exits_2_with_one_line(capsys, args, message):
    assert main(["regional", *DATA, *args, *FAST]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert re.search(message, err[0]), err[0]
