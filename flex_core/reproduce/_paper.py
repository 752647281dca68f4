"""``python -m flex_core reproduce``: the paper's experiments on both datasets, as a Markdown report.

Runs what Section 4 of the paper reports (random forest metrics; global FLEX with
200 factuals x 10 counterfactuals next to SHAP; the four accident regions next to
LIME with Pearson r against global; the mode-shift table of region 1; the τ panels
on loan) and writes ``report.md`` with figures and ``results.json`` with every number,
the paper's published values beside ours.

This module runs the steps in order and writes the two files; the experiments are in
:mod:`._experiments`, the paper's values in :mod:`._reference`, the report's text in :mod:`._report`.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from .._contract import json_safe, library_versions, result_header
from .._errors import DataError
from ..counterfactuals import DEFAULT_GENERATOR
from ..data import load_accidents, load_loan
from ..models import fit_model
from ._experiments import (
    QUICK,
    ReproductionSettings,
    global_runs,
    metrics_rows,
    rank_comparison,
    ranking_facts,
    region_runs,
    share_changing_at_most,
    tau_facts,
    tau_runs,
)
from ._reference import DATA_FILES, PAPER_GENERATOR
from ._report import FigureWriter, findings, machine, ranking_lines, regions_lines, report, tau_lines

__all__ = ["ReproductionSettings", "QUICK", "reproduce", "add_reproduce_parser", "run_reproduce"]


def reproduce(
    data_dir: str | Path,
    out_dir: str | Path,
    *,
    quick: bool = False,
    settings: ReproductionSettings | None = None,
    log: Callable[[str], None] | None = None,
    cluster: bool = False,
) -> dict:
    """Run the paper's experiments and write ``report.md``, ``results.json`` and ``figures/`` into ``out_dir``.

    Parameters
    ----------
    data_dir : folder holding ``RTA_Dataset.csv`` and ``loan_approval_dataset.csv``
    out_dir : folder for the report (created)
    quick : use :data:`QUICK` (few factuals, 2-fold CV) instead of the paper's sizes
    settings : explicit sizes; overrides ``quick``
    cluster : generate every counterfactual on the connected ``dask.distributed`` cluster (the CLI's ``--dask``);
        the numbers are those of one process

    Returns
    -------
    dict with the report path, the run time and the headline numbers.
    """
    log = log or (lambda message: None)
    settings = settings or (QUICK if quick else ReproductionSettings())
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    missing = [f for f in DATA_FILES.values() if not (data_dir / f).is_file()]
    if missing:
        raise DataError(f"{data_dir} lacks {', '.join(missing)}; point --data-dir at the folder with the paper's two CSV files.")
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = FigureWriter(out_dir / "figures", settings.figure_format)
    default = DEFAULT_GENERATOR
    generators = list(dict.fromkeys([PAPER_GENERATOR, default]))
    started = time.perf_counter()
    results: dict = {**result_header("reproduction"), "settings": asdict(settings), "config": asdict(settings),
                     "generators": generators, "default_generator": default}
    sections: dict[str, list[str]] = {}
    metric_rows, timings, sparsity = [], {}, {}
    headline: dict = {}

    for key, loader in (("accidents", load_accidents), ("loan", load_loan)):
        t0 = time.perf_counter()
        log(f"{key}: loading and fitting the random forest ({settings.cv_folds}-fold CV)")
        task = loader(data_dir / DATA_FILES[key])
        model = fit_model(task, model="rf", encoding="onehot", seed=settings.seed, cv_folds=settings.cv_folds)
        metric_rows += metrics_rows(key, model)
        runs, shap = global_runs(task, model, settings, generators, log, cluster=cluster)
        results[key], sparsity[key] = _dataset(key, task, runs, shap, settings, figures, sections, headline, log)
        timings[key] = time.perf_counter() - t0
        log(f"{key}: done in {timings[key]:.0f} s")

    total = time.perf_counter() - started
    results.update(seconds=timings | {"total": total}, versions=library_versions("shap", "lime"), machine=machine(), notes=figures.notes)
    text = report(settings, generators, default, metric_rows, sections, sparsity, timings, total, figures.notes, findings(results))
    (out_dir / "report.md").write_text(text)
    # Compact: with indentation the per-factual tables made it 1.7 MB, too large to keep in the repository.
    # json_safe: NaN (an undefined r, say) is written as null, as in every result's JSON.
    (out_dir / "results.json").write_text(json.dumps(json_safe(results), separators=(",", ":"), default=_json_default) + "\n")
    return {**result_header("reproduction_summary"), "report": str(out_dir / "report.md"),
            "results": str(out_dir / "results.json"), "seconds": total, "generators": generators,
            "pearson_r": json_safe(headline["r"]), "config": asdict(settings), "versions": results["versions"]}


def _dataset(key, task, runs, shap, settings, figures, sections, headline, log) -> tuple[dict, dict]:
    """One dataset's experiments: its entry in ``results.json`` and its sparsity per generator.

    ``runs`` and ``shap``: :func:`global_runs`' global FLEX per generator and SHAP on their factuals. Their ranks on
    both datasets, then the regions (accidents) or the τ panels (loan);
    the report's sections go into ``sections``, the headline numbers into ``headline``.
    """
    sparsity = {name: share_changing_at_most(run["explainer"], run["result"].query_index) for name, run in runs.items()}
    table, agreements = rank_comparison(key, task, runs, shap)
    sections[f"{key}_global"] = ranking_lines(key, task, runs, shap, table, agreements, figures)
    data = {
        "facts": ranking_facts(key, task, runs, shap, agreements),
        "table": table.reset_index().to_dict(orient="records"),
        "agreement": {label: a.to_dict() for label, a in agreements.items()},
        "shap": shap.to_dict(),
        "flex": {name: runs[name]["result"].to_dict() for name in runs},
    }
    headline[key] = data["table"]
    model = runs[PAPER_GENERATOR]["explainer"].model  # every run explains the same forest
    entry = {"data": task.summary(), "model": model.metrics, "global": data,
             "generation_seconds": {name: run["seconds"] for name, run in runs.items()},
             "share_of_cfs_changing_at_most_two_features": sparsity}
    if key == "accidents":
        regions = region_runs(runs, settings, log)
        sections["regions"] = regions_lines(task, runs, regions, figures)
        entry["regions"] = _regions_data(regions)
        headline["r"] = [region.regional.pearson_r for region in regions]
    else:
        tau = tau_runs(runs, settings)
        sections["tau"] = tau_lines(tau, settings, figures)
        entry["tau_panels"] = {"facts": tau_facts(tau, settings), **{str(t): res.to_dict() for t, res in tau.panels.items()},
                               "refined": {str(t): res.to_dict() for t, res in tau.refined.items()}}
    return entry, sparsity


def _regions_data(regions) -> dict:
    """Each region's numbers for ``results.json`` (and region 1's mode shift, the paper's Table 2)."""
    data = {}
    for region in regions:
        data[str(region.number)] = {
            "criterion": region.where, "regional": region.regional.to_dict(), "lime": region.lime.to_dict(),
            "pearson_r_other_generators": region.other_r, "pearson_r_interval_other_generators": region.other_interval,
            "query_choice": region.table_2 or region.choice,
        }
        if region.number == 1:
            data["mode_shift_region_1"] = region.regional.mode_shift_frame().to_dict(orient="records")
    return data


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


# -- command line -------------------------------------------------------------------------------
def add_reproduce_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("reproduce", help="run the paper's experiments and write a Markdown report")
    parser.add_argument("--data-dir", required=True, help="folder with RTA_Dataset.csv and loan_approval_dataset.csv")
    parser.add_argument("--out", dest="out_dir", required=True, help="folder for report.md, results.json, figures/")
    parser.add_argument("--quick", action="store_true", help="few factuals and 2-fold CV: checks the pipeline in a minute")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--figures", choices=("png", "html"), help="figure format (default png; quick: html)")
    parser.add_argument("--quiet", action="store_true", help="no progress on standard error")
    parser.add_argument("--dask", nargs="?", const="", metavar="ADDRESS",
                        help="generate the counterfactuals on the Dask cluster at ADDRESS (default: "
                             "DASK_SCHEDULER_ADDRESS); the numbers do not depend on it")
    parser.set_defaults(out=None)
    return parser


def run_reproduce(args, log: Callable[[str], None]) -> dict:
    settings = QUICK if args.quick else ReproductionSettings()
    settings = replace(settings, seed=args.seed, figure_format=args.figures or settings.figure_format)
    return reproduce(args.data_dir, args.out_dir, settings=settings, log=log, cluster=args.dask is not None)
