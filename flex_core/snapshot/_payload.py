"""What an interactive report file carries: the counterfactuals themselves, so its JavaScript can recompute FLEX at any τ.

The file ships each factual's codes and its counterfactuals' codes (continuous values as they are, levels as
their index), the ranges FLEX divides by, and which counterfactuals are valid. From these the file's
JavaScript computes |cf - x| / range and "changed" exactly as :func:`flex_core.importance.flex_importance`
does, so it needs no grid of precomputed τ values. What does not depend on τ (the mode shift, P(undesirable)
of each row) is computed here. Every number is written so that ``JSON.parse`` gives back the same double.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import numpy as np
from scipy.stats import norm

from .._errors import ConfigError
from .._format import format_number
from .._results import FlexResult, RegionalResult
from .._uncertainty import INTERVAL_LEVEL
from ..counterfactuals import CounterfactualSet, decode_rows
from ..importance._flex import DICE_EPSILON
from ..models import model_curves, quality_table
from ..regions import RegionsResult

__all__ = ["snapshot_payload", "FORMAT"]

#: The payload's format name, written into every file.
FORMAT = "flex-snapshot/1"


def _number(value) -> float | int | None:
    """A float as JSON writes it back exactly (whole numbers as integers, shorter); NaN and infinities as null."""
    value = float(value)
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _codes(row: np.ndarray) -> list:
    return [_number(v) for v in row]


def _features(task, ranges: np.ndarray) -> list[dict]:
    return [
        {
            "name": f.name,
            "label": f.label,
            "kind": f.kind,
            "continuous": f.is_continuous,
            "immutable": bool(f.immutable),
            "integer": bool(f.integer),
            "range": _number(ranges[j]) if f.is_continuous else None,
            "levels": None if f.is_continuous else [str(v) for v in f.levels],
            # as the app shows them: the header with its unit or currency, the levels in the dictionary's words
            "header": f.header,
            "words": None if f.is_continuous else [f.level_label(v) for v in f.levels],
        }
        for j, f in enumerate(task.features)
    ]


def _rows(explainer, cfset: CounterfactualSet) -> dict:
    """Per row: its id, codes, its counterfactuals' codes (null: an empty slot), validity and P(undesirable), and what
    the generator said of it."""
    task, model = explainer.task, explainer.model
    n_q, n_cf, n_f = cfset.counterfactuals.shape
    codes = np.concatenate([cfset.factuals[:, None, :], cfset.counterfactuals], axis=1).reshape(-1, n_f)
    present = np.concatenate([np.ones((n_q, 1), bool), cfset.found], axis=1).reshape(-1)
    flat = np.full(len(codes), np.nan)
    if present.any():  # one batched model call for every factual and counterfactual
        frame = decode_rows(task, codes[present])
        flat[present] = model.predict_proba(frame[task.feature_names])[:, 1]
    probability = flat.reshape(n_q, n_cf + 1)
    return {
        "id": [int(r) for r in cfset.query_index],
        "x": [_codes(row) for row in cfset.factuals],
        "cf": [[_codes(cf) if cfset.found[i, k] else None for k, cf in enumerate(cfs)]
               for i, cfs in enumerate(cfset.counterfactuals)],
        "valid": ["".join("1" if v else "0" for v in row) for row in cfset.valid],
        "p": [[None if math.isnan(p) else round(float(p), 4) for p in row] for row in probability],
        # What the generator counted of each row (its per-case tallies), one character a row: "1" when the case has
        # more smallest ways out than n_cf, and when ``tree`` left it to the batch search ("0" where it does not say).
        "more": _flags(cfset, "more_than_n_cf"),
        "searched": _flags(cfset, "batch_fallback"),
        "read": "one or two features" if cfset.config.get("pairs", True) else "one feature",
    }


def _flags(cfset: CounterfactualSet, name: str) -> str:
    named = cfset.cases_counted(name) or frozenset()
    return "".join("1" if int(r) in named else "0" for r in cfset.query_index)


def _mode_shift(regional: RegionalResult, features: Mapping) -> list[dict]:
    """The region's mode shift, its modes in the reader's words (the dictionary's levels, a bin with its unit)."""
    def words(name, mode):
        return mode if mode is None or name not in features else features[name].format_mode(mode)

    return [{"name": row["name"], "mode": words(row["name"], row["mode"]), "cf_mode": words(row["name"], row["cf_mode"]),
             **{k: _number(row[k]) for k in ("p_orig", "p_cf", "delta", "rank_shift")}} for row in regional.mode_shift]


def _region(name: str, regional: RegionalResult, position: Mapping[int, int], features: Mapping, *,
            kind: str, found=None, fdr: float | None = None) -> dict:
    """One region: its members (positions in the rows), how it was made, and its τ-free mode shift."""
    if regional.rule_text is not None:
        made = f"the {len(regional.members):,} cases with {regional.rule_text} (a region defined by a rule)"
    else:
        crit = regional.criterion
        feature = features.get(crit["feature"]) if crit else None
        where = ("" if not crit else f" with {crit['feature']} = {crit['value']}" if feature is None else
                 f" with {feature.label} = {feature.format_value(crit['value'])}")
        made = f"a group of {len(regional.members):,} similar cases around row {regional.query}{where}"
    out: dict = {"name": name, "kind": kind, "description": made, "query": regional.query,
           "members": [position[int(m)] for m in regional.members], "mode_shift": _mode_shift(regional, features)}
    if found is not None:
        out["discovery"] = {"q_value": _number(found.q_value), "p_value": _number(found.p_value),
                            "significant": bool(found.significant), "interval_reaches_zero": found.interval_reaches_zero(fdr)}
    return out


def _curves_line(task, model) -> str:
    """The areas under the ROC and precision-recall curves on the held-out rows against no skill, or why there are none."""
    try:
        curves = model_curves(task, model)
    except ConfigError as exc:
        return f"No ROC or precision-recall curves: {exc}"
    return (f"On the {int(curves.config['rows']):,} held-out cases: area under the ROC curve {curves.roc_auc:.3f} "
            f"(no skill 0.5), average precision {curves.average_precision:.3f} (no skill {curves.prevalence:.3f}, "
            "the share undesirable).")


def _quality(metrics: Mapping) -> dict:
    """The model's scores against the always-the-most-common-outcome baseline, as lines of a table."""
    columns, lines = quality_table(metrics, str(metrics.get("evaluated_on", "held-out test part")))
    lines = [{key: value if key == "measured on" or value is None else _number(value) for key, value in line.items()}
             for line in lines]
    return {"columns": columns, "lines": lines, "note": metrics.get("note")}


def _settings(explainer, global_result: FlexResult, extra: Mapping | None) -> list[list[str]]:
    task, model = explainer.task, explainer.model
    pairs = {
        "dataset": f"{task.name} ({len(task.frame):,} rows, {len(task.features)} features)",
        "outcome explained": f"{task.undesirable_words}: the outcome each way out leaves for {task.desirable_words}",
        "model": f"{model.label} ({model.encoding} encoding)" if getattr(model, "encoding", None) else model.label,
        "generator of the ways out (counterfactuals)": explainer.generator_name,
        "ways out asked for per case (N_cf)": str(explainer.n_cf),
        "cases explained (N_F)": (f"{len(global_result.query_index):,}, of which {global_result.n_factuals_used:,} "
                                  f"{'has' if global_result.n_factuals_used == 1 else 'have'} a way out"),
        "seed": str(explainer.seed),
        "τ when built": _tau_text(global_result, task),
        **({"constraints between features": "; ".join(task.rule_texts)} if task.rules else {}),
        **{str(k): str(v) for k, v in (extra or {}).items()},
    }
    return [[k, v] for k, v in pairs.items()]


def _tau_text(result: FlexResult, task) -> str:
    taus = {f.label: result.tau[j] for j, f in enumerate(task.features) if f.is_continuous}
    if not taus:
        return "no continuous feature (τ has no effect)"
    values = set(taus.values())
    if len(values) == 1:
        return format_number(values.pop())
    return ", ".join(f"{label} {format_number(v)}" for label, v in taus.items())


def _initial_tau(result: FlexResult, task) -> dict:
    """The sliders' start: one global τ and the features whose τ differs from it (as the app's Thresholds page keeps them)."""
    tau = result.config.get("tau", 0.1)
    base = float(tau.get("*", 0.1)) if isinstance(tau, Mapping) else float(tau)
    features = {f.name: float(result.tau[j]) for j, f in enumerate(task.features)
                if f.is_continuous and float(result.tau[j]) != base}
    return {"global": base, "features": features}


def snapshot_payload(
    explainer,
    global_result: FlexResult,
    regions: Mapping[str, RegionalResult] | None = None,
    *,
    discovered: RegionsResult | None = None,
    discovered_regions: Sequence[RegionalResult] = (),
    title: str | None = None,
    settings: Mapping | None = None,
) -> dict:
    """The data an interactive report file carries (plain JSON types; see the module's notes).

    Parameters
    ----------
    explainer : FlexExplainer
        Its task, model, settings and stored counterfactuals (every row named below must have them).
    global_result : FlexResult
        The global run: its factuals are the file's global sample, its τ the sliders' start.
    regions : mapping name -> RegionalResult, optional
        Saved or shown regions (by a query and its neighbours, or by a rule).
    discovered, discovered_regions : RegionsResult and its regions opened with ``explain_region(rule=...)``
        Region discovery's list, in its order; each discovered region's q-value goes with it.
    settings : mapping, optional
        More lines for the settings table (e.g. the app's link).
    """
    task = explainer.task
    regions = dict(regions or {})
    found = list(discovered.regions) if discovered is not None else []
    if len(found) != len(discovered_regions):
        raise ConfigError("discovered_regions must hold one opened region per region of discovered.")
    rows = [int(r) for r in global_result.query_index]
    for regional in [*regions.values(), *discovered_regions]:
        rows += [int(m) for m in regional.members]
    rows = list(dict.fromkeys(rows))
    position = {r: i for i, r in enumerate(rows)}
    features = {f.name: f for f in task.features}
    cfset = explainer.counterfactuals(rows)
    if [int(r) for r in cfset.query_index] != rows:  # the positions above index the rows block in this order
        raise ConfigError("The stored counterfactuals came back in another order than asked.")
    region_list = [_region(name, reg, position, features, kind="rule" if reg.rule is not None else "neighbours")
                   for name, reg in regions.items()]
    fdr = discovered.config.get("discovery", {}).get("fdr") if discovered is not None else None
    region_list += [_region(f"discovered {i + 1}: {region.text}", reg, position, features, kind="discovered", found=region,
                            fdr=fdr) for i, (region, reg) in enumerate(zip(found, discovered_regions))]
    return {
        "format": FORMAT,
        "title": title or f"FLEX Studio report: {task.name}",
        "built": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "fingerprint": task.fingerprint,
        "undesirable": [str(v) for v in task.undesirable],
        "tau": _initial_tau(global_result, task),
        "z": float(norm.ppf((1 + INTERVAL_LEVEL) / 2)),  # the z of every 95% interval
        "epsilon": DICE_EPSILON,
        "features": _features(task, np.asarray(explainer.store.ranges, dtype=float)),
        "rows": _rows(explainer, cfset),
        "global": [position[r] for r in (int(q) for q in global_result.query_index)],
        "regions": region_list,
        "discovery_tau": _tau_text(global_result, task) if discovered is not None else None,
        "settings": _settings(explainer, global_result, settings),
        "quality": {**_quality(explainer.model.metrics), "curves": _curves_line(task, explainer.model)},
        "notes": list(dict.fromkeys([*task.notes, *global_result.notes])),
    }
