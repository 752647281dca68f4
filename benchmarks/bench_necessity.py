"""Cost of the "what must change" scores on the paper's data, measured side by side in one run.

For each dataset (loan, accidents; 200 factuals x 10 counterfactuals, default generator):

- generating the counterfactuals (what every analysis pays once);
- the necessary-change masks (every single-feature revert of every valid counterfactual,
  one batched model call, once per counterfactual set);
- a τ change with the stored counterfactuals and masks (FLEX, necessary F, intervals of F
  and ranks): median of 20 τ values;
- flips-alone and needed shares (and the necessity and sufficiency ratios) on request: two
  generator runs per mutable feature, also as a multiple of the generation above;
- the whole ``global`` command (load, fit with 10-fold CV, generate, FLEX) with and without
  ``--sufficiency``, three runs each, as a user runs it: the issue's "at most 3x the global run".

    .venv/bin/python benchmarks/bench_necessity.py [--n-factuals 200] [--n-cf 10]

Writes benchmarks/results/necessity.md. Paper data from FLEX_DATA_DIR (default ../shared/data).
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def bench(task, *, n_factuals: int, n_cf: int) -> dict:
    import numpy as np

    import flex_core as fc

    model = fc.fit_model(task, model="rf", seed=0, cv_folds=2)
    generator = fc.counterfactuals.make_generator(fc.counterfactuals.DEFAULT_GENERATOR)
    store = fc.counterfactuals.CounterfactualStore(task, model, generator, n_cf=n_cf, seed=0)
    rows = fc.importance.sample_factuals(store.factual_rows, n_factuals, seed=0)
    start = time.perf_counter()
    cfset = store.ensure(rows)
    generate = time.perf_counter() - start
    start = time.perf_counter()
    store.necessary_changes(cfset)
    masks = time.perf_counter() - start
    times = []
    for tau in np.linspace(0.02, 0.4, 20):
        start = time.perf_counter()
        result = fc.importance.run_global(store, n_factuals=n_factuals, tau=float(tau))
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    scores = fc.importance.necessity_sufficiency(store, result.query_index)
    both = time.perf_counter() - start
    return {
        "features": len(store.varying_features),
        "generate_s": generate,
        "masks_s": masks,
        "tau_ms": 1000 * statistics.median(times),
        "necessity_sufficiency_s": both,
        "runs": scores.generator_runs,
    }


def cli_seconds(spec: str, *extra: str, runs: int = 3) -> list[float]:
    """Wall seconds of ``python -m flex_core global --data SPEC`` (default settings), ``runs`` times."""
    import subprocess
    import tempfile

    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "flex_core", "global", "--data", spec, "--quiet", "--out",
                            str(Path(tmp) / "out.json"), *extra], check=True, cwd=REPO)
            times.append(time.perf_counter() - start)
    return times


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-factuals", type=int, default=200)
    parser.add_argument("--n-cf", type=int, default=10)
    args = parser.parse_args()
    data_dir = Path(os.environ.get("FLEX_DATA_DIR", REPO.parent / "shared" / "data"))
    import flex_core as fc

    lines = [
        f"Run {datetime.date.today().isoformat()}; `.venv/bin/python benchmarks/bench_necessity.py`; machine: "
        f"{_cpu()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start, "
        f"Python {platform.python_version()}; generator {fc.counterfactuals.DEFAULT_GENERATOR} "
        f"(refine={fc.counterfactuals.default_refine(fc.counterfactuals.DEFAULT_GENERATOR)}), "
        f"N_F={args.n_factuals}, N_cf={args.n_cf}",
        "",
        "| dataset | mutable features | generate counterfactuals | necessary-change masks (once) "
        "| τ change: FLEX + necessary F + intervals (median) | flips alone + needed (generator runs) "
        "| × the generation |",
        "|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    whole = ["", "The whole `global` command (load, random forest with 10-fold CV, 200 × 10, FLEX), three runs each:", "",
             "| dataset | `global` | `global --sufficiency` | with / without |", "|---|---|---|---|"]
    for name, file, loader in (
        ("loan", "loan_approval_dataset.csv", fc.data.load_loan),
        ("accidents", "RTA_Dataset.csv", fc.data.load_accidents),
    ):
        if not (data_dir / file).is_file():
            lines.append(f"| {name} | {file} not found in {data_dir} | | | | | |")
            continue
        r = bench(loader(data_dir / file), n_factuals=args.n_factuals, n_cf=args.n_cf)
        spec = f"{name}:{data_dir / file}"
        plain, with_scores = cli_seconds(spec), cli_seconds(spec, "--sufficiency")
        whole.append(f"| {name} | {min(plain):.1f}–{max(plain):.1f} s | {min(with_scores):.1f}–{max(with_scores):.1f} s "
                     f"| {min(with_scores) / max(plain):.1f}–{max(with_scores) / min(plain):.1f}× |")
        lines.append(
            f"| {name} | {r['features']} | {r['generate_s']:.1f} s | {r['masks_s']:.2f} s | {r['tau_ms']:.0f} ms "
            f"| {r['necessity_sufficiency_s']:.1f} s ({r['runs']}) | {r['necessity_sufficiency_s'] / r['generate_s']:.0f}× |"
        )
        print(lines[-1], flush=True)
    lines += whole
    print("\n".join(whole), flush=True)
    out = REPO / "benchmarks" / "results" / "necessity.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
