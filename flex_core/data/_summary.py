"""Summaries of a task for display: its features and its class balance, and a CSV peek."""

from __future__ import annotations

import pandas as pd

from .._errors import ConfigError
from ._read import MAX_FILE_BYTES, read_csv
from ._task import TaskSpec

__all__ = ["feature_table", "table_constraints", "parse_range", "parse_order", "class_balance", "peek_csv"]

FEATURE_COLUMNS = ["feature", "kind", "immutable", "direction", "limits", "order", "values"]


def feature_table(task: TaskSpec) -> pd.DataFrame:
    """One line per feature: name, kind, immutable, its constraints, and its levels or value range.

    ``direction`` is increase / decrease / either; ``limits`` is a continuous feature's
    permitted range as ``LO:HI`` (either end may be empty) or a categorical feature's
    allowed levels as ``a, b``; ``order`` is an ordinal feature's levels as ``a < b < c``.
    :func:`table_constraints` reads an edited copy back.
    """
    lines = []
    for f in task.features:
        if f.is_continuous:
            col = task.frame[f.name].astype(float)
            values = f"{col.min():.4g} to {col.max():.4g}"
        else:
            shown = list(f.categories[:6])
            values = ", ".join(map(str, shown)) + (f", … ({len(f.categories)} levels)" if len(f.categories) > 6 else "")
        if f.bounds is not None:
            limits = ":".join("" if b is None else f"{b:g}" for b in f.bounds)
        else:
            limits = ", ".join(f.allowed) if f.allowed is not None else ""
        lines.append(
            {
                "feature": f.name,
                "kind": f.kind,
                "immutable": bool(f.immutable),
                "direction": f.direction or "either",
                "limits": limits,
                "order": " < ".join(f.categories) if f.is_ordinal else "",
                "values": values,
            }
        )
    return pd.DataFrame(lines, columns=FEATURE_COLUMNS)


def parse_range(name: str, text: str) -> tuple:
    """``"LO:HI"`` (either end may be empty) as (low, high) with None for an open end."""
    low, sep, high = str(text).partition(":")
    try:
        if not sep:
            raise ValueError
        return tuple(float(v) if v.strip() else None for v in (low, high))
    except ValueError:
        raise ConfigError(f"The range of {name!r} must be LO:HI (either may be empty), not {text!r}.") from None


def parse_order(text: str) -> list[str]:
    """``"a < b < c"`` as its levels, in order."""
    return [v.strip() for v in str(text).split("<")]


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



def peek_csv(source, *, max_bytes: int = MAX_FILE_BYTES) -> pd.DataFrame:
    """The whole CSV as read by the loaders (same missing-value markers), to offer its columns and values."""
    return read_csv(source, max_bytes=max_bytes)


