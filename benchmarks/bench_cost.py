"""FLEX against KernelSHAP and TreeSHAP as the number of features F grows (issue 5).

The paper claims FLEX costs O(F·N_s·N_cf) against KernelSHAP's O(2^F·N_s). This
measures it: synthetic data with F = 4, 8, 16, 32 continuous features, the same
rows and the same random forest settings for every F, N_s explained factuals.

- FLEX: the project's DEFAULT_GENERATOR (generation included) + FLEX's metrics, N_cf
  counterfactuals per factual.
- KernelSHAP: ``shap.KernelExplainer`` with a 10-centre ``shap.kmeans`` background and
  its default ``nsamples="auto"`` (2F + 2048 model evaluations per row, capped at 2^F - 2
  for small F): its cost is set by nsamples, not literally by 2^F.
- TreeSHAP: ``shap.TreeExplainer`` on the same forest (exact, polynomial).

Each timing is the median of ``--repeats`` runs. Prints a Markdown table, writes it to
benchmarks/results/cost_vs_features.md and a plot to benchmarks/results/cost_vs_features.png.

    python benchmarks/bench_cost.py [--repeats 3] [--n-factuals 20] [--n-cf 10]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc

RESULTS = Path(__file__).resolve().parent / "results"


def synthetic_task(n_features: int, *, n_rows: int = 1500, seed: int = 0) -> fc.TaskSpec:
    """Continuous features with decaying influence on a noisy linear score; ~40% undesirable."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    weights = 1.0 / np.arange(1, n_features + 1)
    score = X @ weights + rng.normal(scale=0.3, size=n_rows)
    frame = pd.DataFrame(X.round(3), columns=[f"x{j:02d}" for j in range(n_features)])
    frame["outcome"] = np.where(score > np.quantile(score, 0.6), "bad", "good")
    return fc.make_task(frame, target="outcome", undesirable="bad", name=f"synthetic F={n_features}")


def median_seconds(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(n_features: int, *, n_factuals: int, n_cf: int, repeats: int, generator: str) -> dict:
    import shap

    task = synthetic_task(n_features)
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=2)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), n_factuals, seed=0)
    classifier = model.pipeline.named_steps["classify"]
    encoded = np.asarray(model.pipeline.named_steps["encode"].transform(task.frame.loc[rows, task.feature_names]))
    training = np.asarray(model.pipeline.named_steps["encode"].transform(task.frame.loc[model.train_index, task.feature_names]))

    def flex():
        # A fresh store each time: generation is part of FLEX's cost here.
        store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator(generator), n_cf=n_cf, seed=0)
        cfset = store.ensure(rows)
        fc.importance.flex_importance(cfset, task, tau=0.1)

    background = shap.kmeans(training, 10)

    def kernel():
        explainer = shap.KernelExplainer(lambda z: classifier.predict_proba(z)[:, 1], background)
        explainer.shap_values(encoded, silent=True)

    def tree():
        shap.TreeExplainer(classifier).shap_values(encoded)

    return {
        "F": n_features,
        "FLEX (s)": median_seconds(flex, repeats),
        "KernelSHAP (s)": median_seconds(kernel, repeats),
        "TreeSHAP (s)": median_seconds(tree, repeats),
        "Kernel evals/row": min(2 * n_features + 2048, 2**n_features - 2),
    }


def plot(frame: pd.DataFrame, path: Path, title: str) -> None:
    import plotly.graph_objects as go

    fig = go.Figure()
    for column in ("FLEX (s)", "KernelSHAP (s)", "TreeSHAP (s)"):
        fig.add_trace(go.Scatter(x=frame["F"], y=frame[column], mode="lines+markers", name=column.replace(" (s)", "")))
    fig.update_xaxes(type="log", tickvals=list(frame["F"]), title_text="number of features F")
    fig.update_yaxes(type="log", title_text="seconds (median)")
    fig.update_layout(template="plotly_white", title=title, width=760, height=440)
    fig.write_image(path)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--n-factuals", type=int, default=20)
    parser.add_argument("--n-cf", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    generator = fc.counterfactuals.DEFAULT_GENERATOR
    rows = []
    for n_features in args.features:
        rows.append(measure(n_features, n_factuals=args.n_factuals, n_cf=args.n_cf, repeats=args.repeats, generator=generator))
        print(rows[-1], file=sys.stderr, flush=True)
    frame = pd.DataFrame(rows)
    base = frame.iloc[0]
    for column in ("FLEX (s)", "KernelSHAP (s)", "TreeSHAP (s)"):
        frame[column.replace("(s)", f"x vs F={int(base['F'])}")] = frame[column] / base[column]
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs (shared, noisy), Python {platform.python_version()}"
    header = (
        f"FLEX (generator `{generator}`, {args.n_cf} CFs per factual, generation included) vs KernelSHAP "
        f"(kmeans-10 background, nsamples auto) vs TreeSHAP; random forest (100 trees), {args.n_factuals} factuals, "
        f"1500 rows; median of {args.repeats} runs; {machine}."
    )
    table = _table(frame)
    text = f"{header}\n\n{table}\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cost_vs_features.md").write_text(text)
    plot(frame, RESULTS / "cost_vs_features.png", f"Explanation cost vs F ({args.n_factuals} factuals)")


def _table(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(frame.columns) + " |", "| " + " | ".join("---" for _ in frame.columns) + " |"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in row) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
