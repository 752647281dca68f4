"""The operator's FLEX_THREADS: the tree generator's threads on the server, never a part of any key."""

from __future__ import annotations

import os

import pytest

import flex_core as fc
from ui import cluster


def test_threads_default_to_the_cores_up_to_a_cap_and_reach_only_the_tree_generator(monkeypatch):
    monkeypatch.delenv(cluster.THREADS, raising=False)
    monkeypatch.delenv(cluster.SETTING, raising=False)
    expected = max(1, min(os.cpu_count() or 1, cluster.MAX_DEFAULT_THREADS))
    assert cluster.execution("tree") == {"n_jobs": expected}
    assert cluster.execution("batch") == {} and cluster.execution("dice-random") == {}
    monkeypatch.setenv(cluster.THREADS, "1")
    assert cluster.execution("tree") == {"n_jobs": 1}
    monkeypatch.setenv(cluster.THREADS, " 3 ")
    assert cluster.threads() == 3


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "65"])
def test_a_bad_threads_value_is_one_error_naming_the_setting(monkeypatch, value):
    monkeypatch.delenv(cluster.SETTING, raising=False)
    monkeypatch.setenv(cluster.THREADS, value)
    with pytest.raises(fc.ConfigError, match=r"FLEX_THREADS must be a whole number from 1 to 64 .*; got '"):
        cluster.execution("tree")
