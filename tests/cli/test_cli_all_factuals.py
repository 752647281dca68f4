"""`flex global --all-factuals` (issue 39): every factual, generated and read a chunk at a time, from the CLI."""

from __future__ import annotations

import pytest

import flex_core as fc
from flex_core.cli import main
from tests.cli.test_cli import run_cli

ARGS = ["global", "--data", "builtin:synthetic-regional", "--n-cf", "3", "--cv-folds", "0", "--quiet"]


@pytest.mark.slow
def test_every_factual_read_in_chunks_gives_the_numbers_of_a_sample_of_all_of_them(tmp_path, monkeypatch):
    monkeypatch.setenv("FLEX_CHUNK_ROWS", "150")  # several chunks of the ~900 factuals
    every = run_cli(tmp_path, *ARGS, "--all-factuals")
    task = fc.data.load_builtin("synthetic-regional")
    n = len(fc.counterfactuals.factual_rows(task, fc.fit_model(task, model="rf", seed=0, cv_folds=0)))
    assert every["config"]["all_factuals"] is True and every["config"]["n_factuals"] == n == len(every["factuals"])
    assert every["local"]["frequencies"] == []  # no per-factual values: they grow with the factuals
    monkeypatch.delenv("FLEX_CHUNK_ROWS")
    sample = run_cli(tmp_path, *ARGS, "--n-factuals", str(n))  # a "sample" of every factual, held in memory
    assert sorted(sample["factuals"]) == sorted(every["factuals"])
    for a, b in zip(every["features"], sample["features"], strict=True):
        assert a["name"] == b["name"]
        assert a["frequency_mean"] == pytest.approx(b["frequency_mean"], abs=1e-12)
        assert a["frequency_ci"] == pytest.approx(b["frequency_ci"], abs=1e-12)
        assert a["necessary_frequency"] == pytest.approx(b["necessary_frequency"], abs=1e-12)


@pytest.mark.parametrize("extra", [["--n-factuals", "50"], ["--retrain", "2"], ["--shap"], ["--repeats", "2"]])
def test_options_that_need_a_sample_are_refused_with_all_factuals(extra, capsys):
    assert main([*ARGS, "--all-factuals", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --all-factuals explains every factual a chunk at a time")
    assert extra[0] in err[0]
