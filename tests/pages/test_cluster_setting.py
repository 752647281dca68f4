"""The operator's Dask cluster (``FLEX_DASK_SCHEDULER``, issue 39): pages generate there, with the same numbers."""

from __future__ import annotations

import pytest

from flex_core.counterfactuals import _spread, _tree
from tests.pages.conftest import chart, errors, start
from ui import cache, cluster
from ui.shelf import Shelf

pytestmark = pytest.mark.slow
distributed = pytest.importorskip("distributed")


def _frequencies(at):
    assert not at.exception and not at.error, (at.exception, at.error)
    trace = chart(at, "global_chart")["data"][0]
    return dict(zip(trace["customdata"], trace["x"]))


def _fresh(monkeypatch, folder):
    """Nothing kept from an earlier run: a new shelf and a new counterfactual folder."""
    monkeypatch.setattr(cache, "SHELF", Shelf(2**30, ttl=1800))
    monkeypatch.setenv("FLEX_CACHE_DIR", str(folder))


def test_the_global_page_generates_on_the_operators_cluster_with_the_same_numbers(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path / "here")
    here = _frequencies(start("toy2d", page="app_pages/global.py", n_factuals=20, n_cf=4))
    chunks = []
    real = _tree.on_cluster
    monkeypatch.setattr(_tree, "on_cluster", lambda fn, parts, *a, **k: chunks.append(len(parts)) or real(fn, parts, *a, **k))
    _fresh(monkeypatch, tmp_path / "there")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as lc:
        monkeypatch.setenv(cluster.SETTING, lc.scheduler_address)
        try:
            there = _frequencies(start("toy2d", page="app_pages/global.py", n_factuals=20, n_cf=4))
        finally:
            cluster.close_all()
    assert chunks, "nothing was sent to the cluster"
    assert there == here


def test_a_scheduler_that_does_not_answer_is_one_error_naming_the_setting(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    monkeypatch.setenv(cluster.SETTING, "tcp://127.0.0.1:9")
    monkeypatch.setattr(_spread, "CONNECT_TIMEOUT", 1)
    try:
        at = start("toy2d", page="app_pages/global.py", n_factuals=20, n_cf=4)
    finally:
        cluster.close_all()
    (message,) = errors(at)  # once, on the page (the sidebar no longer repeats it)
    assert "FLEX_DASK_SCHEDULER; unset it to generate here" in message


def test_the_servers_threads_read_the_tree_in_chunks_with_the_same_numbers(monkeypatch, tmp_path):
    """FLEX_THREADS=2 (the operator's): the Global page's chunks are read in two threads, its numbers unchanged."""
    _fresh(monkeypatch, tmp_path / "one")
    monkeypatch.setenv(cluster.THREADS, "1")
    one = _frequencies(start("toy2d", page="app_pages/global.py", n_factuals=20, n_cf=4))
    threaded = []
    real = _tree.in_threads
    monkeypatch.setattr(_tree, "in_threads", lambda fn, parts, workers, **k: threaded.append(workers) or real(fn, parts, workers, **k))
    _fresh(monkeypatch, tmp_path / "two")
    monkeypatch.setenv(cluster.THREADS, "2")
    two = _frequencies(start("toy2d", page="app_pages/global.py", n_factuals=20, n_cf=4))
    assert threaded and set(threaded) == {2}
    assert two == one


def test_a_bad_threads_setting_is_one_error_naming_it(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    monkeypatch.setenv(cluster.THREADS, "many")
    at = start("toy2d", page="app_pages/global.py", n_factuals=20, n_cf=4)
    (message,) = errors(at)
    assert "FLEX_THREADS must be a whole number from 1 to 64" in message
