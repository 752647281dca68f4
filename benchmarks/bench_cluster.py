"""The tree generator in one process against a Dask scheduler with worker processes (issue 39), and a projection.

Data and model: ``bench_parallel``'s 200,000-row synthetic table and its 100-tree forest (fitted on 20,000 rows).
Factuals: ``--factuals`` seeded random rows the model predicts undesirable; n_cf = 10, seed 0.

Each measurement runs in a fresh client process, so its peak resident memory is its own:
- ``one``: ``TreeGenerator()`` in that process;
- ``cluster``: a scheduler and ``--workers`` single-threaded worker processes started with the ``dask`` command
  (:mod:`benchmarks.dask_processes`), the client connected with ``connect_cluster`` and
  ``TreeGenerator(backend="dask")``, called twice: the first call pays for the workers' imports, the model's
  transfer and each worker's tree form; the second is what every later call of a session costs. Each worker's
  peak memory is read from the worker itself, and the task stream gives each chunk's compute time.
The two sets must be the same arrays (a digest is compared).

From the cluster's warm call: ``c`` = compute seconds per factual (the chunks' summed compute time / factuals),
``o`` = the scheduling and transfer seconds per chunk (wall x workers - summed compute, / chunks), ``m`` = the
client's merge seconds per factual (wall minus the last chunk's end), ``s`` = the cold call's extra seconds. The
projection for F factuals on W workers is ``s + (F c + K o) / W + F m``, K = the chunks the tree generator makes (:func:`chunk_count`). It
assumes workers as fast as this machine's cores, chunks of equal cost, a network no slower than loopback for
results of this size, and a client that keeps every set in memory (``bench_scale.py`` measures the store in chunks).

Writes benchmarks/results/cluster.md and prints it.

    python benchmarks/bench_cluster.py [--factuals 100000] [--workers 2]
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc
from benchmarks.bench_parallel import model_for, synthetic_task
from benchmarks.dask_processes import start_cluster, stop

RESULTS = Path(__file__).resolve().parent / "results"
N_CF = 10
PROJECTED_FACTUALS = 1_000_000
PROJECTED_WORKERS = (8, 32, 128)
#: How the tree generator cuts factuals into chunks on a cluster (docs/generators.md): about four per worker
#: thread, none under 16 factuals nor over 500 (its chunk of factuals read at once).
CHUNKS_PER_THREAD, MIN_CHUNK, MAX_CHUNK = 4, 16, 500


def chunk_count(n_factuals: int, threads: int) -> int:
    size = min(MAX_CHUNK, max(MIN_CHUNK, math.ceil(n_factuals / (CHUNKS_PER_THREAD * threads))))
    return math.ceil(n_factuals / size)


def _digest(cfset) -> str:
    return hashlib.sha256(np.nan_to_num(cfset.counterfactuals, nan=-1.0).tobytes()).hexdigest()[:16]


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def child(mode: str, n_factuals: int, address: str | None, out: Path) -> None:
    """One measurement in this fresh process (see the module's docstring)."""
    task = synthetic_task()
    model = model_for(task)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), n_factuals, seed=0)
    queries = task.frame.loc[rows, task.feature_names]
    record: dict = {"mode": mode, "factuals": len(rows)}
    if mode == "one":
        start = time.perf_counter()
        cfset = fc.counterfactuals.make_generator("tree").generate(model, task, queries, n_cf=N_CF, seed=0)
        record.update(seconds=time.perf_counter() - start, digest=_digest(cfset), client_peak_gb=_peak_gb())
    else:
        assert address is not None
        client = fc.counterfactuals.connect_cluster(address)
        generator = fc.counterfactuals.make_generator("tree", backend="dask")
        start = time.perf_counter()
        generator.generate(model, task, queries, n_cf=N_CF, seed=0)
        cold = time.perf_counter() - start
        from distributed import get_task_stream

        with get_task_stream(client) as stream:
            start = time.perf_counter()
            cfset = generator.generate(model, task, queries, n_cf=N_CF, seed=0)
            warm = time.perf_counter() - start
            began = time.time() - warm
        tasks = [t for t in stream.data if str(t.get("key", "")).startswith("_read_part")]
        computes = [sum(s["stop"] - s["start"] for s in t["startstops"] if s["action"] == "compute") for t in tasks]
        last_end = max(s["stop"] for t in tasks for s in t["startstops"])
        workers = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2)
        record.update(seconds=cold, warm_seconds=warm, digest=_digest(cfset), client_peak_gb=_peak_gb(),
                      worker_peak_gb=max(workers.values()), workers=len(workers), chunks=len(tasks),
                      compute_seconds=float(sum(computes)), merge_seconds=max(0.0, began + warm - last_end))
        client.close()
    out.write_text(json.dumps(record))


def measure(mode: str, n_factuals: int, address: str | None = None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        print(f"{mode} x {n_factuals:,} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, __file__, "--child", mode, str(n_factuals), address or "-", str(out)], check=True)
        record = json.loads(out.read_text())
        print(f"  {record}", file=sys.stderr, flush=True)
        return record


def projection(cluster: dict, n_workers: int) -> dict:
    """The per-factual and per-chunk costs of the warm call, and the projected seconds per worker count."""
    n = cluster["factuals"]
    c = cluster["compute_seconds"] / n
    o = max(0.0, (cluster["warm_seconds"] - cluster["merge_seconds"]) * n_workers - cluster["compute_seconds"]) / max(1, cluster["chunks"])
    m = cluster["merge_seconds"] / n
    s = max(0.0, cluster["seconds"] - cluster["warm_seconds"])
    projected = {}
    for w in PROJECTED_WORKERS:
        k = chunk_count(PROJECTED_FACTUALS, w)
        projected[w] = s + (PROJECTED_FACTUALS * c + k * o) / w + PROJECTED_FACTUALS * m
    return {"c": c, "o": o, "m": m, "s": s, "projected": projected}


def report(one: dict, cluster: dict, n_workers: int, seconds: float) -> str:
    p = projection(cluster, n_workers)
    same = "yes" if one["digest"] == cluster["digest"] else "NO"
    lines = [
        "# The tree generator on a Dask cluster (issue 39)", "",
        f"`python benchmarks/bench_cluster.py --factuals {one['factuals']} --workers {n_workers}` ({seconds:.0f} s), "
        f"{datetime.date.today()}, {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"flex_core {fc.__version__}. One run: a published figure needs three idle runs.", "",
        "| run | factuals | seconds | warm seconds | client peak GB | worker peak GB | chunks |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| one process | {one['factuals']:,} | {one['seconds']:.1f} | | {one['client_peak_gb']:.2f} | | |",
        f"| {n_workers} worker processes | {cluster['factuals']:,} | {cluster['seconds']:.1f} | {cluster['warm_seconds']:.1f} | "
        f"{cluster['client_peak_gb']:.2f} | {cluster['worker_peak_gb']:.2f} | {cluster['chunks']} |", "",
        f"Same counterfactuals: {same}. Per factual: compute {p['c'] * 1e3:.2f} ms, client merge {p['m'] * 1e3:.3f} ms; "
        f"per chunk: {p['o'] * 1e3:.0f} ms of scheduling and transfer; a cold call adds {p['s']:.1f} s.", "",
        f"Projected for {PROJECTED_FACTUALS:,} factuals (`s + (F c + K o) / W + F m`; the module's docstring says what it assumes): "
        + ", ".join(f"{w} workers {math.ceil(t / 60):,} min" for w, t in p["projected"].items()) + ".",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factuals", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        mode, n, address, out = args.child
        child(mode, int(n), None if address == "-" else address, Path(out))
        return 0
    started = time.perf_counter()
    one = measure("one", args.factuals)
    with tempfile.TemporaryDirectory() as folder:
        address, processes = start_cluster(Path(folder), n_workers=args.workers)
        try:
            cluster = measure("cluster", args.factuals, address)
        finally:
            stop(processes)
    text = report(one, cluster, args.workers, time.perf_counter() - started)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cluster.md").write_text(text)
    print(text)
    return 0 if one["digest"] == cluster["digest"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
