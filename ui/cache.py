"""All of the app's caching, in one module, on one memory-bounded shelf shared by every session.

- :data:`SHELF` (a :class:`ui.shelf.Shelf`) keeps everything: tasks, fitted models, generators and the
  :class:`flex_core.counterfactuals.CounterfactualStore` (which also persists its counterfactuals under ``FLEX_CACHE_DIR``,
  default ``.flex_cache/`` in the repository, so a restart does not pay for them again), results computed
  from stored counterfactuals, SHAP and LIME runs. It is bounded by memory (``FLEX_CACHE_MEMORY_MB``,
  default 2048; the least recently used go first) and by time (``FLEX_CACHE_TTL_MINUTES``, default 30:
  what nobody used for that long goes, even on an idle server), not by a count of entries.
- Functions decorated with :func:`shared` are cached on it by their arguments. ``copy=True`` (results)
  keeps the result and returns a fresh deep copy on every call, as ``st.cache_data`` did, so a caller can
  never change what another session gets; its size is exact (its pickled length: nothing is unpickled). ``copy=False`` (resources: tasks, models,
  stores, figures) returns the one shared object, never mutated once made; its size is measured.
- Results computed from stored counterfactuals never generate: callers first call :func:`ensure_rows`,
  which shows a progress bar counting queries while the missing rows are generated.

Not ``st.cache_data`` / ``st.cache_resource``: those are bounded by entry counts only, and Streamlit's own
``clear_cache`` websocket message, which any client can send, empties them for every session.

Arguments starting with ``_`` are not part of the key; each such argument comes with a hashable identity
argument (fingerprint, key) that decides the entry. Bytes (an upload) enter the key as their SHA-256, so a
kept entry never holds a session's raw upload.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import json
import os
import pickle
from collections.abc import Callable, Mapping, Sequence
from copy import deepcopy
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

import flex_core as fc
from flex_core.formatting import plural
from ui import cluster, paths, url_state
from ui.estimates import RunEstimate, estimate_lime, estimate_shap
from ui.factual_map import FactualMap, project_factuals
from ui.shelf import Shelf

REPO = Path(__file__).resolve().parents[1]
#: τ as flex_core takes it: one number, or {feature: τ, "*": the default} (a mapping enters a key as its JSON).
Tau = float | Mapping[str, float]
#: The τ values of the paper's threshold panels (the Thresholds page shows them beside the session's τ).
TAU_PANELS = (0.1, 0.5, 0.9)


def cache_dir() -> Path:
    path = Path(os.environ.get("FLEX_CACHE_DIR", ".flex_cache"))
    return path if path.is_absolute() else REPO / path


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:20]


def _setting(name: str, default: float) -> float:
    """A positive number from the environment (the operator's setting), else ``default``; one clear error if wrong."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise fc.ConfigError(f"{name} must be a positive number, not {text!r}.")
    return value


def memory_budget() -> int:
    """The shelf's budget in bytes: ``FLEX_CACHE_MEMORY_MB`` (default 2048 MB)."""
    return int(_setting("FLEX_CACHE_MEMORY_MB", 2048) * 2**20)


def unused_ttl() -> float:
    """Seconds an entry nobody uses stays: ``FLEX_CACHE_TTL_MINUTES`` (default 30) times 60."""
    return _setting("FLEX_CACHE_TTL_MINUTES", 30) * 60


#: Everything this server keeps for its sessions (one per process; see the module's docstring).
SHELF: Shelf = Shelf(memory_budget(), ttl=unused_ttl())
SHELF.start_sweeper(every=min(60.0, unused_ttl() / 4))


def _key_part(value):
    """A hashable stand-in for an argument: bytes by their SHA-256 (the key must not keep an upload), lists, dicts
    and arrays as JSON."""
    if isinstance(value, bytes | bytearray):
        return ("sha256", hashlib.sha256(value).hexdigest())
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, list | dict):
        return json.dumps(value, sort_keys=True, default=str)
    return value


def _pickled_size(value) -> int:
    """A result's size in bytes: its pickled length (measured once, when it is kept)."""
    return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def shared(*, copy: bool, spinner: str | None = None) -> Callable:
    """Cache a function on :data:`SHELF` by its arguments not starting with ``_``.

    ``copy``: return a fresh deep copy each call (results), sized exactly by its pickled length once when made;
    else return the one shared object (resources, never mutated). ``spinner``: text shown while it is made.
    Nothing is unpickled: the pickle only measures.
    """

    def decorate(fn: Callable) -> Callable:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def cached(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            key = (fn.__module__, fn.__qualname__,
                   *(_key_part(v) for name, v in bound.arguments.items() if not name.startswith("_")))

            def make():
                return fn(*args, **kwargs)

            showing = st.spinner(spinner) if spinner and key not in SHELF else contextlib.nullcontext()
            with showing:
                kept = SHELF.get_or_make(key, make, size=_pickled_size if copy else None)
            return deepcopy(kept) if copy else kept

        return cached

    return decorate


# -- data, model, generator, store -------------------------------------------------------------
def source_key(source: Mapping) -> str:
    """The hashable description of a dataset source (uploaded bytes are passed and hashed separately)."""
    return json.dumps({k: v for k, v in source.items() if k != "data"}, sort_keys=True)


def max_file_bytes() -> int:
    """The upload limit of ``.streamlit/config.toml`` (server.maxUploadSize, MB), applied to typed paths too."""
    return int(st.get_option("server.maxUploadSize")) * 2**20


@shared(copy=False, spinner="Loading the data…")
def load_task(key: str, data: bytes | None) -> fc.TaskSpec:
    source = json.loads(key)
    kind = source["kind"]
    # A server path (typed, or from a link) only inside the allowed folders; uploads are bytes.
    path = source.get("path")
    origin = data if data is not None else (str(paths.confine(path, folder=kind == "project")) if path else None)
    limit = max_file_bytes()
    if kind == "builtin":
        return fc.data.load_builtin(source["name"])
    if kind == "loan":
        return fc.data.load_loan(origin, max_bytes=limit)
    if kind == "accidents":
        return fc.data.load_accidents(origin, missing=source.get("missing", "drop"), max_bytes=limit)
    if kind == "project":
        return project(source["path"]).task
    if kind == "csv":
        return fc.data.load_csv(
            origin,
            target=source["target"],
            # a number's band (the form's, checked there), else the undesirable classes
            undesirable=url_state.library_band(source["band"]) if source.get("band") else source["undesirable"],
            desired=source.get("desired") or (),
            immutable=source.get("immutable", ()),
            use_identifiers=source.get("use_identifiers", ()),
            missing=source.get("missing", "drop"),
            name=source.get("filename") or None,
            max_bytes=limit,
            dictionary=source["dictionary"].encode() if source.get("dictionary") else None,  # an upload: text, not a path
        )
    raise fc.ConfigError(f"Unknown dataset source {kind!r}.")


def load_base_task(source: Mapping) -> fc.TaskSpec:
    """The task of a dataset source (the sidebar's), before the session's overrides."""
    return load_task(source_key(source), source.get("data"))


@shared(copy=False, spinner="Opening the project folder…")
def project(path: str):
    """The task, model and ``y_given`` of the project ``FlexExplainer.save`` wrote to ``path`` (no explainer is built:
    the session's settings build the one the pages use)."""
    return fc.FlexExplainer.load_parts(paths.confine(path, folder=True))


@shared(copy=False, spinner="Checking and loading the model file…")
def model_file(digest: str, _data: bytes):
    """The estimator in an uploaded .skops file (``digest``: its SHA-256); refused unless every class is on FLEX's list."""
    return fc.models.load_model(_data)


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@shared(copy=False)
def external_model(_task: fc.TaskSpec, fingerprint: str, _estimator, digest: str, name: str, labelled: bool = True):
    """(task restricted to the model's columns, FittedModel) for a model trained elsewhere; ``labelled=False``: the
    outcomes are the model's own predictions (a project saved without y), so it is not scored."""
    return fc.models.from_file_estimator(_task, _estimator, name=name, labelled=labelled)


@shared(copy=False)
def task_with_overrides(_base: fc.TaskSpec, base_fingerprint: str, overrides: Mapping) -> fc.TaskSpec:
    """The base task with edited kinds / immutable features / constraints (``overrides``: the session's mapping; the
    shelf keys it by value).

    ``overrides["between"]``: the constraints between features (texts), or absent/None for the data's own.
    ``overrides["words"]``: the data dictionary edited on the Data & model page (the file's shape), or absent/None
    for the data's own.
    """
    spec = dict(overrides)
    constraints = spec.get("constraints")
    between = spec.get("between")
    task = _base
    if spec.get("kinds") or spec.get("immutable") is not None or constraints is not None or between is not None:
        task = task.with_overrides(kinds=spec.get("kinds") or None, immutable=spec.get("immutable"), constraints=between,
                                   **(constraints or {}))
    return task if spec.get("words") is None else task.with_dictionary(spec["words"])


def fitted_model(task: fc.TaskSpec, fingerprint: str, model: str, encoding: str, seed: int, cv_folds: int,
                 cv_rows: int | None = None) -> fc.FittedModel:
    """The fitted model for these settings, trained with a progress bar (fold k of n, then the final fit).

    Not :func:`shared`: training draws a progress bar, which only the session that trains may show. A session
    that asks while another trains the same model waits for that one.
    """
    key = ("fitted_model", fingerprint, model, encoding, int(seed), int(cv_folds), cv_rows)

    def train() -> fc.FittedModel:
        bar = st.progress(0.0, text=f"Training the model on {len(task.frame):,} rows…")

        def progress(step: int, total: int, text: str) -> None:
            bar.progress(step / max(total, 1), text=text + "…")

        try:
            return fc.fit_model(task, model=model, encoding=encoding, seed=seed, cv_folds=cv_folds, cv_rows=cv_rows,
                                progress=progress)
        finally:
            bar.empty()

    notes: list = []  # the waiting note, drawn only if another session is training this model

    def waiting() -> None:
        notes.append(st.info("Another session is training this model; it is used here as soon as it is ready."))

    try:
        return SHELF.get_or_make(key, train, waiting=waiting)
    finally:
        for note in notes:
            note.empty()


@shared(copy=False)
def explainer(
    _task: fc.TaskSpec, _model: fc.FittedModel, identity: str, generator: str, settings: str, n_cf: int, seed: int,
    refine: str | None,
) -> fc.FlexExplainer:
    """The pipeline (generator and counterfactual store) for these settings; ``identity`` is their JSON with the data's and model's.

    Built by :meth:`flex_core.FlexExplainer.from_task`, as the CLI and the reproduction build theirs.
    Its store persists counterfactuals under :func:`cache_dir`.
    """
    on_cluster = cluster.execution(generator)  # the operator's cluster, if set: how the work is spread, no part of the key
    return fc.FlexExplainer.from_task(
        _task, _model, generator=generator, generator_settings={**json.loads(settings), **on_cluster}, n_cf=n_cf,
        seed=seed, refine=refine, cache_dir=cache_dir(),
    )


def store_id(explainer: fc.FlexExplainer) -> str:
    """The identity of the explainer's counterfactuals (:attr:`flex_core.FlexExplainer.key`): what results are shared by."""
    return _digest(explainer.key)


def model_id(task: fc.TaskSpec, model: fc.FittedModel) -> str:
    return _digest([task.fingerprint, model.key, model.metrics.get("cv_folds"), model.metrics.get("cv_rows")])


# -- long work with a progress bar ---------------------------------------------------------------
@contextlib.contextmanager
def progress_bar(start: str, step: str):
    """A progress bar for the duration of a block; yields ``progress(done, total)`` that writes ``step``
    with ``{done}`` and ``{total}`` filled in. The bar is created here, outside any cached function, so a
    cache hit never replays it."""
    bar = st.progress(0.0, text=start)

    def progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=step.format(done=f"{done:,}", total=f"{total:,}"))

    try:
        yield progress
    finally:
        bar.empty()


def ensure_rows(explainer: fc.FlexExplainer, rows: Sequence[int] | np.ndarray, *, what: str = "case") -> None:
    """Generate the counterfactuals of the rows not generated yet, with a progress bar counting them (``what``: one
    of them, in words: "case", "region member")."""
    missing = explainer.not_generated(rows)
    if not missing:
        return
    # Generators of the protocol need not be GeneratorParams; those that are may warn of a slow first call (not when
    # another generator serves this model: tree's walks never run for a model it hands to batch).
    note = getattr(explainer.generator, "first_call_note", None) if explainer.generator_used == explainer.generator_name else None
    with progress_bar(f"Finding the ways out of {plural(len(missing), what)}…" + (f" {note}" if note else ""),
                      "Finding ways out: {done} / {total} cases") as progress:
        explainer.counterfactuals(missing, progress=progress)


# -- results from stored counterfactuals (never generate) -------------------------------------
@shared(copy=True, spinner="Scoring the model's test rows…")
def held_out_predictions(_task: fc.TaskSpec, _model: fc.FittedModel, identity: str):
    """P(undesirable) and true outcomes of the model's evaluation rows (``identity``: the model id), scored once:
    a cutoff only recounts them."""
    return fc.models.held_out_predictions(_task, _model)


@shared(copy=True, spinner="Scoring the cases…")
def predictions(_task: fc.TaskSpec, _model: fc.FittedModel, identity: str) -> pd.Series:
    """A regressor's predicted number for every row of the data, indexed by row id (``identity``: the model id)."""
    return pd.Series(_model.predict_value(_task.X), index=_task.frame.index)


@shared(copy=True)
def factual_map(_explainer: fc.FlexExplainer, identity: str) -> FactualMap:
    """The 2-D map of the explainer's factuals (``identity``: its model id)."""
    return project_factuals(_explainer.task, _explainer.model, _explainer.factual_rows)


@shared(copy=True, spinner="Scoring the cases…")
def factual_probabilities(_explainer: fc.FlexExplainer, identity: str) -> pd.Series:
    """P(undesirable) of every factual, indexed by row id (``identity``: the model id); a regressor's predicted
    number, which the pages show in its place (its off-band score would read as a chance)."""
    probabilities = _explainer.factual_probabilities()
    if _explainer.model.band is None:
        return probabilities
    rows = probabilities.index
    return pd.Series(_explainer.model.predict_value(_explainer.task.X.loc[rows]), index=rows)


@shared(copy=True)
def factual_map_with(_explainer: fc.FlexExplainer, identity: str, rows: tuple[int, ...]) -> FactualMap:
    """The factual map with ``rows`` (a query and its region) added where a sample left them out."""
    return factual_map(_explainer, identity).including(_explainer.task, _explainer.model, rows)


@shared(copy=True)
def global_result(_explainer: fc.FlexExplainer, identity: str, n_factuals: int, tau: Tau) -> fc.FlexResult:
    """Global FLEX at this τ from stored counterfactuals."""
    return _explainer.explain_global(n_factuals=n_factuals, tau=tau)


@shared(copy=True)
def regional_result(
    _explainer: fc.FlexExplainer, identity: str, n_factuals: int, tau: Tau, query: int, k: int,
    where: fc.importance.Condition | None,
) -> fc.RegionalResult:
    """The query's Hamming region (``where``: its criterion) at this τ, from stored counterfactuals."""
    base = global_result(_explainer, identity, n_factuals, tau)
    return _explainer.explain_region(global_result=base, query=query, k=k, where=where, tau=tau)


@shared(copy=True)
def rule_region(_explainer: fc.FlexExplainer, identity: str, n_factuals: int, tau: Tau,
                rule: tuple[fc.importance.Condition, ...]) -> fc.RegionalResult:
    """The rule-defined region (its conditions, checked) among the global result's factuals, from stored counterfactuals."""
    base = global_result(_explainer, identity, n_factuals, tau)
    return _explainer.explain_region(global_result=base, rule=list(rule), tau=tau)


@shared(copy=True, spinner="Scoring every candidate region against the permutation null (and refitting the model, "
                           "when replication is checked)…")
def found_regions(_explainer: fc.FlexExplainer, identity: str, n_factuals: int, tau: Tau, options: Mapping):
    """Region discovery over the global result's factuals (the pool) at this τ; ``options`` is JSON (its
    ``retrain``: refits of the model each region is checked under, 0 or absent: none).

    Keyed by the store, N_F, τ and the options: a τ change re-ranks from the stored counterfactuals
    (the pool is the global sample, generated before, with a progress bar, by the caller).
    """
    return _explainer.find_regions(tau=tau, n_factuals=n_factuals, **options)


@shared(copy=True, spinner="Comparing the groups (and refitting the model, when replication is checked)…")
def compared_groups(_explainer: fc.FlexExplainer, identity: str, n_factuals: int, tau: Tau, by: str, retrain: int = 0):
    """What the model asks of each group of ``by`` over the global result's factuals, at this τ; ``retrain``: refits
    of the model each named difference is checked under (0: none)."""
    return _explainer.compare_groups(by, n_factuals=n_factuals, tau=tau, retrain=retrain)


@shared(copy=True)
def tau_sweep(_explainer: fc.FlexExplainer, identity: str, n_factuals: int) -> pd.DataFrame:
    """F of every continuous feature against τ over the global sample (generated first by the caller)."""
    return _explainer.tau_sweep(n_factuals=n_factuals)


@shared(copy=False)
def tau_sweep_lines(_explainer: fc.FlexExplainer, identity: str, n_factuals: int, terms: bool = False):
    """The τ sweep's lines without the current τ: a τ change only adds its marker to them (:func:`tau_sweep_chart`).

    Kept as one shared figure (``copy=False``): drawing the lines anew cost about 19 ms a τ change, and nothing
    draws into them (``with_current_tau`` works on a copy).
    """
    # no current τ: the lines alone
    return fc.plotting.tau_sweep_figure(tau_sweep(_explainer, identity, n_factuals), terms=terms)


def tau_sweep_chart(explainer: fc.FlexExplainer, identity: str, n_factuals: int, current: float, *,
                    terms: bool = False):
    """The τ sweep chart with a marker at ``current``: the kept lines and a new marker (``terms``: the paper's
    symbols named, the sidebar's switch)."""
    return fc.plotting.with_current_tau(tau_sweep_lines(explainer, identity, n_factuals, terms), current)


@shared(copy=True)
def tau_panel_results(_explainer: fc.FlexExplainer, identity: str, n_factuals: int) -> dict:
    return {tau: global_result(_explainer, identity, n_factuals, tau) for tau in TAU_PANELS}


@shared(copy=False)
def tau_panels_figure(_explainer: fc.FlexExplainer, identity: str, n_factuals: int, terms: bool = False):
    """The paper's three τ panels as a figure: they do not depend on the current τ, so a τ change reuses it.

    Kept as one shared object (``copy=False``): building the figure costs more than FLEX at a new τ,
    and nothing draws into it after it is made.
    """
    return fc.plotting.tau_panels_figure(tau_panel_results(_explainer, identity, n_factuals), terms=terms)


# -- SHAP and LIME (slow: pages run them only when asked, then they are cached) -----------------
def _explained(key: tuple, start: str, step: str, compute):
    """The kept result for ``key``, or ``compute(progress)`` under a progress bar, then kept on :data:`SHELF`.

    Not :func:`shared`: the run draws a progress bar, which only the session that runs it may show. A session
    asking for the same run meanwhile waits for it.
    """

    def run():
        with progress_bar(start, step) as progress:
            return compute(progress)

    return SHELF.get_or_make(("explanation", *key), run)


@shared(copy=True, spinner="Timing SHAP on a few rows to say how long it will take…")
def shap_estimate(_task: fc.TaskSpec, _model: fc.FittedModel, model_identity: str, rows: tuple[int, ...], seed: int) -> str:
    return estimate_shap(_model, _task, list(rows), seed=seed).describe()


@shared(copy=True, spinner="Timing LIME on one row to say how long it will take…")
def _lime_row_estimate(_task: fc.TaskSpec, _model: fc.FittedModel, model_identity: str, _row: int, num_samples: int,
                       seed: int) -> RunEstimate:
    # ``_row`` is not hashed: whichever row is timed first stands for all of this model's rows.
    return estimate_lime(_model, _task, [_row], num_samples=num_samples, seed=seed)


def lime_estimate(task: fc.TaskSpec, model: fc.FittedModel, model_identity: str, rows: tuple[int, ...],
                  num_samples: int, seed: int) -> str:
    """LIME's time is about the same for every row: one row is timed per model and sample count, so a new
    region costs no new timing."""
    per_row = _lime_row_estimate(task, model, model_identity, int(rows[0]), num_samples, seed)
    return per_row.with_rows(len(rows)).describe()


def shap_with_progress(explainer: fc.FlexExplainer, model_identity: str, rows: tuple[int, ...]):
    """SHAP from the cache, or computed by the explainer with a bar counting rows done of total."""
    return _explained(
        ("shap", model_identity, tuple(rows), explainer.seed), f"Running SHAP on {len(rows):,} cases…",
        "Running SHAP: {done} / {total} rows",
        lambda progress: explainer.shap(list(rows), progress=progress),
    )


def lime_with_progress(explainer: fc.FlexExplainer, model_identity: str, rows: tuple[int, ...], num_samples: int):
    """LIME from the cache, or computed by the explainer with a bar counting rows done of total."""
    return _explained(
        ("lime", model_identity, tuple(rows), num_samples, explainer.seed), f"Running LIME on {len(rows):,} cases…",
        "Running LIME: {done} / {total} rows",
        lambda progress: explainer.lime(list(rows), num_samples=num_samples, progress=progress),
    )


def retrain_stability(explainer: fc.FlexExplainer, identity: str, rows: tuple[int, ...], k: int, tau: Tau) -> dict:
    """F, the stable verdicts and the counterfactuals' validity under ``k`` refits, over these factuals (``identity``:
    the store's), kept on :data:`SHELF` with a bar counting refit steps; never mutated once made."""

    def compute(progress) -> dict:
        return explainer.survives_retraining(explainer.explain_factuals(rows, tau=tau), k, tau=tau, progress=progress)

    return _explained(("retrain", identity, tuple(rows), int(k), _key_part(tau)), f"Refitting the model {k} times…",
                      "Refits: {done} of {total} steps", compute)


# -- necessity and sufficiency (two generator runs per feature: only when asked, then cached) -------
@shared(copy=True, spinner="Running the generator twice per feature (necessity and sufficiency)…")
def necessity_sufficiency(
    _explainer: fc.FlexExplainer, identity: str, rows: tuple[int, ...]
) -> fc.importance.NecessitySufficiency:
    """Necessity and sufficiency over these factuals (``identity``: the store's); independent of τ."""
    return _explainer.necessity_sufficiency(rows)


# -- the same cases with another generator (its counterfactuals stored on disk like the main ones) ---------
@shared(copy=True, spinner="Rerunning these cases with the other generator…")
def generator_sensitivity(
    _explainer: fc.FlexExplainer, identity: str, rows: tuple[int, ...], others: tuple[str, ...], tau: Tau
) -> dict:
    """Each generator's F_j with its interval over these factuals (``identity``: the store's)."""
    return _explainer.generator_sensitivity(_explainer.explain_factuals(rows, tau=tau), others, tau=tau)


@shared(copy=True)
def calibration(_task: fc.TaskSpec, _model: fc.FittedModel, identity: str) -> pd.DataFrame:
    """The reliability diagram's bins on the model's evaluation rows (``identity``: the model id)."""
    held_out = held_out_predictions(_task, _model, identity)
    return fc.models.calibration_table(held_out.y_true, held_out.p)


@shared(copy=True, spinner="Drawing the model's ROC, precision-recall and gain curves…")
def model_curves(_task: fc.TaskSpec, _model: fc.FittedModel, identity: str):
    """ROC, precision-recall, gain and precision by bin on the model's held-out rows (``identity``: the model id).
    Raises ConfigError for a model without held-out rows (one trained elsewhere)."""
    return fc.models.model_curves(_task, _model)


def permutation_with_progress(task: fc.TaskSpec, model: fc.FittedModel, model_identity: str, seed: int):
    """Permutation importance on the held-out rows from the cache, or computed with a bar counting the model's
    scorings (one per shuffle). Raises ConfigError for a model without held-out rows."""
    return _explained(
        ("permutation", model_identity, int(seed)), "Shuffling each feature on the held-out rows…",
        "Permutation importance: {done} / {total} scorings of the model",
        lambda progress: fc.compare.permutation_importance(task, model, seed=seed, progress=progress),
    )


# -- the what-if editor (one case, cheap: about 25 ms on loan; cached by the edited values) -----------
@shared(copy=True, spinner="Searching this case's counterfactuals…")
def what_if(_explainer: fc.FlexExplainer, identity: str, row: int | None, values: Mapping) -> fc.counterfactuals.WhatIf:
    """The case ``row`` with ``values`` ({feature: value}, the edits) scored and its counterfactuals searched
    (``identity``: the store's). Raises ConfigError for a value the data does not allow."""
    return _explainer.what_if(dict(values), row=row)


@shared(copy=True, spinner="Computing each case's curve…")
def dependence_curves(_explainer: fc.FlexExplainer, identity: str, feature: str, row: int):
    """Partial dependence and ICE of ``feature`` with ``row``'s curve and its stored counterfactuals' values on it."""
    cfset = _explainer.counterfactuals([row])
    ways_out = fc.counterfactuals.decode_rows(_explainer.task, cfset.counterfactuals[0][cfset.valid[0]])
    return fc.compare.dependence_curves(_explainer.model, _explainer.task, feature, query=row, counterfactuals=ways_out,
                                        seed=_explainer.seed)
