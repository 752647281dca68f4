"""Summaries of a task for display: its features and its class balance, and a CSV peek."""

from __future__ import annotations

import pandas as pd

from ._datasets import TaskSpec
from ._read import MAX_FILE_BYTES, read_csv

__all__ = ["feature_table", "class_balance", "peek_csv"]


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



def peek_csv(source, *, max_bytes: int = MAX_FILE_BYTES) -> pd.DataFrame:
    """The whole CSV as read by the loaders (same missing-value markers), to offer its columns and values."""
    return read_csv(source, max_bytes=max_bytes)


