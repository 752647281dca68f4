"""CSV export that spreadsheets cannot run as formulas.

A cell such as ``=HYPERLINK("http://evil")`` in a user's data would become a live
formula when the exported CSV is opened in a spreadsheet (CSV injection). Every
CSV this package or the app writes goes through :func:`to_safe_csv`.
"""

from __future__ import annotations

import csv
import io
import os

import pandas as pd

__all__ = ["to_safe_csv", "formula_safe"]

#: A text cell starting with one of these is read as a formula by Excel, LibreOffice or Sheets.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def formula_safe(value):
    """``value`` with a leading single quote if it is text a spreadsheet would run as a formula.

    Numbers, and text that reads as a signed number (``-3.5``, ``+2``), are returned unchanged.
    """
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    if value[0] in "+-" and _is_number(value):
        return value
    return "'" + value


def _safe_labels(labels: pd.Index) -> pd.Index:
    if isinstance(labels, pd.MultiIndex):
        return labels.set_levels([level.map(formula_safe) for level in labels.levels])
    return labels.map(formula_safe).rename(formula_safe(labels.name))


def to_safe_csv(frame: pd.DataFrame, path: str | os.PathLike | None = None, *, index: bool = False,
                settings: str | None = None) -> str | None:
    """Write ``frame`` as CSV with every formula-like text cell, column name and index label neutralised.

    Parameters
    ----------
    frame : DataFrame of shape (n_rows, n_columns)
    path : path, optional
        Where to write; by default the CSV text is returned.
    index : bool
        Whether to write the index as the first column(s).
    settings : str, optional
        A metadata line written first as ``# settings: ...`` (one cell; e.g.
        :func:`flex_core.report.describe_settings`). Read the CSV back with ``pd.read_csv(..., comment="#")``
        or ``skiprows=1``.

    Returns
    -------
    str or None
        The CSV text when ``path`` is None.
    """
    safe = frame.copy()
    for position, dtype in enumerate(safe.dtypes):  # by position: column names may repeat
        if not pd.api.types.is_numeric_dtype(dtype):
            safe.isetitem(position, safe.iloc[:, position].astype(object).map(formula_safe))
    safe.columns = _safe_labels(safe.columns)
    if index:
        safe.index = _safe_labels(safe.index)
    text = safe.to_csv(index=index)
    if settings:
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerow(["# settings: " + " ".join(str(settings).split())])
        text = buffer.getvalue() + text
    if path is None:
        return text
    if hasattr(path, "write"):
        path.write(text)
    else:
        with open(path, "w", encoding="utf-8", newline="") as file:
            file.write(text)
    return None
