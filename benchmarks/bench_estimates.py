"""How close the Compare page's "it will take ..." comes to the SHAP and LIME runs it announces.

The page (``app_pages/compare.py`` and ``ui/components.lime_beside_flex``, through ``ui/cache.py``)
times SHAP on a few of the global factuals before offering to run it on all of them, and LIME on one
region member before offering it on the region. This benchmark makes the same estimate
(``ui.estimates.estimate_shap(model, task, rows, seed=0)``; LIME: ``estimate_lime`` on the first row,
``with_rows`` the region's size), then makes the run the page's button starts
(``shap_importance`` / ``lime_importance`` with the page's options), and compares the two.

The page offers no SHAP explainer choice: it always runs "auto", which is TreeSHAP on a forest or a
booster and KernelSHAP on any other model. So the workloads are models, one per path:

* loan and accidents (the paper's data, from FLEX_DATA_DIR, default ../shared/data) with the project's
  random forest, ``fc.fit_model(task, model="rf", seed=0, cv_folds=2)``: TreeSHAP on the one-hot columns;
* loan with the app's logistic regression (``model="lr"``): KernelSHAP (k-means background of 20, nsamples
  "auto"), what the page runs for any model that is not a tree;
* a user's booster: a 100-tree XGBoost trained on sklearn's breast-cancer data (as in bench_shap.py),
  wrapped in ``fc.FlexExplainer``: TreeSHAP on the booster itself.

Factual counts: SHAP on the page's default N_F = 200 (the global factuals, ``sample_factuals(..., n,
seed=0)``, as ``FlexExplainer.sample_factuals`` draws them) and one other count per model; LIME on the default
region (k = 4: 5 members) and the largest (k = 50: 51 members) at the slider's default 5,000 samples,
and the largest at its least, 500. LIME's rows are the first of the 200 global factuals, standing in for
a region's members (LIME's cost per row hardly depends on which rows). Run time is kept to minutes by
two cuts, where the run itself is slow: accidents' TreeSHAP (93 one-hot columns, about 0.8 s a row) runs on
40 factuals, not 200, and the logistic regression's KernelSHAP on 40 and 200.

Each repeat makes every case's estimate and then its run, side by side in one process; nothing is
cached between repeats (the page caches the estimate per model, so each repeat is a fresh page).
Reported per case: the estimate (median and range over the repeats, what timing it took and on how many
rows the probe ended), the actual run's median and range, estimate / actual (of the medians, and the
range over the repeats' pairs), and the words the page shows for the estimate beside those it would
show for the actual run.
Writes benchmarks/results/estimates.md and prints it.

    FLEX_DATA_DIR=../shared/data python benchmarks/bench_estimates.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc
from benchmarks.bench_generators import load, machine
from flex_core.compare import lime_importance, shap_importance
from flex_core.formatting import format_duration
from ui.estimates import RunEstimate, estimate_lime, estimate_shap

RESULTS = Path(__file__).resolve().parent / "results"
#: The page's seed (the sidebar's default), for the factual sample, the estimate and the run alike.
SEED = 0
#: A 1-minute load average below this at the start counts as an idle machine (as bench_regions.py decides it).
IDLE_LOAD = 0.3
#: LIME on the page's default region (k = 4) and its largest (k = 50), at 5,000 samples (the slider's
#: default); the largest region also at the slider's least, 500.
LIME_CASES = ((5, 5000), (51, 5000), (51, 500))


@dataclass(frozen=True)
class Workload:
    """A model the Compare page might hold, and the SHAP factual counts and LIME (rows, samples) to run on it."""

    name: str
    task: fc.TaskSpec
    model: fc.FittedModel
    shap_counts: tuple[int, ...]
    lime_cases: tuple[tuple[int, int], ...] = LIME_CASES


@dataclass(frozen=True)
class Case:
    workload: Workload
    method: str  # "SHAP" or "LIME"
    rows: tuple[int, ...]
    num_samples: int = 0  # LIME's samples per factual (SHAP has none)


def paper_workloads() -> list[Workload]:
    loan, accidents = load("loan"), load("accidents")
    return [
        Workload("loan, random forest", loan, fc.fit_model(loan, model="rf", seed=SEED, cv_folds=2), (200, 1000)),
        Workload("loan, logistic regression", loan, fc.fit_model(loan, model="lr", seed=SEED, cv_folds=2), (40, 200), ()),
        Workload("accidents, random forest", accidents, fc.fit_model(accidents, model="rf", seed=SEED, cv_folds=2), (40,)),
    ]


def booster_workload() -> Workload:
    """A user's 100-tree XGBoost on breast cancer (as bench_shap.py trains it), the way the app wraps a model file."""
    import xgboost
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer(as_frame=True)
    benign = (data.target == 1).astype(int)  # 0 = malignant, the undesired outcome
    model = xgboost.XGBClassifier(n_estimators=100, n_jobs=1, random_state=0).fit(data.data, benign)
    explainer = fc.FlexExplainer(model, data.data, y=benign, undesired=0, seed=SEED)
    return Workload("breast cancer, user's XGBoost", explainer.task, explainer.model, (40, 200))


def cases(workload: Workload) -> list[Case]:
    """The workload's SHAP and LIME runs, on the rows the page would give them."""
    factual_rows = fc.counterfactuals.factual_rows(workload.task, workload.model)
    shap = [Case(workload, "SHAP", tuple(int(r) for r in fc.importance.sample_factuals(factual_rows, n, seed=SEED)))
            for n in workload.shap_counts]
    global_rows = [int(r) for r in fc.importance.sample_factuals(factual_rows, 200, seed=SEED)]
    lime = [Case(workload, "LIME", tuple(global_rows[:n]), samples) for n, samples in workload.lime_cases]
    return shap + lime


def page_estimate(case: Case) -> RunEstimate:
    """The estimate the page would show for ``case``, as ui/cache.py computes it."""
    task, model = case.workload.task, case.workload.model
    if case.method == "SHAP":
        return estimate_shap(model, task, list(case.rows), seed=SEED)
    # One row is timed, standing for all of the region's (ui.cache.lime_estimate).
    return estimate_lime(model, task, list(case.rows[:1]), num_samples=case.num_samples, seed=SEED).with_rows(len(case.rows))


def actual_run(case: Case) -> None:
    """The run the page's button starts (ui.cache.shap_with_progress / lime_with_progress, without the bar)."""
    task, model = case.workload.task, case.workload.model
    if case.method == "SHAP":
        shap_importance(model, task, list(case.rows), seed=SEED)
    else:
        lime_importance(model, task, list(case.rows), num_samples=case.num_samples, seed=SEED)


def measure(all_cases: list[Case], repeats: int) -> list[dict]:
    """Each case's estimates and actual times over ``repeats`` rounds; a round runs every case, estimate then run."""
    times: dict[int, dict[str, list[float]]] = {
        i: {"estimate": [], "timing": [], "probe": [], "actual": []} for i in range(len(all_cases))}
    what: dict[int, str] = {}
    for round_number in range(repeats):
        for i, case in enumerate(all_cases):
            print(f"[{round_number + 1}/{repeats}] {case.workload.name}: {case.method} on {len(case.rows)} rows ...",
                  file=sys.stderr, flush=True)
            started = time.perf_counter()
            estimate = page_estimate(case)
            times[i]["timing"].append(time.perf_counter() - started)
            times[i]["estimate"].append(estimate.seconds)
            times[i]["probe"].append(estimate.probe_rows)
            what[i] = f"{estimate.method}, {estimate.detail}"
            started = time.perf_counter()
            actual_run(case)
            times[i]["actual"].append(time.perf_counter() - started)
    rows = []
    for i, case in enumerate(all_cases):
        t = times[i]
        ratios = [e / a for e, a in zip(t["estimate"], t["actual"])]
        median_estimate, actual = statistics.median(t["estimate"]), statistics.median(t["actual"])
        rows.append({
            "workload": case.workload.name,
            "method": what[i],
            "rows": len(case.rows),
            "estimate": median_estimate, "estimate_min": min(t["estimate"]), "estimate_max": max(t["estimate"]),
            "timing": statistics.median(t["timing"]), "timing_max": max(t["timing"]),
            "probe_min": int(min(t["probe"])), "probe_max": int(max(t["probe"])),
            "actual": actual, "actual_min": min(t["actual"]), "actual_max": max(t["actual"]),
            "ratio": median_estimate / actual, "ratio_min": min(ratios), "ratio_max": max(ratios),
            # What the page's sentence says for the median estimate, and would say for the median run.
            "says": format_duration(median_estimate), "would_say": format_duration(actual),
        })
    return rows


#: The table's columns, in order (the test checks the table against them).
COLUMNS = ("model", "explainer", "factuals", "estimate s (range)", "timing it took s (max)", "probe rows",
           "actual s (range)", "estimate / actual (range)", "page says (for the actual)")


def _span(low, high, spec: str) -> str:
    return format(low, spec) if format(low, spec) == format(high, spec) else f"{low:{spec}}–{high:{spec}}"


def table(rows: list[dict]) -> str:
    head = "| " + " | ".join(COLUMNS) + " |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n"
    return head + "\n".join(
        f"| {r['workload']} | {r['method']} | {r['rows']} | {r['estimate']:.3g} ({_span(r['estimate_min'], r['estimate_max'], '.3g')}) "
        f"| {r['timing']:.2g} ({r['timing_max']:.2g}) | {_span(r['probe_min'], r['probe_max'], 'd')} "
        f"| {r['actual']:.3g} ({_span(r['actual_min'], r['actual_max'], '.3g')}) "
        f"| {r['ratio']:.2f} ({_span(r['ratio_min'], r['ratio_max'], '.2f')}) | {r['says']} ({r['would_say']}) |"
        for r in rows
    ) + "\n"


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    started = time.perf_counter()
    workloads = [*paper_workloads(), booster_workload()]
    rows = measure([case for workload in workloads for case in cases(workload)], args.repeats)
    total = time.perf_counter() - started
    load_after = os.getloadavg()
    outside = [r for r in rows if not 0.5 <= r["ratio"] <= 2.0]
    report = (
        "# The Compare page's SHAP and LIME estimates against the runs\n\n"
        f"Run {datetime.date.today().isoformat()} on {machine()}; load average {load_before[0]:.2f} / "
        f"{load_before[1]:.2f} / {load_before[2]:.2f} (1 / 5 / 15 min) at the start, {load_after[0]:.2f} / "
        f"{load_after[1]:.2f} / {load_after[2]:.2f} at the end "
        f"({'idle at the start' if load_before[0] < IDLE_LOAD else 'the machine was shared, not idle'}); "
        f"{total:.0f} s in all.\n"
        f"Command: `FLEX_DATA_DIR=... python benchmarks/bench_estimates.py"
        f"{'' if args.repeats == 3 else f' --repeats {args.repeats}'}`\n\n"
        f"Each of {args.repeats} rounds makes every case's estimate as the page does (timing it took: the wait "
        "before the page can say it), then the run; medians over the rounds, ranges in brackets; estimate / actual "
        "is the ratio of the medians, in brackets its range over the rounds' pairs. LIME's rows are the first of "
        "the 200 global factuals (a region's size, not its members).\n\n"
        + table(rows)
        + f"\nCases whose estimate is outside 0.5–2× of the run: {len(outside)} of {len(rows)}"
        + ("" if not outside else ": " + "; ".join(f"{r['workload']}, {r['method']}, {r['rows']} factuals ({r['ratio']:.2f}×)"
                                                      for r in outside))
        + ".\n"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "estimates.md").write_text(report)
    print(report)
    return report


if __name__ == "__main__":
    main()
