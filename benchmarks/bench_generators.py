"""Counterfactual generators side by side: speed, model rows, quality and FLEX ranking agreement (issue 4).

Workload per dataset: one random forest (``fit_model(task, model="rf", seed=0)``; CV
folds only change the reported metrics, not the fitted forest, so 2 are used), the same
200 factuals (``sample_factuals(..., 200, seed=0)``) and n_cf = 10, on the paper's loan
and accidents data (from FLEX_DATA_DIR, default ../shared/data) and the built-ins.

Generators: dice-random (post-hoc sparsity off, seeds 0 and 1: seed 1 is the noise floor
of the ranking), dice-random with post-hoc sparsity on, dice-genetic and dice-kdtree
(these three with a time cap: DiCE stops starting queries after ``--dice-cap`` seconds
and the table says how many queries each got through; their quality columns cover those
queries only), ``tree`` (exact, read from the forest's trees), and the native ones: ``batch`` as the library, the CLI and the app use it
(distinct minimal counterfactuals: ``refine="minimal"`` inside the search), the same search
with ``refine="none"``, ``batch-plausible``, and ``batch`` and ``tree`` on both cores (``n_jobs=2``).
Wall time = median of ``--repeats`` runs, the first in brackets; every run starts cold (a
fresh copy of the model, so the per-model tables are built inside the timed call). DiCE is
timed on the model itself, as a user runs it, so its model rows are not counted. The paper
datasets also run 40 factuals x 10.

Writes benchmarks/results/generators.md and prints it.

    python benchmarks/bench_generators.py [--dice-cap 25] [--repeats 3] [--datasets loan,accidents,...]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parents[1]
PAPER = ("loan", "accidents")
ALL_DATASETS = ("loan", "accidents", "synthetic-regional", "toy2d", "breast-cancer")
N_FACTUALS, N_CF, TAU = 200, 10, 0.1
#: batch: distinct minimal counterfactuals (refine="minimal" inside the search); the default before flex_core 0.5.
DEFAULT = "batch (distinct, minimal)"
#: The same search keeping the sampler's values (passengers reverted, nothing shrunk).
UNREFINED = "batch, refine=none"
#: batch on both of this machine's cores (n_jobs=2: the model's trees walked in two threads).
DEFAULT_TWO = "batch, n_jobs=2"
#: The default since flex_core 0.5: exact minimal counterfactuals read from the trees (issue 33); the form is
#: built inside the timed call.
TREE = "tree (default: exact, read from the trees)"
#: The same on both of this machine's cores (n_jobs=2: chunks of factuals read in two threads sharing the form).
TREE_TWO = "tree, n_jobs=2"
SMALL = 40  # the second workload on the paper data (40 factuals x 10)


#: Loan with a user's booster instead of FLEX's forest (issue 33: the tree generator on XGBoost and LightGBM).
BOOSTERS = ("loan-xgboost", "loan-lightgbm")


def load(name: str) -> fc.TaskSpec:
    data = Path(os.environ.get("FLEX_DATA_DIR", REPO.parent / "shared" / "data"))
    if name == "loan" or name in BOOSTERS:
        return fc.data.load_loan(data / "loan_approval_dataset.csv")
    if name == "accidents":
        return fc.data.load_accidents(data / "RTA_Dataset.csv")
    return fc.data.load_builtin(name)


def machine() -> str:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
        platform.processor() or "unknown CPU",
    )
    mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
    return f"{os.cpu_count()} cores ({cpu}), {mem_kb / 1024**2:.0f} GB RAM, Python {platform.python_version()}"


def run_once(generator, model, task, queries, seed, refine=None):
    """(set, seconds, model rows, predict_proba calls); every run starts cold.

    DiCE runs on the model itself, as a user runs it: a counting proxy around the pipeline made
    it about a third slower (30.5 s where the CLI took 14-20 s), so its rows are not counted.
    The batch generators count their own rows and calls (a fresh copy of the model, so the
    per-model tables are built inside the timed call).
    """
    fresh = dataclasses.replace(model)
    settings = {} if refine is None else {"refine": refine}
    start = time.perf_counter()
    cfset = generator.generate(fresh, task, queries, n_cf=N_CF, seed=seed, **settings)
    seconds = time.perf_counter() - start
    if "model_calls" in cfset.config:  # the batch generators count their own (the validity check adds one call)
        return cfset, seconds, cfset.model_rows, cfset.config["model_calls"] + 1
    return cfset, seconds, None, None


def floor_seconds(model, task, n_rows: int, repeats: int = 3) -> float:
    """The model itself: ``n_rows`` rows (training rows, repeated) through its predict_proba in one call."""
    if n_rows <= 0:
        return float("nan")
    X = task.frame.loc[model.train_index, task.feature_names]
    X = X.iloc[np.arange(n_rows) % len(X)]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        model.predict_proba(X)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def flex_frequencies(cfset, task, model) -> np.ndarray:
    return fc.importance.flex_importance(cfset, task, tau=TAU, ranges=fc.counterfactuals.training_ranges(task, model)).frequency_mean


def load_model(name: str, task: fc.TaskSpec) -> fc.FittedModel:
    """FLEX's random forest, or for ``loan-xgboost`` / ``loan-lightgbm`` a user's 100-tree booster on the task's
    columns with native categories (trained on every row, as a model file arrives)."""
    if name not in BOOSTERS:
        return fc.fit_model(task, model="rf", seed=0, cv_folds=2)
    X = task.frame[task.feature_names].copy()
    for f in task.features:
        if not f.is_continuous:
            X[f.name] = X[f.name].astype("category")
    y = task.y
    if name == "loan-xgboost":
        from xgboost import XGBClassifier

        estimator = XGBClassifier(n_estimators=100, max_depth=6, enable_categorical=True, tree_method="hist",
                                  random_state=0, n_jobs=1).fit(X, y)
    else:
        from lightgbm import LGBMClassifier

        estimator = LGBMClassifier(n_estimators=100, random_state=0, n_jobs=1, verbose=-1).fit(X, y)
    return fc.FittedModel.from_estimator(estimator, task, undesired=1)


def bench_dataset(name: str, args) -> list[dict]:
    task = load(name)
    model = load_model(name, task)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), N_FACTUALS, seed=0)
    queries = task.frame.loc[rows, task.feature_names]
    small = task.frame.loc[rows[:SMALL], task.feature_names]  # the 40-factual workload: fixed costs weigh more
    cap = args.dice_cap
    plan = [
        ("dice-random", fc.counterfactuals.DiceGenerator("random"), 0, 1),
        ("dice-random (seed 1)", fc.counterfactuals.DiceGenerator("random"), 1, 1),
        (f"dice-random post-hoc on, cap {cap:g} s", fc.counterfactuals.DiceGenerator("random", posthoc_sparsity=True, time_limit=cap), 0, 1),
        (f"dice-genetic, cap {cap:g} s", fc.counterfactuals.DiceGenerator("genetic", time_limit=cap), 0, 1),
        (f"dice-kdtree, cap {cap:g} s", fc.counterfactuals.DiceGenerator("kdtree", time_limit=cap), 0, 1),
        (DEFAULT, fc.counterfactuals.BatchGenerator(), 0, args.repeats),
        (UNREFINED, fc.counterfactuals.BatchGenerator(), 0, args.repeats),
        ("batch-plausible", fc.counterfactuals.BatchGenerator(plausible=True), 0, args.repeats),
        (DEFAULT_TWO, fc.counterfactuals.BatchGenerator(n_jobs=2), 0, args.repeats),
        (TREE, fc.counterfactuals.make_generator("tree"), 0, args.repeats),
        (TREE_TWO, fc.counterfactuals.make_generator("tree", n_jobs=2), 0, args.repeats),
    ]
    if name in PAPER:
        plan += [
            (f"dice-random, {SMALL} factuals", fc.counterfactuals.DiceGenerator("random"), 0, 1),
            (f"{DEFAULT}, {SMALL} factuals", fc.counterfactuals.BatchGenerator(), 0, args.repeats),
            (f"{TREE}, {SMALL} factuals", fc.counterfactuals.make_generator("tree"), 0, args.repeats),
        ]
    if args.quick:  # the speed ratio only: dice-random and the default, side by side
        plan = [row for row in plan if row[0] in ("dice-random", DEFAULT, DEFAULT_TWO, TREE, TREE_TWO)]
    if name in BOOSTERS:  # a user's booster: DiCE random, the default and the tree generator
        plan = [row for row in plan if row[0] in ("dice-random", DEFAULT, TREE, TREE_TWO)]
    out: list[dict[str, Any]] = []
    reference: np.ndarray | None = None
    for label, generator, seed, repeats in plan:
        print(f"[{name}] {label} ...", file=sys.stderr, flush=True)
        workload = small if label.endswith(f"{SMALL} factuals") else queries
        try:
            refine = "none" if label == UNREFINED else None
            runs = [run_once(generator, model, task, workload, seed, refine=refine) for _ in range(repeats)]
        except fc.GenerationError as exc:  # e.g. DiCE genetic on data without a continuous feature
            print(f"[{name}] {label} refused: {exc}", file=sys.stderr, flush=True)
            out.append(
                {"dataset": name, "generator": f"{label}: refused ({str(exc).split(';')[0]})", "queries": f"0/{len(queries)}",
                 "seconds": None, "first_seconds": None, "model_rows": 0, "calls": 0, "floor": None, "coverage_all": 0.0,
                 "spearman": float("nan"), "validity": float("nan"), "sparsity": None, "proximity": None, "diversity": None,
                 "plausibility": None}
            )
            continue
        cfset, first_seconds, model_rows, calls = runs[0]
        for other, *_ in runs[1:]:  # repeated runs must give the same counterfactuals
            np.testing.assert_array_equal(other.counterfactuals, cfset.counterfactuals)
        seconds = statistics.median(s for _, s, _, _ in runs)
        done = cfset.n_queries - int(cfset.config.get("queries_skipped", 0))
        attempted = cfset.subset(cfset.query_index[:done]) if done < cfset.n_queries else cfset
        quality = fc.counterfactuals.counterfactual_quality(attempted, task, model)
        freq: np.ndarray | None = flex_frequencies(attempted, task, model)
        if reference is None:
            reference = freq
        if label.endswith(f"{SMALL} factuals"):  # a ranking over 40 factuals is not comparable with the 200's
            freq = None
        out.append(
            {
                "dataset": name,
                "generator": label,
                "queries": f"{done}/{cfset.n_queries}",
                "seconds": seconds,
                "first_seconds": first_seconds if repeats > 1 else None,
                "model_rows": model_rows,
                "calls": calls,
                "floor": floor_seconds(model, task, model_rows) if model_rows else None,
                "coverage_all": float((cfset.counts >= N_CF).mean()),
                "distinct_mean": float(cfset.counts[: done].mean()) if done else float("nan"),
                "queries_with_copies": int(cfset.coverage()["queries_with_copies"]),
                "spearman": float(spearmanr(reference, freq)[0]) if freq is not None else float("nan"),
                **quality,
            }
        )
    base = out[0]["seconds"]
    small_base = next((r["seconds"] for r in out if r["generator"] == f"dice-random, {SMALL} factuals"), None)
    for row in out:
        reference_seconds = small_base if row["generator"].endswith(f"{SMALL} factuals") else base
        row["speedup"] = reference_seconds / row["seconds"] if row["seconds"] else None
    if name in PAPER and args.spread_seeds > 0 and not args.quick:
        out[0]["spread"] = ranking_spread(task, model, queries, reference, args.spread_seeds)
    return out


def ranking_spread(task, model, queries, reference, n_seeds) -> dict:
    """Spearman vs dice-random (seed 0) over more seeds: one seed pair is a noisy estimate of the floor."""
    spread = {}
    for label, generator, seeds in (
        ("dice-random", fc.counterfactuals.DiceGenerator("random"), range(1, n_seeds + 1)),
        ("batch", fc.counterfactuals.BatchGenerator(), range(n_seeds + 1)),
        ("batch-plausible", fc.counterfactuals.BatchGenerator(plausible=True), range(n_seeds + 1)),
    ):
        print(f"[{task.name}] ranking spread: {label} ...", file=sys.stderr, flush=True)
        rhos = [
            float(spearmanr(reference, flex_frequencies(generator.generate(model, task, queries, n_cf=N_CF, seed=s), task, model))[0])
            for s in seeds
        ]
        spread[label] = (list(seeds), rhos)
    return spread


def spread_table(rows: list[dict]) -> str:
    lines = ["| dataset | generator | seeds | Spearman vs dice-random seed 0: mean (min–max) |", "|---|---|---|---|"]
    for r in rows:
        for label, (seeds, rhos) in r.get("spread", {}).items():
            lines.append(
                f"| {r['dataset']} | {label} | {seeds[0]}–{seeds[-1]} | {np.mean(rhos):.3f} ({min(rhos):.3f}–{max(rhos):.3f}) |"
            )
    return "\n".join(lines) + "\n"


def fmt(value, spec):
    return "–" if value is None or (isinstance(value, float) and np.isnan(value)) else format(value, spec)


def table(rows: list[dict]) -> str:
    head = (
        "| dataset | generator | queries done | wall s | × vs dice-random | model rows | predict_proba calls "
        "| floor s | × floor | validity | distinct / factual | queries with copies | all n_cf distinct "
        "| sparsity | proximity | diversity | plausibility | Spearman vs dice-random |\n"
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = []
    for r in rows:
        seconds = fmt(r["seconds"], ".3f")
        if r["first_seconds"] is not None:
            seconds += f" (first {r['first_seconds']:.3f})"
        floor = r.get("floor")
        over_floor = r["seconds"] / floor if floor and r["seconds"] else None
        lines.append(
            f"| {r['dataset']} | {r['generator']} | {r['queries']} | {seconds} | {fmt(r['speedup'], '.1f')} "
            f"| {fmt(r['model_rows'], ',')} | {fmt(r.get('calls'), ',')} | {fmt(floor, '.3f')} | {fmt(over_floor, '.1f')} "
            f"| {fmt(100 * r['validity'], '.1f')}% | {fmt(r.get('distinct_mean'), '.2f')} | {fmt(r.get('queries_with_copies'), 'd')} "
            f"| {fmt(100 * r['coverage_all'], '.0f')}% "
            f"| {fmt(r['sparsity'], '.2f')} | {fmt(r['proximity'], '.2f')} | {fmt(r['diversity'], '.2f')} "
            f"| {fmt(r['plausibility'], '.2f')} | {fmt(r['spearman'], '.3f')} |"
        )
    return head + "\n".join(lines) + "\n"


def targets(rows: list[dict]) -> str:
    lines = [
        f"| dataset | generator | ≥100× faster ({N_FACTUALS} × {N_CF}) | ≥50× faster ({SMALL} × {N_CF}) | validity 100% "
        "| no copies | distinct / factual | sparsity ≤ DiCE | proximity ≤ DiCE |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in dict.fromkeys(r["dataset"] for r in rows):
        mine = {r["generator"]: r for r in rows if r["dataset"] == name}
        dice = mine["dice-random"]
        for gen in (g for g in (DEFAULT, DEFAULT_TWO, TREE, TREE_TWO) if g in mine):
            r = mine[gen]
            target = 300 if gen in (TREE, TREE_TWO) else 100  # issue 33: the tree generator at 300× DiCE random
            speed = f"{r['speedup']:.0f}×" + (" ✓" if r["speedup"] >= target else " ✗") if name in PAPER else f"{r['speedup']:.0f}× (not a target)"
            small = mine.get(f"{gen}, {SMALL} factuals")
            small_speed = "–" if small is None else f"{small['speedup']:.0f}×" + (" ✓" if small["speedup"] >= 50 else " ✗")
            checks = [
                speed,
                small_speed,
                f"{100 * r['validity']:.1f}% " + ("✓" if r["validity"] == 1.0 else "✗"),
                f"{r['queries_with_copies']} " + ("✓" if r["queries_with_copies"] == 0 else "✗"),
                f"{r['distinct_mean']:.2f}" + ((" ✓" if r["distinct_mean"] >= 4 else " ✗") if name == "loan" else ""),
                f"{r['sparsity']:.2f} vs {dice['sparsity']:.2f} " + ("✓" if r["sparsity"] <= dice["sparsity"] else "✗"),
                f"{r['proximity']:.2f} vs {dice['proximity']:.2f} " + ("✓" if r["proximity"] <= dice["proximity"] else "✗"),
            ]
            lines.append(f"| {name} | {gen} | " + " | ".join(checks) + " |")
    return "\n".join(lines) + "\n"


def in_fresh_process(name: str, args) -> list[dict]:
    """Bench one dataset in its own interpreter: a dataset's numbers must not depend on which ran before it.

    (It once mattered: before the DiCE wrapper seeded numpy per query, DiCE random's accidents
    counterfactuals depended on the loan workload run before them in the same process.)
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        command = [sys.executable, __file__, "--datasets", name, "--rows-json", str(out), "--dice-cap", str(args.dice_cap),
                   "--repeats", str(args.repeats), "--spread-seeds", str(args.spread_seeds), *(["--quick"] if args.quick else [])]
        subprocess.run(command, check=True)
        return json.loads(out.read_text())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dice-cap", type=float, default=25.0, help="seconds before the slow DiCE variants stop starting queries")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each batch generator (median reported)")
    parser.add_argument("--datasets", default=",".join(ALL_DATASETS))
    parser.add_argument("--spread-seeds", type=int, default=3, help="extra seeds for the ranking-agreement spread (paper data)")
    parser.add_argument("--out", default=str(RESULTS / "generators.md"))
    parser.add_argument("--quick", action="store_true",
                        help="only dice-random and the default side by side (the speed ratio; the tables' other rows are left out)")
    parser.add_argument("--rows-json", help=argparse.SUPPRESS)  # child mode: one dataset, rows written as JSON
    args = parser.parse_args(argv)
    if args.rows_json:
        Path(args.rows_json).write_text(json.dumps(bench_dataset(args.datasets, args)))
        return 0
    started = time.perf_counter()
    rows = [row for name in args.datasets.split(",") for row in in_fresh_process(name.strip(), args)]
    text = (
        "# Counterfactual generators: benchmark\n\n"
        f"Run {datetime.date.today().isoformat()} on {machine()}; total {time.perf_counter() - started:.0f} s.\n"
        f"Random forest (100 trees, seed 0), {N_FACTUALS} factuals (seed 0), n_cf = {N_CF}, FLEX τ = {TAU}. "
        f"Time-capped DiCE variants stop starting queries after {args.dice_cap:g} s: their quality columns cover the "
        "queries they got through. Batch wall time: median of "
        f"{args.repeats} runs (the first in brackets); every run starts cold, building the per-model tables "
        "(and batch-plausible's neighbour index) inside the timed call. DiCE runs on the model itself, as a user "
        "runs it (a counting proxy slowed it by a third), so its model rows are not counted; the batch "
        "generators count their own rows and calls, including the one validity check. "
        "Distinct / factual: valid counterfactuals per factual after copies are merged (what FLEX averages over); "
        "all n_cf distinct: share of factuals with n_cf of them. Floor = the same number of rows through the pipeline's "
        "predict_proba in one call (median of 3): the model's own cost, the least any search can spend; "
        "× floor = wall / floor. The paper datasets also run a 40-factual workload (the first 40 of the 200), "
        "its speed-up against dice-random on the same 40.\n\n"
        "Sparsity = mean features changed; proximity = MAD-normalised L1 on continuous features + categorical "
        "mismatches, to the factual; diversity = mean pairwise distance among a query's counterfactuals; "
        "plausibility = distance to the nearest training row the model predicts desirable (lower = more plausible); "
        "Spearman = global FLEX change frequencies vs dice-random (seed 0); dice-random (seed 1) gives the noise floor.\n\n"
        + table(rows)
        + "\n## Targets (batch generators vs dice-random, same run)\n\n"
        + targets(rows)
        + "\n## Ranking agreement over seeds (paper data)\n\n"
        + spread_table(rows)
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
