"""The view as URL query parameters: what a link (and a reload) restores."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from flex_core import ConfigError
from flex_core.counterfactuals import GENERATORS, REFINE_MODES
from flex_core.models import MODELS

__all__ = ["VIEW_DEFAULTS", "view_to_query_params", "view_from_query_params", "view_link"]

#: What a link reproduces and the value each field has when absent.
VIEW_DEFAULTS: dict[str, Any] = {
    "dataset": "builtin:synthetic-regional",
    "model": "rf",
    "encoding": "onehot",
    "generator": None,  # None: the registry's default generator
    "refine": "auto",  # auto: the generator's default (minimal for batch, none for DiCE)
    "seed": 0,
    "n_factuals": 200,  # the paper's N_F and N_cf: the default generator makes them in well under a second
    "n_cf": 10,
    "query": None,
    "k": 4,
    "where": None,
    "tau": 0.1,
    "tau_features": {},
}

_INT_FIELDS = ("seed", "n_factuals", "n_cf", "k")


def view_to_query_params(view: Mapping[str, Any]) -> dict[str, str]:
    """A view (dataset, model, generator, query, k, τ, ...) as flat string query parameters.

    Per-feature τ values become ``tau.FEATURE``; fields equal to their default are left
    out so links stay short. Uploaded files cannot travel in a link: use a
    ``loan:``/``accidents:``/``builtin:`` dataset or a path.
    """
    unknown = set(view) - set(VIEW_DEFAULTS)
    if unknown:
        raise ConfigError(f"Unknown view field(s): {', '.join(sorted(unknown))}.")
    params: dict[str, str] = {}
    for key, default in VIEW_DEFAULTS.items():
        value = view.get(key, default)
        if key == "tau_features":
            for name, tau in sorted((value or {}).items()):
                params[f"tau.{name}"] = f"{float(tau):g}"
        elif value is not None and value != default:
            params[key] = f"{value:g}" if isinstance(value, float) else str(value)
    return params


def view_from_query_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`view_to_query_params`, with every value checked.

    Unknown parameters are ignored (links may carry others). A value that does not
    parse raises :class:`ConfigError` naming the parameter.
    """
    view = {k: (dict(v) if isinstance(v, dict) else v) for k, v in VIEW_DEFAULTS.items()}

    def one(value):
        return value[-1] if isinstance(value, (list, tuple)) else value

    for raw_key, raw_value in params.items():
        key, value = str(raw_key), str(one(raw_value))
        try:
            if key in _INT_FIELDS:
                view[key] = int(value)
                if view[key] < (1 if key in ("n_factuals", "n_cf") else 0):
                    raise ValueError
            elif key == "query":
                view[key] = int(value)
            elif key == "tau":
                view[key] = float(value)
                if not view[key] >= 0:
                    raise ValueError
            elif key.startswith("tau."):
                tau = float(value)
                if not tau >= 0:
                    raise ValueError
                view["tau_features"][key[4:]] = tau
            elif key == "model":
                if value not in MODELS:
                    raise ConfigError(f"Link parameter model={value!r}: choose one of {', '.join(MODELS)}.")
                view[key] = value
            elif key == "encoding":
                if value not in ("onehot", "label"):
                    raise ConfigError(f"Link parameter encoding={value!r}: use onehot or label.")
                view[key] = value
            elif key == "generator":
                if value not in GENERATORS:
                    raise ConfigError(f"Link parameter generator={value!r}: choose one of {', '.join(GENERATORS)}.")
                view[key] = value
            elif key == "refine":
                if value not in ("auto", *REFINE_MODES):
                    raise ConfigError(f"Link parameter refine={value!r}: use auto, {' or '.join(REFINE_MODES)}.")
                view[key] = value
            elif key in ("dataset", "where"):
                view[key] = value or None
        except ValueError:
            raise ConfigError(f"Link parameter {key}={value!r} is not a valid value; fix or remove it.") from None
    return view


def view_link(base_url: str, view: Mapping[str, Any]) -> str:
    """``base_url`` plus the view's query string."""
    query = urlencode(view_to_query_params(view))
    return base_url.rstrip("?") + ("?" + query if query else "")
