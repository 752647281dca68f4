"""The retraining check's refits on a Dask cluster (issue 39): fitted by the workers, the same refits and the same JSON.

A real scheduler and two worker processes started apart from the client (the fixture of
tests/counterfactuals/test_dask_cluster.py). Each refit's bootstrap rows and seed are its own, so where it is fitted
changes nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import flex_core as fc
from benchmarks.dask_processes import REPO
from tests.counterfactuals.test_dask_cluster import _timeless, cluster  # noqa: F401 (the fixture)

pytest.importorskip("distributed")


@pytest.mark.slow
def test_refits_fitted_on_the_cluster_are_the_refits_of_one_process(cluster):  # noqa: F811
    from distributed import Client, get_task_stream

    from flex_core.importance._retrain import refit_models

    task = fc.data.load_builtin("synthetic-regional")
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
    here = refit_models(task, model, 2)
    done = []
    with Client(cluster[0], timeout="30s"), get_task_stream() as stream:
        there = refit_models(task, model, 2, cluster=True, progress=lambda i, k: done.append((i, k)))
    assert done == [(1, 2), (2, 2)]
    assert sum(task["key"].startswith("_refit") for task in stream.data) == 2  # fitted by the workers
    assert [m.seed for m in there] == [m.seed for m in here] == [1, 2]
    for a, b in zip(here, there):
        assert np.array_equal(a.train_index, b.train_index)
        assert np.array_equal(a.predict_proba(task.X), b.predict_proba(task.X))  # the same forest, to the bit


def _cli(*extra: str) -> dict:
    run = subprocess.run([sys.executable, "-m", "flex_core", "global", "--data", "builtin:synthetic-regional",
                          "--n-factuals", "40", "--n-cf", "3", "--cv-folds", "0", "--retrain", "2", "--quiet",
                          *extra], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return _timeless(json.loads(run.stdout))


@pytest.mark.slow
def test_the_clis_retraining_check_on_a_cluster_gives_the_one_process_json(cluster):  # noqa: F811
    on_cluster = _cli("--dask", cluster[0])
    assert on_cluster["retrain"]["refits"] == 2 and on_cluster == _cli()
