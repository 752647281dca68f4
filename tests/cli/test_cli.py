"""python -m flex_core: the documented JSON format, options, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from flex_core._contract import FORMAT_VERSION
from flex_core.cli import main
from flex_core.cli._main import parse_tau
from flex_core.counterfactuals import DEFAULT_GENERATOR
from tests.contract import assert_valid, strict_json

FAST = ["--n-factuals", "12", "--n-cf", "3", "--cv-folds", "2", "--quiet"]
FEATURE_KEYS = {
    "name", "kind", "immutable", "frequency_mean", "frequency_std", "magnitude_mean", "rank", "dice_frequency", "tau",
    "necessary_frequency", "frequency_ci", "rank_interval",
}


def run_cli(tmp_path, *args):
    """The JSON the CLI wrote, checked against the result schema (every CLI test checks its output)."""
    out = tmp_path / "out.json"
    code = main([*args, "--out", str(out)])
    assert code == 0
    return assert_valid(strict_json(out.read_text()))


def test_global_json_format(tmp_path):
    result = run_cli(tmp_path, "global", "--data", "builtin:synthetic-regional", "--tau", "0.2", "--seed", "1", *FAST)
    assert result["level"] == "global" and result["kind"] == "flex" and result["format_version"] == FORMAT_VERSION
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
    # Distinct counterfactuals are what FLEX averages over; the default generator returns no copies.
    assert {"distinct_mean", "queries_with_copies", "copies_merged"} <= set(gen)
    assert gen["queries_with_copies"] == 0
    assert gen["distinct_mean"] == pytest.approx(sum(result["counterfactuals_per_factual"]) / 12)
    assert {"name", "cv_accuracy_mean", "cv_f1_mean", "test_accuracy"} <= set(result["model"])
    assert result["config"]["seed"] == 1 and result["config"]["tau"] == 0.2
    continuous = [f for f in result["features"] if f["kind"] == "continuous"]
    assert all(f["tau"] == 0.2 and f["magnitude_mean"] is not None for f in continuous)
    assert all(f["tau"] is None and f["magnitude_mean"] is None for f in result["features"] if f["kind"] != "continuous")


def test_n_jobs_reaches_the_tree_generator_and_changes_no_number(tmp_path):
    """--n-jobs 2 reads the tree's chunks in two threads (it had been dropped for tree without a word): the same
    counterfactuals and F; a DiCE generator is refused it in one line."""
    args = ["global", "--data", "builtin:synthetic-regional", "--generator", "tree", *FAST]
    one = run_cli(tmp_path, *args)
    two = run_cli(tmp_path, *args, "--n-jobs", "2")
    assert [f["frequency_mean"] for f in two["features"]] == [f["frequency_mean"] for f in one["features"]]
    assert two["counterfactuals_per_factual"] == one["counterfactuals_per_factual"]
    assert main(["global", "--data", "builtin:toy2d", "--generator", "dice-random", "--n-jobs", "2", *FAST]) == 2


def test_regional_json_format(tmp_path):
    result = run_cli(
        tmp_path, "regional", "--data", "builtin:synthetic-regional", "--where", "lighting=dark", "--neighbours", "3", *FAST
    )
    assert result["level"] == "regional" and len(result["members"]) == 4
    assert {"name", "mode", "p_orig", "p_cf", "delta"} <= set(result["mode_shift"][0])
    assert "pearson_r" in result and all("quadrant" in f for f in result["features"])
    assert result["criterion"] == {"feature": "lighting", "value": "dark"}
    assert result["kind"] == "regional"


def test_the_cli_json_reads_back_as_the_result_it_describes(tmp_path):
    import flex_core as fc
    from flex_core.models._curves import ModelCurves

    for command, cls in (("global", fc.FlexResult), ("regional", fc.RegionalResult)):
        path = tmp_path / f"{command}.json"
        assert main([command, "--data", "builtin:synthetic-regional", *FAST, "--out", str(path)]) == 0
        written = json.loads(path.read_text())
        # Beside the result's own dict the CLI writes only `data` (and its options into `config`), and for `global`
        # the model's curves on its held-out rows, a result of their own.
        assert cls.from_json(path).to_dict() == {k: v for k, v in written.items() if k not in ("data", "model_quality")}
        assert ("model_quality" in written) == (command == "global")
    curves = json.loads((tmp_path / "global.json").read_text())["model_quality"]
    assert ModelCurves.from_dict(curves).to_dict(header=False) == curves


def test_sufficiency_and_repeats_add_their_scores(tmp_path):
    result = run_cli(
        tmp_path, "global", "--data", "builtin:synthetic-regional", "--sufficiency", "--repeats", "2", *FAST
    )
    records = {f["name"]: f for f in result["features"]}
    assert records["road_type"]["flip_alone"] is None and records["road_type"]["needed"] is None  # immutable
    assert 0 <= records["speed"]["flip_alone"] <= 1 and 0 <= records["speed"]["needed"] <= 1
    low, high = records["speed"]["flip_alone_interval"]
    assert low <= records["speed"]["flip_alone"] <= high
    assert 0 <= records["speed"]["necessity_ratio"] <= 1 and 0 <= records["speed"]["sufficiency_ratio"] <= 1
    assert all(f["frequency_seed_sd"] >= 0 for f in result["features"])
    assert result["config"]["necessity_sufficiency"]["generator_runs"] == 8
    assert result["config"]["repeats"]["n"] == 2
    plain = run_cli(tmp_path, "global", "--data", "builtin:synthetic-regional", *FAST)
    assert "flip_alone" not in plain["features"][0] and "frequency_seed_sd" not in plain["features"][0]


def test_retrain_adds_f_under_refits_and_says_which_factuals_were_left_out(tmp_path, capsys):
    result = run_cli(tmp_path, "global", "--data", "builtin:synthetic-regional", "--retrain", "2",
                     *[a for a in FAST if a != "--quiet"])
    block = result["retrain"]
    assert block["refits"] == 2 and block["seeds"] == [1, 2] and len(block["validity"]) == 2
    assert {f["name"] for f in block["features"]} == {f["name"] for f in result["features"]}
    assert "retrain: 2 refits, validity" in capsys.readouterr().err
    selection = result["config"]["factuals"]
    assert selection["out_of_bag"] and selection["candidates"] >= result["config"]["factual_pool"]


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


def one_line_error(args, capsys) -> str:
    """Run the CLI in-process on bad input; the one line it printed (exit status 2 checked)."""
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:"), err
    assert "Traceback" not in err
    return lines[0]


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


def test_constraints_between_features_from_options_and_a_file(tmp_path):
    rules = tmp_path / "rules.txt"
    rules.write_text("# no faster than 10 above the case's own speed\ncf.speed <= x.speed + 10\n\n"
                     "if cf.lighting != x.lighting then cf.speed <= x.speed  # comment\n")
    result = run_cli(tmp_path, "global", "--data", "builtin:synthetic-regional", "--constraint",
                     "cf.noise_continuous >= x.noise_continuous", "--constraints", str(rules), "--generator", "batch", *FAST)
    texts = ["cf.noise_continuous >= x.noise_continuous", "cf.speed <= x.speed + 10",
             "if cf.lighting != x.lighting then cf.speed <= x.speed"]
    assert result["config"]["constraints_between"] == texts
    report = result["generator"]["constraints_between"]["constraints"]
    assert [r["constraint"] for r in report] == texts
    assert sum(r["share_of_rejections"] for r in report) == pytest.approx(1.0)


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
        (["global", "--data", "builtin:toy2d", "--cv-folds", "1"], "from 0 to 10, not 1; got 1"),
        (["global", "--data", "builtin:toy2d", "--repeats", "0"], "--repeats (seeds a run is repeated with) must be a whole number from 1 to 20; got 0"),
        (["global", "--data", "builtin:toy2d", "--retrain", "21"], "--retrain (refits of the model for the retraining check; 0 skips it) must be a whole number from 0 to 20; got 21"),
        (["global", "--data", "builtin:toy2d", "--monotone", "speed=increase"], "Unknown direction for feature: speed"),
        (["global", "--data", "builtin:toy2d", "--range", "visibility=0.9:0.1"], "range of 'visibility' is empty"),
        (["global", "--data", "builtin:toy2d", "--range", "visibility=low"], "must be LO:HI"),
        (["global", "--data", "builtin:synthetic-regional", "--allowed", "lighting=dusk"], "has no value 'dusk'"),
        (["global", "--data", "builtin:synthetic-regional", "--monotone", "lighting=increase"], "without an order"),
        (["global", "--data", "builtin:toy2d", "--constraint", "cf.speed > 1"],
         "Constraint 'cf.speed > 1', at character 4: unknown feature 'speed'"),
        (["global", "--data", "builtin:toy2d", "--constraints", "no-such-rules.txt"],
         "Cannot read the constraints file 'no-such-rules.txt'"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, message, capsys):
    fast = FAST if "--cv-folds" not in args else [a for a in FAST if a not in ("--cv-folds", "2")]
    assert message in one_line_error([*args, *fast], capsys)


def test_bad_input_from_a_real_process_is_one_line_too():
    proc = subprocess.run(
        [sys.executable, "-m", "flex_core", "global", "--data", "builtin:nope", "--quiet"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["error: Unknown built-in dataset 'nope'; choose one of toy2d, synthetic-regional, breast-cancer."]


# -- a model trained elsewhere: --model-file ---------------------------------------------------------
@pytest.fixture(scope="module")
def accident_csv(accident_data, tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "accidents.csv"
    accident_data.to_csv(path, index=False)
    return path


def model_file_args(csv, model_file, *extra):
    return ["--data", str(csv), "--target", "severity", "--undesired", "severe", "--kind", "district=categorical",
            "--model-file", str(model_file), "--n-factuals", "12", "--n-cf", "3", "--quiet", *extra]


def test_model_file_explains_a_users_pipeline(tmp_path, accident_csv, user_model_file):
    result = run_cli(tmp_path, "global", *model_file_args(accident_csv, user_model_file, "--immutable", "zone"))
    frequency = {f["name"]: f["frequency_mean"] for f in result["features"]}
    assert frequency["zone"] == 0 and frequency["speed"] == max(frequency.values())
    assert result["model"]["name"] == "pipeline.skops" and result["model"]["undesired"] == ["severe"]
    assert result["model"]["test_accuracy"] > 0.9 and result["config"]["model"] == "file:pipeline.skops"
    region = run_cli(tmp_path, "regional", *model_file_args(accident_csv, user_model_file, "--where", "lighting=dark"))
    assert len(region["members"]) == 5


def test_model_file_bad_input(tmp_path, accident_csv, accident_data, user_model_file, capsys):
    import skops.io as sio

    hostile = tmp_path / "hostile.skops"
    sio.dump({"run": os.system}, hostile)
    assert "posix.system" in one_line_error(["global", *model_file_args(accident_csv, hostile)], capsys)
    lacking = tmp_path / "lacking.csv"
    accident_data.drop(columns=["lighting"]).to_csv(lacking, index=False)
    assert "lacks a column the model needs: lighting" in one_line_error(["global", *model_file_args(lacking, user_model_file)], capsys)
    other = tmp_path / "other.csv"
    accident_data.assign(severity=accident_data["severity"].replace({"severe": "fatal"})).to_csv(other, index=False)
    args = model_file_args(other, user_model_file)
    args[args.index("severe")] = "fatal"
    assert "The undesired value 'fatal' is not a class of the model; its classes are:" in one_line_error(["global", *args], capsys)
    assert "apply to a model trained here" in one_line_error(["global", *model_file_args(accident_csv, user_model_file, "--model", "lr")], capsys)


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
    # Accidents: the forest rejects few cases out of bag, so only 4 factuals in the rain remain (of 107 candidates);
    # normal weather has enough for a query and 4 neighbours.
    where = "Weather_conditions=Normal" if adapter == "accidents" else "education=Graduate"
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


def test_cf_out_writes_every_counterfactual_in_original_values_and_refine_is_a_setting(tmp_path):
    import pandas as pd

    import flex_core as fc

    path = tmp_path / "cfs.csv"
    result = run_cli(tmp_path, "global", "--data", "builtin:synthetic-regional", "--cf-out", str(path), *FAST)
    frame = pd.read_csv(path)
    task = fc.data.load_builtin("synthetic-regional")
    assert list(frame.columns) == ["factual", "cf", "valid", *task.feature_names]
    assert sorted(frame["factual"].unique()) == result["factuals"]
    assert frame["cf"].between(0, 2).all() and frame["valid"].dtype == bool
    assert frame.groupby("factual")["valid"].sum().tolist() == result["counterfactuals_per_factual"]
    for f in task.features:  # original labels and units
        if f.is_continuous:
            low, high = task.frame[f.name].min(), task.frame[f.name].max()
            assert frame[f.name].between(low, high).all()
        else:
            assert set(frame[f.name]) <= set(f.categories)
    assert result["config"]["refine"] == "minimal"  # the default generator refines
    none = run_cli(tmp_path, "global", "--data", "builtin:synthetic-regional", "--refine", "none", *FAST)
    assert none["config"]["refine"] == "none"
    speed = next(f for f in result["features"] if f["name"] == "speed")
    assert speed["magnitude_mean"] <= next(f for f in none["features"] if f["name"] == "speed")["magnitude_mean"]


def test_compare_generators_adds_each_generators_f_and_an_unknown_name_is_one_error(tmp_path):
    result = run_cli(tmp_path, "global", "--data", "builtin:synthetic-regional", "--compare-generators",
                     "batch-plausible", *FAST)
    sensitivity = result["generator_sensitivity"]
    assert sensitivity["generators"] == [DEFAULT_GENERATOR, "batch-plausible"]
    assert {"name", "frequency", "frequency_ci", "intervals_overlap"} <= set(sensitivity["features"][0])
    with pytest.raises(SystemExit) as exit_info:
        main(["global", "--data", "builtin:synthetic-regional", "--compare-generators", "dice-nonsense"])
    assert exit_info.value.code == 2


@pytest.mark.parametrize(("command", "expected"), [("global", 200), ("regional", 200), ("regions", 1000), ("groups", 1000)])
def test_each_command_samples_its_own_default_number_of_factuals(command, expected):
    """regions and groups search a larger pool; their default once leaked into global and regional (shared argparse actions)."""
    from flex_core.cli._main import parse_args

    extra = ["--by", "speed"] if command == "groups" else []
    assert parse_args([command, "--data", "builtin:synthetic-regional", *extra]).n_factuals == expected
    assert parse_args([command, "--data", "builtin:synthetic-regional", "--n-factuals", "50", *extra]).n_factuals == 50


def _report_payload(path) -> dict:
    page = path.read_text(encoding="utf-8")
    start = page.index('type="application/json">') + len('type="application/json">')
    return json.loads(page[start:page.index("</script>", start)])


def test_report_writes_the_interactive_file_beside_the_json(tmp_path, capsys):
    report = tmp_path / "report.html"
    out = run_cli(tmp_path, "regional", "--data", "builtin:synthetic-regional", *FAST, "--report", str(report))
    payload = _report_payload(report)
    ids = payload["rows"]["id"]
    assert len(payload["global"]) == out["config"]["n_factuals"] == 12
    region, = payload["regions"]
    assert [ids[p] for p in region["members"]] == out["members"]
    assert region["name"] == f"region around row {out['query']}"


@pytest.mark.parametrize(
    "args, message",
    [
        (["global", "--report", "{tmp}/no/such/folder/r.html"], "r.html: the folder"),
        (["groups", "--by", "lighting", "--report", "{tmp}/r.html"], "--report applies to global, regional and regions"),
    ],
)
def test_a_report_that_cannot_be_written_is_one_error_and_nothing_is_written(args, message, tmp_path, capsys):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert message in one_line_error([args[0], "--data", "builtin:synthetic-regional", *args[1:], *FAST], capsys)
    assert not (tmp_path / "r.html").exists()


def test_global_json_carries_the_held_out_curves_and_on_request_permutation_importance(tmp_path):
    result = run_cli(tmp_path, "global", "--data", "builtin:toy2d", "--permutation", *FAST)
    quality = result["model_quality"]
    assert quality["config"]["evaluated_on"] == "the held-out 20% test split" and quality["config"]["rows"] == 120
    assert 0.9 < quality["roc_auc"] <= 1 and quality["roc"]["thresholds"][0] is None
    assert len(quality["gain"]["share"]) == len(quality["roc"]["fpr"]) and len(quality["bins"]) == 10
    permutation = result["permutation"]
    assert [f["name"] for f in permutation["features"]] == ["vehicle_speed", "visibility"]
    assert permutation["config"] == {"scoring": "roc_auc", "n_repeats": 5, "seed": 0,
                                     "evaluated_on": "the held-out 20% test split"}
    assert len(permutation["rows"]) == 120 and len(permutation["per_repeat"][0]) == 5
    assert result["permutation_agreement"]["between"] == ["flex frequency_mean", "permutation mean drop of ROC AUC"]


def test_a_model_file_gets_no_curves_and_permutation_is_refused_before_any_generation(
        tmp_path, accident_csv, user_model_file, capsys):
    result = run_cli(tmp_path, "global", *model_file_args(accident_csv, user_model_file))
    assert "model_quality" not in result
    assert any(note.startswith("No model_quality: The model came without held-out rows") for note in result["notes"])
    line = one_line_error(["global", *model_file_args(accident_csv, user_model_file), "--permutation"], capsys)
    assert "without held-out rows" in line
