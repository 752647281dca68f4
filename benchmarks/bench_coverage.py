"""Coverage of the 95% intervals of F_j, of ranks and of a region's r, on planted data with a known truth.

Two planted settings, each through the project's own API (CounterfactualStore with the
default generator, run_global, regional_importance):

- **synthetic-regional**, the built-in data with planted drivers (speed globally, lighting on
  rural roads), a random forest; region = factuals on rural roads;
- **rule**: a hand-built classifier, undesirable exactly when x1 <= 60 and x2 = "no" (x3, x4
  are ignored, zone is immutable); region = factuals with x1 > 50 (changes to x1 there are
  mostly under τ = 0.1 of its range, so the region's F differs from the global one).

Truth: F_j over ALL factuals, averaged over five generator seeds (a fixed, large sample), and
the region's F_j over all of its factuals the same way; the true rank is the rank of the true
F_j, the true r is Pearson's between the region's true F and the global true F over the
mutable features. Each run draws n factuals (global) and n members of the region, with a new
generator seed, so both the factual sample and the counterfactual draw vary, and asks whether
each 95% interval holds its truth. The bootstrap the intervals replace (percentile, 1,000
resamples of the factuals) is scored on the same runs, for comparison.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_coverage.py [--runs 100] [--sizes 5,12,40]

Writes benchmarks/results/coverage.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import flex_core as fc  # noqa: E402

TRUTH_SEEDS = (10_001, 10_002, 10_003, 10_004, 10_005)
N_CF = 10
TAU = 0.1


# -- planted settings -------------------------------------------------------------------------
class Rule:
    """Undesirable exactly when x1 <= 60 and x2 = "no"; x3, x4 and zone are ignored."""

    def predict_proba(self, X):
        bad = ((X["x1"].to_numpy(dtype=float) <= 60) & (X["x2"].astype(str).to_numpy() == "no")).astype(float)
        return np.column_stack([1 - bad, bad])


def rule_setting():
    rng = np.random.default_rng(0)
    n = 2000
    frame = pd.DataFrame(
        {
            "x1": rng.uniform(0, 100, n).round(1),
            "x2": rng.choice(["no", "yes"], n),
            "x3": rng.choice(["A", "B", "C", "D"], n),
            "x4": rng.normal(50, 15, n).round(2),
            "zone": rng.choice(["north", "south"], n),
        }
    )
    bad = (frame["x1"] <= 60) & (frame["x2"] == "no")
    frame["y"] = np.where(bad, "bad", "good")
    task = fc.make_task(frame, target="y", undesirable="bad", kinds={"x1": "continuous", "x4": "continuous"},
                        immutable=("zone",), name="rule")
    model = fc.FittedModel("rule", "onehot", 0, Rule(), frame.index.to_numpy(), np.empty(0, int))
    # Just below the threshold: x1 needs less than a tenth of its range to flip, so at τ = 0.1 its change
    # rarely counts and the region's F differs from the global one.
    return task, model, lambda rows: rows[task.frame.loc[rows, "x1"].to_numpy() > 50], "x1 > 50"


def synthetic_setting():
    task = fc.data.load_builtin("synthetic-regional")
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
    return task, model, lambda rows: fc.importance.rows_meeting(task, rows, "road_type=rural"), "road_type = rural"


SETTINGS = {"synthetic-regional (random forest)": synthetic_setting, "rule: x1 <= 60 and x2 = no": rule_setting}


# -- the bootstrap the intervals replace (as it was), for the comparison column -----------------
def old_bootstrap(local: np.ndarray, seed: int, n_boot: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    rows = local[~np.isnan(local).all(axis=1)]
    means = fc.importance.bootstrap_means(rows, fc.importance.bootstrap_counts(len(rows), n_boot=n_boot, seed=seed))
    ranks = rankdata(-means, axis=1, method="min")
    ci = np.percentile(means, [2.5, 97.5], axis=0).T
    return ci, np.percentile(ranks, [2.5, 97.5], axis=0, method="inverted_cdf").T.astype(float)


def old_bootstrap_r(local: np.ndarray, global_: np.ndarray, include: np.ndarray, seed: int = 0, n_boot: int = 1000):
    rows = local[~np.isnan(local).all(axis=1)]
    if len(rows) < 2 or include.sum() < 3:
        return float("nan"), float("nan")
    picks = np.random.default_rng(seed).integers(0, len(rows), size=(n_boot, len(rows)))
    regional = rows[picks][:, :, include].mean(axis=1)
    reg_c = regional - regional.mean(axis=1, keepdims=True)
    glo_c = global_[include] - global_[include].mean()
    denom = np.sqrt((reg_c**2).sum(axis=1) * (glo_c**2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(denom > 0, (reg_c * glo_c).sum(axis=1) / denom, np.nan)
    r = r[~np.isnan(r)]
    if len(r) < n_boot / 2:
        return float("nan"), float("nan")
    low, high = np.percentile(r, [2.5, 97.5])
    return float(low), float(high)


# -- the experiment ------------------------------------------------------------------------------
def _inside(interval, truth) -> np.ndarray:
    interval = np.asarray(interval, dtype=float)
    return (interval[..., 0] <= truth + 1e-12) & (truth <= interval[..., 1] + 1e-12)


def truth_for(task, model, region_of) -> dict:
    generator = fc.counterfactuals.make_generator(fc.counterfactuals.DEFAULT_GENERATOR)
    pool = fc.counterfactuals.CounterfactualStore(task, model, generator, n_cf=N_CF).factual_rows
    region = region_of(pool)
    global_runs: list[np.ndarray] = []
    regional_runs: list[np.ndarray] = []
    results: list[fc.FlexResult] = []
    for seed in TRUTH_SEEDS:
        store = fc.counterfactuals.CounterfactualStore(task, model, generator, n_cf=N_CF, seed=seed)
        result = fc.importance.run_global(store, n_factuals=len(pool), tau=TAU)
        results.append(result)
        global_runs.append(result.frequency_mean)
        local = pd.DataFrame(result.local_frequencies, index=result.query_index).loc[region].to_numpy()
        regional_runs.append(np.nanmean(local, axis=0))
    first = results[0]
    global_f, regional_f = np.mean(global_runs, axis=0), np.mean(regional_runs, axis=0)
    mutable = ~np.array(first.immutable)
    return {
        "pool": pool,
        "region": region,
        "global": global_f,
        "regional": regional_f,
        "rank": rankdata(-global_f, method="min"),
        "regional_rank": rankdata(-regional_f, method="min"),
        "r": fc.importance.compare_with_global(regional_f, global_f, mutable)[0],
        "mutable": mutable,
        "global_result": replace(first, frequency_mean=global_f),
        "names": first.feature_names,
    }


def run_setting(task, model, region_of, *, runs: int, sizes: list[int], log) -> tuple[dict, dict]:
    truth = truth_for(task, model, region_of)
    generator = fc.counterfactuals.make_generator(fc.counterfactuals.DEFAULT_GENERATOR)
    mutable = truth["mutable"]
    keys = ("F", "F_old", "rank", "rank_old", "F_reg", "F_reg_old", "rank_reg", "rank_reg_old")
    hits = {n: {k: np.zeros(len(mutable)) for k in keys} for n in sizes}
    widths: dict[int, dict[str, list[float]]] = {n: {"F": [], "F_old": [], "F_reg": [], "F_reg_old": [], "r": [], "r_old": []} for n in sizes}
    r_hits = {n: {"r": 0, "r_old": 0, "r_nan": 0, "r_old_nan": 0} for n in sizes}
    for k in range(runs):
        store = fc.counterfactuals.CounterfactualStore(task, model, generator, n_cf=N_CF, seed=k)
        rng = np.random.default_rng(k)
        for n in sizes:
            h, w, rh = hits[n], widths[n], r_hits[n]
            # Global: n factuals drawn from all of them, with this run's generator seed.
            result = fc.importance.run_global(store, n_factuals=n, tau=TAU, sample_seed=k)
            old_ci, old_ranks = old_bootstrap(result.local_frequencies, seed=k)
            h["F"] += _inside(result.frequency_ci, truth["global"])
            h["F_old"] += _inside(old_ci, truth["global"])
            h["rank"] += _inside(result.rank_interval, truth["rank"])
            h["rank_old"] += _inside(old_ranks, truth["rank"])
            w["F"].append(np.diff(result.frequency_ci[mutable], axis=1).mean())
            w["F_old"].append(np.diff(old_ci[mutable], axis=1).mean())
            # A region: n of its factuals, compared with the global truth.
            members = [int(m) for m in rng.choice(truth["region"], size=n, replace=False)]
            cfset = store.ensure(members)
            regional = fc.importance.regional_importance(
                cfset, task, truth["global_result"], query=members[0], members=members, distances=[0.0] * n,
                tau=TAU, ranges=store.ranges,
            )
            imp = regional.importance
            old_ci, old_ranks = old_bootstrap(imp.local_frequencies, seed=k)
            h["F_reg"] += _inside(imp.frequency_ci, truth["regional"])
            h["F_reg_old"] += _inside(old_ci, truth["regional"])
            h["rank_reg"] += _inside(imp.rank_interval, truth["regional_rank"])
            h["rank_reg_old"] += _inside(old_ranks, truth["regional_rank"])
            w["F_reg"].append(np.diff(imp.frequency_ci[mutable], axis=1).mean())
            w["F_reg_old"].append(np.diff(old_ci[mutable], axis=1).mean())
            low, high = regional.pearson_r_interval
            old_low, old_high = old_bootstrap_r(imp.local_frequencies, truth["global"], mutable)
            rh["r_nan"] += np.isnan(low)
            rh["r_old_nan"] += np.isnan(old_low)
            rh["r"] += bool(low <= truth["r"] <= high)
            rh["r_old"] += bool(old_low <= truth["r"] <= old_high)
            if not np.isnan(low):
                w["r"].append(high - low)
            if not np.isnan(old_low):
                w["r_old"].append(old_high - old_low)
        if (k + 1) % 10 == 0:
            log(f"  run {k + 1}/{runs}")
    return truth, {"hits": hits, "widths": widths, "r_hits": r_hits}


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip() or str(os.cpu_count())
    return f"{cpu}, nproc {nproc}, Python {platform.python_version()}"


def _pct(x: float) -> str:
    return f"{x:.2f}"


def report(name: str, where: str, truth: dict, out: dict, *, runs: int, sizes: list[int]) -> list[str]:
    names, mutable = truth["names"], truth["mutable"]
    shown = [j for j in range(len(names)) if mutable[j]]
    fixed = [names[j] for j in range(len(names)) if not mutable[j]]
    r_true = truth["r"]
    lines = [
        f"### {name}",
        "",
        f"{len(truth['pool'])} factuals, {len(truth['region'])} of them in the region ({where}). True global F: "
        + ", ".join(f"{names[j]} {truth['global'][j]:.3f}" for j in shown)
        + "; true regional F: "
        + ", ".join(f"{names[j]} {truth['regional'][j]:.3f}" for j in shown)
        + f"; true r = {r_true:.3f}. Immutable ({', '.join(fixed) or 'none'}): F = 0 by construction, interval [0, 0], "
        "always covered, not counted below.",
        "",
        "Coverage of the 95% interval of F_j, per feature (Wilson, continuity-corrected; in brackets the percentile "
        "bootstrap it replaces), and of the rank interval:",
        "",
        "| factuals | level | " + " | ".join(f"F: {names[j]}" for j in shown) + " | rank: " + " / ".join(names[j] for j in shown)
        + " | mean width of F interval |",
        "|---|---|" + "---|" * len(shown) + "---|---|",
    ]
    for n in sizes:
        h, w = out["hits"][n], out["widths"][n]
        for level, f_key, rank_key in (("global", "F", "rank"), ("region", "F_reg", "rank_reg")):
            cells = [f"**{_pct(h[f_key][j] / runs)}** ({_pct(h[f_key + '_old'][j] / runs)})" for j in shown]
            ranks = " / ".join(f"{_pct(h[rank_key][j] / runs)} ({_pct(h[rank_key + '_old'][j] / runs)})" for j in shown)
            width = f"{np.mean(w[f_key]):.2f} ({np.mean(w[f_key + '_old']):.2f})"
            lines.append(f"| {n} | {level} | " + " | ".join(cells) + f" | {ranks} | {width} |")
    lines += [
        "",
        "Coverage of the 95% interval of the region's r against the global F (true r as above; in brackets the "
        "bootstrap it replaces). 'none' counts runs where no interval was given (r undefined on the drawn members); "
        "they count as not covered.",
        "",
        "| factuals | r covered | none | mean width | bootstrap: covered | none | mean width |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in sizes:
        rh, w = out["r_hits"][n], out["widths"][n]
        lines.append(
            f"| {n} | **{_pct(rh['r'] / runs)}** | {rh['r_nan']} | {np.mean(w['r']) if w['r'] else float('nan'):.2f} "
            f"| {_pct(rh['r_old'] / runs)} | {rh['r_old_nan']} | {np.mean(w['r_old']) if w['r_old'] else float('nan'):.2f} |"
        )
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--sizes", default="5,12,40")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "coverage.md"))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    start = time.perf_counter()
    load = os.getloadavg()[0]

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    sections = []
    for name, build in SETTINGS.items():
        log(f"{name}: truth over all factuals with {len(TRUTH_SEEDS)} generator seeds, then {args.runs} runs")
        task, model, region_of, where = build()
        truth, out = run_setting(task, model, region_of, runs=args.runs, sizes=sizes, log=log)
        sections += report(name, where, truth, out, runs=args.runs, sizes=sizes)
    seconds = time.perf_counter() - start
    command = "PYTHONPATH=. .venv/bin/python benchmarks/bench_coverage.py" + (
        f" --runs {args.runs}" if args.runs != 100 else "") + (f" --sizes {args.sizes}" if args.sizes != "5,12,40" else "")
    header = [
        "# Coverage of the 95% intervals on planted data",
        "",
        f"Run {datetime.date.today().isoformat()} on {machine()}; load average {load:.2f} at the start; "
        f"{seconds:.0f} s. Command: `{command}`.",
        "",
        f"Each row: {args.runs} seeded runs (run k: generator seed k, factual sample seed k). Generator "
        f"{fc.counterfactuals.DEFAULT_GENERATOR} (refine={fc.counterfactuals.default_refine(fc.counterfactuals.DEFAULT_GENERATOR)}), "
        f"N_cf = {N_CF}, τ = {TAU}. Truth: F_j over all factuals (and over all of the region's), averaged over "
        f"generator seeds {', '.join(map(str, TRUTH_SEEDS))}. A coverage of 0.95 over {args.runs} runs has a standard "
        f"error of about {np.sqrt(0.95 * 0.05 / args.runs):.2f}.",
        "",
    ]
    text = "\n".join(header + sections)
    Path(args.out).write_text(text)
    print(text)
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
