"""python -m flex_core: the documented JSON format, options, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from flex_core.cli import main, parse_tau

FAST = ["--n-factuals", "12", "--n-cf", "3", "--cv-folds", "2", "--quiet"]
FEATURE_KEYS = {
    "name", "kind", "immutable", "frequency_mean", "frequency_std", "magnitude_mean", "rank", "dice_frequency", "tau",
    "necessary_frequency", "frequency_ci", "rank_interval",
}


def run_cli(tmp_path, *args):
    out = tmp_path / "out.json"
    code = main([*args, "--out", str(out)])
    assert code == 0
    return json.loads(out.read_text())


def test_global_json_format(tmp_path):
    result = run_cli(tmp_path, "global", "--data", "builtin:synthetic-regional", "--tau", "0.2", "--seed", "1", *FAST)
    assert result["level"] == "global"
    assert {"features", "generator", "model", "config", "versions"} <= set(result)
    for feature in result["features"]:
        assert set(feature) >= FEATURE_KEYS
    ranks = sorted(f["rank"] for f in result["features"])
    assert ranks[0] == 1
    top = min(result["features"], key=lambda f: f["rank"])
    assert top["frequency_mean"] == max(f["frequency_mean"] for f in result["features"])
    gen = result["generator"]
    assert {"name", "queries", "counterfactuals_requested", "counterfactuals_found", "validity", "seconds"} <= set(gen)
    assert gen["queries"] == 12 and gen["counterfactuals_requested"] == 36
    assert {"name", "cv_accuracy_mean", "cv_f1_mean", "test_accuracy"} <= set(result["model"])
    assert result["config"]["seed"] == 1 and result["config"]["tau"] == 0.2
    continuous = [f for f in result["features"] if f["kind"] == "continuous"]
    assert all(f["tau"] == 0.2 and f["magnitude_mean"] is not None for f in continuous)
    assert all(f["tau"] is None and f["magnitude_mean"] is None for f in result["features"] if f["kind"] != "continuous")


def test_regional_json_format(tmp_path):
    result = run_cli(
        tmp_path, "regional", "--data", "builtin:synthetic-regional", "--where", "lighting=dark", "--neighbours", "3", *FAST
    )
    assert result["level"] == "regional" and len(result["members"]) == 4
    assert {"name", "mode", "p_orig", "p_cf", "delta"} <= set(result["mode_shift"][0])
    assert "pearson_r" in result and all("quadrant" in f for f in result["features"])
    assert result["criterion"] == {"feature": "lighting", "value": "dark"}


def test_sufficiency_and_repeats_add_their_scores(tmp_path):
    result = run_cli(
        tmp_path, "global", "--data", "builtin:synthetic-regional", "--sufficiency", "--repeats", "2", *FAST
    )
    records = {f["name"]: f for f in result["features"]}
    assert records["road_type"]["necessity"] is None and records["road_type"]["sufficiency"] is None  # immutable
    assert 0 <= records["speed"]["necessity"] <= 1 and 0 <= records["speed"]["sufficiency"] <= 1
    assert all(f["frequency_seed_sd"] >= 0 for f in result["features"])
    assert result["config"]["necessity_sufficiency"]["generator_runs"] == 8
    assert result["config"]["repeats"]["n"] == 2
    plain = run_cli(tmp_path, "global", "--data", "builtin:synthetic-regional", *FAST)
    assert "necessity" not in plain["features"][0] and "frequency_seed_sd" not in plain["features"][0]


def test_per_feature_tau_and_query_row(tmp_path):
    result = run_cli(
        tmp_path, "regional", "--data", "builtin:toy2d", "--query", "4", "--neighbours", "2",
        "--tau", "vehicle_speed=0.3", "--tau", "visibility=0.05", *FAST,
    )
    taus = {f["name"]: f["tau"] for f in result["features"]}
    assert taus == {"vehicle_speed": 0.3, "visibility": 0.05}
    assert result["members"][0] == 4


def test_parse_tau():
    assert parse_tau(None) == 0.1 and parse_tau(["0.5"]) == 0.5
    # Features not named keep the default 0.1, unless "*" says otherwise.
    assert parse_tau(["a=0.3,b=0.2"]) == {"*": 0.1, "a": 0.3, "b": 0.2}
    assert parse_tau(["a=0.3", "*=0.5"]) == {"*": 0.5, "a": 0.3}


def test_immutable_and_kind_apply_to_built_ins_too(tmp_path):
    result = run_cli(tmp_path, "global", "--data", "builtin:toy2d", "--immutable", "visibility", *FAST)
    visibility = next(f for f in result["features"] if f["name"] == "visibility")
    assert visibility["immutable"] and visibility["frequency_mean"] == 0


def test_constraints_shape_the_counterfactuals_and_the_json_records_them(tmp_path):
    result = run_cli(
        tmp_path, "global", "--data", "builtin:synthetic-regional", "--monotone", "speed=decrease",
        "--range", "noise_continuous=40:", "--allowed", "noise_categorical=A,B", "--order", "lighting=daylight<dark",
        "--seed", "0", *FAST,
    )
    assert result["config"]["constraints"] == {
        "speed": {"direction": "decrease"},
        "lighting": {"order": ["daylight", "dark"]},
        "noise_continuous": {"range": [40.0, None]},
        "noise_categorical": {"allowed": ["A", "B"]},
    }
    kinds = {f["name"]: f["kind"] for f in result["features"]}
    assert kinds["lighting"] == "ordinal"


@pytest.mark.parametrize(
    "args, message",
    [
        (["global", "--data", "builtin:nope"], "Unknown built-in dataset"),
        (["global", "--data", "missing.csv", "--target", "y", "--undesired", "1"], "File not found"),
        (["global", "--data", "x.csv"], "--target"),
        (["global", "--data", "builtin:toy2d", "--tau", "fast"], "--tau takes a number"),
        (["global", "--data", "builtin:toy2d", "--tau", "speed=0.1"], "unknown feature"),
        (["regional", "--data", "builtin:synthetic-regional", "--where", "lighting=purple"], "has no value"),
        (["global", "--data", "builtin:toy2d", "--model", "svm"], "invalid choice"),
        (["global", "--data", "builtin:toy2d", "--cv-folds", "1"], "at least 2 folds"),
        (["global", "--data", "builtin:toy2d", "--repeats", "0"], "--repeats must be at least 1"),
        (["global", "--data", "builtin:toy2d", "--monotone", "speed=increase"], "Unknown direction for feature: speed"),
        (["global", "--data", "builtin:toy2d", "--range", "visibility=0.9:0.1"], "range of 'visibility' is empty"),
        (["global", "--data", "builtin:toy2d", "--range", "visibility=low"], "must be LO:HI"),
        (["global", "--data", "builtin:synthetic-regional", "--allowed", "lighting=dusk"], "has no value 'dusk'"),
        (["global", "--data", "builtin:synthetic-regional", "--monotone", "lighting=increase"], "without an order"),
    ],
)
def test_bad_input_exits_non_zero_with_one_line(args, message):
    fast = FAST if "--cv-folds" not in args else [a for a in FAST if a not in ("--cv-folds", "2")]
    proc = subprocess.run(
        [sys.executable, "-m", "flex_core", *args, *fast], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_cache_dir_reuses_counterfactuals(tmp_path):
    args = ["global", "--data", "builtin:toy2d", "--cache-dir", str(tmp_path / "cache"), *FAST]
    first = run_cli(tmp_path, *args)
    chunks = list((tmp_path / "cache").rglob("chunk-*.npz"))
    assert len(chunks) == 1
    second = run_cli(tmp_path, *args, "--tau", "0.4")
    assert len(list((tmp_path / "cache").rglob("chunk-*.npz"))) == 1  # nothing regenerated
    assert [f["dice_frequency"] for f in first["features"]] == [f["dice_frequency"] for f in second["features"]]


@pytest.mark.slow
@pytest.mark.parametrize("adapter, file", [("loan", "loan_approval_dataset.csv"), ("accidents", "RTA_Dataset.csv")])
def test_cli_on_the_paper_data(tmp_path, adapter, file):
    from tests.conftest import paper_file

    path = paper_file(file)
    result = run_cli(tmp_path, "global", "--data", f"{adapter}:{path}", *FAST)
    assert result["generator"]["queries"] == 12 and result["data"]["rows_in_file"] > 4000
    where = "Weather_conditions=Raining" if adapter == "accidents" else "education=Graduate"
    regional = run_cli(tmp_path, "regional", "--data", f"{adapter}:{path}", "--where", where, *FAST)
    assert len(regional["members"]) == 5


@pytest.mark.parametrize("command", ["global", "regional"])
@pytest.mark.parametrize("name", ["toy2d", "synthetic-regional", "breast-cancer"])
def test_every_builtin_runs_both_levels(tmp_path, name, command):
    extra = ["--neighbours", "3"] if command == "regional" else []
    result = run_cli(tmp_path, command, "--data", f"builtin:{name}", *extra, *FAST)
    assert result["level"] == command
    assert result["generator"]["counterfactuals_valid"] > 0
    if command == "regional":
        assert len(result["members"]) == 4
