"""Turning a Plotly selection event (a click, a lasso) into factual row ids, and choosing the rows a table lists."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

#: Most cases the table of candidate queries lists: a longer table is slow to send on every rerun.
TABLE_ROWS = 2_000


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



def rows_to_list(candidates: np.ndarray, *, lassoed: np.ndarray, drawn: np.ndarray, query: int | None,
                 limit: int = TABLE_ROWS) -> tuple[np.ndarray, int]:
    """The candidate rows a table lists (sorted), and how many there were to list.

    The rows lassoed on the map when there are any, else every candidate. Beyond ``limit``
    the rows drawn on the (sampled) map come first, so a dot seen on the map is also in the
    table, and the query is always listed.
    """
    rows = np.asarray(lassoed if len(lassoed) else candidates)
    total = len(rows)
    if total > limit:
        on_map = np.isin(rows, drawn)
        rows = np.concatenate([rows[on_map], rows[~on_map]])[:limit]
        if query is not None and int(query) in set(candidates.tolist()) and int(query) not in set(rows.tolist()):
            rows = np.concatenate([[int(query)], rows[:-1]])
    return np.sort(rows), total
