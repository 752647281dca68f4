"""Results as tables for people: labels instead of column names, shares as percentages, no True/None/index.

The app shows them and the HTML report prints them; the CSV exports keep the raw
``to_frame()`` columns, which are for programs. Also the Data & model page's editable
features table (and reading it back), the class balance, and one case's counterfactuals
with the changed cells marked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from flex_core import FittedModel, FlexResult, RegionalResult, TaskSpec
from flex_core.counterfactuals import CounterfactualSet, decode_rows
from flex_core.formatting import format_number, format_share, parse_order, parse_range

__all__ = [
    "importance_table", "regional_table", "mode_shift_table", "case_line", "settings_table", "dataset_label", "human_table", "model_quality_table",
    "feature_table", "table_constraints", "class_balance", "counterfactual_table", "probability_label", "header",
    "display_case_table", "mode_words", "changed_first",
]


def _cell_format(column: str):
    """How a column of the model's quality table is written: a regressor's R² with two decimals, its MAE and RMSE as
    numbers in the target's units; every other score as a share."""
    if column == "R²":
        return lambda v: _share(v) if _share(v) == "–" else f"{v:.2f}"
    if column.startswith(("MAE", "RMSE")):
        return lambda v: _share(v) if _share(v) == "–" else format_number(v)
    return _share


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


def mode_shift_table(regional: RegionalResult, *, terms: bool = False) -> pd.DataFrame:
    """The mode shift (Eq. 5) with labels: the region's most common value and how its share moves (its relative
    change, as a percentage; ``terms``: as the paper's δ)."""
    labels = dict(zip(regional.feature_names, regional.importance.display_names))
    features = {f.name: f for f in regional.importance.features}
    lines = []
    for row in regional.mode_shift:
        delta = row["delta"]
        worded = partial(mode_words, features[row["name"]]) if row["name"] in features else str
        lines.append({
            "feature": labels.get(row["name"], row["name"]),
            "region's most common": worded(row["mode"]),
            "share of cases": _share(row["p_orig"]),
            "share of ways out": _share(row["p_cf"]),
            ("δ" if terms else "relative change"): "–" if delta is None or math.isnan(delta)
            else f"{delta:+.2f}" if terms else f"{delta:+.0%}".replace("-", "−"),
            "most common in the ways out": worded(row["cf_mode"]) if row["cf_mode"] else "–",
        })
    return pd.DataFrame(lines)


def mode_words(feature, mode: str) -> str:
    """A mode-shift mode in the reader's words: a level in the dictionary's ("under 1 year"), a number's bin with
    its currency and unit ("16 to 20 years", "₹300,000 to ₹2,700,000")."""
    return feature.format_mode(mode)


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


def scored_rows_label(metrics: Mapping, *, held_out: bool) -> str:
    """What the test line of :func:`model_quality_table` was measured on, in a few words that say it truly.

    ``held_out``: the model was trained here, so its test rows are rows it never saw. A model trained
    elsewhere is scored on every row given, which may include its own training rows.
    """
    if held_out:
        return "held-out test part"
    rows = metrics.get("test_rows")
    return f"all {rows:,} rows (may include its training rows)" if rows else "all rows (may include its training rows)"


def model_quality_table(metrics: Mapping, *, held_out: bool = True, outcome: str | None = None) -> pd.DataFrame:
    """The model's scores, one labelled line per way of measuring them (``metrics`` = FittedModel.metrics).

    ``held_out`` is False for a model trained elsewhere: its test line then says it covers every row
    (:func:`scored_rows_label`), not a held-out part. ``outcome``: the undesirable outcome's words
    ("Rejected"), which head its own precision, recall and F1 in place of "undesirable".
    """
    from flex_core.models import quality_table

    columns, lines = quality_table(metrics, scored_rows_label(metrics, held_out=held_out))
    table = pd.DataFrame(lines, dtype=object)[columns]  # older models carry no balanced accuracy or undesirable scores
    table = table.apply(lambda column: column if column.name == "measured on" else column.map(_cell_format(column.name)))
    if outcome:
        table.columns = [c.replace("(undesirable)", f"({outcome})") for c in table.columns]
    return table


# -- the data, its features and a case's counterfactuals (the Data & model and Counterfactuals pages) --
FEATURE_COLUMNS = ["feature", "kind", "immutable", "direction", "limits", "order", "values"]


def feature_table(task: TaskSpec, *, labelled: bool = False) -> pd.DataFrame:
    """One line per feature: name, kind, immutable, its constraints, and its levels or value range.

    ``values`` reads as the data dictionary writes them ("₹200,000 to ₹9,900,000"); ``labelled`` puts
    each feature's label in ``feature`` instead of its column name (for reading; the lines stay in the
    task's feature order, so an edited copy maps back by position).

    ``direction`` is increase / decrease / either; ``limits`` is a continuous feature's
    permitted range as ``LO:HI`` (either end may be empty) or a categorical feature's
    allowed levels as ``a, b``; ``order`` is an ordinal feature's levels as ``a < b < c``.
    :func:`table_constraints` reads an edited copy back.
    """
    lines = []
    for f in task.features:
        if f.is_continuous:
            col = task.frame[f.name].astype(float)
            values = f"{f.format_value(col.min())} to {f.format_value(col.max())}"
        else:
            shown = [f.level_label(level) for level in f.categories[:6]]
            values = ", ".join(shown) + (f", … ({len(f.categories)} levels)" if len(f.categories) > 6 else "")
        if f.bounds is not None:
            limits = ":".join("" if b is None else f"{b:g}" for b in f.bounds)
        else:
            limits = ", ".join(f.allowed) if f.allowed is not None else ""
        lines.append(
            {
                "feature": f.label if labelled else f.name,
                "kind": f.kind,
                "immutable": bool(f.immutable),
                "direction": f.direction or "either",
                "limits": limits,
                "order": " < ".join(f.categories) if f.is_ordinal else "",
                "values": values,
            }
        )
    return pd.DataFrame(lines, columns=FEATURE_COLUMNS)


def table_constraints(table: pd.DataFrame) -> dict:
    """The constraints of an edited :func:`feature_table`, as ``TaskSpec.with_overrides`` keywords.

    A ``limits`` cell is a range (``LO:HI``) for a continuous feature and allowed levels
    (``a, b``) for the others; an ``order`` cell counts only for a feature of kind ordinal.
    Whether the names, levels and directions make sense is checked by ``make_task``.
    """
    monotone, bounds, allowed, orders = {}, {}, {}, {}
    for row in table.itertuples(index=False):
        name, limits, order = row.feature, str(row.limits or "").strip(), str(row.order or "").strip()
        if row.direction and row.direction != "either":
            monotone[name] = row.direction
        if limits:
            if row.kind == "continuous":
                bounds[name] = parse_range(name, limits)
            else:
                allowed[name] = [v.strip() for v in limits.split(",") if v.strip()]
        if order and row.kind == "ordinal":
            orders[name] = parse_order(order)
    return {"monotone": monotone, "bounds": bounds, "allowed": allowed, "ordinal_orders": orders}


def class_balance(task: TaskSpec) -> pd.DataFrame:
    """Rows per outcome value, their share, and whether the value counts as undesirable; for a number's band (a
    regression), the rows inside and outside it."""
    if task.band is not None:
        inside = int(task.y.sum())
        rows = np.array([inside, len(task.y) - inside])
        return pd.DataFrame({"outcome": [task.undesirable_words, task.desirable_words], "rows": rows,
                             "share": rows / max(len(task.y), 1), "undesirable": [True, False]})
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


def probability_label(task: TaskSpec) -> str:
    """The model's probability of the undesirable outcome in the outcome's own words: "P(Rejected)"; a regressor's
    predicted number ("predicted loan_amount"), which the pages show in its place."""
    return f"predicted {target_words(task)}" if task.band is not None else f"P({task.undesirable_words})"


def target_words(task: TaskSpec) -> str:
    """A regression's target as it reads inside a sentence: its label ("Loan amount", the dictionary's or the column's
    tidied), lower-cased unless it starts with a capitalised word or an acronym ("CIBIL score", "Y")."""
    label = task.target_label
    return label[:1].lower() + label[1:] if label[1:2].islower() else label


def score_label(task: TaskSpec) -> str:
    """What SHAP, LIME and the ICE curves explain: P(undesirable) ("P(Rejected)"), or a regressor's off-band score,
    which they read in its place (not its predicted number)."""
    return (f"off-band score of {task.undesirable_words} (over 0.5: in the band)" if task.band is not None else
            probability_label(task))


def format_prediction(task: TaskSpec, value: float) -> str:
    """A prediction as :func:`probability_label` names it: "92%", or a regressor's number ("₹29,900,000")."""
    return task.format_target(value) if task.band is not None else f"{value:.0%}"


def header(feature) -> str:
    """A feature's column header: its label with its unit or currency ("Loan amount (₹)", "Loan term (years)")."""
    return feature.header


def case_line(name, case: str = "this case") -> str:
    """A line of :func:`counterfactual_table` as the reader sees it: ``case`` for the factual, "way out 2" for
    "counterfactual 2"."""
    return case if name == "factual" else str(name).replace("counterfactual ", "way out ", 1)


def display_case_table(task: TaskSpec, table: pd.DataFrame, *, case: str = "this case") -> pd.DataFrame:
    """:func:`counterfactual_table`'s table under the reader's words: features by :func:`header`, the first line
    ``case`` and the others "way out 1", "way out 2", ..., the probability as :func:`probability_label`. Values stay
    numbers (a styler formats them)."""
    out = table.rename(columns={**{f.name: header(f) for f in task.features}, "P(undesirable)": probability_label(task)})
    return out.rename(index=lambda name: case_line(name, case))


def changed_first(task: TaskSpec, changed: pd.DataFrame, edited=()) -> tuple[list[str], list[str]]:
    """The features of one case's table in reading order: (those some way out changes or the reader edited, the rest).

    The changed ones come first, the most often changed first (ties: the data dictionary's order, which is also
    the charts'), so that a table wider than the page shows what to change and its outcome without scrolling; the
    features no way out touches follow. ``changed``: :func:`counterfactual_table`'s marks (feature names as
    columns); ``edited``: features the reader set by hand (What-if), counted as changed.
    """
    counts = changed.reindex(columns=task.feature_names, fill_value=False).iloc[1:].sum()
    order = {name: i for i, name in enumerate(task.feature_names)}
    moved = [n for n in task.feature_names if counts[n] > 0 or n in set(edited)]
    moved.sort(key=lambda n: (-int(counts[n]), order[n]))
    return moved, [n for n in task.feature_names if n not in set(moved)]


def counterfactual_table(task: TaskSpec, model: FittedModel, cfset: CounterfactualSet, row: int):
    """One factual and its counterfactuals, in original values, with the changed cells marked.

    Returns
    -------
    table : DataFrame
        First line ``factual``, then ``counterfactual 1..m`` (the found ones); the feature
        columns, then ``P(undesirable)`` (one batched model call; a regressor's predicted number), ``prediction`` and
        ``valid``.
    changed : DataFrame of bool, same index, feature columns only
        True where a counterfactual differs from the factual (continuous: by more than
        float noise). The factual's own line is all False.
    """
    sub = cfset.subset([int(row)])
    found = sub.found[0]
    codes = np.vstack([sub.factuals, sub.counterfactuals[0][found]])
    table = decode_rows(task, codes)
    table.index = ["factual"] + [f"counterfactual {i + 1}" for i in range(int(found.sum()))]
    changed = np.vstack([np.zeros((1, len(task.features)), dtype=bool), sub.changed(task)[0][found]])
    changed = pd.DataFrame(changed, index=table.index, columns=task.feature_names)
    X = table[task.feature_names]
    probability = model.predict_value(X) if task.band is not None else model.predict_proba(X)[:, 1]
    # Integer features are stored as floats in the code space; show them as integers again.
    for f in task.features:
        if f.is_continuous and f.integer:
            table[f.name] = table[f.name].round().astype("Int64")
    table["P(undesirable)"] = probability
    undesirable = task.band.undesirable(probability) if task.band is not None else probability > 0.5
    table["prediction"] = np.where(undesirable, task.undesirable_words, task.desirable_words)
    table["valid"] = [False] + [bool(v) for v in sub.valid[0][found]]
    return table, changed
