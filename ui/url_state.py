"""The view as URL query parameters: what a link (and a reload) restores.

Every setting that changes a number on any page is a field of :data:`VIEW_DEFAULTS`
(a setting added later is added there, with its parsing in :func:`view_from_query_params`).
The app writes the parameters on every run, so the address bar always holds the
current view and a reload (F5) restores it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from flex_core import ConfigError
from flex_core.counterfactuals import GENERATORS, REFINE_MODES
from flex_core.data import KINDS
from flex_core.formatting import format_number, listing
from flex_core.importance import DEFAULT_TAU
from flex_core.limits import LIMITS, check
from flex_core.models import MODELS

__all__ = ["VIEW_DEFAULTS", "PREFIXED", "UPLOAD", "view_to_query_params", "view_from_query_params", "view_link",
           "check_band", "library_band"]

#: What a link reproduces and the value each field has when absent.
VIEW_DEFAULTS: dict[str, Any] = {
    "dataset": "builtin:synthetic-regional",  # builtin:NAME, loan:PATH, accidents:PATH, or upload:FILENAME
    "missing": "drop",  # rows with missing or unreadable values: drop or impute
    "immutable": None,  # None: the dataset's own immutable features; a list: exactly these
    "kinds": {},  # feature -> kind, where changed from the inferred one
    "constraints": None,  # constraints between features: None, the data's own; a list of texts, exactly these (JSON)
    "words": None,  # the data dictionary edited on the Data & model page (JSON, the file's shape); None: the data's own
    "model": "rf",
    "encoding": "onehot",
    "cv_folds": 5,  # 0 skips cross-validation
    "cv_rows": 20_000,  # cross-validate on a sample of at most this many training rows
    "generator": None,  # None: the registry's default generator
    "refine": "auto",  # auto: the generator's default (minimal for batch, none for DiCE)
    "generator_settings": {},  # setting -> value (as text), where changed from the generator's default
    "seed": 0,
    "n_factuals": 200,  # the paper's N_F and N_cf: the default generator makes them in well under a second
    "n_cf": 10,
    "query": None,
    "k": 4,
    "where": None,
    "tau": DEFAULT_TAU,
    "tau_features": {},
    "necessary_only": False,  # bar charts count only necessary changes
    "whiskers": "interval",  # 95% interval of F or ± std on the bars
    "terms": False,  # the pages name the analyst's terms (F_j, τ, r, q) beside the plain words
    "regions": [],  # saved regions: {"name", "query", "k", "where"} (+ "rule"), carried as one JSON parameter
    "rule": None,  # the rule-defined region shown: [{"feature", "op", "value"}], carried as one JSON parameter
    "whatif_row": None,  # the row the what-if editor starts from
    "whatif_edits": {},  # {feature: value} where the what-if case differs from that row, carried as one JSON parameter
    "band": None,  # a numeric target's band: {"target", "above", "below", "inclusive"} (ui/band.py), one JSON parameter
}
#: Fields holding {name: value}, carried as one parameter per name: ``PREFIX.NAME=value``.
PREFIXED = {"tau_features": "tau", "kinds": "kind", "generator_settings": "gen"}
#: The dataset prefix of an uploaded file, which a link names but cannot carry.
UPLOAD = "upload"

#: Whole-number fields, each bounded by flex_core.limits.LIMITS (as the sidebar's number boxes are).
_INT_FIELDS = ("seed", "n_factuals", "n_cf", "k", "cv_folds", "cv_rows")
_CHOICES = {"model": tuple(MODELS), "encoding": ("onehot", "label"), "generator": tuple(GENERATORS),
            "missing": ("drop", "impute"), "refine": ("auto", *REFINE_MODES), "whiskers": ("interval", "std")}


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


#: The fields of a band beside its target (the keys of the band make_task takes).
BAND_FIELDS = ("above", "below", "inclusive")


def view_to_query_params(view: Mapping[str, Any]) -> dict[str, str]:
    """A view (dataset, model, generator, query, k, τ, ...) as flat string query parameters.

    Dictionary fields become ``PREFIX.NAME`` parameters (``tau.speed=0.3``,
    ``kind.age=ordinal``, ``gen.max_iter=50``); ``immutable`` is a comma-separated
    list (empty: no feature is immutable). Fields equal to their default are left
    out so links stay short.
    """
    unknown = set(view) - set(VIEW_DEFAULTS)
    if unknown:
        raise ConfigError(f"Unknown view {listing('field', sorted(unknown))}.")
    params: dict[str, str] = {}
    for key, default in VIEW_DEFAULTS.items():
        value = view.get(key, default)
        if key in PREFIXED:
            for name, item in sorted((value or {}).items()):
                params[f"{PREFIXED[key]}.{name}"] = _text(float(item) if key == "tau_features" else item)
        elif key == "immutable":
            if value is not None:
                params[key] = ",".join(value)
        elif key == "regions":
            if value:
                params[key] = json.dumps([[r["name"], r["query"], r["k"], r["where"], *([r["rule"]] if r.get("rule") else [])]
                                          for r in value], separators=(",", ":"))
        elif key == "rule":
            if value:
                params[key] = json.dumps([dict(c) for c in value], separators=(",", ":"), ensure_ascii=False)
        elif key == "constraints":
            if value is not None:
                params[key] = json.dumps(list(value), separators=(",", ":"), ensure_ascii=False)
        elif key == "words":
            if value is not None:
                params[key] = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
        elif key == "whatif_edits":
            if value:
                params[key] = json.dumps(dict(sorted(value.items())), separators=(",", ":"), ensure_ascii=False)
        elif key == "band":
            if value:
                params[key] = json.dumps({k: int(v) if isinstance(v, float) and v.is_integer() else v
                                          for k, v in value.items() if v is not None},
                                         separators=(",", ":"), ensure_ascii=False, sort_keys=True)
        elif value is not None and value != default:
            params[key] = _text(value)
    return params


def _parse(key: str, value: str, view: dict) -> None:
    prefix, dot, name = key.partition(".")
    if key in _INT_FIELDS:
        view[key] = check(key, int(value), label=f"Link parameter {key}")
    elif key == "query":
        view[key] = int(value)
    elif key == "whatif_row":
        view[key] = int(value)
        if view[key] < 0:
            raise ValueError
    elif key == "whatif_edits":
        view[key] = _edits(json.loads(value)) if value else {}
    elif key == "tau" or (dot and prefix == "tau"):
        tau = float(value)
        if not tau >= 0:
            raise ValueError
        if key == "tau":
            view[key] = tau
        else:
            view["tau_features"][name] = tau
    elif dot and prefix == "kind":
        if value not in KINDS:
            raise ConfigError(f"Link parameter {key}={value!r}: use one of {', '.join(KINDS)}.")
        view["kinds"][name] = value
    elif dot and prefix == "gen":
        if name in LIMITS and value.strip():  # a bounded number (samples, max_rounds, ...): refused here, before it is applied
            check(name, (int if LIMITS[name].integer else float)(value), label=f"Link parameter {key}")
        view["generator_settings"][name] = value  # typed against the generator's defaults when applied
    elif key in _CHOICES:
        if value not in _CHOICES[key]:
            raise ConfigError(f"Link parameter {key}={value!r}: choose one of {', '.join(_CHOICES[key])}.")
        view[key] = value
    elif key == "immutable":
        view[key] = [name for name in value.split(",") if name]
    elif key in ("necessary_only", "terms"):
        view[key] = {"true": True, "false": False}[value.lower()]
    elif key in ("dataset", "where"):
        view[key] = value or None
    elif key == "regions":
        view[key] = _regions(value)
    elif key == "rule":
        view[key] = _rule(json.loads(value)) if value else None
    elif key == "constraints":
        view[key] = _texts(json.loads(value)) if value else []
    elif key == "band":
        try:
            view[key] = _band(json.loads(value)) if value else None
        except ConfigError as exc:
            raise ConfigError(f"Link parameter band={value!r}: {exc}") from None
    elif key == "words":
        view[key] = json.loads(value) if value else None
        if view[key] is not None and not isinstance(view[key], dict):
            raise ValueError  # the dictionary itself is checked against the data where it is applied


def _texts(items) -> list[str]:
    """Constraints between features from their JSON: a list of texts (parsed against the data when applied)."""
    if not isinstance(items, list) or not all(isinstance(t, str) for t in items):
        raise ValueError
    return list(items)


def _band(item) -> dict:
    """A band from its JSON: the target's name, its finite threshold(s) "above" and/or "below", and whether a
    threshold itself is undesirable; checked as the library's band (a reversed range is refused, saying so)."""
    if not isinstance(item, dict) or not isinstance(item.get("target"), str) or set(item) - {"target", *BAND_FIELDS}:
        raise ValueError
    ends = {k: item.get(k) for k in ("above", "below")}
    if any(v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v))
           for v in ends.values()):
        raise ValueError
    if not isinstance(item.get("inclusive", False), bool):
        raise ValueError
    band = {"target": item["target"], **{k: None if v is None else float(v) for k, v in ends.items()},
            "inclusive": item.get("inclusive", False)}
    check_band(band)
    return band


def check_band(band: Mapping) -> None:
    """A ConfigError saying what to fix when ``band`` cannot be used: no threshold, or a range whose low end is not
    below its high end (the library's own check, met before any task is made from the band)."""
    above, below = band.get("above"), band.get("below")
    if above is None and below is None:
        raise ConfigError("A band needs a threshold: above T, below T, or both (outside LO:HI).")
    if above is not None and below is not None and not below < above:
        raise ConfigError(f"The band's low end ({format_number(below)}) must be below its high end "
                          f"({format_number(above)}).")


def library_band(band: Mapping) -> dict:
    """The app's ``{"target", "above", "below", "inclusive"}`` as the library takes a band (``make_task``'s
    ``undesirable``): its threshold(s) and ``inclusive``."""
    return {**{k: band[k] for k in ("above", "below") if band.get(k) is not None}, "inclusive": bool(band.get("inclusive"))}


def _rule(items) -> list[dict]:
    """A rule from its JSON: a non-empty list of {"feature", "op", "value"} (checked against the data when applied)."""
    if not isinstance(items, list) or not items:
        raise ValueError
    rule = []
    for c in items:
        if not isinstance(c, dict) or set(c) != {"feature", "op", "value"} or not isinstance(c["feature"], str):
            raise ValueError
        rule.append({"feature": c["feature"], "op": str(c["op"]), "value": c["value"]})
    return rule


def _edits(items) -> dict:
    """What-if edits from their JSON: {feature: number or text} (checked against the data on the What-if page)."""
    if not isinstance(items, dict):
        raise ValueError
    for value in items.values():
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError
    return dict(items)


def _region(item) -> dict:
    name, query, k, where, *rest = item
    if len(rest) > 1:
        raise ValueError
    if rest:  # a rule region: no query
        return {"name": str(name), "query": None, "k": 0, "where": None, "rule": _rule(rest[0])}
    return {"name": str(name), "query": int(query), "k": int(k), "where": None if where is None else str(where)}


def _regions(text: str) -> list[dict]:
    """Saved regions from their JSON: a list of [name, query row, k, criterion or null] (a rule region: [name,
    null, 0, null, rule])."""
    try:
        regions = [_region(item) for item in json.loads(text)]
    except (TypeError, ValueError):
        raise ValueError from None
    if any(r["k"] < 0 for r in regions):
        raise ValueError
    return regions


def view_from_query_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`view_to_query_params`, with every value checked.

    Unknown parameters are ignored (links may carry others). A value that does not
    parse raises :class:`ConfigError` naming the parameter.
    """
    view = {k: (dict(v) if isinstance(v, dict) else v) for k, v in VIEW_DEFAULTS.items()}
    for raw_key, raw_value in params.items():
        value = raw_value[-1] if isinstance(raw_value, (list, tuple)) else raw_value
        key, value = str(raw_key), str(value)
        try:
            _parse(key, value, view)
        except ConfigError:
            raise  # it names the parameter and what it takes (a number: its range)
        except (ValueError, KeyError):
            raise ConfigError(f"Link parameter {key}={value!r} is not a valid value; fix or remove it.") from None
    return view


def view_link(base_url: str, view: Mapping[str, Any]) -> str:
    """``base_url`` plus the view's query string."""
    query = urlencode(view_to_query_params(view))
    return base_url.rstrip("?") + ("?" + query if query else "")
