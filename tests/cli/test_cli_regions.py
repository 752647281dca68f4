"""The CLI's rule-defined regions, region discovery and group comparison: JSON out, one-line errors with exit 2."""

from __future__ import annotations

import re

import pytest

from flex_core import read_result
from flex_core.cli import main
from tests.contract import assert_valid, strict_json

FAST = ["--n-factuals", "120", "--n-cf", "3", "--cv-folds", "2", "--quiet"]
DATA = ["--data", "builtin:synthetic-regional"]


def run_cli(tmp_path, *args):
    """The JSON the CLI wrote, valid against the result schema and read back as its kind."""
    out = tmp_path / "out.json"
    assert main([*args, "--out", str(out)]) == 0
    data = assert_valid(strict_json(out.read_text()))
    assert read_result(data).kind == data["kind"]
    return data


def test_regional_rule_json(tmp_path):
    out = run_cli(tmp_path, "regional", *DATA, "--rule", "speed>=90", "--rule", "road_type=rural", *FAST)
    assert out["level"] == "regional" and out["query"] is None and out["distances"] == []
    assert out["rule"] == [{"feature": "speed", "op": ">=", "value": 90}, {"feature": "road_type", "op": "=", "value": "rural"}]
    assert out["rule_text"] == "Speed ≥ 90 km/h and Road type = rural"
    assert out["members"] and out["factuals"] == out["members"]  # F over exactly the members
    assert "pearson_r" in out and all("quadrant" in f for f in out["features"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rule", "speed>90"], "the comparisons are >= and <"),
        (["--rule", "colour=red"], "Unknown feature 'colour' in the rule; the features are: speed, road_type"),
        (["--rule", "road_type>=rural"], "'road_type' is categorical"),
        (["--rule", "road_type=moon"], "'moon' is not a level of 'road_type'"),
        (["--rule", "speed>=1000"], "No factual .* meets Speed ≥ 1,000 km/h; widen the rule"),
        (["--rule", "speed>=90", "--where", "lighting=dark"], "--rule defines the region by itself"),
        (["--rule", "speed>=90", "--neighbours", "3"], "--rule defines the region by itself"),
    ],
)
def test_a_bad_rule_exits_2_with_one_line(capsys, args, message):
    assert main(["regional", *DATA, *args, *FAST]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert re.search(message, err[0]), err[0]


def test_regions_json(tmp_path):
    out = run_cli(tmp_path, "regions", *DATA, "--top", "5", "--permutations", "200", *FAST)
    assert out["level"] == "regions" and 0 < len(out["regions"]) <= 5
    assert {"features", "factuals", "counts", "generator", "model", "config", "notes", "versions", "data"} <= set(out)
    region = out["regions"][0]
    assert {"rule", "text", "size", "divergence", "divergence_interval", "pearson_r", "pearson_r_interval", "top_up",
            "top_down", "significant", "q_value"} <= set(region)
    assert out["config"]["command"] == "regions" and out["config"]["n_factuals"] == 120
    assert out["config"]["discovery"]["n_permutations"] == 200 and out["counts"]["shown"] == len(out["regions"])


def test_regions_default_to_a_pool_of_1000(tmp_path):
    out = run_cli(tmp_path, "regions", *DATA, "--top", "1", "--permutations", "100", "--n-cf", "3", "--cv-folds", "2", "--quiet")
    assert out["config"]["n_factuals"] == 1000


def test_groups_json(tmp_path):
    out = run_cli(tmp_path, "groups", *DATA, "--by", "road_type", *FAST)
    assert out["level"] == "groups" and out["by"] == "road_type"
    group = out["groups"][0]
    assert {"value", "factuals", "flip_share", "flip_share_interval", "cost_median", "cost_interval", "features"} <= set(group)
    assert out["verdict"] and {"generator", "model", "config", "notes", "versions"} <= set(out)
    assert sum(g["factuals"] for g in out["groups"]) == 120


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["groups", "--by", "colour"], "Unknown feature 'colour'"),
        (["groups"], "the following arguments are required: --by"),
        (["regions", "--fdr", "2"], "fdr is a false-discovery rate between 0 and 1"),
        (["regions", "--sufficiency"], "--sufficiency apply to global and regional, not to regions"),
        (["regions", "--max-conditions", "3"], "invalid choice"),
        (["groups", "--by", "road_type", "--report", "{tmp}/r.html"], "--report applies to global, regional and regions"),
        (["regional", "--rule", "speed>=90", "--where", "lighting=dark"], "--rule defines the region by itself"),
        (["regional", "--rule", "speed>=90", "--query", "3"], "--rule defines the region by itself"),
    ],
)
def test_bad_regions_and_groups_options_exit_2(capsys, monkeypatch, tmp_path, args, message):
    """Each is refused before a model is trained (the user does not wait for a fit to hear it)."""

    def trained(*_args, **_kwargs):
        raise AssertionError("the model was trained before the options were checked")

    monkeypatch.setattr("flex_core.cli._main.FlexExplainer.from_task", trained)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    try:
        code = main([args[0], *DATA, *args[1:], *FAST])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and re.search(message, err[0]), err
