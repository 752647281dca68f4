"""The cost of issue 40's model views on loan: the held-out curves (Data & model) and permutation importance (Compare).

Workload: loan, the project's random forest as the app trains it (``fit_model(task, model="rf", seed=0)``, not timed),
its held-out 20% test split (854 rows). Timed, each from cold (nothing cached), as the app computes it once before
caching it:

- ``curves``: :func:`flex_core.models.model_curves` (the model scores the held-out rows; ROC, precision-recall, gain,
  precision by bin), then the page's figure with the cutoff marked (``model_curves_figure``) and its JSON, which is
  what Streamlit sends the browser;
- ``permutation``: :func:`flex_core.compare.permutation_importance` (11 features x 5 shuffles, 56 scorings).

    FLEX_DATA_DIR=../shared/data python benchmarks/bench_quality.py [--dataset loan]

Run it three times on an idle machine for a published figure; the output names the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc
from benchmarks.bench_generators import load, machine


def time_views(task: fc.TaskSpec, model: fc.FittedModel) -> dict[str, float]:
    """Seconds of each view, computed once from cold."""
    started = time.perf_counter()
    curves = fc.models.model_curves(task, model)
    held = fc.models.held_out_predictions(task, model)
    figure = fc.plotting.model_curves_figure(curves, at=fc.models.quality_at_cutoff(held.y_true, held.p, 0.5))
    figure.to_json()
    curves_seconds = time.perf_counter() - started
    started = time.perf_counter()
    fc.compare.permutation_importance(task, model, seed=0)
    return {"curves": curves_seconds, "permutation": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="loan")
    args = parser.parse_args()
    task = load(args.dataset)
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
    fc.plotting.model_curves_figure  # noqa: B018 -- plotly's import, paid once by the app at start, not timed
    seconds = time_views(task, model)
    print(f"{args.dataset}: {len(model.test_index):,} held-out rows, {len(task.feature_names)} features")
    for view, value in seconds.items():
        print(f"  {view}: {value:.2f} s")
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
