"""Constraints between features: the default generator's speed with loan's shipped rules against without (issue 36).

Workload: loan (FLEX_DATA_DIR), the project's random forest (seed 0), the same 200 factuals (seed 0), n_cf = 10;
the rules of ``examples/constraints/loan.txt``. Each generator runs ``--repeats`` times with and without the
rules, alternating, every run cold (a fresh copy of the model); the median counts. Also reported: counterfactuals
that break a rule (must be 0) and valid counterfactuals per factual.

    FLEX_DATA_DIR=../shared/data python benchmarks/bench_constraints.py [--repeats 3] [--generators tree,batch]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc
from benchmarks.bench_generators import load, machine
from flex_core.data.rules import constraints_from_lines

REPO = Path(__file__).resolve().parents[1]


def run(generator: str, model, task, rows, repeats: int) -> dict:
    queries = task.frame.loc[rows, task.feature_names]
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fc.counterfactuals.make_generator(generator).generate(dataclasses.replace(model), task, queries, n_cf=10)
        times.append(time.perf_counter() - start)
    assert result is not None
    factuals = np.repeat(result.factuals, result.n_cf, axis=0)[result.found.reshape(-1)]
    broken = int(fc.counterfactuals.constraint_violations(task, factuals, result.counterfactuals[result.found]).sum())
    return {"seconds": statistics.median(times), "runs": times, "broken": broken,
            "per_factual": float(result.valid.sum() / len(rows))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--generators", default="tree,batch")
    args = parser.parse_args(argv)
    free = load("loan")
    ruled = free.with_overrides(constraints=constraints_from_lines((REPO / "examples/constraints/loan.txt").read_text()))
    model = fc.fit_model(free, model="rf", seed=0, cv_folds=0)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(free, model), 200, seed=0)
    print(f"{machine()}\n")
    print("| generator | without rules s | with rules s | ratio | breakers | valid per factual (without / with) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.generators.split(","):
        without = run(name, model, free, rows, args.repeats)
        with_rules = run(name, model, ruled, rows, args.repeats)
        print(f"| {name} | {without['seconds']:.3f} | {with_rules['seconds']:.3f} | "
              f"{with_rules['seconds'] / without['seconds']:.2f}× | {with_rules['broken']} | "
              f"{without['per_factual']:.2f} / {with_rules['per_factual']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
