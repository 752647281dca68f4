"""Time caps (issue 38, item 5): every generator stops at a stated limit and names the cases it could not serve."""

from __future__ import annotations

import json

import numpy as np
import pytest

import flex_core as fc
from flex_core.counterfactuals import _batch, _tree


@pytest.fixture(scope="module")
def case():
    task = fc.data.load_builtin("synthetic-regional")
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), 120, seed=0)
    return task, model, task.frame.loc[rows, task.feature_names]


class _Clock:
    """time.perf_counter that moves 1 s each time it is read: a limit of L s lets about L reads pass."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("name, module, threads", [("tree", _tree, 1), ("tree", _tree, 2), ("batch", _batch, 1)])
def test_a_time_limit_serves_the_first_cases_the_same_and_names_the_rest(case, name, module, threads, monkeypatch):
    """Also with the tree's chunks read in two threads: the cases served are still the first ones."""
    task, model, queries = case
    whole = fc.counterfactuals.make_generator(name).generate(model, task, queries, n_cf=5, seed=0)
    monkeypatch.setattr(module, "TIME_CHUNK_QUERIES", 10)  # twelve chunks: the limit falls between two of them
    monkeypatch.setattr(module.time, "perf_counter", _Clock())
    capped = fc.counterfactuals.make_generator(name, time_limit=5, n_jobs=threads).generate(model, task, queries, n_cf=5,
                                                                                          seed=0)
    skipped = capped.config["skipped_rows"]
    assert 0 < len(skipped) < len(queries) and capped.config["queries_skipped"] == len(skipped)
    served = [r for r in queries.index if r not in set(skipped)]
    assert skipped == [int(r) for r in queries.index[len(served):]]  # the cases after the limit, in order
    np.testing.assert_array_equal(capped.subset(served).counterfactuals, whole.subset(served).counterfactuals)
    assert not capped.subset(skipped).found.any()
    assert any(f"{len(skipped)} of {len(queries)} cases skipped: the time limit of 5 s" in n for n in capped.coverage_notes)


def test_the_store_keeps_only_the_served_cases_and_a_later_run_serves_the_rest(case, monkeypatch):
    task, model, queries = case
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("tree", time_limit=2),
                                                   n_cf=5)
    monkeypatch.setattr(_tree.time, "perf_counter", _Clock())
    first = store.ensure(queries.index)
    skipped = first.config["skipped_rows"]
    assert skipped and store.missing(queries.index) == skipped
    monkeypatch.undo()  # the real clock: 2 s are enough for the rest
    second = store.ensure(queries.index)
    assert store.missing(queries.index) == []
    assert second.subset(skipped).found.any()


def test_the_cli_takes_a_time_limit_for_every_generator_and_names_the_skipped_cases(tmp_path, capsys):
    from flex_core.cli import main

    out = tmp_path / "global.json"
    assert main(["global", "--data", "builtin:toy2d", "--n-factuals", "20", "--cv-folds", "0", "--quiet", "--time-limit", "0",
                 "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["generator"]["time_limit"] == 0 and len(result["generator"]["skipped_rows"]) == 20
    assert result["generator"]["queries_without"] == 20
