"""The Regional explorer's query: the cases to choose from, a click on the map or the table, else a seeded random one.

The page draws the map and the table; what a click means and which case becomes the query is decided here,
through the explainer (its factuals meeting the criterion, its seeded random query), never in the page.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import flex_core as fc
from ui import selection
from ui import state as S
from ui.context import Analysis, run_or_stop
from ui.text import plain

MAP_KEY, TABLE_KEY = "factual_map", "factual_table"
#: The criterion box's first choice: no criterion.
ANY_CASE = "(any case)"


@dataclass(frozen=True)
class QueryChoice:
    """The query and what the page lists to choose it from."""

    query: int
    table: pd.DataFrame  # the listed candidates, P(undesirable) first
    listable: int  # how many candidates there were to list (the table holds at most selection.TABLE_ROWS)
    lassoed: np.ndarray  # the candidates a box or lasso on the map selected


def set_where(task: fc.TaskSpec) -> None:
    """``on_change`` of the criterion boxes: the chosen feature = value (its first level until one is chosen) becomes
    the criterion, and the query is chosen anew to meet it."""
    s = st.session_state
    feature = s["w_where_feature"]
    if feature == ANY_CASE:
        s[S.WHERE] = None
    else:
        value, levels = s.get("w_where_value"), task.feature(feature).categories
        s[S.WHERE] = fc.importance.Condition.criterion(feature, value if value in levels else levels[0])
    s[S.QUERY] = None  # a new criterion needs a query that meets it


def candidates(analysis: Analysis, where: fc.importance.Condition | None) -> np.ndarray:
    """The factuals meeting ``where``; with none, one error saying to choose another value, and the page stops."""
    found = run_or_stop(analysis.explainer.factuals_meeting, where)
    if len(found) == 0:
        st.error(plain(f"No case predicted {analysis.task.undesirable_words} meets {where}; choose another value."))
        st.stop()
    return found


def _map_click(analysis: Analysis, found: np.ndarray, where: fc.importance.Condition | None) -> list[int]:
    """The factuals selected on the map; one clicked dot meeting the criterion becomes the query."""
    event = st.session_state.get(MAP_KEY)
    on_map = selection.rows_from_selection(event.get("selection") if event else None, allowed=analysis.pool)
    if len(on_map) == 1 and S.fresh_selection(MAP_KEY, on_map):
        if on_map[0] in set(found.tolist()):
            st.session_state[S.QUERY] = on_map[0]
        else:
            st.warning(plain(f"Row {on_map[0]} does not meet {where}; the query stays as it was."))
    return on_map


def _table_click(table: pd.DataFrame) -> None:
    """A row clicked in the table of candidates becomes the query."""
    event = st.session_state.get(TABLE_KEY)
    if event is None:
        return
    picked = event.get("selection", {}).get("rows", [])
    if picked and S.fresh_selection(TABLE_KEY, picked) and picked[0] < len(table):
        st.session_state[S.QUERY] = int(table.index[picked[0]])


def choose_query(analysis: Analysis, found: np.ndarray, where: fc.importance.Condition | None, drawn: np.ndarray) -> QueryChoice:
    """The query from a click on the map (``drawn``: the rows it shows) or the table, else the explainer's seeded
    random one meeting ``where`` (kept in Session State)."""
    on_map = _map_click(analysis, found, where)
    lassoed = found[np.isin(found, on_map)] if len(on_map) > 1 else found[:0]
    listed, listable = selection.rows_to_list(found, lassoed=lassoed, drawn=drawn, query=st.session_state[S.QUERY])
    table = analysis.task.frame.loc[listed].copy()
    table.insert(0, "P(undesirable)", analysis.factual_probabilities().loc[listed].to_numpy())
    _table_click(table)
    query = st.session_state[S.QUERY]
    if query is None or query not in set(found.tolist()):
        query = st.session_state[S.QUERY] = run_or_stop(analysis.explainer.random_query, where=where)
    return QueryChoice(query=int(query), table=table, listable=listable, lassoed=lassoed)


def another_random_query(analysis: Analysis, where: fc.importance.Condition | None, query: int) -> None:
    """``on_click`` of "Random query": the next seeded random case meeting ``where`` becomes the query."""
    st.session_state[S.QUERY] = analysis.explainer.random_query(where=where, seed=int(query) + 1)
