"""Region discovery and group comparison on the paper's data, once the pool's counterfactuals exist.

Issue 22's targets: with the pool generated, discovery over every one- and two-condition candidate
takes <= 10 s and the group comparison <= 2 s, on loan and on accidents. Per dataset: the paper's
random forest (seed 0), the default generator (the one that ran is printed; n_cf 10), a pool of 1,000 factuals
(seed 0; every factual when there are fewer). Times are medians of ``--repeats`` runs after the pool
exists (the first discovery run included: nothing is cached between runs but the counterfactuals).
Also prints what was found: the top regions and the group verdicts. Writes
benchmarks/results/regions.md.

    FLEX_DATA_DIR=/path/to/data python benchmarks/bench_regions.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc

#: A 1-minute load average below this at the start counts as an idle machine (the run itself then adds one).
IDLE_LOAD = 0.3
DATA = Path(os.environ.get("FLEX_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
DATASETS = {
    "loan": (lambda: fc.data.load_loan(DATA / "loan_approval_dataset.csv"), ["education", "self_employed", "cibil_score"]),
    "accidents": (lambda: fc.data.load_accidents(DATA / "RTA_Dataset.csv"),
                  ["Age_band_of_driver", "Sex_of_driver", "Driving_experience"]),
}
N_FACTUALS = 1000
TOP = 6


def timed(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, statistics.median(times), times


def cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run(name: str, repeats: int) -> dict:
    load, groups_by = DATASETS[name]
    task = load()
    started = time.perf_counter()
    explainer = fc.FlexExplainer.from_task(task, "rf", seed=0, fit_options={"cv_folds": 0})
    fit_seconds = time.perf_counter() - started
    rows = fc.importance.sample_factuals(explainer.store.factual_rows, N_FACTUALS, seed=explainer.seed)
    started = time.perf_counter()
    explainer.counterfactuals(rows)
    pool_seconds = time.perf_counter() - started
    regions, regions_s, regions_all = timed(lambda: explainer.find_regions(n_factuals=N_FACTUALS), repeats)
    coarse, tau_s, _ = timed(lambda: explainer.find_regions(n_factuals=N_FACTUALS, tau=0.2), repeats)
    groups = {}
    for by in groups_by:
        result, seconds, _ = timed(lambda by=by: explainer.compare_groups(by, n_factuals=N_FACTUALS), repeats)
        groups[by] = (result, seconds)
    return {
        "name": name, "task": task, "explainer": explainer, "fit": fit_seconds, "pool": pool_seconds, "rows": len(rows),
        "factuals": len(explainer.store.factual_rows), "regions": regions, "regions_s": regions_s,
        "regions_all": regions_all, "coarse": coarse, "tau_s": tau_s, "groups": groups,
    }


def _cost(median: float, low: float, high: float) -> str:
    """A group's median cost and its interval; no interval where the group is too small to have one."""
    if np.isnan(low) or np.isnan(high):
        return f"{median:.3f} (too few cases for an interval)"
    return f"{median:.3f} ({low:.3f}–{high:.3f})"


def region_table(result) -> list[str]:
    lines = [
        "| rank | region | size | 1 - r (95% interval) | L1 shift | F rises most | F falls most | q |",
        "|---:|---|---:|---|---:|---|---|---:|",
    ]
    for i, r in enumerate(result.regions[:TOP]):
        up = ", ".join(f"{t['name']} {t['shift']:+.2f}" for t in r.top_up[:2]) or "–"
        down = ", ".join(f"{t['name']} {t['shift']:+.2f}" for t in r.top_down[:2]) or "–"
        low, high = r.divergence_interval
        lines.append(f"| {i + 1} | {r.text} | {r.size} | {r.divergence:.2f} ({low:.2f}–{high:.2f}) | {r.l1_shift:.2f} | "
                     f"{up} | {down} | {r.q_value:.1e} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", default="loan,accidents")
    args = parser.parse_args()
    load_before = os.getloadavg()
    started = time.perf_counter()
    results = [run(name, args.repeats) for name in args.datasets.split(",")]
    total = time.perf_counter() - started
    load_after = os.getloadavg()
    generators = " / ".join(sorted({r["explainer"].generator_used for r in results}))
    refines = " / ".join(sorted({r["explainer"].refine_mode for r in results}))
    lines = [
        "# Region discovery and group comparison: speed, and what they find",
        "",
        f"Run {datetime.date.today().isoformat()} on {cpu()}, nproc {os.cpu_count()}, Python {platform.python_version()}, "
        f"numpy {np.__version__}; load average {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f} "
        f"(1 / 5 / 15 min) at the start, {load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f} at the end "
        f"({'idle at the start' if load_before[0] < IDLE_LOAD else 'the machine was shared, not idle'}); {total:.0f} s in all.",
        f"Command: `FLEX_DATA_DIR=... python benchmarks/bench_regions.py --repeats {args.repeats} --datasets {args.datasets}`.",
        "",
        f"Random forest (seed 0), generator {generators} (the default; n_cf 10, refinement {refines}), pool of "
        f"{N_FACTUALS:,} factuals (seed 0), τ = 0.1; flex_core {fc.__version__}; "
        "discovery with the defaults (one and two conditions, 4 quantile bins per number, min_support 20, 1,000 "
        f"permutations, FDR 0.1). Times: median of {args.repeats} runs once the pool's counterfactuals exist.",
        "",
        "| dataset | factuals (pool) | pool generation s | candidates tested | discovery s (target ≤ 10) | "
        "τ = 0.2 re-rank s | group comparison s (target ≤ 2) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        groups = "; ".join(f"{by} {seconds:.2f}" for by, (_, seconds) in r["groups"].items())
        runs = ", ".join(f"{t:.2f}" for t in r["regions_all"])
        lines.append(
            f"| {r['name']} | {r['factuals']:,} ({r['rows']:,}) | {r['pool']:.1f} | {r['regions'].counts['tested']:,} | "
            f"{r['regions_s']:.2f} ({runs}) | {r['tau_s']:.2f} | {groups} |"
        )
    for r in results:
        regions = r["regions"]
        counts = regions.counts
        lines += [
            "",
            f"## {r['name']}: regions that differ",
            "",
            f"{counts['conditions']} single conditions, {counts['tested']:,} candidates tested "
            f"({counts['same_members']} more had the same members as an earlier one), {counts['significant']:,} significant "
            f"at FDR 0.1; {counts['pruned']} two-condition regions pruned and {counts.get('near_copies', 0)} near "
            "copies of a region above left out while the list was filled. "
            f"Global F over the pool: "
            + ", ".join(f"{n} {f:.2f}" for n, f in sorted(zip(regions.feature_names, regions.global_frequency),
                                                          key=lambda item: -item[1]) if f > 0.005) + ".",
            "",
            *region_table(regions),
            "",
            "At τ = 0.2 the first regions are: " + "; ".join(f"{x.text} (1 - r {x.divergence:.2f})" for x in r["coarse"].regions[:3]) + ".",
        ]
        for by, (result, _) in r["groups"].items():
            table = result.to_frame()
            lines += [
                "",
                f"### {r['name']}: groups of {by}",
                "",
                "| group | factuals | flip share (95%) | median cost (95%) |",
                "|---|---:|---|---|",
                *[
                    f"| {row.value} | {row.factuals} | {row.flip_share:.2f} ({row.flip_share_low:.2f}–{row.flip_share_high:.2f}) | "
                    f"{_cost(row.cost_median, row.cost_low, row.cost_high)} |"
                    for row in table.itertuples()
                ],
                "",
                *[f"- {sentence}" for sentence in result.verdict],
            ]
    text = "\n".join(lines) + "\n"
    out = Path(__file__).parent / "results" / "regions.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
