"""Session State: every key the app uses, initialised in one place.

No widget owns a setting. A widget's own state is Streamlit's to reset: a page link
clicked while the session's first run is still going reran the app with the sidebar's
widgets at their first options (dataset toy2d, N_F = 1), silently changing what every
page explains. So every setting lives under its own key here, set once by
:func:`init_state`; the sidebar's widgets start from it (:func:`bound`) and page
widgets copy into it (:func:`bind`), both through ``on_change`` callbacks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import streamlit as st

import flex_core as fc
from flex_core.formatting import listing
from flex_core.importance import Condition
from flex_core.limits import LIMITS
from ui import cache, paths, url_state
from ui.text import plain

SOURCE_KINDS = ("Built-in", "CSV upload", "Loan approval (paper)", "Road accidents (paper)", "Project folder")
MODEL_SOURCES = ("Train here", "Load a model file")
DEFAULT_DATASET = {"kind": "builtin", "name": "synthetic-regional"}

# The sidebar's settings (each widget's own key is widget_key(...) of these).
SOURCE = "sb_source"
BUILTIN = "sb_builtin"
MODEL = "sb_model"
ENCODING = "sb_encoding"
CV_FOLDS = "sb_cv_folds"
CV_ROWS = "sb_cv_rows"
GENERATOR = "sb_generator"
REFINE = "sb_refine"  # "auto" (the generator's default), "minimal" or "none"
SEED = "sb_seed"
N_FACTUALS = "sb_n_factuals"
N_CF = "sb_n_cf"
GENERATOR_SETTINGS = "generator_settings"  # {generator: {setting: value}}, only settings changed from the defaults
MODEL_SOURCE = "sb_model_source"
LOAN_PATH = "sb_loan_path"  # the path boxes of the paper's files and of a project folder
ACCIDENTS_PATH = "sb_accidents_path"
ACCIDENTS_MISSING = "sb_accidents_missing"
PROJECT_PATH = "sb_project_path"

# Analysis keys (not widgets).
DATASET = "dataset"  # the active, successfully loaded source (dict)
MODEL_FILE = "model_file"  # the active uploaded model file: {"name", "data": bytes} or None (the model itself lives in ui/cache)
OVERRIDES = "overrides"  # {"kinds": {...}, "immutable": [...] | None, "constraints": {...} | None, "between": [...] | None,
#                          "words": the edited data dictionary (its file's shape) | None}
TAU = "tau"
TAU_FEATURES = "tau_features"  # {feature: τ} where it differs from the global τ
QUERY = "query"
WHERE = "where"  # the criterion, a Condition (feature = value), or None
K = "k"
SAVED_REGIONS = "saved_regions"  # list of {"name", "query", "k", "where"} (a rule region: query None, and "rule": Conditions)
RULE = "rule"  # the rule-defined region the Regional explorer shows: a tuple of Conditions, or None
RULE_DRAFT = "rule_draft"  # the rule builder's Conditions, not yet opened
REGION_SEARCH = "region_search"  # the options region discovery ran with (a dict), or None until asked
GROUPS_BY = "groups_by"  # the feature the group comparison splits by, or None until asked
GROUPS_RETRAIN = "groups_retrain"  # refits of the model the group comparison checks its differences under (0: none)
CF_ROW = "cf_row"
SEEN_SELECTIONS = "seen_selections"  # {widget key: last selection applied}, so a stale selection is not reapplied
LINK_ERROR = "link_error"
REPORT_HTML = "report_html"  # the last HTML report built on the Report page
REPORT_VIEW = "report_view"  # the view (and data) that report was built from, to tell when it is out of date
REPORT_SNAPSHOT = "report_snapshot"  # the last interactive report built: {"html", "view"} (view as REPORT_VIEW), or None
SHAP_REQUEST = "shap_request"  # the (model, factuals) SHAP was asked for; SHAP runs only when asked
LIME_REQUEST = "lime_request"  # the (model, members, samples) LIME was asked for
PERMUTATION_REQUEST = "permutation_request"  # the (model, seed) permutation importance was asked for
SUFFICIENCY_REQUESTS = "sufficiency_requests"  # [(store, factuals)] necessity/sufficiency was asked for
GENERATOR_CHECK = "generator_check"  # [store, factuals, other generator] the comparison asked for, or None
RETRAIN_CHECK = "retrain_check"  # [store, factuals, K] the refits asked for, or None
NECESSARY_ONLY = "necessary_only"  # bar charts count only necessary changes
WHISKERS = "whiskers"  # "interval" (95% interval of F, default) or "std"
TERMS = "terms"  # True: the pages name the analyst's terms (F_j, τ, r, q) beside the plain words (ui.glossary.term)
WHATIF_ROW = "whatif_row"  # the row the what-if editor starts from (any row of the data), or None
WHATIF_EDITS = "whatif_edits"  # {feature: value} where the what-if case differs from that row
BAND = "band"  # the numeric target's band ({"target", "above", "below", "inclusive"}, ui/band.py) of the active
#                upload, or the one a link or reload named, which the CSV form starts from; None for a class outcome


def _defaults() -> dict[str, Any]:
    view = url_state.VIEW_DEFAULTS
    return {
        SOURCE: SOURCE_KINDS[0],
        BUILTIN: DEFAULT_DATASET["name"],
        MODEL: view["model"],
        ENCODING: view["encoding"],
        CV_FOLDS: view["cv_folds"],
        CV_ROWS: view["cv_rows"],
        # Read from the registry, never hard-coded: the default may change.
        GENERATOR: fc.counterfactuals.DEFAULT_GENERATOR,
        REFINE: view["refine"],
        SEED: view["seed"],
        N_FACTUALS: view["n_factuals"],
        N_CF: view["n_cf"],
        GENERATOR_SETTINGS: {},
        MODEL_SOURCE: MODEL_SOURCES[0],
        LOAN_PATH: "",
        ACCIDENTS_PATH: "",
        ACCIDENTS_MISSING: "drop",
        PROJECT_PATH: "",
        MODEL_FILE: None,
        DATASET: dict(DEFAULT_DATASET),
        OVERRIDES: {"kinds": {}, "immutable": None},
        TAU: view["tau"],
        TAU_FEATURES: {},
        QUERY: None,
        WHERE: None,
        K: view["k"],
        SAVED_REGIONS: [],
        RULE: None,
        RULE_DRAFT: [],
        REGION_SEARCH: None,
        GROUPS_BY: None,
        GROUPS_RETRAIN: 0,
        CF_ROW: None,
        SEEN_SELECTIONS: {},
        LINK_ERROR: None,
        REPORT_HTML: None,
        REPORT_VIEW: None,
        REPORT_SNAPSHOT: None,
        SHAP_REQUEST: None,
        LIME_REQUEST: None,
        PERMUTATION_REQUEST: None,
        SUFFICIENCY_REQUESTS: [],
        GENERATOR_CHECK: None,
        RETRAIN_CHECK: None,
        NECESSARY_ONLY: False,
        WHISKERS: "interval",
        TERMS: view["terms"],
        WHATIF_ROW: None,
        WHATIF_EDITS: {},
        BAND: None,
    }


def init_state(query_params: Mapping[str, Any] | None = None, *, project: str | None = None) -> None:
    """Set every key not yet set; on a session's first run, open ``project`` (``--project DIR``) and apply a view link."""
    first_run = DATASET not in st.session_state
    for key, value in _defaults().items():
        st.session_state.setdefault(key, value)
    if first_run and project:
        st.session_state[DATASET] = {"kind": "project", "path": project}
        st.session_state[SOURCE] = SOURCE_KINDS[4]
        apply_project_settings(project)
    if first_run and query_params:
        try:
            apply_view(url_state.view_from_query_params(dict(query_params)))
        except fc.FlexError as exc:
            st.session_state[LINK_ERROR] = f"The link could not be applied: {exc}"


def apply_project_settings(folder: str) -> None:
    """Open a project (``explainer.save`` / ``dashboard()``) on the notebook's last settings: n_cf, seed,
    generator, refine, and the last run's n_factuals, τ and the region's query, k and criterion."""
    try:
        settings = fc.FlexExplainer.read_settings(folder)
    except (fc.FlexError, OSError):  # FlexExplainer.load says what is wrong with the folder
        return
    s = st.session_state
    if settings.get("generator") in fc.counterfactuals.GENERATORS:
        s[GENERATOR] = settings["generator"]
    s[REFINE] = settings.get("refine") or "auto"
    for key, name in ((N_CF, "n_cf"), (SEED, "seed")):
        if isinstance(settings.get(name), int):
            s[key] = settings[name]
    view = settings.get("view") or {}
    if isinstance(view.get("n_factuals"), int):
        low, high = LIMITS["n_factuals"][:2]
        s[N_FACTUALS] = min(max(view["n_factuals"], low), high)
    if isinstance(view.get("tau"), (int, float)):
        s[TAU] = float(view["tau"])
    if isinstance(view.get("query"), int):
        s[QUERY], s[K], s[WHERE] = view["query"], int(view.get("k", s[K])), criterion_of(view.get("where"))


def apply_view(view: Mapping[str, Any]) -> None:
    """Put a parsed view (from a link or a reload) into Session State.

    A link made on an uploaded file names it but cannot carry it: the settings that
    belong to that file (query, criterion, feature settings, per-feature τ) are then
    skipped and :data:`LINK_ERROR` says to upload it again.
    """
    s = st.session_state
    kind, _, rest = str(view.get("dataset") or url_state.VIEW_DEFAULTS["dataset"]).partition(":")
    if kind in ("loan", "accidents", "project") and rest:
        # A link may not make the server read outside its folders (the refusal names no path), and a file it
        # names is read before anything of the link is applied: one that cannot be read leaves the view as it was.
        paths.confine(rest, folder=kind == "project")
        _check_readable({"kind": kind, "path": rest} | ({"missing": view["missing"]} if kind == "accidents" else {}))
    if kind == url_state.UPLOAD:
        kept = " and the band of its target" if view.get("band") else ""
        s[LINK_ERROR] = (f"This view was made on an uploaded file ({rest or 'a CSV'}), which a link or a reload "
                         f"cannot bring back: upload it again. The model and generator settings{kept} were applied.")
        s[BAND], s[SOURCE] = view.get("band"), SOURCE_KINDS[1]  # the CSV form is open, starting from the band
    elif kind == "builtin" and rest in fc.data.BUILTIN_DATASETS:
        s[DATASET] = {"kind": "builtin", "name": rest}
        s[BUILTIN] = rest
    elif kind in ("loan", "accidents") and rest:
        s[DATASET] = {"kind": kind, "path": rest} | ({"missing": view["missing"]} if kind == "accidents" else {})
        s[SOURCE] = SOURCE_KINDS[2] if kind == "loan" else SOURCE_KINDS[3]
        s[LOAN_PATH if kind == "loan" else ACCIDENTS_PATH] = rest
        if kind == "accidents":
            s[ACCIDENTS_MISSING] = view["missing"]
    elif kind == "project" and rest:
        s[DATASET] = {"kind": "project", "path": rest}
        s[SOURCE] = SOURCE_KINDS[4]
    else:
        raise fc.ConfigError(f"dataset={view['dataset']!r} must be builtin:NAME, loan:PATH, accidents:PATH or project:DIR.")
    s[MODEL] = view["model"]
    s[ENCODING] = view["encoding"]
    s[CV_FOLDS] = view["cv_folds"]
    s[CV_ROWS] = view["cv_rows"]
    if view.get("generator"):
        s[GENERATOR] = view["generator"]
    s[REFINE] = view["refine"]
    _apply_generator_settings(s[GENERATOR], view["generator_settings"])
    s[SEED] = view["seed"]
    s[N_FACTUALS] = view["n_factuals"]
    s[N_CF] = view["n_cf"]
    s[K] = view["k"]
    s[TAU] = view["tau"]
    s[NECESSARY_ONLY] = view["necessary_only"]
    s[WHISKERS] = view["whiskers"]
    s[TERMS] = view["terms"]
    if kind != url_state.UPLOAD:
        s[QUERY] = view["query"]
        s[WHERE] = criterion_of(view["where"])
        s[TAU_FEATURES] = dict(view["tau_features"])
        s[OVERRIDES] = {"kinds": dict(view["kinds"]), "immutable": view["immutable"],
                        **({"between": list(view["constraints"])} if view["constraints"] is not None else {}),
                        **({"words": view["words"]} if view["words"] is not None else {})}
        s[SAVED_REGIONS] = [_region_of(r) for r in view["regions"]]
        s[RULE] = rule_of(view["rule"])
        s[WHATIF_ROW] = view["whatif_row"]
        s[WHATIF_EDITS] = dict(view["whatif_edits"])


def _check_readable(source: Mapping) -> None:
    """Load a linked dataset (cached, so the page's own load reuses it); a ConfigError when it cannot be read."""
    try:
        cache.load_base_task(dict(source))
    except fc.FlexError:
        raise
    except Exception as exc:  # whatever else a file triggers: one message, never a traceback naming server files
        raise fc.ConfigError(f"That dataset could not be read ({type(exc).__name__}); check it is a CSV with one row "
                             "per case.") from None


def _apply_generator_settings(name: str, settings: Mapping[str, str]) -> None:
    """Set the sidebar's generator-setting widgets from a link's text values, typed by each default."""
    defaults = fc.counterfactuals.generator_defaults(name)
    unknown = sorted(set(settings) - set(defaults))
    if unknown:
        raise fc.ConfigError(f"{name} has no setting for the link's {listing('parameter', ['gen.' + u for u in unknown])}.")
    for setting, text in settings.items():
        default = defaults[setting]
        value: object
        try:
            if isinstance(default, bool):
                value = {"true": True, "false": False}[text.lower()]
            elif isinstance(default, (int, float)):
                value = type(default)(text)
            elif default is None:
                value = text  # an optional number: the sidebar's text box parses it
            else:
                continue  # fixed by the generator's name
        except (KeyError, ValueError):
            raise fc.ConfigError(f"Link parameter gen.{setting}={text!r} is not a valid value.") from None
        st.session_state[generator_setting_key(name, setting)] = value


def generator_setting_key(name: str, setting: str) -> str:
    """The key of one generator setting (its value as the sidebar's widget shows it)."""
    return f"sb_gen.{name}.{setting}"


def init_generator_settings(name: str, defaults: Mapping[str, Any]) -> None:
    """Give each of a generator's settings its key, at its default (an optional number: empty text).

    Not in :func:`_defaults`: listing every generator's settings builds every generator, and
    only the chosen one's settings are drawn.
    """
    for setting, default in defaults.items():
        st.session_state.setdefault(generator_setting_key(name, setting), "" if default is None else default)


def reset_analysis() -> None:
    """Forget what belonged to the previous dataset (query, regions, overrides, per-feature τ)."""
    defaults = _defaults()
    for key in (OVERRIDES, QUERY, WHERE, SAVED_REGIONS, RULE, RULE_DRAFT, REGION_SEARCH, GROUPS_BY, GROUPS_RETRAIN, CF_ROW, TAU_FEATURES, SEEN_SELECTIONS, REPORT_HTML,
                REPORT_VIEW, REPORT_SNAPSHOT, SHAP_REQUEST, LIME_REQUEST, PERMUTATION_REQUEST, SUFFICIENCY_REQUESTS, GENERATOR_CHECK, RETRAIN_CHECK, WHATIF_ROW,
                WHATIF_EDITS):
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
    # A rule region has no query: its members are whichever factuals meet the rule, so it never goes stale.
    kept = [r for r in s[SAVED_REGIONS] if r.get("rule") or int(r["query"]) in factuals]
    dropped = [r["name"] for r in s[SAVED_REGIONS] if not r.get("rule") and int(r["query"]) not in factuals]
    s[SAVED_REGIONS] = kept
    return dropped


def forget_invalid_criterion(task) -> str | None:
    """Drop a region criterion this data cannot have (say, from a link made for other data); returns why, else None.

    Dropped rather than kept: a criterion naming a missing feature or level would stop the Regional page on every
    rerun. The caller shows the reason, so nothing is dropped silently.
    """
    s = st.session_state
    try:
        fc.importance.rows_meeting(task, (), s[WHERE])  # checks the criterion against the task, meets no row
    except fc.FlexError as exc:
        where, s[WHERE] = s[WHERE], None
        return f"The region criterion {criterion_text(where)!r} was dropped: {exc}"
    return None


def dataset_spec(source: Mapping) -> str | None:
    """The ``--data`` string of a source, or None for an upload (which a link cannot carry)."""
    if source["kind"] == "builtin":
        return f"builtin:{source['name']}"
    if source.get("path"):
        return f"{source['kind']}:{source['path']}"
    return None


def current_view() -> dict[str, Any]:
    """The view a link (and the address bar) should reproduce, from Session State."""
    s = st.session_state
    source = s[DATASET]
    generator = s[GENERATOR]
    return {
        "dataset": dataset_spec(source) or f"{url_state.UPLOAD}:{source.get('filename', '')}",
        "missing": source.get("missing", "drop"),
        "immutable": s[OVERRIDES]["immutable"],
        "kinds": dict(s[OVERRIDES]["kinds"]),
        "constraints": None if s[OVERRIDES].get("between") is None else list(s[OVERRIDES]["between"]),
        "words": s[OVERRIDES].get("words"),
        "model": s[MODEL],
        "encoding": s[ENCODING],
        "cv_folds": int(s[CV_FOLDS]),
        "cv_rows": int(s[CV_ROWS]),
        "generator": generator,
        "refine": s[REFINE],
        "generator_settings": {k: v for k, v in s[GENERATOR_SETTINGS].get(generator, {}).items() if v is not None},
        "seed": int(s[SEED]),
        "n_factuals": int(s[N_FACTUALS]),
        "n_cf": int(s[N_CF]),
        "query": s[QUERY],
        "k": int(s[K]),
        "where": criterion_text(s[WHERE]),
        "tau": float(s[TAU]),
        "tau_features": dict(s[TAU_FEATURES]),
        "necessary_only": bool(s[NECESSARY_ONLY]),
        "whiskers": s[WHISKERS],
        "terms": bool(s[TERMS]),
        "regions": [_region_view(r) for r in s[SAVED_REGIONS]],
        "rule": None if not s[RULE] else [c.as_dict() for c in s[RULE]],
        "whatif_row": s[WHATIF_ROW],
        "whatif_edits": dict(s[WHATIF_EDITS]),
        "band": None if s[BAND] is None else dict(s[BAND]),
    }


def sync_query_params() -> None:
    """Write the current view into the address bar, so a reload (F5) or a copied URL restores it."""
    params = url_state.view_to_query_params(current_view())
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)


def fresh_name(name: str, taken) -> str:
    """``name``, or ``name (2)``, ``name (3)``, ... whichever is not taken yet."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name} ({n})"
    return candidate


REGION_NAME = "w_region_name"  # the Regional explorer's name box, emptied after each save


def _region_identity(region: Mapping[str, Any]) -> tuple:
    if region.get("rule"):
        return ("rule", tuple(region["rule"]))
    return (int(region["query"]), int(region["k"]), region["where"])


def save_region(default_name: str, query: int | None, k: int, where: Condition | None,
                rule: tuple[Condition, ...] | None = None) -> None:
    """``on_click`` of "Save region": never overwrites a saved region (a name clash gets a suffix and a toast),
    and never saves the same region (query, k, criterion; or the same rule) twice."""
    s = st.session_state
    typed = str(s.get(REGION_NAME) or "").strip()
    region: dict[str, Any]
    if rule:
        region = {"query": None, "k": 0, "where": None, "rule": rule_of(rule)}
    elif query is None:
        raise ValueError("A region without a rule is a query's neighbourhood: save_region needs the query.")
    else:
        region = {"query": int(query), "k": int(k), "where": where}
    same = next((r for r in s[SAVED_REGIONS] if _region_identity(r) == _region_identity(region)), None)
    if same is not None:  # the same query, k and criterion is the same region: a second line would repeat it
        s[REGION_NAME] = ""
        st.toast(plain(f"This region is saved already, as {same['name']!r}."))
        return
    name = fresh_name(typed or default_name, {r["name"] for r in s[SAVED_REGIONS]})
    s[SAVED_REGIONS] = [*s[SAVED_REGIONS], {"name": name, **region}]
    s[REGION_NAME] = ""
    if typed and name != typed:
        st.toast(plain(f"A region named {typed!r} is saved already; this one is saved as {name!r}."))


def numbers_view(view: Mapping[str, Any], task) -> dict[str, Any]:
    """The view without the settings that cannot change a number of this task's report.

    τ only thresholds changes to numbers: on data without a continuous feature (the accidents) it
    changes nothing, so moving it must not mark a report out of date. Nor does the what-if case,
    which the report does not show, nor whether the pages name the analyst's terms.
    """
    ignored = {"whatif_row", "whatif_edits", "terms"} | (set() if task.continuous_names else {"tau", "tau_features"})
    return {k: v for k, v in view.items() if k not in ignored}


def view_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The settings that differ between two views, as ``name: old → new``."""
    return [f"{key}: {before.get(key)} → {after.get(key)}" for key in url_state.VIEW_DEFAULTS
            if before.get(key) != after.get(key)]


# -- a region's criterion and rule: Conditions in Session State, text and JSON only in a link or a project ------
def criterion_of(text: str | None) -> Condition | None:
    """A link's or a project's ``"feature=value"`` as the criterion Session State keeps (checked when a page uses it:
    :func:`forget_invalid_criterion` drops one this data cannot have, saying why)."""
    if not text:
        return None
    feature, _, value = str(text).partition("=")
    return Condition.criterion(feature.strip(), value.strip())


def criterion_text(criterion: Condition | None) -> str | None:
    """The criterion as a link carries it, ``"feature=value"``."""
    return None if criterion is None else f"{criterion.feature}={criterion.value}"


def rule_of(conditions) -> tuple[Condition, ...] | None:
    """A rule (mappings ``{"feature", "op", "value"}`` from a link, or Conditions) as Session State keeps it."""
    return None if not conditions else tuple(Condition.of(c) for c in conditions)


def _region_of(region: Mapping[str, Any]) -> dict[str, Any]:
    """A saved region from a link's view: its criterion and rule as Conditions."""
    return {**region, "where": criterion_of(region.get("where")), **({"rule": rule_of(region["rule"])}
                                                                      if region.get("rule") else {})}


def _region_view(region: Mapping[str, Any]) -> dict[str, Any]:
    """A saved region as a link's view carries it: the criterion as text, the rule as JSON data."""
    return {**region, "where": criterion_text(region.get("where")),
            **({"rule": [c.as_dict() for c in region["rule"]]} if region.get("rule") else {})}


def widget_key(state_key: str) -> str:
    """The key of the sidebar widget that shows the setting ``state_key``."""
    return f"w_{state_key}"


def bound(state_key: str, options: Iterable | None = None, *, on_change: Callable[[], None] | None = None) -> dict[str, Any]:
    """Keyword arguments drawing a sidebar widget from its setting ``state_key``.

    The widget starts at the setting (``index`` into ``options`` for a choice, else ``value``):
    its first value is the setting's, whatever Streamlit restarts it from, and a change is
    copied back by ``on_change`` (then ``on_change`` given here runs).
    """
    key, value = widget_key(state_key), st.session_state[state_key]
    copy = bind(key, state_key)

    def changed() -> None:
        copy()
        if on_change is not None:
            on_change()

    if key in st.session_state and st.session_state[key] != value:
        # Set in code after the widget was drawn (a project folder opened from the sidebar): Session State
        # carries the value to the browser's widget too. No start value then: with both, Streamlit warns.
        st.session_state[key] = value
        return {"key": key, "on_change": changed}
    start = {"value": value} if options is None else {"index": list(options).index(value)}
    return {"key": key, "on_change": changed, **start}


def bind(widget_key: str, state_key: str):
    """An ``on_change`` callback copying a page widget's value into its analysis key."""

    def copy():
        st.session_state[state_key] = st.session_state[widget_key]

    return copy


def set_query_from(widget_key: str, candidates) -> None:
    """``on_change`` callback: a typed row number becomes the query when it is one of ``candidates``."""
    row = st.session_state[widget_key]
    if row is not None and int(row) in {int(c) for c in candidates}:
        st.session_state[QUERY] = int(row)


def fresh_selection(widget_key: str, selection) -> bool:
    """True once per new selection of a chart/table (Streamlit repeats the last one on every rerun)."""
    marker = repr(selection)
    seen = st.session_state[SEEN_SELECTIONS]
    if seen.get(widget_key) == marker:
        return False
    seen[widget_key] = marker
    return True
