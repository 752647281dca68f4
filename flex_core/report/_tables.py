"""Results as tables for people: labels instead of column names, shares as percentages, no True/None/index.

The app shows them and the HTML report prints them; the CSV exports keep the raw
``to_frame()`` columns, which are for programs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from .._format import format_number, format_share
from .._results import FlexResult, RegionalResult

__all__ = [
    "importance_table", "regional_table", "mode_shift_table", "settings_table", "dataset_label", "human_table", "model_quality_table",
]


def _share(value) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else format_share(value)


def _interval(result: FlexResult, j: int) -> str:
    interval = getattr(result, "frequency_ci", None)
    if interval is not None:
        low, high = interval[j]
        if not (math.isnan(low) or math.isnan(high)):
            return f"{format_share(low)} to {format_share(high)}"
    std = result.frequency_std[j]
    return "–" if math.isnan(std) else f"± {format_share(std)}"


def importance_table(result: FlexResult) -> pd.DataFrame:
    """One line per feature, most often changed first: what a reader needs, in words and percentages."""
    order = result.to_frame()["feature"].tolist()
    position = {name: j for j, name in enumerate(result.feature_names)}
    spread = "95% interval" if getattr(result, "frequency_ci", None) is not None else "spread (std)"
    lines = []
    for name in order:
        j = position[name]
        continuous = result.kinds[j] == "continuous"
        lines.append({
            "rank": int(result.rank[j]),
            "feature": result.display_names[j],
            "kind": result.kinds[j],
            "can change": "no (fixed)" if result.immutable[j] else "yes",
            "changed in (F)": _share(result.frequency_mean[j]),
            spread: _interval(result, j),
            "mean change size (μ, share of range)": _share(result.magnitude_mean[j]) if continuous else "–",
            "τ": _share(result.tau[j]) if continuous else "–",
            "DiCE count (any change)": _share(result.dice_frequency[j]),
        })
    return pd.DataFrame(lines)


def regional_table(regional: RegionalResult) -> pd.DataFrame:
    """:func:`importance_table` of the region plus the global F and the quadrant of each feature."""
    table = importance_table(regional.importance)
    lookup = {regional.importance.display_names[j]: (regional.global_frequency[j], regional.quadrants[j])
              for j in range(len(regional.feature_names))}
    table.insert(5, "changed in, globally", [_share(lookup[f][0]) for f in table["feature"]])
    table["quadrant"] = [lookup[f][1] or "–" for f in table["feature"]]
    return table


def mode_shift_table(regional: RegionalResult) -> pd.DataFrame:
    """The mode shift (Eq. 5) with labels: the region's most common value and how its share moves."""
    labels = dict(zip(regional.feature_names, regional.importance.display_names))
    lines = []
    for row in regional.mode_shift:
        delta = row["delta"]
        lines.append({
            "feature": labels.get(row["name"], row["name"]),
            "region's most common": row["mode"],
            "share of cases": _share(row["p_orig"]),
            "share of alternatives": _share(row["p_cf"]),
            "δ": "–" if delta is None or math.isnan(delta) else f"{delta:+.2f}",
            "alternatives' most common": row["cf_mode"] or "–",
        })
    return pd.DataFrame(lines)


def _setting_text(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "–"
    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_setting_text(v)}" for k, v in value.items()) or "–"
    if isinstance(value, (list, tuple)):
        return ", ".join(_setting_text(v) for v in value) or "–"
    return str(value)


def dataset_label(task) -> str:
    """The task's name and, for a file, the file's name only: a report travels, the reader's folders do not."""
    kind, _, where = (task.source or "").partition(":")
    if not where or kind == "builtin" or where == "upload":
        return task.name
    return f"{task.name} (file {Path(where).name})"


def settings_table(settings: Mapping) -> pd.DataFrame:
    """Settings (nested mappings allowed, e.g. the generator's) as a two-column table of readable text."""
    lines = []
    for key, value in settings.items():
        lines.append({"setting": str(key), "value": _setting_text(value)})
    return pd.DataFrame(lines, columns=["setting", "value"])


def human_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Any table made readable: underscores out of headers, yes/no for booleans, "–" for missing, numbers grouped."""
    out = pd.DataFrame(index=range(len(frame)))
    for column in frame.columns:
        values = frame[column].tolist()
        out[str(column).replace("_", " ")] = [_setting_text(v) if not (isinstance(v, float) and math.isnan(v)) else "–"
                                             for v in values]
    return out


def model_quality_table(metrics: Mapping) -> pd.DataFrame:
    """The model's scores, one labelled line per way of measuring them (``metrics`` = FittedModel.metrics)."""
    folds = metrics.get("cv_folds")
    lines = []
    if folds:
        lines.append({"measured on": f"cross-validation (mean of {folds} folds)",
                      "accuracy": _share(metrics.get("cv_accuracy_mean")),
                      "balanced accuracy": _share(metrics.get("cv_balanced_accuracy_mean")),
                      "F1 (weighted)": _share(metrics.get("cv_f1_mean"))})
    lines.append({"measured on": "held-out test part", "accuracy": _share(metrics.get("test_accuracy")),
                  "balanced accuracy": _share(metrics.get("balanced_accuracy")),
                  "F1 (weighted)": _share(metrics.get("test_f1")),
                  # The accuracy a model must beat to have learned anything (measured on the test part only).
                  "always the most common outcome": _share(metrics.get("majority_baseline"))})
    table = pd.DataFrame(lines).fillna("–")
    if table["balanced accuracy"].eq("–").all():  # older models carry no balanced accuracy
        table = table.drop(columns="balanced accuracy")
    return table
