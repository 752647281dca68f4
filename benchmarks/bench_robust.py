"""Robust counterfactuals per generator (issue 32): noise F, validity under 3 refits, ties, distinct per factual.

Workload: the planted learned forest (tests/planted_learned.py: speed > 60 on a rural road, four
pure-noise features, 3% flipped labels; 2,000 rows, seed 0) and the paper's loan data (from
FLEX_DATA_DIR), each with the random forest ``fit_model(task, model="rf", seed=0, cv_folds=0)``.
Factuals: ``sample_factuals(store.factual_rows, N, seed=0)`` under the store's factual rule, N = 200
for the native generators and 30 for DiCE (``time_limit`` 60 s, ``refine="minimal"``), n_cf = 10.
One more row runs the default under the paper's validity (margin 0, radius 0: the paper's factuals too).

Columns: noise F = the largest F (τ = 0.1) of the four noise features (planted only); refits =
the share of the valid counterfactuals each of three forests fitted with seeds 1, 2, 3 predicts
desirable (P(undesirable) < 0.5), lowest and mean; ties = the share of valid counterfactuals at
exactly P = 0.5 under the model explained; distinct = distinct valid counterfactuals per factual;
left out = candidate cases left out as borderline or memorised; seconds = generation wall time.

Writes benchmarks/results/robust.md and prints it.

    python benchmarks/bench_robust.py [--datasets planted,loan] [--dice-factuals 30]
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
from tests.planted_learned import NOISE_FEATURES, planted_task

RESULTS = Path(__file__).resolve().parent / "results"
N_FACTUALS, N_CF, TAU = 200, 10, 0.1
GENERATORS = ("batch", "batch-plausible", "dice-random", "dice-genetic", "dice-kdtree")
PAPER_ROW = "batch, paper validity"


def task_of(name: str) -> fc.TaskSpec:
    return planted_task(seed=0) if name == "planted" else load(name)


def measure(task, model, refits, name: str, *, n_factuals: int) -> dict:
    """One generator's row (see the module docstring)."""
    dice = name.startswith("dice")
    if name == PAPER_ROW:
        generator = fc.counterfactuals.make_generator("batch", margin=0.0, radius=0.0)
    else:
        generator = fc.counterfactuals.make_generator(name, **({"time_limit": 60.0} if dice else {}))
    store = fc.counterfactuals.CounterfactualStore(task, model, generator, n_cf=N_CF, seed=0, refine="minimal" if dice else None)
    rows = fc.importance.sample_factuals(store.factual_rows, n_factuals, seed=0)
    started = time.perf_counter()
    cfset = store.ensure(rows)
    seconds = time.perf_counter() - started
    query, slot = np.nonzero(cfset.valid)
    decoded = fc.counterfactuals.decode_rows(task, cfset.counterfactuals[query, slot])
    held = [float((refit.predict_proba(decoded)[:, 1] < 0.5).mean()) for refit in refits] if len(decoded) else []
    p = model.predict_proba(decoded)[:, 1] if len(decoded) else np.empty(0)
    result = fc.importance.flex_importance(cfset, task, tau=TAU, ranges=store.ranges, intervals=False)
    noise = [float(result.frequency_mean[task.feature_names.index(f)]) for f in NOISE_FEATURES
             if f in task.feature_names]
    selection = store.factual_selection
    return {
        "generator": name, "factuals": len(rows), "noise_f": max(noise) if noise else None,
        "refit_min": min(held) if held else None, "refit_mean": float(np.mean(held)) if held else None,
        "ties": float((p == 0.5).mean()) if len(p) else None,
        "distinct": float(cfset.counts.mean()), "left_out": selection["borderline"] + selection["memorised"],
        "candidates": selection["candidates"], "seconds": seconds,
    }


def fmt(value, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def table(dataset: str, rows: list[dict]) -> str:
    lines = [f"**{dataset}**", "",
             "| generator | factuals | noise F | refits: lowest | refits: mean | at a tie | distinct per factual "
             "| left out (of candidates) | seconds |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['generator']} | {r['factuals']} | {fmt(r['noise_f'], '.3f')} | {fmt(r['refit_min'], '.3f')} "
                     f"| {fmt(r['refit_mean'], '.3f')} | {fmt(r['ties'], '.3f')} | {r['distinct']:.2f} "
                     f"| {r['left_out']} ({r['candidates']}) | {r['seconds']:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="planted,loan")
    parser.add_argument("--dice-factuals", type=int, default=30)
    args = parser.parse_args(argv)
    parts = [f"Machine: {machine()}. Run {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC.", ""]
    for dataset in args.datasets.split(","):
        task = task_of(dataset)
        model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
        refits = [fc.fit_model(task, model="rf", seed=seed, cv_folds=0) for seed in (1, 2, 3)]
        rows = []
        for name in (*GENERATORS, PAPER_ROW):
            n = args.dice_factuals if name.startswith("dice") else N_FACTUALS
            rows.append(measure(task, model, refits, name, n_factuals=n))
            print(rows[-1], flush=True)
        parts += [table(dataset, rows), ""]
    text = "\n".join(parts)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "robust.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
