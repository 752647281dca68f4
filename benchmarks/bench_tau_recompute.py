"""How long a τ change costs when the counterfactuals are stored: FLEX recomputed, nothing regenerated.

Workload (issue 2): 200 factuals x 10 counterfactuals x 20 features (10 categorical,
10 continuous), the target is "well under 10 ms". Prints a Markdown table and writes
it to benchmarks/results/tau_recompute.md.

    python benchmarks/bench_tau_recompute.py
"""

from __future__ import annotations

import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc


def workload(n_queries=200, n_cf=10, n_cat=10, n_cont=10, seed=0):
    rng = np.random.default_rng(seed)
    n_rows = 1000
    frame = pd.DataFrame(
        {
            **{f"c{j}": rng.choice(list("abcdef"), n_rows) for j in range(n_cat)},
            **{f"x{j}": rng.normal(0, 1 + j, n_rows) for j in range(n_cont)},
            "y": rng.choice(["bad", "good"], n_rows),
        }
    )
    task = fc.make_task(frame, target="y", undesirable="bad", kinds={f"c{j}": "categorical" for j in range(n_cat)})
    rows = np.arange(n_queries)
    factuals = fc.counterfactuals.encode_rows(task, task.frame.loc[rows])
    pool = fc.counterfactuals.encode_rows(task, task.frame)
    cfs = np.repeat(factuals[:, None, :], n_cf, axis=1)
    change = rng.random(cfs.shape) < 0.3
    donors = pool[rng.integers(0, n_rows, size=cfs.shape[:2])]
    cfs = np.where(change, donors, cfs)
    valid = np.ones((n_queries, n_cf), bool)
    cfset = fc.counterfactuals.CounterfactualSet(tuple(task.feature_names), rows, factuals, cfs, valid, valid.copy(), "synthetic", 0.0)
    return task, cfset


def median_ms(fn, repeats=200):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), float(np.percentile(times, 90))


def main():
    task, cfset = workload()
    ranges = task.ranges()
    taus = iter(np.tile(np.linspace(0, 1, 50), 1000))
    rows = [
        ("FLEX global (F, std, μ, DiCE Alg. 2), one τ", lambda: fc.importance.flex_importance(cfset, task, tau=next(taus), ranges=ranges)),
        (
            "FLEX global, per-feature τ mapping",
            lambda: fc.importance.flex_importance(cfset, task, tau={f"x{j}": next(taus) for j in range(10)}, ranges=ranges),
        ),
        ("export to a feature table (to_frame)", lambda: fc.importance.flex_importance(cfset, task, tau=0.1, ranges=ranges).to_frame()),
    ]
    lines = [
        f"Workload: {cfset.n_queries} factuals x {cfset.n_cf} counterfactuals x {len(task.features)} features "
        f"(10 categorical, 10 continuous); median and 90th percentile of 200 runs.",
        f"Machine: {platform.processor() or platform.machine()}, {_cpu()}, Python {platform.python_version()}, numpy {np.__version__}.",
        "",
        "| operation | median ms | p90 ms |",
        "| --- | ---: | ---: |",
    ]
    for label, fn in rows:
        med, p90 = median_ms(fn)
        lines.append(f"| {label} | {med:.2f} | {p90:.2f} |")
    table = "\n".join(lines)
    out = Path(__file__).parent / "results" / "tau_recompute.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(table + "\n")
    print(table)


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} ({__import__('os').cpu_count()} cores)"
    except OSError:
        pass
    return f"{__import__('os').cpu_count()} cores"


if __name__ == "__main__":
    main()
