"""What-if answer time: an edited case's prediction and minimal counterfactuals, as the What-if page asks for them.

Workload per dataset: the project's random forest (``fit_model(task, model="rf", seed=0, cv_folds=2)``),
the default generator (``tree``, exact minimal counterfactuals, n_cf = 10, seed 0), and ``--cases``
factuals (``sample_factuals(..., seed=0)``), each with one value edited: the first mutable feature whose
edit leaves the case predicted undesirable (a number moved a tenth of its data range toward the middle
of the range, whole for an integer feature; a category moved to its next level). The case is then not
a row of the data, so its counterfactuals are searched, not read from the store. Each case is answered
by ``FlexExplainer.what_if(edits, row=row)``, the call the page makes (the app caches it by the edited
values; here each case is new). One untimed case first: it builds the model's scorer and the
generator's per-model tables, as the page's first what-if does. Reported: the median and the slowest
case, and the distinct counterfactuals found per case.

    FLEX_DATA_DIR=../shared/data python benchmarks/bench_whatif.py [--cases 30] [--datasets loan,accidents]

Run it three times on an idle machine for a published figure; the output names the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc
from benchmarks.bench_generators import load, machine


def edited_cases(task: fc.TaskSpec, model: fc.FittedModel, rows: np.ndarray) -> list[tuple[int, dict]]:
    """Per factual, one edit that leaves it predicted undesirable, so its counterfactuals are searched.

    The candidate edits, in feature order: a mutable number moved a tenth of its data range toward the
    middle of the range (whole for an integer feature), a mutable category moved to its next level.
    The first one the model still predicts undesirable is kept; a factual with none is left out.
    """
    edits = []
    for feature in (f for f in task.features if not f.immutable):
        column = task.frame[feature.name]
        if feature.is_continuous:
            low, high = float(column.min()), float(column.max())
            values = column.loc[rows].to_numpy(dtype=float)
            moved = values + (high - low) / 10 * np.where(values < (low + high) / 2, 1, -1)
            edits.append((feature.name, np.round(moved) if feature.integer else moved))
        else:
            levels = list(feature.levels)
            edits.append((feature.name, np.array([levels[(levels.index(v) + 1) % len(levels)] for v in column.loc[rows]], dtype=object)))
    base = task.frame.loc[rows, task.feature_names]
    still = np.array([model.predict_undesirable(base.assign(**{name: new})) for name, new in edits])  # (edits, rows)
    cases = []
    for i, row in enumerate(rows):
        first = np.flatnonzero(still[:, i])
        if len(first):
            name, new = edits[first[0]]
            value = new[i]
            cases.append((int(row), {name: value.item() if hasattr(value, "item") else value}))
    return cases


def bench(name: str, n_cases: int) -> dict:
    task = load(name)
    explainer = fc.FlexExplainer.from_task(task, "rf", seed=0, n_cf=10, fit_options={"cv_folds": 2})
    model = explainer.model
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), n_cases + 1, seed=0)
    cases = edited_cases(task, model, rows)
    warm_row, warm_edits = cases[0]
    explainer.what_if(warm_edits, row=warm_row)  # builds the scorer and the per-model tables, as the first what-if does
    seconds, found = [], []
    for row, edits in cases[1:]:
        start = time.perf_counter()
        answer = explainer.what_if(edits, row=row)
        seconds.append(time.perf_counter() - start)
        found.append(answer.n_valid)
    return {
        "dataset": name,
        "cases": len(seconds),
        "median_ms": 1000 * statistics.median(seconds),
        "max_ms": 1000 * max(seconds),
        "distinct": float(np.mean(found)),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--datasets", default="loan,accidents")
    args = parser.parse_args(argv)
    load_start = os.getloadavg()
    results = [bench(name, args.cases) for name in args.datasets.split(",")]
    load_end = os.getloadavg()
    print(f"{machine()}; load average {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end")
    print("| dataset | cases | median ms | slowest ms | distinct counterfactuals per case |")
    print("|---|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['dataset']} | {r['cases']} | {r['median_ms']:.1f} | {r['max_ms']:.1f} | {r['distinct']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
