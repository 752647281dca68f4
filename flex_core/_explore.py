"""Pure helpers behind the dashboard's interactions (no Streamlit here).

Everything a page needs beyond the FLEX metrics themselves: a 2-D map of the
factuals, turning a Plotly selection event into row ids, counterfactual tables
with their changed cells, τ sweeps over stored counterfactuals, plain-language
readings of results, and the query-parameter link that reproduces a view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import urlencode

import numpy as np
import pandas as pd

from ._analysis import GENERATORS, generator_key, make_generator
from ._counterfactuals import CounterfactualSet, decode_rows
from ._data import MAX_FILE_BYTES, TaskSpec, _read_csv
from ._errors import ConfigError
from ._importance import flex_importance, parse_criterion
from ._models import MODELS, FittedModel
from ._results import QUADRANT_MEANING, FlexResult, RegionalResult

__all__ = [
    "FactualMap",
    "feature_table",
    "class_balance",
    "project_factuals",
    "rows_from_selection",
    "rows_meeting",
    "peek_csv",
    "generator_defaults",
    "counterfactual_table",
    "tau_sweep",
    "TAU_PANELS",
    "describe_global",
    "describe_regional",
    "describe_tau_sweep",
    "describe_coverage",
    "quadrant_legend",
    "VIEW_DEFAULTS",
    "view_to_query_params",
    "view_from_query_params",
    "view_link",
]

#: The τ values of the paper's threshold panels.
TAU_PANELS = (0.1, 0.5, 0.9)

#: Below this a continuous difference is float noise, not a change (DiCE's ε).
_CHANGE_EPSILON = 1e-6


# -- data summaries ------------------------------------------------------------------------
def feature_table(task: TaskSpec) -> pd.DataFrame:
    """One line per feature: name, kind, immutable, and its levels or its value range."""
    lines = []
    for f in task.features:
        if f.is_continuous:
            col = task.frame[f.name].astype(float)
            values = f"{col.min():.4g} to {col.max():.4g}"
        else:
            shown = list(f.categories[:6])
            values = ", ".join(map(str, shown)) + (f", … ({len(f.categories)} levels)" if len(f.categories) > 6 else "")
        lines.append({"feature": f.name, "kind": f.kind, "immutable": bool(f.immutable), "values": values})
    return pd.DataFrame(lines, columns=["feature", "kind", "immutable", "values"])


def class_balance(task: TaskSpec) -> pd.DataFrame:
    """Rows per outcome value, their share, and whether the value counts as undesirable."""
    counts = task.frame[task.target].astype(str).value_counts()
    undesirable = {str(v) for v in task.undesirable}
    return pd.DataFrame(
        {
            "outcome": counts.index,
            "rows": counts.to_numpy(),
            "share": counts.to_numpy() / counts.sum(),
            "undesirable": [v in undesirable for v in counts.index],
        }
    )


# -- the factual map -------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class FactualMap:
    """Factual rows placed in 2-D by PCA of the model's encoded inputs.

    Attributes
    ----------
    frame : DataFrame with columns ``row``, ``x``, ``y``, ``probability``
        One line per factual; ``probability`` is P(undesirable) from the model.
    explained : ndarray of shape (2,)
        Share of the (standardised) variance each axis explains.
    """

    frame: pd.DataFrame
    explained: np.ndarray


def project_factuals(task: TaskSpec, model: FittedModel, rows: Sequence[int]) -> FactualMap:
    """PCA of the factuals as the model sees them (its own encoding), standardised per column.

    One batched model call gives the colour (P(undesirable)). Component signs are fixed
    by the scores' skew, which makes the map reproducible across runs and row orders.
    """
    rows = [int(r) for r in rows]
    if not rows:
        raise ConfigError("There are no factual rows to place on the map.")
    X = task.X.loc[rows]
    encoded = np.asarray(model.pipeline.named_steps["encode"].transform(X), dtype=float)
    centred = encoded - encoded.mean(axis=0)
    scale = centred.std(axis=0)
    centred = centred[:, scale > 0] / scale[scale > 0]
    coords = np.zeros((len(rows), 2))
    explained = np.zeros(2)
    if centred.shape[1] and len(rows) > 1:
        _, singular, components = np.linalg.svd(centred, full_matrices=False)
        n = min(2, components.shape[0])
        coords[:, :n] = centred @ components[:n].T
        # A component's sign is arbitrary; pointing each axis at its longer tail (positive third moment)
        # does not depend on the row order or the platform's SVD, unlike a sign from tied loadings.
        coords[:, :n] *= np.where((coords[:, :n] ** 3).sum(axis=0) < 0, -1.0, 1.0)
        variance = singular**2
        explained[:n] = variance[:n] / variance.sum() if variance.sum() > 0 else 0.0
    probability = model.predict_proba(X)[:, 1]
    frame = pd.DataFrame({"row": rows, "x": coords[:, 0], "y": coords[:, 1], "probability": probability})
    return FactualMap(frame=frame, explained=explained)


def rows_from_selection(selection: Mapping | None, *, allowed: Iterable[int] | None = None) -> list[int]:
    """Row ids of the points a Plotly selection event picked, in click order, without repeats.

    ``selection`` is the ``selection`` part of Streamlit's chart event (a mapping with a
    ``points`` list). Each point carries its row id as ``customdata`` (a scalar or a
    list whose first item is the row id); points without one (e.g. the y = x line) are
    ignored, and so are rows outside ``allowed``.
    """
    if not selection:
        return []
    allowed_set = None if allowed is None else {int(r) for r in allowed}
    out: list[int] = []
    for point in selection.get("points", []) or []:
        data = point.get("customdata") if isinstance(point, Mapping) else None
        if isinstance(data, (list, tuple)):
            data = data[0] if data else None
        if data is None:
            continue
        try:
            row = int(data)
        except (TypeError, ValueError):
            continue
        if (allowed_set is None or row in allowed_set) and row not in out:
            out.append(row)
    return out


def rows_meeting(task: TaskSpec, rows: Sequence[int], where: str | Mapping | None) -> np.ndarray:
    """The rows (in their order) that meet a ``feature=value`` criterion; all of them when there is none."""
    rows = np.asarray(list(rows), dtype=int)
    criterion = parse_criterion(task, where)
    if criterion is None:
        return rows
    return rows[task.frame.loc[rows, criterion["feature"]].to_numpy() == criterion["value"]]


# -- uploads and generator settings ----------------------------------------------------------
def peek_csv(source, *, max_bytes: int = MAX_FILE_BYTES) -> pd.DataFrame:
    """The whole CSV as read by the loaders (same missing-value markers), to offer its columns and values."""
    return _read_csv(source, max_bytes=max_bytes)


def generator_defaults(name: str) -> dict:
    """The public settings of a registered generator with their default values (without ``name``)."""
    if name not in GENERATORS:
        raise ConfigError(f"Unknown generator {name!r}; choose one of {', '.join(GENERATORS)}.")
    key = generator_key(make_generator(name))
    key.pop("name", None)
    return key


# -- counterfactual tables -------------------------------------------------------------------
def counterfactual_table(task: TaskSpec, model: FittedModel, cfset: CounterfactualSet, row: int):
    """One factual and its counterfactuals, in original values, with the changed cells marked.

    Returns
    -------
    table : DataFrame
        First line ``factual``, then ``counterfactual 1..m`` (the found ones); the feature
        columns, then ``P(undesirable)`` (one batched model call), ``prediction`` and ``valid``.
    changed : DataFrame of bool, same index, feature columns only
        True where a counterfactual differs from the factual (continuous: by more than
        float noise). The factual's own line is all False.
    """
    sub = cfset.subset([int(row)])
    found = sub.found[0]
    codes = np.vstack([sub.factuals, sub.counterfactuals[0][found]])
    table = decode_rows(task, codes)
    table.index = ["factual"] + [f"counterfactual {i + 1}" for i in range(int(found.sum()))]
    delta = np.abs(codes - codes[0])
    continuous = np.array([f.is_continuous for f in task.features])
    changed = np.where(continuous, delta > _CHANGE_EPSILON, delta != 0)
    changed = pd.DataFrame(changed, index=table.index, columns=task.feature_names)
    probability = model.predict_proba(table[task.feature_names])[:, 1]
    # Integer features are stored as floats in the code space; show them as integers again.
    for f in task.features:
        if f.is_continuous and f.integer:
            table[f.name] = table[f.name].round().astype("Int64")
    undesirable = ", ".join(str(v) for v in task.undesirable)
    table["P(undesirable)"] = probability
    table["prediction"] = np.where(probability > 0.5, undesirable, "not " + undesirable)
    table["valid"] = [False] + [bool(v) for v in sub.valid[0][found]]
    return table, changed


# -- τ sweeps --------------------------------------------------------------------------------
def tau_sweep(
    cfset: CounterfactualSet,
    task: TaskSpec,
    *,
    ranges: np.ndarray | None = None,
    taus: Sequence[float] | None = None,
) -> pd.DataFrame:
    """F_j of every continuous feature against τ, from stored counterfactuals only.

    Returns
    -------
    DataFrame with columns ``tau``, ``feature``, ``label``, ``frequency_mean``, ``frequency_std``;
    one line per (τ, continuous feature).
    """
    taus = np.round(np.linspace(0.0, 1.0, 21), 4) if taus is None else np.asarray(taus, dtype=float)
    if np.any(taus < 0):
        raise ConfigError("τ values in a sweep must be >= 0.")
    continuous = [j for j, f in enumerate(task.features) if f.is_continuous]
    records = []
    for tau in taus:
        result = flex_importance(cfset, task, tau=float(tau), ranges=ranges, level="global")
        for j in continuous:
            records.append(
                {
                    "tau": float(tau),
                    "feature": result.feature_names[j],
                    "label": result.display_names[j],
                    "frequency_mean": float(result.frequency_mean[j]),
                    "frequency_std": float(result.frequency_std[j]),
                }
            )
    return pd.DataFrame(records, columns=["tau", "feature", "label", "frequency_mean", "frequency_std"])


# -- plain-language readings -----------------------------------------------------------------
def _pct(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.0f}%"


def _outcome(undesirable: Sequence | None) -> str:
    return " or ".join(str(v) for v in undesirable) if undesirable else "the undesirable outcome"


def describe_global(result: FlexResult, *, undesirable: Sequence | None = None) -> str:
    """A short reading of a global (or regional) result for people who have never seen FLEX."""
    frame = result.to_frame()
    mutable = frame[~frame["immutable"]]
    if mutable.empty or mutable["frequency_mean"].isna().all():
        return "No counterfactual was found, so there is nothing to read yet."
    top = mutable.iloc[: min(3, len(mutable))]
    parts = []
    for _, line in top.iterrows():
        text = f"{line['label']} ({_pct(line['frequency_mean'])} of alternatives"
        if line["kind"] == "continuous" and not math.isnan(line["magnitude_mean"]):
            text += f", typically by {_pct(line['magnitude_mean'])} of its range"
        parts.append(text + ")")
    scope = {"global": "Across", "regional": "In this group of", "local": "For"}[result.level]
    lead = (
        f"{scope} {result.n_factuals_used} case(s) predicted {_outcome(undesirable)}, "
        f"the smallest changes that flip the prediction most often involve "
    )
    body = "; ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] + "."
    low = mutable[mutable["frequency_mean"] < 0.05]
    tail = ""
    if len(low):
        tail = f" Rarely changed (under 5%): {', '.join(low['label'])}."
    immutable = frame[frame["immutable"]]
    if len(immutable):
        tail += f" Held fixed because they cannot be changed: {', '.join(immutable['label'])}."
    tau = [t for t in result.tau if not math.isnan(t)]
    if tau:
        tail += (
            f" A change to a number only counts when it exceeds τ = {min(tau):g}"
            + (f" to {max(tau):g}" if max(tau) != min(tau) else "")
            + " of the feature's range."
        )
    return lead + body + tail


def describe_regional(regional: RegionalResult, *, undesirable: Sequence | None = None) -> str:
    """A reading of a region: how it compares with the whole population, in words."""
    imp = regional.importance
    labels = dict(zip(imp.feature_names, imp.display_names))
    size = len(regional.members)
    crit = regional.criterion
    where = f" with {crit['feature']} = {crit['value']}" if crit else ""
    r = regional.pearson_r
    if math.isnan(r):
        agreement = "The region is too small or too uniform to compare with the whole population (r undefined)."
    else:
        strength = "closely follows" if r >= 0.7 else "partly follows" if r >= 0.3 else "differs from"
        agreement = f"Its pattern {strength} the whole population's (Pearson r = {r:.2f})."
        low, high = regional.pearson_r_interval
        if not math.isnan(low):
            # A region holds few cases: say how far r moves with which cases it happens to hold.
            agreement += (
                f" Resampling the region's cases puts r between {low:.2f} and {high:.2f} (95% bootstrap interval)"
                + ("; with so wide a range, read r as rough." if high - low > 0.5 else ".")
            )
    by_quadrant: dict[str, list[str]] = {}
    for name, q in zip(imp.feature_names, regional.quadrants):
        if q is not None:
            by_quadrant.setdefault(q, []).append(labels[name])
    extra = []
    if by_quadrant.get("A"):
        extra.append(f"Drivers specific to this region (quadrant A): {', '.join(by_quadrant['A'])}.")
    if by_quadrant.get("C"):
        extra.append(f"Drivers everywhere (quadrant C): {', '.join(by_quadrant['C'])}.")
    if by_quadrant.get("D"):
        extra.append(f"Important overall but less so here (quadrant D): {', '.join(by_quadrant['D'])}.")
    shifts = sorted(
        (s for s in regional.mode_shift if not math.isnan(s["delta"])), key=lambda s: s["delta"]
    )
    if shifts and shifts[0]["delta"] < -0.3:
        s = shifts[0]
        extra.append(
            f"The counterfactuals most often move away from {labels.get(s['name'], s['name'])} = {s['mode']} "
            f"(δ = {s['delta']:+.2f}: the share falls from {_pct(s['p_orig'])} to {_pct(s['p_cf'])})."
        )
    lead = f"A group of {size} similar case(s) around row {regional.query}{where}. "
    return lead + describe_global(imp, undesirable=undesirable) + " " + agreement + (" " + " ".join(extra) if extra else "")


def describe_tau_sweep(sweep: pd.DataFrame) -> str:
    """How quickly each continuous feature's frequency falls as τ grows."""
    if sweep.empty:
        return "This dataset has no continuous feature, so τ has no effect."
    parts = []
    for label, group in sweep.groupby("label", sort=False):
        group = group.sort_values("tau")
        start = float(group["frequency_mean"].iloc[0])
        half = group[group["frequency_mean"] <= start / 2]
        if start == 0:
            parts.append(f"{label} never changes")
        elif half.empty:
            parts.append(f"{label} keeps most of its changes even at τ = {group['tau'].max():g} (large changes)")
        else:
            parts.append(f"{label} loses half its changes by τ = {half['tau'].iloc[0]:g}")
    return (
        "τ decides how large a change to a number must be (as a share of its range) to count. "
        + "; ".join(parts)
        + ". A feature that keeps its frequency at high τ needs big changes to flip the prediction."
    )


def describe_coverage(coverage: Mapping) -> str:
    """The generator's coverage in one sentence."""
    return (
        f"{coverage['queries']} case(s) explained; {coverage['counterfactuals_found']} of "
        f"{coverage['counterfactuals_requested']} requested alternatives were found and "
        f"{_pct(coverage['validity'])} of those really flip the prediction; "
        f"{coverage['queries_without']} case(s) got none."
    )


def quadrant_legend() -> str:
    """The four quadrants of the regional-vs-global scatter, one line each."""
    return "\n".join(f"{q}: {text}" for q, text in QUADRANT_MEANING.items())


# -- the view link ---------------------------------------------------------------------------
#: What a link reproduces and the value each field has when absent.
VIEW_DEFAULTS: dict[str, Any] = {
    "dataset": "builtin:synthetic-regional",
    "model": "rf",
    "encoding": "onehot",
    "generator": None,  # None: the registry's default generator
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
            elif key in ("dataset", "where"):
                view[key] = value or None
        except ValueError:
            raise ConfigError(f"Link parameter {key}={value!r} is not a valid value; fix or remove it.") from None
    return view


def view_link(base_url: str, view: Mapping[str, Any]) -> str:
    """``base_url`` plus the view's query string."""
    query = urlencode(view_to_query_params(view))
    return base_url.rstrip("?") + ("?" + query if query else "")
