"""The what-if editor's state: the row a case starts from, its edits, and the widgets that show them.

Whether an edit is allowed (a number within the data's range, a level of the data, a mutable feature) is
the explainer's check (:meth:`flex_core.FlexExplainer.check_case`), the one :meth:`~flex_core.FlexExplainer.what_if`
makes: nothing here repeats it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

import flex_core as fc
from ui import state as S
from ui.text import plain

ROW_WIDGET = "w_wi_row"
#: A number box whose range reaches this far from 0 shows its value grouped by thousands beneath it ("₹2,200,000"):
#: st.number_input cannot group them, and "10642001" is hard to read.
GROUPED_FROM = 10_000


def widget(name: str) -> str:
    """The Session State key of the editor's widget for feature ``name``."""
    return f"w_wi.{name}"


def as_widget_value(feature: fc.data.Feature, value):
    """``value`` as the feature's widget holds it: a level as text, a number as int or float."""
    if not feature.is_continuous:
        return str(value)  # the task holds every level as text already
    return int(round(float(value))) if feature.integer else float(value)


def grouped_value(feature: fc.data.Feature, low: float, high: float) -> str | None:
    """The number box's value as the reader reads it ("₹2,200,000"), for a number whose range reaches
    :data:`GROUPED_FROM`; None for a smaller one or a level."""
    if not feature.is_continuous or max(abs(low), abs(high)) < GROUPED_FROM:
        return None
    value = st.session_state.get(widget(feature.name))
    return None if value is None else feature.format_value(value)


def nice_step(span: float, *, integer: bool):
    """About a hundredth of the range, rounded to 1, 10, 100, ... (0.01, 0.1, ... for fractions)."""
    step = 10.0 ** np.floor(np.log10(span / 100)) if span > 0 else 1.0
    return max(1, int(step)) if integer else float(step)


def load_row(task: fc.TaskSpec, row: int) -> None:
    """Start over from ``row``: no edits, every widget showing the row's value."""
    s = st.session_state
    s[S.WHATIF_ROW] = int(row)
    s[S.WHATIF_EDITS] = {}
    for f in task.features:
        s[widget(f.name)] = as_widget_value(f, task.frame.loc[int(row), f.name])


def pick_row(task: fc.TaskSpec) -> None:
    """``on_change`` of the row chooser: start over from the chosen row (if it is one of the data)."""
    row = st.session_state.get(ROW_WIDGET)
    if row is not None and int(row) in task.frame.index:
        load_row(task, int(row))


def edit(task: fc.TaskSpec, name: str) -> Callable[[], None]:
    """``on_change`` of feature ``name``'s widget: record the value as an edit, or forget it when back to the row's."""

    def record() -> None:
        s = st.session_state
        value = s[widget(name)]
        original = as_widget_value(task.feature(name), task.frame.loc[int(s[S.WHATIF_ROW]), name])
        edits = dict(s[S.WHATIF_EDITS])
        if value == original:
            edits.pop(name, None)
        else:
            edits[name] = value
        s[S.WHATIF_EDITS] = edits

    return record


def start_row(task: fc.TaskSpec, factuals: set[int]) -> int:
    """The row the case starts from: the session's, else the Counterfactuals page's case or the query, else the
    first factual (the first row when there is none)."""
    s = st.session_state
    row = s[S.WHATIF_ROW]
    if row is None or int(row) not in task.frame.index:
        start = next((r for r in (s[S.CF_ROW], s[S.QUERY]) if r is not None and int(r) in task.frame.index), None)
        row = int(start) if start is not None else int(min(factuals) if factuals else task.frame.index[0])
        load_row(task, row)
    return int(row)


def _allowed(explainer: fc.FlexExplainer, name: str, value, row: int) -> bool:
    """Whether the explainer takes ``value`` for ``name`` on a case from ``row`` (its what-if check)."""
    try:
        explainer.check_case({name: value}, row=row)
    except fc.FlexError:
        return False
    return True


def restore_edits(explainer: fc.FlexExplainer, row: int) -> None:
    """Drop the edits the explainer no longer takes (the feature settings changed since: a kind, an immutable
    feature), saying which; then give every widget the case's value (widgets forget theirs on another page)."""
    s, task = st.session_state, explainer.task
    stale = [n for n, v in s[S.WHATIF_EDITS].items() if not _allowed(explainer, n, v, row)]
    if stale:
        s[S.WHATIF_EDITS] = {n: v for n, v in s[S.WHATIF_EDITS].items() if n not in stale}
        st.warning(plain(f"Edits dropped, as the feature settings changed: {', '.join(stale)}."))
        for n in stale:
            s.pop(widget(n), None)
    for f in task.features:
        shown = s.get(widget(f.name))
        if shown is None or not _allowed(explainer, f.name, shown, row) or not _fits_widget(f, shown):
            value = s[S.WHATIF_EDITS].get(f.name, task.frame.loc[row, f.name])
            s[widget(f.name)] = as_widget_value(f, value)


def _fits_widget(feature: fc.data.Feature, value) -> bool:
    """A value of the type the feature's widget holds (a kind changed on Data & model may leave the other type)."""
    if feature.is_continuous:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, str)
