"""Generating on a Dask cluster (issue 39): a real scheduler and two worker processes started apart from the client.

The CLI's ``--dask ADDRESS`` gives the JSON of one process, timings aside, and so does a run during which a worker
is killed: its chunks are run again on the other one. DiCE and the paper's reproduction run there too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import flex_core as fc
from benchmarks.dask_processes import DASK, REPO, kill, start_cluster, stop
from flex_core.counterfactuals._spread import chunk_bounds, in_threads

pytest.importorskip("distributed")
#: Keys of the CLI's JSON that say how long a run took: the only ones a cluster may change.
TIMES = {"seconds", "generation_seconds", "refine_seconds"}


def _timeless(value):
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(address, worker processes): a scheduler and two single-threaded workers on localhost."""
    if not DASK.exists():
        pytest.skip("the dask command is not installed beside this Python")
    address, processes = start_cluster(tmp_path_factory.mktemp("dask"), n_workers=2)
    try:
        yield address, processes[1:]
    finally:
        stop(processes)


def _cli(loan_path: Path, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "flex_core", "global", "--data", f"loan:{loan_path}", "--n-factuals", "200",
         "--cv-folds", "0", "--seed", "0", "--quiet", "--out", str(out), *extra],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _json(process: subprocess.Popen, out: Path) -> dict:
    _, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return _timeless(json.loads(out.read_text()))


@pytest.fixture(scope="module")
def one_process(loan_path, tmp_path_factory):
    out = tmp_path_factory.mktemp("one") / "global.json"
    return _json(_cli(loan_path, out), out)


@pytest.mark.slow
def test_the_clis_json_on_a_cluster_is_the_one_process_json(cluster, one_process, tmp_path, loan_path):
    address, _ = cluster
    out = tmp_path / "global.json"
    assert _json(_cli(loan_path, out, "--dask", address), out) == one_process


@pytest.mark.slow
def test_a_worker_killed_mid_run_changes_nothing(cluster, one_process, tmp_path, loan_path):
    from distributed import Client

    address, workers = cluster
    out = tmp_path / "global.json"
    run = _cli(loan_path, out, "--dask", address)
    with Client(address, timeout="30s") as client:
        deadline = time.monotonic() + 300
        while not any(client.processing().values()) and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
        assert run.poll() is None, "the run ended before a chunk reached a worker"
        kill(workers[0])  # the worker and its nanny, mid-run
        killed_while_running = run.poll() is None
        assert _json(run, out) == one_process
        assert killed_while_running
        assert len(client.scheduler_info()["workers"]) == 1


def test_chunks_cover_every_query_once_and_none_is_too_small():
    for n, threads, largest in ((0, 2, 5000), (1, 2, 5000), (200, 2, 5000), (200, 64, 5000), (10_001, 8, 1000)):
        bounds = chunk_bounds(n, threads, largest)
        covered = np.concatenate([np.arange(a, b) for a, b in bounds]) if bounds else np.array([], int)
        assert covered.tolist() == list(range(n))
        sizes = [b - a for a, b in bounds]
        assert all(s <= largest for s in sizes)
        assert all(s >= min(16, n) for s in sizes[:-1])
    assert chunk_bounds(200, 2, 5000) == [(a, min(a + 25, 200)) for a in range(0, 200, 25)]  # 4 chunks a thread


def test_threads_yield_in_the_parts_order_and_stop_at_the_first_part_not_started_by_the_deadline():
    """Later parts finish first yet come back in order; with one thread and a deadline that falls while part 0 runs,
    part 1 is never started and the run ends there (what is returned is always the first parts)."""
    def slow(part):
        time.sleep(0.05 * (3 - part))
        return part * 10

    assert list(in_threads(slow, range(4), 4)) == [0, 10, 20, 30]
    assert list(in_threads(slow, range(4), 2, deadline=time.perf_counter() - 1)) == []
    started = []

    def run(part):
        started.append(part)
        time.sleep(0.3)
        return part

    assert list(in_threads(run, range(3), 1, deadline=time.perf_counter() + 0.1)) == [0]
    assert started == [0]


class _Future:
    """A stand-in for a Dask future: its result, or the error it raises."""

    def __init__(self, value=None, error=None):
        self.value, self.error = value, error

    def done(self):
        return True

    def result(self, timeout=None):
        if self.error is not None:
            raise self.error
        return self.value

    def release(self):
        pass


class _Client:
    """A client whose first round loses part 1, cancelled for ``reason``; later rounds compute what they are sent.
    Each scatter (one per round: one shared value) starts a round."""

    def __init__(self, reason, status="running"):
        self.reason, self.status, self.rounds = reason, status, []

    def scatter(self, value, **kwargs):
        self.rounds.append([])
        return value

    def submit(self, fn, part, *, retries, pure, **shared):
        from distributed.client import FutureCancelledError

        self.rounds[-1].append(part)
        if len(self.rounds) == 1 and part == 1:
            return _Future(error=FutureCancelledError(("fn", part), self.reason))
        return _Future(value=fn(part, **shared))


def test_data_a_dying_worker_took_with_it_is_sent_again_and_only_the_parts_not_back_run_again(monkeypatch):
    """dask/distributed#3149: scattered data can go with a worker although it was broadcast (the scheduler cancels
    the parts that need it, giving no reason). The parts already back are kept; the rest run again with the data
    sent again, and the results come in the parts' order."""
    from flex_core.counterfactuals import _spread

    client = _Client(reason=None)
    monkeypatch.setattr(_spread, "dask_client", lambda: client)
    seen = []
    out = _spread.on_cluster(lambda part, k: 10 * part + k, [0, 1, 2], {"k": 3}, sizes=[5, 5, 5],
                             progress=lambda done, total: seen.append((done, total)))
    assert out == [3, 13, 23]
    assert client.rounds == [[0, 1, 2], [1, 2]]
    assert seen == [(5, 15), (10, 15), (15, 15)]


def test_a_lost_scheduler_is_one_error_and_nothing_is_sent_again(monkeypatch):
    from flex_core._errors import GenerationError
    from flex_core.counterfactuals import _spread

    for client in (_Client(reason="scheduler-connection-lost"), _Client(reason=None, status="connecting")):
        monkeypatch.setattr(_spread, "dask_client", lambda c=client: c)
        with pytest.raises(GenerationError, match=r"was lost after 5 of 15 queries of this call \(FutureCancelledError\)"):
            _spread.on_cluster(lambda part, k: part, [0, 1, 2], {"k": 3}, sizes=[5, 5, 5])
        assert client.rounds == [[0, 1, 2]]


def test_without_a_cluster_the_dask_backend_says_how_to_start_one():
    task = fc.data.load_builtin("toy2d")
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
    rows = fc.counterfactuals.factual_rows(task, model)[:3]
    with pytest.raises(fc.ConfigError, match="running dask.distributed Client"):
        fc.counterfactuals.make_generator("tree", backend="dask").generate(
            model, task, task.frame.loc[rows, task.feature_names], n_cf=2)


def test_the_cli_names_a_scheduler_that_does_not_answer(capsys, monkeypatch):
    from flex_core.cli import main
    from flex_core.counterfactuals import _spread

    monkeypatch.setattr(_spread, "CONNECT_TIMEOUT", 1)  # the client tries for 10 s; the message is the same after 1

    assert main(["global", "--data", "builtin:toy2d", "--n-factuals", "5", "--cv-folds", "0", "--quiet",
                 "--dask", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: No Dask scheduler answered at tcp://127.0.0.1:9 (--dask)")


@pytest.mark.slow
def test_the_reproduction_on_the_cluster_is_the_one_process_reproduction(cluster, tmp_path, loan_path, accidents_path):
    """``flex reproduce --dask``: DiCE random (the paper's generator, seeded per query) and the default generator on
    the workers, on both datasets; every number of results.json the same as the one-process reproduction's, timings
    aside. Those are kept in ``tests/data/reproduce_quick.json``, which ``tests/test_before_after.py`` holds the
    one-process run to, so the one-process run is not repeated here."""
    from distributed import Client, get_task_stream

    address, _ = cluster
    if loan_path.parent != accidents_path.parent:
        pytest.skip("the reproduction reads both datasets from one folder")

    from tests import before_after

    one_process = json.loads((REPO / "tests" / "data" / "reproduce_quick.json").read_text())
    with Client(address, timeout="30s") as client, get_task_stream(client) as stream:
        run = subprocess.run([sys.executable, "-m", "flex_core", "reproduce", "--quick", "--data-dir",
                              str(loan_path.parent), "--out", str(tmp_path / "cluster"), "--quiet", "--dask", address],
                             cwd=REPO, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    ran = {str(t["key"]).split("-")[0] for t in stream.data}
    assert {"_dice_part", "_read_part"} <= ran, ran  # DiCE's and the tree generator's chunks ran on the workers
    on_cluster = before_after.reproduction_numbers(json.loads((tmp_path / "cluster" / "results.json").read_text()))
    for key in one_process["results"]:  # the first part that differs, named
        assert on_cluster["results"][key] == one_process["results"][key], key
    assert on_cluster == one_process


def _cached(loan_path: Path, out: Path, cache: Path, *extra: str) -> subprocess.Popen:
    """The CLI with counterfactuals kept under ``cache`` in chunks of 25 factuals (eight chunks for 200)."""
    return subprocess.Popen(
        [sys.executable, "-m", "flex_core", "global", "--data", f"loan:{loan_path}", "--n-factuals", "200",
         "--cv-folds", "0", "--seed", "0", "--quiet", "--out", str(out), "--cache-dir", str(cache), *extra],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "FLEX_CHUNK_ROWS": "25"},
    )


@pytest.mark.slow
def test_a_lost_scheduler_is_one_error_and_a_rerun_resumes_from_the_chunks_written(tmp_path, loan_path, one_process):
    """The rerun resumes from the chunks kept, and its JSON is one call's: what the generator counted in eight
    chunks of 25 adds up to what it counts in one call of 200 (``_tally``; until 2026-11-29 it was the first chunk's)."""
    (tmp_path / "dask").mkdir()
    address, processes = start_cluster(tmp_path / "dask", n_workers=2)
    cache, out = tmp_path / "cache", tmp_path / "global.json"
    try:
        run = _cached(loan_path, out, cache, "--dask", address)
        deadline = time.monotonic() + 300
        while not list(cache.glob("*/chunk-*.npz")) and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.02)
        assert run.poll() is None, "the run ended before the scheduler could be killed"
        kill(processes[0])  # the scheduler, mid-run: the workers stay
        _, err = run.communicate(timeout=300)
    finally:
        stop(processes)
    lines = err.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: The Dask scheduler at ")
    assert "run again to resume" in lines[0], err
    kept = sorted(path.name for path in cache.glob("*/chunk-*.npz"))
    assert 1 <= len(kept) < 8
    assert _json(_cached(loan_path, out, cache), out) == one_process  # the rerun, in one process, resumes
    after = sorted(path.name for path in cache.glob("*/chunk-*.npz"))
    assert set(kept) < set(after) and len(after) == 8  # the chunks written before the loss were not made again
