"""The numbers the pages, the CLI and the one-door refactor of issue 34 must not move: written once, before it.

``tests/data/before_after.json`` was made on commit 023d6a9 (before the app's computations went through
``FlexExplainer`` only), and made again when the tree generator became the default (its numbers change by
design; the one-door refactor had been checked against the first fixture), by::

    FLEX_DATA_DIR=/work/shared/data python -m tests.before_after tests/data/before_after.json

:func:`old_numbers` computes them as that commit's pages did (``ui/cache.py``'s own sampling,
``select_region`` and ``predict_proba``, ``app_pages/regional.py``'s ``random_query``); the test
(``tests/test_before_after.py``) computes them through the explainer's public methods and compares.

``tests/data/reproduce_quick.json`` holds ``flex reproduce --quick``'s numbers (:func:`reproduction_numbers`), as
commit cae8fe1 computed them before the reproduction went through the explainer's public methods only (made
again, the same way, when the tree generator became the default, and when the generators' tallies became per case:
``more_than_n_cf`` lists row ids, and the refined τ panels' notes count the copies the refinement merged)::

    python -m flex_core reproduce --quick --data-dir /work/shared/data --out OUT --quiet
    python -m tests.before_after tests/data/reproduce_quick.json OUT/results.json
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import flex_core as fc
from flex_core.importance._region_runs import select_region
from flex_core.importance._runs import random_query

#: Small runs: N_F factuals, k neighbours, a τ mapping with one feature's own τ.
N_FACTUALS, K, SEED = 20, 4, 0
#: (dataset spec, a categorical criterion, a rule, a continuous feature with its own τ)
CASES = {
    "builtin": ("builtin:synthetic-regional", None, None, None),
    "loan": ("loan:{data}/loan_approval_dataset.csv", "education=Graduate",
             [{"feature": "education", "op": "=", "value": "Graduate"}, {"feature": "cibil_score", "op": ">=", "value": 500}], "cibil_score"),
}


def dataset_spec(name: str) -> str:
    data = os.environ.get("FLEX_DATA_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    return CASES[name][0].format(data=data)


def explainer_for(name: str) -> fc.FlexExplainer:
    task = fc.load_dataset(dataset_spec(name))
    return fc.FlexExplainer.from_task(task, "rf", seed=SEED)


def _numbers(values) -> list:
    return [None if v != v else round(float(v), 10) for v in np.asarray(values, dtype=float).ravel()]


def _criteria(name: str, task) -> tuple:
    _, where, rule, feature = CASES[name]
    if where is None:  # the first categorical feature's first level
        first = task.categorical_names[0]
        where = f"{first}={task.feature(first).categories[0]}"
        rule = [{"feature": first, "op": "=", "value": task.feature(first).categories[0]}]
    if feature is None:
        feature = task.continuous_names[0]
    return where, rule, feature


def cli_json(name: str, level: str, *extra: str) -> dict:
    """The CLI's JSON, less what depends on the machine (timings, versions, paths)."""
    out = subprocess.run(
        [sys.executable, "-m", "flex_core", level, "--data", dataset_spec(name), "--n-factuals", str(N_FACTUALS),
         "--seed", str(SEED), "--quiet", *extra],
        check=True, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1],
    ).stdout
    return cli_numbers(json.loads(out))


#: Keys of the CLI's JSON that depend on the machine or where the data lives, not on the computation.
MACHINE_KEYS = {"versions", "seconds", "data", "dataset", "source", "path"}


def cli_numbers(out):
    """The CLI's JSON less :data:`MACHINE_KEYS`, numbers rounded to 10 places."""
    if isinstance(out, dict):
        return {k: cli_numbers(v) for k, v in out.items() if k not in MACHINE_KEYS}
    if isinstance(out, list):
        return [cli_numbers(v) for v in out]
    if isinstance(out, float):
        return round(out, 10)
    return out


def old_numbers(name: str) -> dict:
    """The numbers as commit 023d6a9's pages computed them (see the module's docstring)."""
    explainer = explainer_for(name)
    store, task = explainer.store, explainer.task
    where, rule, feature = _criteria(name, task)
    rows = fc.importance.sample_factuals(store.factual_rows, N_FACTUALS, seed=store.seed)  # cache.global_rows
    store.ensure(rows)
    result = explainer.explain_global(n_factuals=N_FACTUALS, tau=0.1)
    per_feature = explainer.explain_global(n_factuals=N_FACTUALS, tau={feature: 0.3, "*": 0.1})
    query = random_query(store, where=where, seed=SEED)  # app_pages/regional.py
    members, *_ = select_region(task, query, store.factual_rows, k=K, where=where, ranges=store.ranges,
                                   seed=store.seed)  # cache.region_members
    regional = explainer.explain_region(global_result=result, query=query, k=K, where=where, tau=0.1)
    plain = explainer.explain_region(global_result=result, query=random_query(store, seed=SEED), k=K, tau=0.1)
    ruled = explainer.explain_region(global_result=result, rule=rule, tau=0.1)
    sweep = fc.importance.tau_sweep(store.ensure(rows), task, ranges=store.ranges)  # cache.tau_sweep
    pool = store.factual_rows  # cache.pool_probabilities
    proba = store.model.predict_proba(task.frame.loc[pool, task.feature_names])[:, 1]
    candidates = fc.importance.rows_meeting(task, pool, where)
    return {
        "features": list(result.feature_names),
        "global_rows": [int(r) for r in rows],
        "global_frequency": _numbers(result.frequency_mean),
        "per_feature_tau": {"feature": feature, "frequency": _numbers(per_feature.frequency_mean)},
        "where": where,
        "query": int(query),
        "candidates": [int(r) for r in candidates],
        "members": [int(r) for r in members],
        "regional_members": [int(r) for r in regional.members],
        "regional_frequency": _numbers(regional.importance.frequency_mean),
        "regional_r": _numbers([regional.pearson_r]),
        "plain_query": int(plain.query),
        "plain_frequency": _numbers(plain.importance.frequency_mean),
        "rule": rule,
        "rule_members": [int(r) for r in ruled.members],
        "rule_frequency": _numbers(ruled.importance.frequency_mean),
        "tau_sweep": {str(c): _numbers(sweep[c]) for c in sweep.columns if sweep[c].dtype.kind in "fi"},
        "pool_probability_head": _numbers(proba[:50]),
        "pool_probability_sum": round(float(proba.sum()), 8),
        "cli_global": cli_json(name, "global"),
        "cli_regional": cli_json(name, "regional", "--neighbours", str(K)),
    }


#: What a run of ``flex reproduce`` may change from one run to the next: how long it took and where it ran.
RUN_ONLY = ("seconds", "generation_seconds", "refine_seconds", "versions", "machine")
PATHS = ("source", "dataset")  # "name:folder/file": a reproduction read from another folder gives the same numbers


def reproduction_numbers(results: dict) -> dict:
    """``results.json`` of ``flex reproduce --quick`` without its times, versions and machine, floats rounded as
    :func:`_numbers` rounds them, and the SHA-256 of that in canonical JSON (``tests/data/reproduce_quick.json``)."""

    def numbers(value):
        if isinstance(value, dict):
            return {k: where(v) if k in PATHS else numbers(v) for k, v in value.items() if k not in RUN_ONLY}
        if isinstance(value, list):
            return [numbers(v) for v in value]
        return round(value, 10) if isinstance(value, float) else value

    def where(source):  # "accidents:/any/folder/RTA_Dataset.csv": the file, not the folder it was read from
        name, _, path = source.partition(":")
        return f"{name}:{Path(path).name}" if path else Path(name).name

    kept = numbers(results)
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"))
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "results": kept}


if __name__ == "__main__":
    target = Path(sys.argv[1])
    if len(sys.argv) > 2:  # python -m tests.before_after OUT.json RESULTS.json: the reproduction's numbers
        numbers = reproduction_numbers(json.loads(Path(sys.argv[2]).read_text()))
        target.write_text(json.dumps(numbers, sort_keys=True, separators=(",", ":")) + "\n")
    else:
        target.write_text(json.dumps({name: old_numbers(name) for name in CASES}, separators=(",", ":")) + "\n")
    print(f"wrote {target} ({target.stat().st_size:,} bytes)")
