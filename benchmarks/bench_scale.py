"""Peak memory and time at scale through the store in chunks (issue 39): one process against a Dask cluster, and
1,000,000 factuals, then the projection for 1,000,000 factuals on 8, 32 and 128 workers.

Each measurement runs in a fresh process, so its peak resident memory (``ru_maxrss``) is its own.

- ``one`` / ``cluster``: ``bench_parallel``'s 200,000-row synthetic table and its 100-tree forest (fitted on 20,000
  rows); ``--factuals`` seeded random factuals (all of them when the table has fewer); the tree generator, n_cf = 10,
  seed 0, a store in a temporary folder (chunks of 10,000 factuals), and global FLEX with the necessary changes read
  chunk by chunk (``FlexExplainer.explain_all``, ``local=False``). ``cluster``: a scheduler and
  ``--workers`` single-threaded worker processes started with the ``dask`` command
  (:mod:`benchmarks.dask_processes`); the scheduler's and each worker's peak are read from those processes, and the
  task stream gives each chunk's compute time. The two results must be the same numbers (a digest is compared).
- ``stand-in``: the memory of the store and the streamed analysis alone, at 100,000 and 1,000,000 factuals of a
  1,000,000-row table of the same recipe: a stand-in generator makes each factual's counterfactuals by moving one
  continuous feature each (no search), so the run measures storing and reading the chunks, not generation.
  ``in-memory``: the same 100,000 through ``store.ensure`` and FLEX of the whole set, for contrast.

The projection for F factuals on W workers: ``F c / W + K o / W + F n``, from the cluster run: ``c`` the compute
seconds per factual on a worker (the task stream's), ``o`` the scheduling and transfer seconds per task (generation
wall time x workers - compute, over the tasks; it includes sending the model once per store chunk), ``K`` the tasks
(as many per factual as measured), ``n`` the client's seconds per factual after generation (the necessary-change
search and the analysis run in the client, so ``n`` is not divided by W). It assumes workers as fast as this machine's
loaded cores, chunks of equal cost (no store chunk waits long for its slowest task), a network no slower than
loopback, and a scheduler that keeps up with W workers.

Writes benchmarks/results/scale.json and scale.md (``--report-only`` rewrites scale.md from scale.json) and prints it:
every figure as its range over ``--repeats`` full measurements (3) one after another, on a machine as idle as you can
get; the load average is recorded beside the numbers.

    python benchmarks/bench_scale.py [--factuals 100000] [--workers 2] [--big 1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import os
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


def _gb(kilobytes: float) -> float:
    return kilobytes / 1024**2


def _peak_gb() -> float:
    return _gb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _rss_gb() -> float:
    """This process's resident memory now (the table and the model loaded, nothing generated yet)."""
    import psutil

    return psutil.Process().memory_info().rss / 1024**3


def _digest(result) -> str:
    arrays = (result.frequency_mean, result.frequency_std, result.magnitude_mean, result.frequency_ci,
              result.necessary_frequency, result.counts)
    return hashlib.sha256(b"".join(np.nan_to_num(np.asarray(a, float), nan=-1.0).tobytes() for a in arrays)).hexdigest()[:16]


class StandIn:
    """Counterfactual k of a factual moves continuous feature k mod m (of m) by a tenth of its range: no search."""

    name = "stand-in"

    def generate(self, model, task, queries, *, n_cf, progress=None, **_):
        start = time.perf_counter()
        factuals = fc.counterfactuals.encode_rows(task, queries[task.feature_names])
        continuous = [j for j, f in enumerate(task.features) if f.is_continuous and not f.immutable]
        ranges = task.ranges()
        cfs = np.repeat(factuals[:, None, :], n_cf, axis=1)
        for k in range(n_cf):
            j = continuous[k % len(continuous)]
            cfs[:, k, j] += 0.1 * (k // len(continuous) + 1) * ranges[j]
        found = np.ones(cfs.shape[:2], bool)
        if progress is not None:
            progress(len(queries), len(queries))
        return fc.counterfactuals.CounterfactualSet(tuple(task.feature_names), queries.index.to_numpy().copy(), factuals,
                                                    cfs, found, found.copy(), self.name, time.perf_counter() - start)


def _tree_run(mode: str, n_factuals: int, address: str | None, folder: str) -> dict:
    task = synthetic_task()
    model = model_for(task)
    pool = fc.counterfactuals.factual_rows(task, model)
    # A seeded sample as sample_factuals takes (its limit, 5,000, is the CLI's): every factual when there are fewer.
    rows = np.sort(pool) if n_factuals >= len(pool) else np.sort(np.random.default_rng(0).choice(pool, n_factuals,
                                                                                                 replace=False))
    record: dict = {"mode": mode, "factuals": len(rows), "pool": len(pool), "rows": len(task.frame)}
    client = None if address is None else fc.counterfactuals.connect_cluster(address)
    explainer = fc.FlexExplainer.from_task(task, model, generator="tree", n_cf=N_CF, seed=0, cache_dir=folder,
                                           generator_settings=None if client is None else {"backend": "dask"})
    store = explainer.store
    record["rss_start_gb"] = _rss_gb()
    stream = None
    if client is not None:
        from distributed import get_task_stream

        stream = get_task_stream(client)
        stream.__enter__()
    start = time.perf_counter()
    chunks = store.chunks(rows)
    next(chunks)  # every chunk is generated and stored before the first is read back: generation, timed apart
    generated = time.perf_counter() - start
    del chunks  # read none back here
    result = explainer.explain_all(rows, local=False)
    record.update(seconds=time.perf_counter() - start, generation_seconds=generated, chunks=math.ceil(len(rows) / store.chunk_rows),
                  digest=_digest(result), client_peak_gb=_peak_gb(), necessary_mean=float(np.nanmean(np.asarray(result.necessary_frequency, float))))
    if client is not None and stream is not None:
        stream.__exit__(None, None, None)
        tasks = [t for t in stream.data if str(t.get("key", "")).startswith("_read_part")]
        computes = [sum(s["stop"] - s["start"] for s in t["startstops"] if s["action"] == "compute") for t in tasks]
        workers = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        scheduler = client.run_on_scheduler(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        record.update(tasks=len(tasks), compute_seconds=float(sum(computes)), task_seconds=[float(c) for c in computes],
                      worker_peak_gb=sorted(_gb(v) for v in workers.values()), scheduler_peak_gb=_gb(scheduler),
                      workers=len(workers))
        client.close()
    return record


def _stand_in_run(mode: str, n_factuals: int, folder: str) -> dict:
    task = synthetic_task(n=max(PROJECTED_FACTUALS, n_factuals))
    model = model_for(task)
    rows = np.arange(n_factuals)  # rows of the table taken as factuals: the arithmetic does not ask why
    fc.counterfactuals.register_generator("stand-in", StandIn, "bench_scale's stand-in: one feature moved, no search")
    explainer = fc.FlexExplainer.from_task(task, model, generator="stand-in", n_cf=N_CF, seed=0, refine="none",
                                           cache_dir=folder)
    store = explainer.store
    before = _peak_gb()
    rss_start = _rss_gb()
    start = time.perf_counter()
    if mode == "in-memory":
        result = fc.importance.flex_importance(store.ensure(rows), task, tau=0.1, ranges=store.ranges)
    else:
        result = explainer.explain_all(rows, local=False, necessary=False)
    return {"mode": mode, "factuals": n_factuals, "rows": len(task.frame), "seconds": time.perf_counter() - start,
            "client_peak_gb": _peak_gb(), "peak_before_gb": before, "rss_start_gb": rss_start, "chunks": math.ceil(n_factuals / store.chunk_rows),
            "f_mean": [float(v) for v in result.frequency_mean]}


def child(mode: str, n_factuals: int, address: str | None, out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="flex-scale-") as folder:
        if mode in ("one", "cluster"):
            record = _tree_run(mode, n_factuals, address, folder)
        else:
            record = _stand_in_run(mode, n_factuals, folder)
    out.write_text(json.dumps(record))


#: Each run's record as soon as it is made: a rerun after a failure reuses them instead of measuring again.
PARTIAL = RESULTS / "scale-partial.json"


def measure(mode: str, n_factuals: int, address: str | None = None, repeat: int = 0) -> dict:
    done = json.loads(PARTIAL.read_text()) if PARTIAL.exists() else {}
    key = f"{mode} {n_factuals} run {repeat + 1}"
    if key in done:
        print(f"{key}: measured before, reused from {PARTIAL.name}", file=sys.stderr, flush=True)
        return done[key]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        print(f"{key} ... (load {os.getloadavg()[0]:.2f})", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, __file__, "--child", mode, str(n_factuals), address or "-", str(out)], check=True)
        record = json.loads(out.read_text())
        record["load_after"] = [round(v, 2) for v in os.getloadavg()]
        print(f"  {({k: v for k, v in record.items() if k != 'task_seconds'})}", file=sys.stderr, flush=True)
    RESULTS.mkdir(exist_ok=True)
    PARTIAL.write_text(json.dumps({**done, key: record}))
    return record


def measure_all(args, repeat: int) -> dict:
    """One full measurement (the stand-in runs, one process, the cluster): a record as scale.json keeps it."""
    load_before = [round(v, 2) for v in os.getloadavg()]
    runs = {"stand-in small": measure("stand-in", args.factuals, repeat=repeat),
            "in-memory": measure("in-memory", args.factuals, repeat=repeat),
            "stand-in big": measure("stand-in", args.big, repeat=repeat),
            "one": measure("one", args.factuals, repeat=repeat)}
    with tempfile.TemporaryDirectory() as folder:
        address, processes = start_cluster(Path(folder), n_workers=args.workers)
        try:
            runs["cluster"] = measure("cluster", args.factuals, address, repeat=repeat)
        finally:
            stop(processes)
    return {"load_before": load_before, "runs": runs, "projection": projection(runs["one"], runs["cluster"]),
            "same_result": runs["one"]["digest"] == runs["cluster"]["digest"]}


def projection(one: dict, cluster: dict) -> dict:
    """The measured costs (see the module's docstring) and the projected minutes per worker count."""
    n, w = cluster["factuals"], cluster["workers"]
    c = cluster["compute_seconds"] / n
    o = max(0.0, cluster["generation_seconds"] * w - cluster["compute_seconds"]) / max(1, cluster["tasks"])
    client_share = (cluster["seconds"] - cluster["generation_seconds"]) / n  # necessary changes + analysis, per factual
    tasks_per_factual = cluster["tasks"] / n
    projected = {}
    for workers in PROJECTED_WORKERS:
        f = PROJECTED_FACTUALS
        projected[workers] = (f * c / workers + f * tasks_per_factual * o / workers + f * client_share) / 60
    return {"c": c, "o": o, "client_share": client_share, "tasks_per_factual": tasks_per_factual,
            "projected_minutes": projected, "one_per_factual": one["seconds"] / one["factuals"]}


def _span(values, form: str = "{:.2f}") -> str:
    """A figure over the runs: its range (low–high), or the one value when they agree at the shown precision."""
    low, high = form.format(min(values)), form.format(max(values))
    return low if low == high else f"{low}–{high}"


def report(record: dict) -> str:
    """benchmarks/results/scale.md from scale.json's record: every figure as its range over the runs."""
    repeats = record["repeats"]
    names = list(repeats[0]["runs"])
    runs = {name: [r["runs"][name] for r in repeats] for name in names}

    def row(label, name, extra=""):
        rs = runs[name]
        return (f"| {label} | {rs[0]['factuals']:,} | {rs[0]['rows']:,} | {_span([r['seconds'] for r in rs], '{:,.0f}')} | "
                f"{_span([r['rss_start_gb'] for r in rs])} | {_span([r['client_peak_gb'] for r in rs])} | {extra} |")

    clusters, ones = runs["cluster"], runs["one"]
    projections = [r["projection"] for r in repeats]
    tasks = sorted(t for c in clusters for t in c["task_seconds"])
    n_workers = clusters[0]["workers"]
    workers = ", ".join(_span([c["worker_peak_gb"][i] for c in clusters]) for i in range(n_workers))
    loads = [r["load_before"][0] for r in repeats]
    lines = [
        "# A million factuals: memory through the store in chunks, and a Dask cluster (issue 39)", "",
        f"`python benchmarks/bench_scale.py --repeats {len(repeats)}`, {record['date']}, {record['machine']} with "
        f"{record['cores']} cores, Python {record['python']}, flex_core {record['flex_core']}. Every figure is the "
        f"range over {len(repeats)} runs one after another (load average {_span(loads)} at the start of each run; "
        "each measurement's own below).", "",
        "| run | factuals | table rows | seconds | client GB at start | client peak GB | other processes' peak GB |",
        "|---|---:|---:|---:|---:|---:|---|",
        row("stand-in generator, streamed", "stand-in small"),
        row("stand-in generator, whole set in memory", "in-memory"),
        row("stand-in generator, streamed", "stand-in big"),
        row("tree, one process", "one"),
        row(f"tree, {n_workers} worker processes", "cluster",
            f"scheduler {_span([c['scheduler_peak_gb'] for c in clusters])}; workers {workers}"), "",
        "Load average (1, 5, 15 min) after each measurement, run by run: " + "; ".join(
            f"{name} " + ", ".join(f"{r['load_after'][0]:.2f}/{r['load_after'][1]:.2f}/{r['load_after'][2]:.2f}"
                                   for r in rs) for name, rs in runs.items()) + ".", "",
        "Same result one process and cluster (F, std, μ, intervals, necessary F, counts), in every run: "
        f"{'yes' if all(r['same_result'] for r in repeats) else 'NO'}; the same digest in every run: "
        f"{'yes' if len({r['runs']['one']['digest'] for r in repeats}) == 1 else 'NO'}.", "",
        f"Tree runs: generation {_span([o['generation_seconds'] for o in ones], '{:,.0f}')} s in one process, "
        f"{_span([c['generation_seconds'] for c in clusters], '{:,.0f}')} s on the cluster ({clusters[0]['tasks']} tasks; "
        f"compute per task {tasks[0]:.1f} to {tasks[-1]:.1f} s over the runs, median {tasks[len(tasks) // 2]:.1f} s); "
        "the client's share after generation (the necessary-change search and the analysis) "
        f"{_span([o['seconds'] - o['generation_seconds'] for o in ones], '{:.0f}')} s and "
        f"{_span([c['seconds'] - c['generation_seconds'] for c in clusters], '{:.0f}')} s.", "",
        f"Per factual: compute {_span([p['c'] * 1e3 for p in projections])} ms on a worker (one process: "
        f"{_span([p['one_per_factual'] * 1e3 for p in projections])} ms in all), client "
        f"{_span([p['client_share'] * 1e3 for p in projections])} ms; per task "
        f"{_span([p['o'] for p in projections])} s of scheduling and transfer. Projected for {PROJECTED_FACTUALS:,} "
        "factuals (`F c / W + K o / W + F n`, assumptions in the module's docstring): "
        + ", ".join(f"{w} workers {_span([p['projected_minutes'][w] for p in projections], '{:,.0f}')} min"
                    for w in projections[0]["projected_minutes"]) + ".",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factuals", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--big", type=int, default=PROJECTED_FACTUALS)
    parser.add_argument("--repeats", type=int, default=3, help="full measurements one after another (figures: their range)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--report-only", action="store_true", help="write scale.md from scale.json, measure nothing")
    args = parser.parse_args(argv)
    if args.report_only:
        text = report(json.loads((RESULTS / "scale.json").read_text()))
        (RESULTS / "scale.md").write_text(text)
        print(text)
        return 0
    if args.child:
        mode, n, address, out = args.child
        child(mode, int(n), None if address == "-" else address, Path(out))
        return 0
    started = time.perf_counter()
    repeats = [measure_all(args, repeat) for repeat in range(args.repeats)]
    record = {"date": str(datetime.date.today()), "machine": platform.processor() or platform.machine(),
              "cores": os.cpu_count(), "python": platform.python_version(), "flex_core": fc.__version__,
              "seconds": time.perf_counter() - started, "repeats": repeats}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scale.json").write_text(json.dumps(record, indent=1) + "\n")
    PARTIAL.unlink(missing_ok=True)
    text = report(record)
    (RESULTS / "scale.md").write_text(text)
    print(text)
    return 0 if all(r["same_result"] for r in repeats) else 1


if __name__ == "__main__":
    raise SystemExit(main())
