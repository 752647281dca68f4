"""Turning a Plotly selection event (a click, a lasso) into factual row ids."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


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

