"""TreeSHAP against KernelSHAP on boosters trained outside the project (issue 19).

Workload: sklearn's breast-cancer data (569 rows, 30 columns, every name with spaces), a
100-tree XGBoost and a 100-tree LightGBM classifier trained on it as a user would (their own
defaults otherwise, one thread each), wrapped in ``fc.FlexExplainer(model, X, y=y)``; SHAP on
the first ``--rows`` factuals (rows the model predicts malignant, the undesired class) with
``explainer="tree"`` and ``explainer="kernel"`` (the fallback, 20 background rows, nsamples
"auto"), each ``--repeats`` times in the same process, side by side, after one untimed call
on two rows (the first call pays for importing shap). The table gives the range
over the repeats and the ratio of the medians. Writes benchmarks/results/shap.md.

    python benchmarks/bench_shap.py [--rows 40] [--repeats 3]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> str:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
        platform.processor() or "unknown CPU",
    )
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def boosters(X, y):
    import lightgbm
    import xgboost

    codes = (y == "benign").astype(int)
    return {
        "XGBoost (100 trees)": xgboost.XGBClassifier(n_estimators=100, n_jobs=1, random_state=0).fit(X, codes),
        "LightGBM (100 trees)": lightgbm.LGBMClassifier(n_estimators=100, n_jobs=1, random_state=0, verbose=-1).fit(X, y),
    }


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer(as_frame=True)
    X, y = data.data, data.target.map({0: "malignant", 1: "benign"})
    started, lines = time.perf_counter(), []
    for name, model in boosters(X, y).items():
        undesired = 0 if name.startswith("XGBoost") else "malignant"
        explainer = fc.FlexExplainer(model, X, y=y if undesired == "malignant" else (y == "benign").astype(int),
                                     undesired=undesired)
        rows = list(fc.counterfactuals.factual_rows(explainer.task, explainer.model)[: args.rows])
        times: dict[str, list[float]] = {"tree": [], "kernel": []}
        ran: dict[str, str] = {}
        explainer.shap(rows[:2], explainer="tree")  # untimed: loads shap and builds the explainer's code paths once
        for _ in range(args.repeats):
            for kind in times:
                start = time.perf_counter()
                result = explainer.shap(rows, explainer=kind)
                times[kind].append(time.perf_counter() - start)
                ran[kind] = result.explainer
        ratio = statistics.median(times["kernel"]) / statistics.median(times["tree"])
        lines.append(
            f"| {name} | {len(rows)} | {ran['tree']}: {min(times['tree']):.2f}–{max(times['tree']):.2f} s "
            f"| {ran['kernel']}: {min(times['kernel']):.1f}–{max(times['kernel']):.1f} s | {ratio:.0f}× |"
        )
    report = (
        "# SHAP on boosters: TreeSHAP against KernelSHAP\n\n"
        f"Run {datetime.date.today().isoformat()} on {machine()}; load average at the start "
        f"{os.getloadavg()[0]:.2f}; total {time.perf_counter() - started:.0f} s. "
        f"Range over {args.repeats} runs each, side by side in one process; × = ratio of the medians.\n"
        "Command: `python benchmarks/bench_shap.py"
        f"{'' if args.rows == 40 else f' --rows {args.rows}'}{'' if args.repeats == 3 else f' --repeats {args.repeats}'}`\n\n"
        "| model (breast cancer, 569 × 30) | factuals | TreeSHAP | KernelSHAP | Kernel / Tree |\n"
        "|---|---:|---|---|---:|\n" + "\n".join(lines) + "\n"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "shap.md").write_text(report)
    print(report)
    return report


if __name__ == "__main__":
    main()
