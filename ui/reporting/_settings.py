"""The settings behind a result in one line of plain text: the app's settings strip, figure subtitles,
CSV metadata lines and report sections all print this same sentence."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from flex_core import FlexResult, RegionalResult
from flex_core.formatting import format_share, plural

__all__ = ["describe_settings", "settings_of", "tau_text", "describe_all_zero"]

#: Short model names for a one-line strip (the app's long labels name the tree count and the paper).
_MODEL_NAMES = {"rf": "random forest", "gb": "gradient boosting", "lr": "logistic regression"}
_ENCODINGS = {"onehot": "one-hot", "label": "label"}
#: How each generator finds the ways out, in the words the strip uses for readers (the analyst's terms name it).
_GENERATOR_WORDS = {
    "tree": "ways out read from the model's trees",
    "batch": "ways out by batched search",
    "batch-plausible": "ways out from nearby rows of the desired outcome",
    "dice-random": "ways out by DiCE's random sampling",
    "dice-genetic": "ways out by DiCE's genetic search",
    "dice-kdtree": "ways out by DiCE's nearest training rows",
}


def _dataset_text(config: Mapping) -> str:
    source = str(config.get("dataset") or "")
    kind, _, where = source.partition(":")
    if not where:
        return source or "data"
    if kind == "builtin" or where == "upload":
        return where if kind == "builtin" else kind
    return f"{kind} ({Path(where).name})"


def tau_text(tau) -> str:
    """τ as the strip says it: ``τ = 0.70``, or ``τ = 0.10 (3 features overridden)`` for per-feature values."""
    if isinstance(tau, Mapping):
        overridden = [k for k in tau if k != "*"]
        base = f"τ = {float(tau.get('*', 0.1)):.2f}"
        return base + (f" ({plural(len(overridden), 'feature')} overridden)" if overridden else "")
    return f"τ = {float(tau):.2f}"


def _tau_words(tau) -> str:
    """τ in plain words: "changes under 10% of a number's range ignored" (+ how many features have their own)."""
    overridden = [k for k in tau if k != "*"] if isinstance(tau, Mapping) else []
    base = float(tau.get("*", 0.1)) if isinstance(tau, Mapping) else float(tau)
    text = f"changes under {format_share(base)} of a number's range ignored"
    return text + (f" ({plural(len(overridden), 'feature')} with their own)" if overridden else "")


def generator_text(name: str, refine, *, words: bool) -> str:
    """The generator and its refine mode: ``generator batch (refine minimal)``, or in words "minimal ways out by
    batched search" (refine none: "… (changes as drawn)"); a generator without words keeps its name."""
    if not words or name not in _GENERATOR_WORDS:
        return f"generator {name}" + (f" (refine {refine})" if refine else "")
    how = _GENERATOR_WORDS[name]
    return {"minimal": f"minimal {how}", "none": f"{how} (changes as drawn)"}.get(str(refine), how)


def settings_of(result: FlexResult | RegionalResult) -> dict:
    """The settings a result records, as :func:`describe_settings` takes them in a mapping."""
    flex = result.importance if isinstance(result, RegionalResult) else result
    config, model, generator = flex.config or {}, flex.model or {}, flex.generator or {}
    tau = config.get("tau")
    if tau is None:
        values = [t for t in flex.tau if not math.isnan(t)]
        tau = values[0] if values else None
    n_factuals = config.get("n_factuals")
    if n_factuals is None and flex.level == "global":
        n_factuals = len(flex.query_index)
    return {
        "dataset": _dataset_text(config), "model": model.get("name"), "encoding": model.get("encoding"),
        "generator": generator.get("name"), "refine": config.get("refine"), "n_factuals": n_factuals,
        "n_cf": config.get("n_cf"), "seed": config.get("seed"), "tau": tau,
        "region_cases": len(result.members) if isinstance(result, RegionalResult) else None,
    }


def describe_settings(settings: FlexResult | RegionalResult | Mapping, *, words: bool = False, **overrides) -> str:
    """Dataset, model, generator and refine mode, N_F, N_cf, seed and τ, as one line of text.

    The line holds no comma of its own (only a dataset name may bring one), so a CSV's metadata line
    stays one cell.

    ``settings`` is a FLEX result (global, regional or local: it records its settings) or a mapping
    with the keys ``dataset``, ``model`` (a name such as "rf", or a label), ``encoding``, ``generator``,
    ``refine``, ``n_factuals``, ``n_cf``, ``seed``, ``tau`` (a number, or ``{feature: τ, "*": default}``)
    and optionally ``region_cases``; missing or None keys are left out. ``overrides`` replace keys, e.g.
    ``dataset=`` the task's label or, for a region (which records no N_F), ``n_factuals=`` the global one.
    ``words``: N_F, N_cf and τ said in plain words ("200 cases explained · up to 10 ways out each · changes
    under 70% of a number's range ignored") instead of the paper's symbols.

    >>> describe_settings({"dataset": "loan", "model": "rf", "encoding": "onehot", "generator": "batch",
    ...                    "refine": "minimal", "n_factuals": 200, "n_cf": 10, "seed": 0, "tau": 0.7})
    'loan · random forest (one-hot encoding) · generator batch (refine minimal) · N_F = 200 · N_cf = 10 · seed 0 · τ = 0.70'
    """
    values = dict(settings) if isinstance(settings, Mapping) else settings_of(settings)
    values.update({k: v for k, v in overrides.items() if v is not None})
    parts = [str(values.get("dataset") or "data")]
    if values.get("model"):
        name = _MODEL_NAMES.get(values["model"], str(values["model"]))
        encoding = _ENCODINGS.get(str(values.get("encoding")), values.get("encoding"))
        parts.append(name + (f" ({encoding} encoding)" if encoding else ""))
    if values.get("generator"):
        parts.append(generator_text(str(values["generator"]), values.get("refine"), words=words))
    if values.get("n_factuals") is not None:
        n = int(values["n_factuals"])
        parts.append(f"{plural(n, 'case')} explained" if words else f"N_F = {n}")
    if values.get("region_cases") is not None:
        parts.append(f"region of {plural(int(values['region_cases']), 'case')}")
    if values.get("n_cf") is not None:
        n = int(values["n_cf"])
        parts.append(f"up to {plural(n, 'way')} out each" if words else f"N_cf = {n}")
    if values.get("seed") is not None:
        parts.append(f"seed {int(values['seed'])}")
    if values.get("tau") is not None:
        parts.append(_tau_words(values["tau"]) if words else tau_text(values["tau"]))
    return " · ".join(parts)


def describe_all_zero(result: FlexResult | RegionalResult) -> str | None:
    """Why every FLEX bar is 0, when it is (else None): no change was larger than τ, or none was found."""
    flex = result.importance if isinstance(result, RegionalResult) else result
    mutable = [j for j in range(len(flex.feature_names)) if not flex.immutable[j]]
    values = [flex.frequency_mean[j] for j in mutable]
    if not values or any(not math.isnan(v) and v > 0 for v in values):
        return None
    if all(math.isnan(v) for v in values) or not len(flex.counts) or not int(sum(flex.counts)):
        return "Every FLEX bar is empty: the generator found no way out for these cases."
    taus = sorted({round(float(flex.tau[j]), 4) for j in mutable if not math.isnan(flex.tau[j])})
    if not taus:
        return "Every FLEX bar is 0: no way out changed a feature that may change."
    said = f"τ = {taus[0]:.2f}" if len(taus) == 1 else f"τ = {taus[0]:.2f} to {taus[-1]:.2f}"
    return (f"Every FLEX bar is 0 because no change is larger than {said} (a share of each number's range), "
            "and no category changed. Lower τ on the Thresholds page to count smaller changes; DiCE's own count "
            "shows any change, however small.")
