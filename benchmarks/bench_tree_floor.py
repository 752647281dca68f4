"""What an exact reading of a forest must spend, against issue 33's budget of DiCE random's time / 300.

The same workload as ``bench_generators.py`` (FLEX's random forest, ``fit_model(task, model="rf", seed=0)``, the
same 200 factuals, n_cf = 10), in one process:

- **DiCE random**, once, as a user runs it: the budget is its time / 300;
- **tree**, warm (the form and its tables built by a first call), median and range of ``--repeats`` calls, on one
  core and on two (``n_jobs=2``);
- **the tree form, cold**: read from a fresh copy of the model and checked against its ``predict_proba``, as
  every CLI run and every first call on a model does (the fastest of ``--repeats``);
- **the walks an exact answer cannot skip**: every leaf a factual reaches by changing at most one feature (an
  exact one-feature profile sums each of them), and at most two (an exact two-feature trade-off sums each leaf
  its pair reaches), for the factuals that get fewer than n_cf one-feature ways out, as ``tree`` walks them. These
  are the compiled walks alone, nothing summed or searched: the fastest of ``--repeats`` runs.

A walk (or the form) that alone exceeds the budget shows the target cannot be met by reading the trees in one process on this
machine, however the rest is arranged. Writes benchmarks/results/tree_floor.md and prints it.

    FLEX_DATA_DIR=../shared/data python benchmarks/bench_tree_floor.py [--datasets loan,accidents] [--repeats 5]
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc
from benchmarks import bench_generators as generators  # the same data, model and factuals

RESULTS = Path(__file__).resolve().parent / "results"
N_CF = 10
TARGET = 300


def _timed(call, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


def measure(name: str, repeats: int) -> dict:
    task = generators.load(name)
    model = generators.load_model(name, task)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), generators.N_FACTUALS, seed=0)
    queries = task.frame.loc[rows, task.feature_names]
    start = time.perf_counter()
    fc.counterfactuals.DiceGenerator("random").generate(model, task, queries, n_cf=N_CF, seed=0)
    dice = time.perf_counter() - start
    tree: Any = fc.counterfactuals.make_generator("tree")  # a TreeGenerator: reading_floor is its own
    tree.generate(model, task, queries, n_cf=N_CF)  # builds the form and its tables
    warm = _timed(lambda: tree.generate(model, task, queries, n_cf=N_CF), repeats)
    both = fc.counterfactuals.make_generator("tree", n_jobs=2)
    both.generate(model, task, queries, n_cf=N_CF)
    warm_two = _timed(lambda: both.generate(model, task, queries, n_cf=N_CF), repeats)
    floor = tree.reading_floor(model, task, queries, n_cf=N_CF, repeats=repeats)
    return {
        "dataset": name, "factuals": len(queries), "trees": floor["trees"], "depth": floor["depth"],
        "dice": dice, "budget": dice / TARGET, "tree": warm, "tree_two": warm_two, "form": floor["form"],
        "one": floor["walk_one"], "one_records": floor["leaves_one"],
        "short": floor["short"], "two": floor["walk_two"], "two_records": floor["leaves_two"],
    }


def table(rows: list[dict]) -> str:
    lines = [
        "| dataset | DiCE random | budget (÷300) | `tree`, warm | × DiCE | two threads | × DiCE | walk, ≤1 change (leaves per factual) "
        "| walk, ≤2 changes (factuals; leaves per factual) | ≤1 walk ÷ budget | ≤2 walk ÷ budget | form, cold "
        "| form ÷ budget |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        med, med_two = statistics.median(r["tree"]), statistics.median(r["tree_two"])
        two = (f"{r['two'] * 1e3:.1f} ms ({r['short']}; {r['two_records'] / max(r['short'], 1):,.0f})"
               if r["short"] else "none needed")
        lines.append(
            f"| {r['dataset']} ({r['factuals']} factuals, {r['trees']} trees, depth {r['depth']}) | {r['dice']:.2f} s "
            f"| {r['budget'] * 1e3:.1f} ms | {med * 1e3:.0f} ms ({min(r['tree']) * 1e3:.0f}–{max(r['tree']) * 1e3:.0f}) "
            f"| {r['dice'] / med:.0f}× | {med_two * 1e3:.0f} ms | {r['dice'] / med_two:.0f}× | {r['one'] * 1e3:.1f} ms ({r['one_records'] / r['factuals']:,.0f}) | {two} "
            f"| {r['one'] / r['budget']:.2f} | {r['two'] / r['budget']:.2f} | {r['form'] * 1e3:.1f} ms "
            f"| {r['form'] / r['budget']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default="loan,accidents")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    rows = [measure(name, args.repeats) for name in args.datasets.split(",")]
    text = (f"# What an exact reading must spend (issue 33's budget)\n\n{datetime.datetime.now():%Y-%m-%d %H:%M}, "
            f"{generators.machine()}\n\n`python benchmarks/bench_tree_floor.py --datasets {args.datasets} "
            f"--repeats {args.repeats}`\n\n{table(rows)}\n\nA ratio above 1 in a ÷ budget column: that part alone "
            "takes longer than the whole budget.\n")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "tree_floor.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
