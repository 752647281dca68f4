"""The CLI checks every argument and output path before any work (one ``error:`` line, exit status 2), refuses a run
over the memory budget before training, and writes its outputs atomically (issue 31, findings 2 and 10)."""

from __future__ import annotations

import pytest

from flex_core.cli import _main, main
from flex_core.limits import LIMITS

FAST = ["--n-factuals", "6", "--n-cf", "2", "--cv-folds", "0", "--quiet"]


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the CLI reads the data (everything else comes after that)."""
    monkeypatch.setattr(_main, "load_dataset", lambda *a, **k: pytest.fail("the data was read before the check"))


def _error(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in captured.err, captured.err
    assert captured.out == ""
    return lines[0]


@pytest.mark.parametrize("command, args, message", [
    ("global", ["--seed", "-1"], "--seed (random seed) must be a whole number from 0 to 4,294,967,295; got -1."),
    ("global", ["--n-cf", "100000000"], "--n-cf (counterfactuals per factual, N_cf) must be a whole number from 1 to 50; "
                                         "got 100,000,000."),
    ("global", ["--generator", "dice-random", "--time-limit", "-1"], "--time-limit (seconds after which a generator "
                                                                     "starts no new query or chunk) must be a number from 0 to 86,400; got -1."),
    ("global", ["--n-factuals", "0"], "--n-factuals (factuals sampled, N_F) must be a whole number from 1 to 5,000; got 0."),
    ("global", ["--repeats", "0"], "--repeats"),
    ("global", ["--n-jobs", "0"], "--n-jobs (cores; -1 means all of them) must be a whole number from -1 to 64, not 0; got 0."),
    ("global", ["--cv-folds", "1"], "--cv-folds"),
    ("global", ["--cv-rows", "5"], "--cv-rows"),
    ("regional", ["--neighbours", "100000"], "--neighbours (nearest neighbours of a region's query) must be a whole number"),
    ("regional", ["--lime-samples", "100000000"], "--lime-samples (LIME: perturbation samples per factual)"),
    ("regional", ["--query", "-3"], "--query is a 0-based row of the input file, so 0 or more; got -3."),
    ("regions", ["--permutations", "100000000"], "--permutations"),
    ("regions", ["--min-support", "1"], "--min-support"),
    ("regions", ["--top", "0"], "--top"),
    ("groups", ["--by", "x", "--bins", "1000"], "--bins (quantile bins of a number) must be a whole number from 2 to 20"),
])
def test_a_number_out_of_range_is_one_error_line_before_any_work(no_work, capsys, command, args, message):
    assert main([command, "--data", "builtin:toy2d", "--quiet", *args]) == 2
    assert _error(capsys).startswith(f"error: {message}")


def test_every_bounded_option_has_a_limit():
    assert set(_main.BOUNDED_OPTIONS.values()) <= set(LIMITS)


def test_reproduce_checks_its_seed_too(no_work, capsys, tmp_path):
    assert main(["reproduce", "--data-dir", str(tmp_path), "--out", str(tmp_path / "r"), "--seed", "-1", "--quiet"]) == 2
    assert _error(capsys).startswith("error: --seed (random seed)")


@pytest.mark.parametrize("where, message", [
    ("missing/out.json", "the folder {tmp}/missing does not exist; create it first."),
    (".", "is a folder; give a file name."),
])
@pytest.mark.parametrize("option", ["--out", "--cf-out"])
def test_an_output_path_that_cannot_be_written_is_refused_before_the_run(no_work, capsys, tmp_path, option, where, message):
    target = str(tmp_path / where) if where != "." else str(tmp_path)
    assert main(["global", "--data", "builtin:toy2d", *FAST, option, target]) == 2
    assert _error(capsys).endswith(message.format(tmp=tmp_path))


def test_a_run_over_the_memory_budget_is_refused_before_training(monkeypatch, capsys):
    monkeypatch.setattr(_main, "_explainer", lambda *a, **k: pytest.fail("the model was trained"))
    monkeypatch.setenv("FLEX_MEMORY_BUDGET_MB", "1")
    # 5,000 factuals x 20 candidates (2 x N_cf) x 8 bytes x (2*2+1 + 2 + 24 words): about 24 MB
    assert main(["global", "--data", "builtin:toy2d", "--n-factuals", "5000", "--quiet"]) == 2
    line = _error(capsys)
    assert line.startswith("error: Finding the ways out of 5,000 cases would need about ")
    assert line.endswith("more than the 1 MB a run may use (FLEX_MEMORY_BUDGET_MB): reduce the cases to explain (N_F), "
                         "the ways out per case (N_cf) or the generator's samples.")


def test_outputs_are_written_whole_and_nothing_else_is_left(tmp_path, capsys):
    out, cf_out = tmp_path / "out.json", tmp_path / "cf.csv"
    assert main(["global", "--data", "builtin:toy2d", *FAST, "--out", str(out), "--cf-out", str(cf_out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cf.csv", "out.json"]  # no temporary file left
    assert out.read_text().startswith("{") and cf_out.read_text().startswith("factual,cf,valid")


def test_a_run_that_fails_while_writing_leaves_no_output_behind(tmp_path, capsys, monkeypatch):
    """The JSON cannot be written (a full disk): neither it nor the --cf-out file is left, nor any temporary file."""
    from pathlib import Path

    def full(self, *args, **kwargs):
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    out, cf_out = tmp_path / "out.json", tmp_path / "cf.csv"
    assert main(["global", "--data", "builtin:toy2d", *FAST, "--out", str(out), "--cf-out", str(cf_out)]) == 2
    assert "No space left on device" in _error(capsys)
    assert list(tmp_path.iterdir()) == []


def test_an_existing_output_is_kept_when_the_run_fails(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out.json"
    out.write_text("the previous result\n")
    monkeypatch.setattr(_main, "_explainer", lambda *a, **k: (_ for _ in ()).throw(_main.ConfigError("no model.")))
    assert main(["global", "--data", "builtin:toy2d", *FAST, "--out", str(out)]) == 2
    assert out.read_text() == "the previous result\n" and list(tmp_path.iterdir()) == [out]


@pytest.mark.parametrize("args, message", [
    (["global", "--tau", "fast"], "--tau takes a number"),
    (["global", "--tau", "speed=0.1"], "τ given for an unknown feature speed."),
    (["global", "--tau", "-0.5"], "τ must be a number >= 0"),
    (["regional", "--query", "99999"], "--query 99999 is not a row of the data (it has 600 rows after reading"),
    (["regional", "--where", "lighting=dark"], "Unknown feature 'lighting'; the features are: vehicle_speed, visibility."),
])
def test_options_naming_the_data_are_checked_before_training(monkeypatch, capsys, args, message):
    monkeypatch.setattr(_main, "_explainer", lambda *a, **k: pytest.fail("the model was trained"))
    assert main([args[0], "--data", "builtin:toy2d", "--quiet", *args[1:]]) == 2
    assert message in _error(capsys)
