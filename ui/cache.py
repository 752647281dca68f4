"""All of the app's caching, in one module.

- ``st.cache_resource`` holds shared, never-mutated objects: tasks, fitted models,
  generators and the :class:`flex_core.CounterfactualStore` (which also persists
  its counterfactuals under ``FLEX_CACHE_DIR``, default ``.flex_cache/`` in the
  repository, so a restart does not pay for them again).
- ``st.cache_data`` holds results computed from stored counterfactuals, keyed by
  the store's identity and the settings (τ, k, query, ...). Those functions never
  generate: callers first call :func:`ensure_rows`, which shows a progress bar
  counting queries while the missing rows are generated.
- SHAP and LIME results live in :class:`ExplanationCache` (one per server, through
  ``st.cache_resource``): they need a progress bar while they run, which
  ``st.cache_data`` cannot replay.

Arguments starting with ``_`` are not hashed; each such argument comes with a
hashable identity argument (fingerprint, key) that decides the cache entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

import flex_core as fc
from flex_core.importance._sweep import TAU_PANELS
from ui import paths
from ui.estimates import RunEstimate, estimate_lime, estimate_shap
from ui.factual_map import FactualMap, project_factuals
from ui.shelf import Shelf

REPO = Path(__file__).resolve().parents[1]


def cache_dir() -> Path:
    path = Path(os.environ.get("FLEX_CACHE_DIR", ".flex_cache"))
    return path if path.is_absolute() else REPO / path


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:20]


# -- data, model, generator, store -------------------------------------------------------------
def source_key(source: Mapping) -> str:
    """The hashable description of a dataset source (uploaded bytes are passed and hashed separately)."""
    return json.dumps({k: v for k, v in source.items() if k != "data"}, sort_keys=True)


def max_file_bytes() -> int:
    """The upload limit of ``.streamlit/config.toml`` (server.maxUploadSize, MB), applied to typed paths too."""
    return int(st.get_option("server.maxUploadSize")) * 2**20


@st.cache_resource(show_spinner="Loading the data…", max_entries=8)
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
            undesirable=source["undesirable"],
            immutable=source.get("immutable", ()),
            use_identifiers=source.get("use_identifiers", ()),
            missing=source.get("missing", "drop"),
            name=source.get("filename") or None,
            max_bytes=limit,
        )
    raise fc.ConfigError(f"Unknown dataset source {kind!r}.")


@st.cache_resource(show_spinner="Opening the project folder…", max_entries=4)
def project(path: str) -> fc.FlexExplainer:
    """The explainer ``FlexExplainer.save`` wrote to ``path`` (data, model.skops, settings)."""
    return fc.FlexExplainer.load(paths.confine(path, folder=True), cache_dir=cache_dir())


@st.cache_resource(show_spinner="Checking and loading the model file…", max_entries=4)
def model_file(digest: str, _data: bytes):
    """The estimator in an uploaded .skops file (``digest``: its SHA-256); refused unless every class is on FLEX's list."""
    return fc.models.load_model(_data)


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@st.cache_resource(max_entries=8)
def external_model(_task: fc.TaskSpec, fingerprint: str, _estimator, digest: str, name: str, labelled: bool = True):
    """(task restricted to the model's columns, FittedModel) for a model trained elsewhere; ``labelled=False``: the
    outcomes are the model's own predictions (a project saved without y), so it is not scored."""
    return fc.models.from_file_estimator(_task, _estimator, name=name, labelled=labelled)


@st.cache_resource(max_entries=16)
def task_with_overrides(_base: fc.TaskSpec, base_fingerprint: str, overrides: str) -> fc.TaskSpec:
    """The base task with edited kinds / immutable features / constraints (``overrides`` is JSON)."""
    spec = json.loads(overrides)
    constraints = spec.get("constraints")
    if not spec.get("kinds") and spec.get("immutable") is None and constraints is None:
        return _base
    return _base.with_overrides(kinds=spec.get("kinds") or None, immutable=spec.get("immutable"), **(constraints or {}))


MODELS_KEPT = 8


@st.cache_resource
def _model_shelf() -> Shelf[fc.FittedModel]:
    """Fitted models shared by every session, each trained once (at most :data:`MODELS_KEPT` kept)."""
    return Shelf(MODELS_KEPT)


def fitted_model(task: fc.TaskSpec, fingerprint: str, model: str, encoding: str, seed: int, cv_folds: int,
                 cv_rows: int | None = None) -> fc.FittedModel:
    """The fitted model for these settings, trained with a progress bar (fold k of n, then the final fit).

    Not ``st.cache_resource`` itself: a cached function may not draw into a progress bar
    made outside it, and training is what most needs one. The shelf it keeps models on is; a session
    that asks while another trains the same model waits for that one.
    """
    key = (fingerprint, model, encoding, int(seed), int(cv_folds), cv_rows)

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
        return _model_shelf().get_or_make(key, train, waiting=waiting)
    finally:
        for note in notes:
            note.empty()


@st.cache_resource(max_entries=16)
def explainer(
    _task: fc.TaskSpec, _model: fc.FittedModel, identity: str, generator: str, settings: str, n_cf: int, seed: int,
    refine: str | None,
) -> fc.FlexExplainer:
    """The pipeline (generator and counterfactual store) for these settings; ``identity`` is their JSON with the data's and model's.

    Built by :meth:`flex_core.FlexExplainer.from_task`, as the CLI and the reproduction build theirs.
    Its store persists counterfactuals under :func:`cache_dir`.
    """
    return fc.FlexExplainer.from_task(
        _task, _model, generator=generator, generator_settings=json.loads(settings), n_cf=n_cf, seed=seed, refine=refine,
        cache_dir=cache_dir(),
    )


def store_id(store: fc.CounterfactualStore) -> str:
    return _digest(store.key)


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


def ensure_rows(store: fc.CounterfactualStore, rows: Sequence[int], *, what: str = "factuals") -> None:
    """Generate the counterfactuals of the rows not stored yet, with a progress bar counting queries."""
    missing = store.missing(rows)
    if not missing:
        return
    with progress_bar(f"Generating counterfactuals for {len(missing)} {what}…",
                      "Generating counterfactuals: {done} / {total} queries") as progress:
        store.ensure(missing, progress=progress)


# -- results from stored counterfactuals (never generate) -------------------------------------
@st.cache_data(show_spinner="Scoring the model's test rows…", max_entries=8)
def held_out_predictions(_task: fc.TaskSpec, _model: fc.FittedModel, identity: str):
    """P(undesirable) and true outcomes of the model's evaluation rows (``identity``: the model id), scored once:
    a cutoff only recounts them."""
    return fc.models.held_out_predictions(_task, _model)


@st.cache_data(show_spinner=False, max_entries=8)
def factual_map(_store: fc.CounterfactualStore, identity: str) -> FactualMap:
    """The 2-D map of the store's factuals (``identity``: the store's model id)."""
    return project_factuals(_store.task, _store.model, _store.factual_rows)


@st.cache_data(show_spinner="Scoring the cases…", max_entries=8)
def pool_probabilities(_store: fc.CounterfactualStore, identity: str) -> pd.Series:
    """P(undesirable) of every factual, indexed by row id (one batched call; ``identity``: the store's model id)."""
    rows = _store.factual_rows
    proba = _store.model.predict_proba(_store.task.frame.loc[rows, _store.task.feature_names])[:, 1]
    return pd.Series(proba, index=rows)


@st.cache_data(show_spinner=False, max_entries=32)
def factual_map_with(_store: fc.CounterfactualStore, identity: str, rows: tuple[int, ...]) -> FactualMap:
    """The factual map with ``rows`` (a query and its region) added where a sample left them out."""
    return factual_map(_store, identity).including(_store.task, _store.model, rows)


def global_rows(store: fc.CounterfactualStore, n_factuals: int) -> np.ndarray:
    return fc.importance.sample_factuals(store.factual_rows, n_factuals, seed=store.seed)


@st.cache_data(show_spinner=False, max_entries=256)
def global_result(_explainer: fc.FlexExplainer, identity: str, n_factuals: int, tau: str) -> fc.FlexResult:
    """Global FLEX at this τ (JSON: a number or {feature: τ, "*": default}) from stored counterfactuals."""
    return _explainer.explain_global(n_factuals=n_factuals, tau=json.loads(tau))


@st.cache_data(show_spinner=False, max_entries=256)
def regional_result(
    _explainer: fc.FlexExplainer, identity: str, n_factuals: int, tau: str, query: int, k: int, where: str | None
) -> fc.RegionalResult:
    base = global_result(_explainer, identity, n_factuals, tau)
    return _explainer.explain_region(global_result=base, query=query, k=k, where=where, tau=json.loads(tau))


@st.cache_data(show_spinner=False, max_entries=64)
def rule_region(_explainer: fc.FlexExplainer, identity: str, n_factuals: int, tau: str, rule: str) -> fc.RegionalResult:
    """The rule-defined region (``rule``: JSON) among the global result's factuals, from stored counterfactuals."""
    base = global_result(_explainer, identity, n_factuals, tau)
    return _explainer.explain_region(global_result=base, rule=json.loads(rule), tau=json.loads(tau))


@st.cache_data(show_spinner="Scoring every candidate region against the permutation null…", max_entries=32)
def found_regions(_explainer: fc.FlexExplainer, identity: str, n_factuals: int, tau: str, options: str):
    """Region discovery over the global result's factuals (the pool) at this τ; ``options`` is JSON.

    Keyed by the store, N_F, τ and the options: a τ change re-ranks from the stored counterfactuals
    (the pool is the global sample, generated before, with a progress bar, by the caller).
    """
    return _explainer.find_regions(tau=json.loads(tau), n_factuals=n_factuals, **json.loads(options))


@st.cache_data(show_spinner="Comparing the groups…", max_entries=32)
def compared_groups(_explainer: fc.FlexExplainer, identity: str, n_factuals: int, tau: str, by: str):
    """What the model asks of each group of ``by`` over the global result's factuals, at this τ."""
    return _explainer.compare_groups(by, n_factuals=n_factuals, tau=json.loads(tau))


def region_members(store: fc.CounterfactualStore, query: int, k: int, where: str | None) -> list[int]:
    members, *_ = fc.select_region(
        store.task, query, store.factual_rows, k=k, where=where, ranges=store.ranges, seed=store.seed
    )
    return members


@st.cache_data(show_spinner=False, max_entries=32)
def tau_sweep(_store: fc.CounterfactualStore, identity: str, n_factuals: int):
    rows = global_rows(_store, n_factuals)
    return fc.importance.tau_sweep(_store.ensure(rows), _store.task, ranges=_store.ranges)


@st.cache_data(show_spinner=False, max_entries=32)
def tau_panel_results(_explainer: fc.FlexExplainer, identity: str, n_factuals: int) -> dict:
    return {tau: global_result(_explainer, identity, n_factuals, json.dumps(tau)) for tau in TAU_PANELS}


@st.cache_resource(show_spinner=False, max_entries=16)
def tau_panels_figure(_explainer: fc.FlexExplainer, identity: str, n_factuals: int):
    """The paper's three τ panels as a figure: they do not depend on the current τ, so a τ change reuses it.

    Kept as one shared object (``cache_resource``): building the figure costs more than FLEX at a new τ,
    and nothing draws into it after it is made.
    """
    return fc.plotting.tau_panels_figure(tau_panel_results(_explainer, identity, n_factuals))


def tau_json(tau) -> str:
    return json.dumps(tau, sort_keys=True)


# -- SHAP and LIME (slow: pages run them only when asked, then they are cached) -----------------
class ExplanationCache:
    """SHAP and LIME results by their settings (least recently used dropped beyond ``size``).

    Not ``st.cache_data``: a cached function may not update an element drawn outside it
    (Streamlit could not replay it), and these runs need a progress bar while they compute.
    """

    def __init__(self, size: int = 32) -> None:
        self._items: OrderedDict = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
            return self._items.get(key)

    def put(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


@st.cache_resource
def explanations() -> ExplanationCache:
    """The one explanation cache of this server (results are never mutated once stored)."""
    return ExplanationCache()


def _explained(key: tuple, start: str, step: str, compute):
    """The stored result for ``key``, or ``compute(progress)`` under a progress bar, then stored."""
    result = explanations().get(key)
    if result is None:
        with progress_bar(start, step) as progress:
            result = compute(progress)
        explanations().put(key, result)
    return result


@st.cache_data(show_spinner="Timing SHAP on a few rows to say how long it will take…", max_entries=16)
def shap_estimate(_task: fc.TaskSpec, _model: fc.FittedModel, model_identity: str, rows: tuple[int, ...], seed: int) -> str:
    return estimate_shap(_model, _task, list(rows), seed=seed).describe()


@st.cache_data(show_spinner="Timing LIME on one row to say how long it will take…", max_entries=16)
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
        ("shap", model_identity, tuple(rows), explainer.seed), f"Running SHAP on {len(rows):,} factuals…",
        "Running SHAP: {done} / {total} rows",
        lambda progress: explainer.shap(list(rows), progress=progress),
    )


def lime_with_progress(explainer: fc.FlexExplainer, model_identity: str, rows: tuple[int, ...], num_samples: int):
    """LIME from the cache, or computed by the explainer with a bar counting rows done of total."""
    return _explained(
        ("lime", model_identity, tuple(rows), num_samples, explainer.seed), f"Running LIME on {len(rows):,} factuals…",
        "Running LIME: {done} / {total} rows",
        lambda progress: explainer.lime(list(rows), num_samples=num_samples, progress=progress),
    )


# -- necessity and sufficiency (two generator runs per feature: only when asked, then cached) -------
@st.cache_data(show_spinner="Running the generator twice per feature (necessity and sufficiency)…", max_entries=32)
def necessity_sufficiency(
    _store: fc.CounterfactualStore, identity: str, rows: tuple[int, ...]
) -> fc.importance.NecessitySufficiency:
    """Necessity and sufficiency over these factuals (``identity``: the store's); independent of τ."""
    return fc.importance.necessity_sufficiency(_store, list(rows))


# -- the same cases with another generator (its counterfactuals stored on disk like the main ones) ---------
@st.cache_data(show_spinner="Rerunning these cases with the other generator…", max_entries=16)
def generator_sensitivity(
    _store: fc.CounterfactualStore, identity: str, rows: tuple[int, ...], others: tuple[str, ...], tau
) -> dict:
    """Each generator's F_j with its interval over these factuals (``identity``: the store's)."""
    result = fc.importance.flex_importance(_store.ensure(list(rows)), _store.task, tau=tau, ranges=_store.ranges)
    return fc.importance.generator_sensitivity(_store, result, list(others), tau=tau)


@st.cache_data(show_spinner=False, max_entries=8)
def calibration(_task: fc.TaskSpec, _model: fc.FittedModel, identity: str) -> pd.DataFrame:
    """The reliability diagram's bins on the model's evaluation rows (``identity``: the model id)."""
    held_out = held_out_predictions(_task, _model, identity)
    return fc.models.calibration_table(held_out.y_true, held_out.p)


# -- the what-if editor (one case, cheap: about 25 ms on loan; cached by the edited values) -----------
@st.cache_data(show_spinner="Searching this case's counterfactuals…", max_entries=64)
def what_if(_explainer: fc.FlexExplainer, identity: str, row: int | None, values: str) -> fc.counterfactuals.WhatIf:
    """The case ``row`` with ``values`` (JSON {feature: value}, the edits) scored and its counterfactuals
    searched (``identity``: the store's). Raises ConfigError for a value the data does not allow."""
    return _explainer.what_if(json.loads(values), row=row)
