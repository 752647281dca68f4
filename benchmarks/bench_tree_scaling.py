"""The tree generator's cost in the number of factuals (issue 33: 20,000 factuals should cost at most 12x 2,000).

Workload: a synthetic table of 40,000 rows (rejected unless x1 + x2 + n/50 + 0.3 x red is large enough, with
noise), FLEX's label pipeline around a random forest of 100 trees of depth 8 (seed 0); the first 2,000 and then
20,000 of the rows the forest rejects, n_cf = 10. Each size runs twice after a warm-up call (the kernels compiled,
the tree form built); the quicker run counts.

    python benchmarks/bench_tree_scaling.py [--sizes 2000,20000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc


def workload(n_rows: int = 40_000):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x1": rng.uniform(0, 1, n_rows).round(3), "x2": rng.uniform(0, 1, n_rows).round(3),
                          "n": rng.integers(0, 31, n_rows), "colour": rng.choice(["red", "green", "blue"], n_rows),
                          "region": rng.choice(["north", "south"], n_rows)})
    score = frame.x1 + frame.x2 + frame.n / 50 + (frame.colour == "red") * 0.3 + rng.normal(0, 0.1, n_rows)
    frame["outcome"] = np.where(score > 1.6, "accepted", "rejected")
    task = fc.make_task(frame, target="outcome", undesirable="rejected", kinds={"n": "continuous"}, immutable=["region"])
    pipeline = fc.models.build_pipeline(task, model="rf", encoding="label")
    pipeline.set_params(classify=RandomForestClassifier(100, max_depth=8, random_state=0, n_jobs=1))
    pipeline.fit(task.X, task.y)
    model = fc.FittedModel.from_estimator(pipeline, task, undesired=1, fitted_on="task")
    rejected = np.flatnonzero(model.predict_proba(task.X)[:, 1] > 0.5)
    return task, model, task.frame.index[rejected]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000")
    args = parser.parse_args(argv)
    task, model, rows = workload()
    generator = fc.counterfactuals.make_generator("tree")
    generator.generate(model, task, task.frame.loc[rows[:5], task.feature_names], n_cf=10)  # compile, build the form
    seconds = {}
    for size in (int(s) for s in args.sizes.split(",")):
        queries = task.frame.loc[rows[:size], task.feature_names]
        runs = []
        for _ in range(2):
            start = time.perf_counter()
            result = generator.generate(model, task, queries, n_cf=10)
            runs.append(time.perf_counter() - start)
        seconds[size] = min(runs)
        tree = result.coverage()["tree"]
        print(f"{size} factuals: {min(runs):.2f} s (runs {', '.join(f'{r:.2f}' for r in runs)}), "
              f"{int(result.found.sum())} counterfactuals, pairs read {tree['pairs_read']}, "
              f"left to batch {tree['batch_fallback_queries']}", flush=True)
    sizes = sorted(seconds)
    if len(sizes) >= 2:
        print(f"{sizes[-1]} / {sizes[0]}: {seconds[sizes[-1]] / seconds[sizes[0]]:.1f}x the time for "
              f"{sizes[-1] / sizes[0]:.0f}x the factuals")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
