"""Session State: every key the app uses, initialised in one place.

Sidebar widgets use their state key directly (the sidebar is drawn on every run,
so Streamlit keeps them). Page widgets are drawn only on their page, and Streamlit
forgets a widget's value when its page is not shown; so the analysis values
(τ, k, the query, the criterion) live under their own keys here and page widgets
copy into them through ``on_change`` callbacks (see :func:`bind`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

import flex_core as fc
from ui import url_state

SOURCE_KINDS = ("Built-in", "CSV upload", "Loan approval (paper)", "Road accidents (paper)")
DEFAULT_DATASET = {"kind": "builtin", "name": "synthetic-regional"}

# Sidebar widget keys.
SOURCE = "sb_source"
BUILTIN = "sb_builtin"
MODEL = "sb_model"
ENCODING = "sb_encoding"
CV_FOLDS = "sb_cv_folds"
GENERATOR = "sb_generator"
SEED = "sb_seed"
N_FACTUALS = "sb_n_factuals"
N_CF = "sb_n_cf"
GENERATOR_SETTINGS = "generator_settings"  # {generator: {setting: value}}, only settings changed from the defaults

# Analysis keys (not widgets).
DATASET = "dataset"  # the active, successfully loaded source (dict)
OVERRIDES = "overrides"  # {"kinds": {...}, "immutable": [...] | None, "constraints": {...} | None}
TAU = "tau"
TAU_FEATURES = "tau_features"  # {feature: τ} where it differs from the global τ
QUERY = "query"
WHERE = "where"  # "feature=value" or None
K = "k"
SAVED_REGIONS = "saved_regions"  # list of {"name", "query", "k", "where"}
CF_ROW = "cf_row"
SEEN_SELECTIONS = "seen_selections"  # {widget key: last selection applied}, so a stale selection is not reapplied
LINK_ERROR = "link_error"
REPORT_HTML = "report_html"  # the last HTML report built on the Report page
SHAP_REQUEST = "shap_request"  # the (model, factuals) SHAP was asked for; SHAP runs only when asked
LIME_REQUEST = "lime_request"  # the (model, members, samples) LIME was asked for
SUFFICIENCY_REQUESTS = "sufficiency_requests"  # [(store, factuals)] necessity/sufficiency was asked for
NECESSARY_ONLY = "necessary_only"  # bar charts count only necessary changes
WHISKERS = "whiskers"  # "interval" (bootstrap, default) or "std"


def _defaults() -> dict[str, Any]:
    view = url_state.VIEW_DEFAULTS
    return {
        SOURCE: SOURCE_KINDS[0],
        BUILTIN: DEFAULT_DATASET["name"],
        MODEL: view["model"],
        ENCODING: view["encoding"],
        CV_FOLDS: 5,
        # Read from the registry, never hard-coded: the default may change.
        GENERATOR: fc.counterfactuals.DEFAULT_GENERATOR,
        SEED: view["seed"],
        N_FACTUALS: view["n_factuals"],
        N_CF: view["n_cf"],
        GENERATOR_SETTINGS: {},
        DATASET: dict(DEFAULT_DATASET),
        OVERRIDES: {"kinds": {}, "immutable": None},
        TAU: view["tau"],
        TAU_FEATURES: {},
        QUERY: None,
        WHERE: None,
        K: view["k"],
        SAVED_REGIONS: [],
        CF_ROW: None,
        SEEN_SELECTIONS: {},
        LINK_ERROR: None,
        REPORT_HTML: None,
        SHAP_REQUEST: None,
        LIME_REQUEST: None,
        SUFFICIENCY_REQUESTS: [],
        NECESSARY_ONLY: False,
        WHISKERS: "interval",
    }


def init_state(query_params: Mapping[str, Any] | None = None) -> None:
    """Set every key not yet set; on a session's first run, apply a view link's query parameters."""
    first_run = DATASET not in st.session_state
    for key, value in _defaults().items():
        st.session_state.setdefault(key, value)
    if first_run and query_params:
        try:
            apply_view(url_state.view_from_query_params(dict(query_params)))
        except fc.FlexError as exc:
            st.session_state[LINK_ERROR] = f"The link could not be applied: {exc}"


def apply_view(view: Mapping[str, Any]) -> None:
    """Put a parsed view (from a link) into Session State."""
    dataset = view.get("dataset")
    if dataset:
        kind, _, rest = str(dataset).partition(":")
        if kind == "builtin" and rest in fc.data.BUILTIN_DATASETS:
            st.session_state[DATASET] = {"kind": "builtin", "name": rest}
            st.session_state[BUILTIN] = rest
        elif kind in ("loan", "accidents") and rest:
            st.session_state[DATASET] = {"kind": kind, "path": rest}
            st.session_state[SOURCE] = SOURCE_KINDS[2] if kind == "loan" else SOURCE_KINDS[3]
        else:
            raise fc.ConfigError(f"dataset={dataset!r} must be builtin:NAME, loan:PATH or accidents:PATH.")
    st.session_state[MODEL] = view["model"]
    st.session_state[ENCODING] = view["encoding"]
    if view.get("generator"):
        st.session_state[GENERATOR] = view["generator"]
    st.session_state[SEED] = view["seed"]
    st.session_state[N_FACTUALS] = view["n_factuals"]
    st.session_state[N_CF] = view["n_cf"]
    st.session_state[QUERY] = view["query"]
    st.session_state[K] = view["k"]
    st.session_state[WHERE] = view["where"]
    st.session_state[TAU] = view["tau"]
    st.session_state[TAU_FEATURES] = dict(view["tau_features"])


def reset_analysis() -> None:
    """Forget what belonged to the previous dataset (query, regions, overrides, per-feature τ)."""
    defaults = _defaults()
    for key in (OVERRIDES, QUERY, WHERE, SAVED_REGIONS, CF_ROW, TAU_FEATURES, SEEN_SELECTIONS, REPORT_HTML,
                SHAP_REQUEST, LIME_REQUEST, SUFFICIENCY_REQUESTS):
        st.session_state[key] = defaults[key]


def forget_stale_rows(pool) -> list[str]:
    """Drop the query, counterfactual row and saved regions that are no longer factuals.

    A new model, seed or feature setting changes which rows the model predicts
    undesirable; a stale row would stop every page that uses it. Returns the names
    of the saved regions dropped, so the caller can say so.
    """
    factuals = set(int(r) for r in pool)
    s = st.session_state
    if s[QUERY] is not None and int(s[QUERY]) not in factuals:
        s[QUERY] = None
    if s[CF_ROW] is not None and int(s[CF_ROW]) not in factuals:
        s[CF_ROW] = None
    kept = [r for r in s[SAVED_REGIONS] if int(r["query"]) in factuals]
    dropped = [r["name"] for r in s[SAVED_REGIONS] if int(r["query"]) not in factuals]
    s[SAVED_REGIONS] = kept
    return dropped


def dataset_spec(source: Mapping) -> str | None:
    """The ``--data`` string of a source, or None for an upload (which a link cannot carry)."""
    if source["kind"] == "builtin":
        return f"builtin:{source['name']}"
    if source.get("path"):
        return f"{source['kind']}:{source['path']}"
    return None


def current_view() -> dict[str, Any]:
    """The view a link should reproduce, from Session State."""
    s = st.session_state
    return {
        "dataset": dataset_spec(s[DATASET]) or url_state.VIEW_DEFAULTS["dataset"],
        "model": s[MODEL],
        "encoding": s[ENCODING],
        "generator": s[GENERATOR],
        "seed": int(s[SEED]),
        "n_factuals": int(s[N_FACTUALS]),
        "n_cf": int(s[N_CF]),
        "query": s[QUERY],
        "k": int(s[K]),
        "where": s[WHERE],
        "tau": float(s[TAU]),
        "tau_features": dict(s[TAU_FEATURES]),
    }


def tau_setting() -> float | dict:
    """τ as flex_core takes it: one number, or per feature with ``"*"`` as the default."""
    per_feature = st.session_state[TAU_FEATURES]
    tau = float(st.session_state[TAU])
    return {**per_feature, "*": tau} if per_feature else tau


def bind(widget_key: str, state_key: str):
    """An ``on_change`` callback copying a page widget's value into its analysis key."""

    def copy():
        st.session_state[state_key] = st.session_state[widget_key]

    return copy


def fresh_selection(widget_key: str, selection) -> bool:
    """True once per new selection of a chart/table (Streamlit repeats the last one on every rerun)."""
    marker = repr(selection)
    seen = st.session_state[SEEN_SELECTIONS]
    if seen.get(widget_key) == marker:
        return False
    seen[widget_key] = marker
    return True
