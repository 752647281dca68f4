"""Numbers and tables as the reproduction's Markdown report writes them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["fmt", "interval", "markdown_table"]


def markdown_table(frame: pd.DataFrame, *, index: bool = True) -> str:
    frame = frame.reset_index() if index else frame
    header = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
    rows = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def _cell(value) -> str:
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.3f}"
    return str(value).replace("|", "\\|")


def fmt(value: float | None, digits: int = 2) -> str:
    return "undefined" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def interval(bounds) -> str:
    low, high = bounds
    return "undefined" if np.isnan(low) else f"{low:.2f} to {high:.2f}"

