"""Cost of the Compare page's SHAP views, its one-case section and partial dependence (issue 40 items 2 and 3).

Workload: loan (or ``--datasets``), the project's random forest (``fit_model(task, model="rf", seed=0,
cv_folds=2)``), the default generator (n_cf = 10, seed 0), global FLEX on ``--n-factuals`` factuals (the app's
default 200) and TreeSHAP on them, computed untimed first: SHAP runs only when asked, under a progress bar, and
is timed by ``bench_shap.py``. Then, each timed as the page computes it on a rerun that needs it:

- beeswarm: ``fc.plotting.shap_beeswarm_figure`` on every explained factual;
- dependence: ``fc.compare.strongest_interaction`` for the feature with the largest mean |SHAP| and its figure;
- case: the first factual's local FLEX (``explain_local``, from stored counterfactuals), ``fc.compare.case_agreement``
  and its figure;
- ICE: ``fc.compare.dependence_curves`` (200 drawn rows and the case, 40 grid values plus the case's own and its
  ways out's) for the feature its ways out change most, and ``fc.plotting.ice_figure``.

Each view is timed ``--repeats`` times and the median reported (figures: building the Plotly object, not drawing it
in a browser).

    FLEX_DATA_DIR=../shared/data python benchmarks/bench_compare_views.py [--datasets loan] [--repeats 3]

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


def _timed(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def bench(name: str, n_factuals: int, repeats: int) -> dict:
    task = load(name)
    explainer = fc.FlexExplainer.from_task(task, fc.fit_model(task, model="rf", seed=0, cv_folds=2), n_cf=10, seed=0)
    result = explainer.explain_global(n_factuals=n_factuals)
    shap = explainer.shap(result.query_index)
    top = shap.feature_names[int(np.argmax(shap.mean_abs))]
    row = int(result.query_index[0])
    labels = [f.label for f in task.features]

    def dependence():
        found = fc.compare.strongest_interaction(shap, task, top)
        return fc.plotting.shap_dependence_figure(shap, task, top, found.strongest)

    def case():
        local = explainer.explain_local([row], tau=0.0)[0]  # any change counts, as on the page
        agreement = fc.compare.case_agreement(labels, shap.values[0], local.frequency_mean, immutable=local.immutable,
                                              undesirable=task.undesirable_words, row=row)
        return fc.plotting.case_contributions_figure(agreement)

    local = explainer.explain_local([row], tau=0.0)[0]
    feature = task.feature_names[int(np.argmax(local.frequency_mean))]
    cfset = explainer.counterfactuals([row])
    ways_out = fc.counterfactuals.decode_rows(task, cfset.counterfactuals[0][cfset.valid[0]])

    def ice():
        curves = fc.compare.dependence_curves(explainer.model, task, feature, query=row, counterfactuals=ways_out)
        return fc.plotting.ice_figure(curves)

    return {
        "dataset": name, "factuals": len(result.query_index), "shap seconds (untimed here)": round(shap.seconds, 2),
        "beeswarm": _timed(lambda: fc.plotting.shap_beeswarm_figure(shap, task), repeats)[0],
        f"dependence ({top})": _timed(dependence, repeats)[0],
        "case": _timed(case, repeats)[0],
        f"ICE ({feature})": _timed(ice, repeats)[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="loan")
    parser.add_argument("--n-factuals", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{machine()}; load average {os.getloadavg()[0]:.2f}")
    for name in args.datasets.split(","):
        for key, value in bench(name, args.n_factuals, args.repeats).items():
            print(f"{key}: {value:.3f} s" if isinstance(value, float) and key[0] in "bdcI" else f"{key}: {value}")


if __name__ == "__main__":
    main()
