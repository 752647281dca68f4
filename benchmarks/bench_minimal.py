"""What minimal counterfactuals change: distinct counts, copies, μ and F before and after refinement.

Workload per paper dataset: a random forest (``fit_model(task, model="rf", seed=0, cv_folds=2)``),
200 factuals (``sample_factuals(..., 200, seed=0)``), n_cf = 10, seed 0. Rows:

- ``batch, refine=none``: the search with passengers reverted, values as drawn;
- ``batch`` (the default): distinct minimal counterfactuals;
- ``dice-random, refine=none`` (the paper's setting) and the same counterfactuals refined afterwards.

For each: distinct valid counterfactuals per factual (mean, median), factuals that had copies
merged, and per feature μ_j and F_j at τ = 0.1, 0.5 and 0.9. Writes
benchmarks/results/minimal.md and prints it.

    python benchmarks/bench_minimal.py [--datasets loan,accidents]
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc
from benchmarks.bench_generators import load, machine

RESULTS = Path(__file__).resolve().parent / "results"
N_FACTUALS, N_CF = 200, 10
TAUS = (0.1, 0.5, 0.9)


def measure(task, model, rows, generator: str, refine: str, *, refine_after: bool = False) -> dict:
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator(generator), n_cf=N_CF, seed=0,
                                   refine=refine)
    start = time.perf_counter()
    cfset = store.ensure(rows)
    if refine_after:
        cfset = fc.counterfactuals.refine_counterfactuals(cfset, task, model, ranges=store.ranges)
    seconds = time.perf_counter() - start
    results = {tau: fc.importance.flex_importance(cfset, task, tau=tau, ranges=store.ranges) for tau in TAUS}
    counts = cfset.counts
    return {
        "seconds": seconds,
        "distinct_mean": float(counts.mean()),
        "distinct_median": float(np.median(counts)),
        "queries_with_copies": int(cfset.coverage()["queries_with_copies"]),
        "copies_merged": int(cfset.coverage()["copies_merged"]),
        "validity": float(cfset.coverage()["validity"]),
        "mu": results[0.1].magnitude_mean,
        "F": {tau: r.frequency_mean for tau, r in results.items()},
    }


def bench(name: str) -> str:
    task = load(name)
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=2)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), N_FACTUALS, seed=0)
    runs = {
        "batch, refine=none": measure(task, model, rows, "batch", "none"),
        "batch (default)": measure(task, model, rows, "batch", "minimal"),
        "dice-random, refine=none (paper)": measure(task, model, rows, "dice-random", "none"),
        "dice-random, then refined": measure(task, model, rows, "dice-random", "none", refine_after=True),
    }
    lines = [f"### {name}\n", "| run | seconds | validity | distinct / factual (mean, median) | factuals with copies merged | copies merged |",
             "|---|---:|---:|---|---:|---:|"]
    for label, r in runs.items():
        lines.append(f"| {label} | {r['seconds']:.2f} | {100 * r['validity']:.0f}% | {r['distinct_mean']:.2f}, "
                     f"{r['distinct_median']:.0f} | {r['queries_with_copies']} | {r['copies_merged']} |")
    lines += ["", "F_j (τ = 0.1 / 0.5 / 0.9) and μ_j per run, features in the default's order at τ = 0.1:", ""]
    labels = list(runs)
    lines.append("| feature | " + " | ".join(f"{label}: F | μ" for label in labels) + " |")
    lines.append("|---|" + "---|---|" * len(labels))
    order = np.argsort(-np.nan_to_num(runs["batch (default)"]["F"][0.1]), kind="stable")
    for j in order:
        if task.features[j].immutable:
            continue
        cells = []
        for label in labels:
            r = runs[label]
            cells.append(" / ".join(f"{r['F'][tau][j]:.2f}" for tau in TAUS))
            cells.append("–" if np.isnan(r["mu"][j]) else f"{r['mu'][j]:.3f}")
        lines.append(f"| {task.feature_names[j]} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="loan,accidents")
    parser.add_argument("--out", default=str(RESULTS / "minimal.md"))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    sections = [bench(name.strip()) for name in args.datasets.split(",")]
    text = (
        "# Minimal counterfactuals: what refinement changes\n\n"
        f"Run {datetime.date.today().isoformat()} on {machine()}; total {time.perf_counter() - started:.0f} s; "
        f"`python benchmarks/bench_minimal.py --datasets {args.datasets}`.\n"
        f"Random forest (seed 0), {N_FACTUALS} factuals (seed 0), n_cf = {N_CF}, generator seed 0. "
        "Distinct = valid counterfactuals after copies are merged (what FLEX averages over).\n\n"
        + "\n".join(sections)
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
