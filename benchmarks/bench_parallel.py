"""The batch generator on many factuals: one job vs two (loky), a Dask LocalCluster, and scaling with memory.

Data: a 200,000-row synthetic table (the synthetic-regional recipe, seed 0: speed and
lighting on rural roads drive severity, plus noise features), a 100-tree random forest
fitted on a 20,000-row sample of it (``build_pipeline``; fitting on all 200,000 rows
only makes the model slower to fit, not the search different). Factuals: seeded random
rows the model predicts undesirable; n_cf = 10, seed 0.

Parts (each measured in its own fresh process, so the peak resident memory ``ru_maxrss``
is that run's own):
1. 20,000 factuals with ``n_jobs=1`` and ``n_jobs=2`` (loky), and through a
   ``dask.distributed.LocalCluster`` (2 worker processes, 1 thread each); the three
   results must be identical arrays.
2. Scaling: 2,000 / 20,000 / 100,000 factuals with ``n_jobs=1``; seconds per 1,000
   factuals should stay flat, peak memory under 3 GB.

Writes benchmarks/results/parallel.md.

    python benchmarks/bench_parallel.py [--sizes 2000,20000,100000] [--parallel-size 20000]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc
from flex_core.models import FittedModel, build_pipeline

RESULTS = Path(__file__).resolve().parent / "results"
N_ROWS, TRAIN_ROWS, N_CF = 200_000, 20_000, 10


def synthetic_task(n: int = N_ROWS, seed: int = 0) -> fc.TaskSpec:
    rng = np.random.default_rng(seed)
    speed = rng.uniform(20, 120, n).round(0)
    road = rng.choice(["urban", "rural", "motorway"], n)
    lighting = rng.choice(["daylight", "dark"], n)
    severe = (speed > 80) | ((road == "rural") & (lighting == "dark"))
    severe ^= rng.random(n) < 0.03
    frame = pd.DataFrame(
        {
            "speed": speed,
            "road_type": road,
            "lighting": lighting,
            "noise_continuous": rng.normal(50, 15, n).round(2),
            "noise_categorical": rng.choice(["A", "B", "C", "D"], n),
            "driver_age_band": rng.choice(["18-30", "31-50", "over 50"], n),
            "severity": np.where(severe, "Severe", "Slight"),
        }
    )
    return fc.make_task(frame, target="severity", undesirable="Severe", immutable=("road_type", "driver_age_band"), name="synthetic-200k")


def model_for(task: fc.TaskSpec) -> FittedModel:
    train = np.sort(np.random.default_rng(0).choice(task.frame.index.to_numpy(), TRAIN_ROWS, replace=False))
    pipeline = build_pipeline(task, model="rf", seed=0).fit(task.X.loc[train], task.y[train])
    return FittedModel("rf", "onehot", 0, pipeline, train, np.empty(0, int))


def child(mode: str, n_factuals: int, out: Path, calls: int = 2) -> None:
    """One measured run in this process: writes seconds, peak memory and a digest of the counterfactuals."""
    task = synthetic_task()
    model = model_for(task)
    pool = fc.counterfactuals.factual_rows(task, model)
    rows = fc.importance.sample_factuals(pool, n_factuals, seed=0)
    queries = task.frame.loc[rows, task.feature_names]
    cluster = client = None
    if mode == "dask":
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        generator = fc.counterfactuals.BatchGenerator(backend="dask", n_jobs=-1)
    else:
        generator = fc.counterfactuals.BatchGenerator(n_jobs=int(mode))
    # Twice: the first call starts the worker processes (about 3 s of imports and unpickling here);
    # the second finds them running, as every later call of a session does (joblib keeps loky's executor).
    seconds = []
    for _ in range(calls):
        start = time.perf_counter()
        cfset = generator.generate(model, task, queries, n_cf=N_CF, seed=0)
        seconds.append(time.perf_counter() - start)
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()
    cfs = np.nan_to_num(cfset.counterfactuals, nan=-1.0)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out.write_text(
        json.dumps(
            {
                "mode": mode,
                "factuals": n_factuals,
                "seconds": seconds[0],
                "warm_seconds": seconds[-1],
                "peak_gb": peak_kb / 1024**2,
                "digest": float(np.sum(cfs * np.arange(1, cfs.shape[-1] + 1))),
                "hash": __import__("hashlib").sha256(cfs.tobytes()).hexdigest()[:16],
                "model_rows": cfset.model_rows,
                "valid": int(cfset.valid.sum()),
                "found": int(cfset.found.sum()),
                "complete": int((cfset.counts == N_CF).sum()),
            }
        )
    )


def measure(mode: str, n_factuals: int, calls: int = 2) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        print(f"{mode} x {n_factuals:,} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, __file__, "--child", mode, str(n_factuals), str(out), str(calls)], check=True)
        result = json.loads(out.read_text())
        print(f"  {result}", file=sys.stderr, flush=True)
        return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000,100000")
    parser.add_argument("--parallel-size", type=int, default=20_000)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]), Path(args.child[2]), int(args.child[3]))
        return 0
    started = time.perf_counter()
    n = args.parallel_size
    # Side by side and interleaved, so load from other users of the machine hits both alike.
    one, two, dask = measure("1", n), measure("2", n), measure("dask", n)
    identical = one["hash"] == two["hash"] == dask["hash"]
    scaling = [measure("1", int(s), calls=1) for s in args.sizes.split(",")]
    lines = [
        "# Batch generator: parallel runs and scaling",
        "",
        f"Run {datetime.date.today().isoformat()}; total {time.perf_counter() - started:.0f} s. Synthetic table of "
        f"{N_ROWS:,} rows, random forest (100 trees) fitted on {TRAIN_ROWS:,} of them, n_cf = {N_CF}, seed 0. "
        "Every run in a fresh process that calls the generator twice on the same factuals (peak memory = that "
        "process's maximum resident set; the loky workers and Dask workers are separate processes not included). "
        f"Load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores when the run ended.",
        "",
        f"## {n:,} factuals: one job, two jobs, Dask",
        "",
        "| run | first call s | × vs one job | second call s (workers running) | × vs one job | peak GB (parent) "
        "| model rows | valid CFs | queries complete | result hash |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for label, r in (("n_jobs=1", one), ("n_jobs=2 (loky)", two), ("Dask LocalCluster, 2 workers", dask)):
        lines.append(
            f"| {label} | {r['seconds']:.1f} | {one['seconds'] / r['seconds']:.2f} | {r['warm_seconds']:.1f} "
            f"| {one['warm_seconds'] / r['warm_seconds']:.2f} | {r['peak_gb']:.2f} | {r['model_rows']:,} "
            f"| {r['valid']:,} | {r['complete']:,} | {r['hash']} |"
        )
    cold, warm = one["seconds"] / two["seconds"], one["warm_seconds"] / two["warm_seconds"]
    lines += [
        "",
        f"Identical output across the three: {'yes' if identical else 'NO'}. "
        f"Target n_jobs=2 ≥ 1.6× one job: first call {cold:.2f}× {'✓' if cold >= 1.6 else '✗'} (it starts the "
        f"worker processes), second call {warm:.2f}× {'✓' if warm >= 1.6 else '✗'}.",
        "",
        "## Scaling (n_jobs=1)",
        "",
        "| factuals | seconds | seconds per 1,000 factuals | peak GB | model rows |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in scaling:
        lines.append(
            f"| {r['factuals']:,} | {r['seconds']:.1f} | {1000 * r['seconds'] / r['factuals']:.2f} | {r['peak_gb']:.2f} | {r['model_rows']:,} |"
        )
    peak = max(r["peak_gb"] for r in scaling)
    per_k = [r["seconds"] / r["factuals"] for r in scaling]
    lines += ["", f"Peak memory {peak:.2f} GB (target < 3 GB {'✓' if peak < 3 else '✗'}); seconds per factual from "
              f"{min(per_k) * 1000:.2f} to {max(per_k) * 1000:.2f} ms per 1,000 → ratio {max(per_k) / min(per_k):.2f} "
              "(1.00 = perfectly linear)."]
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "parallel.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
