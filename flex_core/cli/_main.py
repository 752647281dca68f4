"""``python -m flex_core``: global and regional FLEX from the command line, JSON out."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

from .._errors import ConfigError, FlexError
from .._explainer import FlexExplainer
from .._format import listing, plural
from ..compare._json import add_lime_to_json, add_permutation_to_json, add_shap_to_json
from ..compare._permutation import permutation_importance
from ..counterfactuals import DEFAULT_GENERATOR, GENERATORS, REFINE_MODES, make_generator
from ..counterfactuals._spread import dask_cluster
from ..counterfactuals._store import check_generation_memory, chunk_rows_setting
from ..data import load_dataset, to_safe_csv
from ..data._summary import parse_order, parse_range
from ..data.rules import constraints_from_lines
from ..importance import DEFAULT_TAU
from ..importance._flex import resolve_tau
from ..importance._runs import check_rule_region, rows_meeting
from ..limits import check
from ..models import MODELS, load_model
from ..models._curves import model_curves
from ..models._quality import held_out_only
from ..regions._discovery import check_discovery_options
from ..reproduce._paper import add_reproduce_parser, run_reproduce
from ._dashboard import add_dashboard_parser, run_dashboard


class _OneLineParser(argparse.ArgumentParser):
    """argparse prints usage plus the error; a one-line message is easier to act on in scripts."""

    def error(self, message):
        self.exit(2, f"error: {message} (see --help)\n")


def _pairs(values: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in values:
        for part in item.split(","):
            key, sep, value = part.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"{what} takes FEATURE=VALUE, not {part!r}.")
            out[key.strip()] = value.strip()
    return out


def _generator_list(text: str) -> tuple[str, ...]:
    """``batch,dice-random``: registered generator names (argparse reports an unknown one, as for --generator)."""
    names = tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    unknown = [name for name in names if name not in GENERATORS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown {listing('generator', unknown) if unknown else repr(text)}; choose from {', '.join(sorted(GENERATORS))}"
        )
    return names


def parse_tau(values: list[str] | None) -> float | dict[str, float]:
    """``--tau 0.1`` or ``--tau cibil_score=0.3 --tau loan_term=0.2`` (others take ``*=``, default 0.1)."""
    if not values:
        return DEFAULT_TAU
    if len(values) == 1 and "=" not in values[0]:
        try:
            return float(values[0])
        except ValueError:
            raise ConfigError(f"--tau takes a number or FEATURE=VALUE pairs, not {values[0]!r}.") from None
    out = {"*": DEFAULT_TAU}  # features not named keep the default τ, as in the library
    for key, value in _pairs(values, "--tau").items():
        try:
            out[key] = float(value)
        except ValueError:
            raise ConfigError(f"--tau {key}= needs a number, not {value!r}.") from None
    return out


def _assignments(values: list[str], what: str) -> dict[str, str]:
    """FEATURE=VALUE per item, the value kept whole (it may hold commas or '<')."""
    out = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"{what} takes FEATURE=VALUE, not {item!r}.")
        out[key.strip()] = value.strip()
    return out


def parse_constraints(args) -> dict:
    """The constraint options as :func:`flex_core.data.make_task` keywords.

    ``--constraint`` (repeatable) and ``--constraints FILE`` (one per line, ``#`` comments) give the constraints
    between features, in that order; the file is read as UTF-8 text.
    """
    between = list(args.constraint or [])
    if args.constraints_file:
        try:
            text = Path(args.constraints_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"Cannot read the constraints file {args.constraints_file!r}: {exc}.") from None
        between += constraints_from_lines(text)
    return {
        "constraints": between,
        "monotone": _assignments(args.monotone, "--monotone"),
        "bounds": {n: parse_range(n, t) for n, t in _assignments(args.bounds, "--range").items()},
        "allowed": {n: [v.strip() for v in t.split(",")] for n, t in _assignments(args.allowed, "--allowed").items()},
        "ordinal_orders": {n: parse_order(t) for n, t in _assignments(args.order, "--order").items()},
    }


def _undesirable(args):
    """The undesirable outcome the options name: --undesired's values, a band (--above, --below, --band), or None."""
    given = [flag for flag, value in (("--above", args.above), ("--below", args.below), ("--band", args.band))
             if value is not None]
    if not given:
        if args.inclusive:
            raise ConfigError("--inclusive applies to a band: give --above T, --below T or --band LO:HI with it.")
        return _split(args.undesired) or None
    if args.undesired or args.desired:
        other = "--undesired" if args.undesired else "--desired"
        raise ConfigError(f"{given[0]} makes the target a number with an undesirable band; leave out {other}.")
    if len(given) > 1:
        raise ConfigError(f"Give one of --above, --below or --band, not {' and '.join(given)} (--band LO:HI is both).")
    if args.band is not None:
        low, high = parse_range("--band", args.band)
        if low is None or high is None:
            raise ConfigError(f"--band takes LO:HI with both ends, not {args.band!r}.")
        return {"below": low, "above": high, "inclusive": args.inclusive}
    return {"above": args.above, "below": args.below, "inclusive": args.inclusive}


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for item in values or [] for v in item.split(",") if v.strip()]


#: Factuals sampled by default: global and regional FLEX (the paper's N_F), and the pool regions and groups search.
DEFAULT_N_FACTUALS = 200
POOL_N_FACTUALS = 1000


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="python -m flex_core", description="FLEX feature importance from counterfactuals.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)
    common = _OneLineParser(add_help=False)
    _add_data_arguments(common)
    _add_model_arguments(common)
    _add_flex_arguments(common)
    _add_explain_commands(sub, common)
    _add_pool_commands(sub, common)
    add_reproduce_parser(sub)
    add_dashboard_parser(sub)
    return parser


def _add_data_arguments(common: argparse.ArgumentParser) -> None:
    """Every command's data and actionability constraints."""
    data = common.add_argument_group("data")
    data.add_argument("--data", required=True, help="builtin:NAME, loan:PATH, accidents:PATH, or a CSV path")
    data.add_argument("--target", help="target column (CSV only)")
    data.add_argument("--undesired", action="append", help="undesirable target values, comma-separated (CSV only)")
    data.add_argument("--desired", action="append",
                      help="target values a counterfactual must reach (DiCE's desired_class; default: any value not "
                           "undesired), comma-separated: for a model of more than two classes"),
    data.add_argument("--above", type=float, metavar="T",
                      help="a number target (regression): predictions above T are undesirable (CSV only)")
    data.add_argument("--below", type=float, metavar="T", help="a number target: predictions below T are undesirable")
    data.add_argument("--band", metavar="LO:HI", help="a number target: predictions outside LO to HI are undesirable")
    data.add_argument("--inclusive", action="store_true",
                      help="with --above/--below/--band: a prediction exactly at a threshold is undesirable too")
    data.add_argument("--immutable", action="append", help="immutable features, comma-separated (CSV only)")
    data.add_argument("--kind", action="append", default=[], help="FEATURE=categorical|continuous|ordinal (CSV only)")
    data.add_argument("--missing", choices=("drop", "impute"), default="drop",
                      help="rows with missing values (also text cells in a number column and infinite values)")
    data.add_argument("--use-identifier", action="append",
                      help="use these identifier-like columns (all values unique) as features (CSV only)")
    data.add_argument("--dictionary", metavar="FILE",
                      help="data dictionary (TOML): display names, units, number formats, currencies, level and outcome "
                           "words; loan: and accidents: data use the shipped one without it")
    act = common.add_argument_group("actionability constraints (repeatable; any data)")
    act.add_argument("--monotone", action="append", default=[], help="FEATURE=increase|decrease (continuous or ordinal)")
    act.add_argument("--range", action="append", default=[], dest="bounds", help="FEATURE=LO:HI permitted range (either end may be empty)")
    act.add_argument("--allowed", action="append", default=[], help="FEATURE=a,b,c levels a categorical feature may change to")
    act.add_argument("--order", action="append", default=[], help='"FEATURE=a<b<c": level order (the feature becomes ordinal)')
    act.add_argument("--constraint", action="append", default=[],
                     help='a constraint between features, e.g. "cf.loan_amount <= 4 * cf.income_annum" (docs/constraints.md)')
    act.add_argument("--constraints", dest="constraints_file", metavar="FILE",
                     help="a file of constraints between features, one per line (# starts a comment)")


def _add_model_arguments(common: argparse.ArgumentParser) -> None:
    """Every command's model and counterfactual generator."""
    model = common.add_argument_group("model and generator")
    model.add_argument("--model", choices=sorted(MODELS), help="a model to train here (default rf)")
    model.add_argument("--encoding", choices=("onehot", "label"), help="its categorical encoding (default onehot)")
    model.add_argument("--cv-folds", type=int, help="its cross-validation folds (default 10; 0 skips it, for large data)")
    model.add_argument("--cv-rows", type=int, help="cross-validate on a stratified sample of at most this many rows")
    model.add_argument(
        "--model-file", help="explain this fitted classifier instead (.skops; only sklearn/numpy/scipy/xgboost/lightgbm types)"
    )
    model.add_argument("--generator", choices=sorted(GENERATORS), default=DEFAULT_GENERATOR)
    model.add_argument("--posthoc-sparsity", action="store_true", help="DiCE's slow post-hoc sparsity step")
    model.add_argument("--time-limit", type=float,
                       help="seconds after which the generator starts no new query (DiCE) or chunk of queries (tree, "
                            "batch); the cases it skips are named in the JSON and get no counterfactuals")
    model.add_argument("--n-jobs", type=int, default=1, help="tree and batch generators: cores to use (-1 = all); the result does not depend on it")
    model.add_argument("--dask", nargs="?", const="", metavar="ADDRESS",
                       help="generate on the Dask cluster at ADDRESS (default: DASK_SCHEDULER_ADDRESS), and fit the "
                            "retraining check's refits there; the result does not depend on it")
    model.add_argument(
        "--refine", choices=REFINE_MODES,
        help="minimal: shrink each change to about the smallest the model needs; none: keep the generator's values "
             "(default: minimal for batch generators, none for DiCE)",
    )
    model.add_argument(
        "--validity", choices=("robust", "paper"), default="robust",
        help="robust: a counterfactual counts when P(undesirable) < 0.35, also with every changed number 1%% of its "
             "range nearer the factual; paper: P(undesirable) < 0.5 (the paper's setting)",
    )


def _add_flex_arguments(common: argparse.ArgumentParser) -> None:
    """Every command's FLEX settings and outputs."""
    flex = common.add_argument_group("FLEX")
    # The default depends on the command (a region search needs a larger pool): set after parsing, because
    # set_defaults on one subcommand changes the Action that every subcommand shares through ``parents``.
    flex.add_argument("--n-factuals", type=int, default=None,
                      help=f"factuals sampled (default {DEFAULT_N_FACTUALS}; {POOL_N_FACTUALS} for regions and groups)")
    flex.add_argument("--n-cf", type=int, default=10)
    flex.add_argument("--tau", action="append", help="a number, or FEATURE=VALUE pairs")
    flex.add_argument("--seed", type=int, default=0)
    flex.add_argument(
        "--sufficiency", action="store_true", help="add, per feature, the share of factuals it flips alone and the share that need it (with 95%% intervals), and Kommiya Mothilal et al.'s necessity and sufficiency ratios (two generator runs per feature)"
    )
    flex.add_argument("--repeats", type=int, default=1, help="regenerate with N seeds and add frequency_seed_sd (N >= 2)")
    flex.add_argument(
        "--compare-generators", metavar="NAME,NAME", type=_generator_list, default=(),
        help="rerun the same factuals with these generators and add generator_sensitivity: each one's F_j with its "
        "95%% interval and whether they overlap (and r, for a region)",
    )
    flex.add_argument("--cache-dir", help="keep generated counterfactuals here between runs")
    flex.add_argument("--out", help="write the JSON here (default: standard output)")
    flex.add_argument("--cf-out", metavar="PATH.csv",
                      help="write every counterfactual here: factual, cf, valid, then the features in original values")
    flex.add_argument("--report", metavar="PATH.html",
                      help="also write an interactive HTML report (offline, one file): global, the region of "
                           "regional, the regions of regions; τ can be moved in it")
    flex.add_argument("--quiet", action="store_true", help="no progress on standard error")


def _add_explain_commands(sub, common: argparse.ArgumentParser) -> None:
    """``global`` and ``regional``."""
    global_ = sub.add_parser("global", parents=[common], help="global FLEX over a random sample of factuals")
    global_.add_argument("--shap", action="store_true", help="add mean |SHAP| per feature and FLEX-SHAP rank agreement")
    global_.add_argument("--permutation", action="store_true",
                         help="add permutation importance on the model's held-out rows and FLEX-permutation rank agreement")
    global_.add_argument("--retrain", type=int, default=0, metavar="K",
                         help="refit the model K times (bootstrap rows, other seeds; at most 20) and add retrain: F's "
                              "range across refits, a stable verdict per feature, the counterfactuals' validity per refit")
    global_.add_argument("--all-factuals", action="store_true",
                         help="explain every factual, however many (no sample and no N_F cap): generated, stored and "
                              "read FLEX_CHUNK_ROWS at a time, so memory does not grow with their number (with --dask, "
                              "on a cluster); the JSON leaves out each factual's own change frequencies")
    regional = sub.add_parser("regional", parents=[common], help="regional FLEX around a query factual")
    regional.add_argument("--query", type=int, help="0-based row of the input file (default: a random qualifying factual)")
    regional.add_argument("--neighbours", type=int, help="k nearest neighbours by Hamming distance (default 4)")
    regional.add_argument("--where", help="FEATURE=VALUE criterion the query and its neighbours meet")
    regional.add_argument(
        "--rule", action="append", metavar="CONDITION",
        help='a rule-defined region instead of a query and its neighbours, one condition per --rule (all must hold): '
             '"age>=70", "age<80", "road_type=rural", "age=70..80" (both ends included), "colour=red|blue"',
    )
    regional.add_argument("--lime", action="store_true", help="add LIME's importance over the region, normalised to [0, 1]")
    regional.add_argument("--lime-samples", type=int, default=5000, help="LIME perturbation samples per factual")


def _add_pool_commands(sub, common: argparse.ArgumentParser) -> None:
    """``regions`` and ``groups``: one pool of factuals."""
    regions = sub.add_parser("regions", parents=[common], help="the rule-defined regions whose FLEX differs from global")
    regions.add_argument("--max-conditions", type=int, default=2, choices=(1, 2), help="conditions per rule (default 2)")
    regions.add_argument("--min-support", type=int, default=20, help="factuals a region must hold (default 20)")
    regions.add_argument("--fdr", type=float, default=0.1, help="false-discovery rate of the significant regions (default 0.1)")
    regions.add_argument("--permutations", type=int, default=1000, help="random orders of the pool for the null (default 1000)")
    regions.add_argument("--bins", type=int, default=4, help="quantile bins per number (default 4)")
    regions.add_argument("--top", type=int, default=20, help="regions to write (default 20)")
    regions.add_argument("--retrain", type=int, default=0, metavar="K",
                         help="refit the model K times (at most 20) and mark per region whether it replicates")
    groups = sub.add_parser("groups", parents=[common], help="flip share, cost of the minimal change and FLEX per group")
    groups.add_argument("--by", required=True, metavar="FEATURE", help="the feature whose values (or bins) are the groups")
    groups.add_argument("--bins", type=int, default=4, help="quantile bins when FEATURE is a number (default 4)")
    groups.add_argument("--retrain", type=int, default=0, metavar="K",
                        help="refit the model K times (at most 20) and mark whether each difference holds under each")


def _run_pool_analysis(args, explainer: FlexExplainer, tau, progress, log) -> dict:
    """``regions`` and ``groups``: one pool of factuals, nothing generated per region or group."""
    started = time.perf_counter()
    if args.command == "regions":
        result = explainer.find_regions(
            tau=tau, n_factuals=args.n_factuals, max_conditions=args.max_conditions, min_support=args.min_support,
            fdr=args.fdr, n_permutations=args.permutations, bins=args.bins, top=args.top, retrain=args.retrain,
            progress=progress,
        )
        args.found = result  # for --report
        counts = result.counts
        log(f"regions: {counts['tested']} candidates tested, {counts['significant']} significant at FDR {args.fdr} "
            f"({counts['interval_reaches_zero']} more below it with a divergence interval reaching 0), "
            f"{counts['shown']} written"
            + (f", {counts['near_copies']} left out as near copies of a region above" if counts.get("near_copies") else "")
            + f" ({time.perf_counter() - started:.1f} s)")
        if "significant_not_replicated" in counts:
            lost = counts["significant_not_replicated"]
            log(f"regions: {plural(lost, 'significant region')} written {'does' if lost == 1 else 'do'} not replicate "
                f"under all {counts['refits']} refits")
    else:
        result = explainer.compare_groups(args.by, bins=args.bins, n_factuals=args.n_factuals, tau=tau,
                                          retrain=args.retrain, progress=progress)
        log(f"groups: {len(result.groups)} groups of {args.by} ({time.perf_counter() - started:.1f} s)")
        for sentence in result.verdict:
            log(f"verdict: {sentence}")
    return result.to_dict()


def _generator_settings(args, name: str) -> dict:
    n_jobs = args.n_jobs
    rule = {"margin": 0.0, "radius": 0.0} if getattr(args, "validity", "robust") == "paper" else {}
    if not name.startswith("dice-"):
        if args.posthoc_sparsity:
            raise ConfigError("--posthoc-sparsity applies to the DiCE generators only.")
        if args.time_limit is not None:
            rule = {**rule, "time_limit": args.time_limit}
        if getattr(args, "dask", None) is not None:
            return {"n_jobs": -1, "backend": "dask", **rule}
        return {"n_jobs": n_jobs, **rule} if name.startswith("batch") or name == "tree" else rule
    if n_jobs != 1:
        raise ConfigError("--n-jobs applies to the tree and batch generators only.")
    cluster = {"backend": "dask"} if getattr(args, "dask", None) is not None else {}
    return {"posthoc_sparsity": args.posthoc_sparsity, "time_limit": args.time_limit, **rule, **cluster}


def _explainer(args, task, log) -> FlexExplainer:
    """The pipeline for these options: a model trained here, or the one in --model-file (the task then keeps its columns)."""
    settings = _generator_settings(args, args.generator)
    if args.model_file is None:
        args.model, args.encoding = args.model or "rf", args.encoding or "onehot"
        args.cv_folds = 10 if args.cv_folds is None else args.cv_folds
        model, name = args.model, None
        fit_options = {"encoding": args.encoding, "cv_folds": args.cv_folds, "cv_rows": args.cv_rows,
                       "progress": lambda step, total, text: log(f"model: {text}")}
    else:
        given = [flag for flag, value in (("--model", args.model), ("--encoding", args.encoding),
                                          ("--cv-folds", args.cv_folds), ("--cv-rows", args.cv_rows)) if value is not None]
        if given:
            raise ConfigError(f"{', '.join(given)} apply to a model trained here, not to --model-file.")
        model, name, fit_options = load_model(args.model_file), Path(args.model_file).name, None
        args.model = f"file:{name}"
    return FlexExplainer.from_task(
        task, model, seed=args.seed, generator=args.generator, generator_settings=settings, n_cf=args.n_cf,
        refine=args.refine, cache_dir=args.cache_dir, fit_options=fit_options, model_name=name,
    )


#: option -> the setting of flex_core.limits.LIMITS that bounds it (checked before any work starts)
BOUNDED_OPTIONS = {
    "n_factuals": "n_factuals", "n_cf": "n_cf", "seed": "seed", "repeats": "repeats", "neighbours": "k",
    "time_limit": "time_limit", "n_jobs": "n_jobs", "cv_folds": "cv_folds", "cv_rows": "cv_rows",
    "lime_samples": "num_samples", "min_support": "min_support", "permutations": "n_permutations", "bins": "bins",
    "top": "top", "retrain": "retrain",
}


def check_arguments(args) -> None:
    """Every number against its limit, and every output path, before anything is read or trained."""
    for option, name in BOUNDED_OPTIONS.items():
        value = getattr(args, option, None)
        if value is not None:
            check(name, value, label="--" + option.replace("_", "-"))
    if getattr(args, "query", None) is not None and args.query < 0:
        raise ConfigError(f"--query is a 0-based row of the input file, so 0 or more; got {args.query}.")
    for option in ("out", "cf_out", "report"):
        if getattr(args, option, None):
            check_output_path(getattr(args, option), "--" + option.replace("_", "-"))
    if getattr(args, "all_factuals", False):
        _check_all_factuals(args)
    if args.command in ("regions", "groups"):
        _check_pool_options(args)
    if args.command == "regional" and args.rule and (args.query is not None or args.where or args.neighbours is not None):
        raise ConfigError("--rule defines the region by itself: leave out --query, --where and --neighbours.")


def _check_pool_options(args) -> None:
    """``regions`` and ``groups`` analyse one pool: refuse the options of one sample's FLEX before the model trains."""
    asked = [flag for flag, value in (("--sufficiency", args.sufficiency), ("--repeats", args.repeats != 1),
                                      ("--compare-generators", args.compare_generators), ("--cf-out", args.cf_out)) if value]
    if asked:
        raise ConfigError(f"{', '.join(asked)} apply to global and regional, not to {args.command}.")
    if args.command == "groups" and args.report:
        raise ConfigError("--report applies to global, regional and regions, not to groups.")


#: Options that need every factual's counterfactuals or a sample at once, so --all-factuals does not take them.
_NOT_WITH_ALL = {"n_factuals_given": "--n-factuals", "retrain": "--retrain", "report": "--report",
                 "cf_out": "--cf-out", "sufficiency": "--sufficiency", "shap": "--shap",
                 "compare_generators": "--compare-generators"}


def _check_all_factuals(args) -> None:
    """--all-factuals reads the store a chunk at a time: refuse the options that need a sample or the whole set."""
    given = [flag for option, flag in _NOT_WITH_ALL.items() if getattr(args, option, None)]
    if getattr(args, "repeats", 1) not in (None, 1):
        given.append("--repeats")
    if given:
        raise ConfigError(f"--all-factuals explains every factual a chunk at a time; leave out {', '.join(given)} "
                          "(or drop --all-factuals and sample N_F factuals).")


def check_output_path(path: str, option: str) -> None:
    """Refuse an output path that cannot be written (no such folder, a folder, not writable), before the run."""
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise ConfigError(f"{option} {path} is a folder; give a file name.")
    if not folder.is_dir():
        raise ConfigError(f"{option} {path}: the folder {folder} does not exist; create it first.")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise ConfigError(f"{option} {path} cannot be written (no permission).")


def check_against_data(args, task):
    """The options that name the data's features, rows or levels, and the run's memory, checked once the data is
    read and before the model is trained; returns τ as the library takes it."""
    tau = parse_tau(args.tau)
    resolve_tau(task.feature_names, [f.is_continuous for f in task.features], tau)
    if args.command == "groups" and args.by not in task.feature_names:
        task.feature(args.by)
    if args.command == "regions":
        check_discovery_options(max_conditions=args.max_conditions, min_support=args.min_support, fdr=args.fdr,
                                n_permutations=args.permutations, bins=args.bins, top=args.top)
    if args.command == "regional" and args.query is not None and args.query not in task.frame.index:
        raise ConfigError(f"--query {args.query} is not a row of the data (it has {len(task.frame):,} rows after "
                          "reading; rows with missing values may have been dropped).")
    if args.command == "regional" and args.where:
        rows_meeting(task, (), args.where)  # checks the feature and its level
    # The counterfactuals' memory (the pool analyses' own search, per region, is not counted).
    # (--all-factuals: one chunk's, the most the store generates at once)
    check_generation_memory(make_generator(args.generator, **_generator_settings(args, args.generator)), task,
                            n_queries=chunk_rows_setting() if getattr(args, "all_factuals", False) else args.n_factuals,
                            n_cf=args.n_cf)
    return tau


def run(args) -> dict:
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    check_arguments(args)
    if args.command == "reproduce":
        return run_reproduce(args, log)
    task = load_dataset(
        args.data,
        target=args.target,
        undesirable=_undesirable(args),
        desired=_split(args.desired),
        immutable=_split(args.immutable),
        kinds=_pairs(args.kind, "--kind"),
        missing=args.missing,
        use_identifiers=_split(args.use_identifier),
        dictionary=args.dictionary,
        **parse_constraints(args),
    )
    tau = check_against_data(args, task)
    started = time.perf_counter()
    explainer = _explainer(args, task, log)
    task, model = explainer.task, explainer.model
    if getattr(args, "permutation", False):
        held_out_only(task, model)  # a model without held-out rows is refused before any generation
    for note in task.notes:
        log(f"data: {note}")
    log(f"model: {model.label} accuracy {model.metrics['test_accuracy']:.3f} on {model.metrics['evaluated_on']} "
        f"({time.perf_counter() - started:.1f} s)")
    if model.band is not None:
        log(f"model: R² {model.metrics['test_r2']:.3f}, MAE {model.metrics['test_mae']:.4g} (predicting the mean: "
            f"{model.metrics['baseline_mae']:.4g}); undesirable: {task.undesirable_words}")
    if model.metrics.get("note"):
        log(f"model: {model.metrics['note']}")

    def progress(done, total):
        if done == total or done % max(1, total // 10) == 0:
            log(f"counterfactuals: {done}/{total} queries")

    on_request = {"sufficiency": args.sufficiency, "repeats": args.repeats, "generators": args.compare_generators}
    if args.command in ("regions", "groups"):
        out = _run_pool_analysis(args, explainer, tau, progress, log)
        _report(args, explainer, tau, discover=getattr(args, "found", 0))
        return _finish(out, args, task, log)
    if args.command == "regional" and args.rule:
        args.rule = check_rule_region(explainer.store, args.rule)  # a bad rule fails before any generation
    started = time.perf_counter()
    retrain = {"retrain": args.retrain} if args.command == "global" and args.retrain else {}
    if getattr(args, "all_factuals", False):
        global_result = explainer.explain_all(tau=tau, progress=progress)
        args.n_factuals = len(global_result.query_index)  # the config says how many were explained: every one
    else:
        global_result = explainer.explain_global(
            n_factuals=args.n_factuals, tau=tau, progress=progress,
            **(on_request if args.command == "global" else {}), **retrain,
        )
    _log_global(global_result, explainer, log, time.perf_counter() - started)
    explained = global_result
    if args.command == "global":
        out = _global_json(args, explainer, global_result, log)
    else:
        regional = explainer.explain_region(
            global_result=global_result, query=args.query, k=4 if args.neighbours is None else args.neighbours,
            where=args.where, rule=args.rule, tau=tau, progress=progress, **on_request,
        )
        out = regional.to_dict()
        explained = regional.importance
        if args.lime:
            lime = explainer.lime(regional.members, num_samples=args.lime_samples)
            log(f"lime: {len(regional.members)} factuals in {lime.seconds:.1f} s")
            add_lime_to_json(out, lime)
    _report(args, explainer, tau, regional=None if args.command == "global" else regional)
    if args.cf_out:
        args.cf_frame = explained.counterfactuals_frame()  # written by main, with the JSON, only when both can be
    return _finish(out, args, task, log)


def _log_global(global_result, explainer: FlexExplainer, log, seconds: float) -> None:
    """The global run's lines on standard error: its factuals and time, and what was asked on top."""
    log(f"global: {global_result.n_factuals_used} factuals in {seconds:.1f} s")
    if explainer.store.factual_note:
        log(f"factuals: {explainer.store.factual_note}")
    if global_result.retrain is not None:
        block = global_result.retrain
        unstable = [f["name"] for f in block["features"] if not f["stable"]]
        log(f"retrain: {block['refits']} refits, validity {', '.join(f'{v:.3f}' for v in block['validity'])}; "
            f"not stable: {', '.join(unstable) or 'none'}")
    if "necessity_sufficiency" in global_result.config:
        log(f"necessity and sufficiency: {global_result.config['necessity_sufficiency']['seconds']:.1f} s")


def _global_json(args, explainer: FlexExplainer, global_result, log) -> dict:
    """The global JSON with the model's curves on its held-out rows (or a note saying it has none), and SHAP and
    permutation importance when asked."""
    out = global_result.to_dict()
    try:
        out["model_quality"] = model_curves(explainer.task, explainer.model).to_dict(header=False)
    except ConfigError as exc:  # a model without held-out rows, or held-out rows of one outcome
        out["notes"].append(f"No model_quality: {exc}")
    if args.shap:
        shap = explainer.shap(global_result.query_index)
        log(f"shap: {shap.explainer} on {len(shap.query_index)} factuals in {shap.seconds:.1f} s")
        add_shap_to_json(out, global_result, shap)
    if args.permutation:
        permutation = permutation_importance(explainer.task, explainer.model, seed=args.seed)
        log(f"permutation: {len(permutation.query_index)} held-out rows in {permutation.seconds:.1f} s")
        add_permutation_to_json(out, global_result, permutation)
    return out


def _report(args, explainer: FlexExplainer, tau, *, regional=None, discover=0) -> None:
    """The interactive report of this run, kept in ``args.report_page`` for main to write with the JSON (--report)."""
    if not args.report:
        return
    regions = {}
    if regional is not None:
        name = f"rule: {regional.rule_text}" if regional.rule_text else f"region around row {regional.query}"
        regions[name] = regional
    args.report_page = io.StringIO()
    explainer.report(args.report_page, n_factuals=args.n_factuals, tau=tau, regions=regions, discover=discover,
                     settings={"made by": f"python -m flex_core {args.command}"})


def _finish(out: dict, args, task, log) -> dict:
    """The run's options and data summary added to its JSON, and its notes logged."""
    out["config"].update(command=args.command, data=args.data, model=args.model, encoding=args.encoding,
                         cv_folds=args.cv_folds, cv_rows=args.cv_rows, generator=args.generator, missing=args.missing,
                         n_factuals=args.n_factuals, **({"all_factuals": True} if getattr(args, "all_factuals", False)
                                                        else {}))
    out["data"] = task.summary()
    for note in out.get("notes", []):
        log(f"note: {note}")
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, with the defaults that depend on the command filled in."""
    args = build_parser().parse_args(argv)
    args.n_factuals_given = getattr(args, "n_factuals", None) is not None
    if getattr(args, "n_factuals", 0) is None:
        args.n_factuals = POOL_N_FACTUALS if args.command in ("regions", "groups") else DEFAULT_N_FACTUALS
    return args


@contextlib.contextmanager
def _atomic(path: str | None):
    """A temporary file beside ``path`` to write, moved onto ``path`` when the block succeeds, removed when it fails.

    Nested, the outer file is moved after the inner one; a failure in between leaves the inner one written
    (only an OSError of the second rename can do that). ``None``: nothing to write (yields None).
    """
    if path is None:
        yield None
        return
    target = Path(path)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    os.close(fd)
    try:
        yield Path(temp)
        os.replace(temp, target)
    finally:
        Path(temp).unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    import json

    args = parse_args(argv)
    try:
        if args.command == "dashboard":
            return run_dashboard(args)
        with dask_cluster(getattr(args, "dask", None), quiet=True):  # "": Dask's own variable
            out = run(args)
        text = json.dumps(out, indent=2)
        cf_frame = getattr(args, "cf_frame", None)
        page = getattr(args, "report_page", None)
        with _atomic(args.out) as json_path, _atomic(args.cf_out if cf_frame is not None else None) as cf_path, \
                _atomic(args.report if page is not None else None) as report_path:
            if report_path is not None and page is not None:
                report_path.write_text(page.getvalue(), encoding="utf-8")
            if cf_path is not None:
                to_safe_csv(cf_frame, cf_path)
            if json_path is not None:
                json_path.write_text(text + "\n")
        if cf_path is not None and not args.quiet:
            print(f"counterfactuals: {args.cf_out}", file=sys.stderr)
        if report_path is not None and not args.quiet:
            print(f"report: {args.report}", file=sys.stderr)
        if json_path is None:
            print(text)
    except FlexError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2
    return 0
