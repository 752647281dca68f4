"""What-if editor: start from a row, edit its values within the data's ranges and levels, and see the
prediction and the case's minimal counterfactuals at once; an unedited factual goes to the Regional explorer.

A page of its own, not a part of Counterfactuals: that page shows the stored counterfactuals of the
data's factuals, while this one holds an edited case that is not a row of the data (its own state, its
own link).
"""

import json

import numpy as np
import streamlit as st

import flex_core as fc
from ui import cache, reporting
from ui import state as S
from ui.components import highlighted_counterfactuals, settings_strip
from ui.context import require_analysis
from ui.text import plain

#: Beyond this many rows the case is chosen by typing its row number (a list that long is slow to send).
LISTED_ROWS = 5_000

st.title("What-if editor")
analysis = require_analysis()
settings_strip(analysis)
task, model = analysis.task, analysis.model
undesirable = " / ".join(map(str, task.undesirable))
rows = task.frame.index.to_numpy()
factuals = set(int(r) for r in analysis.pool)
s = st.session_state


def _limits(name: str) -> tuple[float, float]:
    """The data's range of a number: what an edited value must stay within (flex_core checks it too)."""
    return float(task.frame[name].min()), float(task.frame[name].max())


def _widget(name: str) -> str:
    return f"w_wi.{name}"


def _as_widget_value(feature: fc.data.Feature, value):
    if not feature.is_continuous:
        return str(value)  # the task holds every level as text already
    return int(round(float(value))) if feature.integer else float(value)


def _nice_step(span: float, *, integer: bool):
    """About a hundredth of the range, rounded to 1, 10, 100, ... (0.01, 0.1, ... for fractions)."""
    step = 10.0 ** np.floor(np.log10(span / 100)) if span > 0 else 1.0
    return max(1, int(step)) if integer else float(step)


def _load_row(row: int) -> None:
    """Start over from ``row``: no edits, every widget showing the row's value."""
    s[S.WHATIF_ROW] = int(row)
    s[S.WHATIF_EDITS] = {}
    for f in task.features:
        s[_widget(f.name)] = _as_widget_value(f, task.frame.loc[int(row), f.name])


def _pick_row() -> None:
    row = s.get("w_wi_row")
    if row is not None and int(row) in task.frame.index:
        _load_row(int(row))


def _edit(name: str):
    def record() -> None:
        feature = task.feature(name)
        value = s[_widget(name)]
        original = _as_widget_value(feature, task.frame.loc[int(s[S.WHATIF_ROW]), name])
        edits = dict(s[S.WHATIF_EDITS])
        if value == original:
            edits.pop(name, None)
        else:
            edits[name] = value
        s[S.WHATIF_EDITS] = edits

    return record


# -- the row the case starts from --------------------------------------------------------------------
row = s[S.WHATIF_ROW]
if row is None or int(row) not in task.frame.index:
    start = next((r for r in (s[S.CF_ROW], s[S.QUERY]) if r is not None and int(r) in task.frame.index), None)
    row = int(start) if start is not None else int(min(factuals) if factuals else rows[0])
    _load_row(row)
row = int(row)


def _fits(feature: fc.data.Feature, value) -> bool:
    """A widget value the feature's widget can show (a kind changed on Data & model may leave another)."""
    if not feature.is_continuous:
        return isinstance(value, str) and value in feature.levels
    low, high = _limits(feature.name)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high


stale = [n for n, v in s[S.WHATIF_EDITS].items() if n not in task.feature_names or not _fits(task.feature(n), v)
         or task.feature(n).immutable]
if stale:  # feature settings changed since the edit (a kind, an immutable feature): those edits no longer apply
    s[S.WHATIF_EDITS] = {n: v for n, v in s[S.WHATIF_EDITS].items() if n not in stale}
    st.warning(plain(f"Edits dropped, as the feature settings changed: {', '.join(stale)}."))
    for n in stale:
        s.pop(_widget(n), None)
for f in task.features:  # widgets forget their value when another page is shown: restore the case
    if _widget(f.name) not in s or not _fits(f, s[_widget(f.name)]):
        value = s[S.WHATIF_EDITS].get(f.name, task.frame.loc[row, f.name])
        s[_widget(f.name)] = _as_widget_value(f, value if _fits(f, value) else task.frame.loc[row, f.name])

left, right = st.columns([2, 3])
label = "Start from row"
if len(rows) <= LISTED_ROWS:
    left.selectbox(label, [int(r) for r in rows], index=int(np.flatnonzero(rows == row)[0]), key="w_wi_row",
                   on_change=_pick_row,
                   format_func=lambda r: f"row {r}" + (f" (predicted {undesirable})" if r in factuals else ""))
else:
    s.setdefault("w_wi_row", row)
    left.number_input(label, min_value=int(rows.min()), max_value=int(rows.max()), step=1, key="w_wi_row",
                      on_change=_pick_row, help="A row number of the data (rows dropped for missing values are not).")
right.caption(
    "Change any value below: the model's prediction and this case's minimal counterfactuals (the smallest "
    "changes that give the desirable outcome) follow at once. Numbers stay within the data's range, categories "
    "within its levels; immutable features are shown but cannot be edited."
)

# -- the editor ---------------------------------------------------------------------------------------
edits = s[S.WHATIF_EDITS]
with st.container(border=True):
    columns = st.columns(4)
    for j, f in enumerate(task.features):
        col = columns[j % 4]
        help_text = "Immutable: a counterfactual never changes it, so it cannot be edited here." if f.immutable else None
        title = plain(f.label) + (" 🔒" if f.immutable else "") + (" ✎" if f.name in edits else "")
        if f.is_continuous:
            low, high = _limits(f.name)
            if f.integer:
                col.number_input(title, min_value=int(low), max_value=int(high), step=_nice_step(high - low, integer=True),
                                 key=_widget(f.name), disabled=f.immutable, on_change=_edit(f.name), help=help_text,
                                 format="%d")
            else:
                col.number_input(title, min_value=low, max_value=high, step=_nice_step(high - low, integer=False),
                                 key=_widget(f.name), disabled=f.immutable, on_change=_edit(f.name), help=help_text)
        else:
            col.selectbox(title, list(f.categories), key=_widget(f.name), disabled=f.immutable,
                          on_change=_edit(f.name), help=help_text)
if edits:
    changes = ", ".join(
        f"{task.feature(n).label} ({reporting.format_number(task.frame.loc[row, n]) if task.feature(n).is_continuous else task.frame.loc[row, n]}"
        f" → {reporting.format_number(v) if task.feature(n).is_continuous else v})"
        for n, v in edits.items()
    )
    st.markdown(f"**Edited from row {row}:** {plain(changes)}")
    st.button(f"Reset to row {row}'s values", key="w_wi_reset", on_click=_load_row, args=(row,))

# -- the prediction and counterfactuals -----------------------------------------------------------------
try:
    result = cache.what_if(analysis.explainer, analysis.store_id, row, json.dumps(edits, sort_keys=True))
except fc.FlexError as exc:
    st.error(plain(exc))
    st.stop()
original = cache.what_if(analysis.explainer, analysis.store_id, row, "{}") if edits else result

cols = st.columns(3)
points = round(100 * (result.probability - original.probability))
cols[0].metric(
    "P(undesirable)", f"{result.probability:.0%}",
    delta=None if not edits else (f"{points:+d} points from row {row}" if points else f"as row {row}"),
    delta_color="inverse" if points else "off", delta_arrow="auto" if points else "off",
)
cols[1].metric("Prediction", undesirable if result.predicted_undesirable else f"not {undesirable}")
if result.counterfactuals is None:
    cols[2].metric("Minimal counterfactuals", "none needed")
    st.success(plain(f"The model predicts this case not {undesirable}: there is nothing to change, so no "
                     "counterfactual is searched."))
else:
    cols[2].metric("Minimal counterfactuals", f"{result.n_valid} of {analysis.store.n_cf} requested",
                   help="Distinct and valid; fewer than requested means the model offers only so many smallest ways out.")
    table, changed = reporting.counterfactual_table(task, model, result.counterfactuals, result.query_id)
    labels = {"factual": "this case"}
    highlighted_counterfactuals(task, table.rename(index=labels), changed.rename(index=labels), edited=result.edited)
    st.caption(
        "The first line is this case" + (" (edited cells in blue)" if result.edited else "") + "; each further line "
        "is a smallest change the generator found that the model predicts differently, changed cells in yellow. "
        f"Searched in {result.seconds * 1000:,.0f} ms with the session's generator ({analysis.explainer.generator_name}"
        f", N_cf = {analysis.store.n_cf}, seed {analysis.store.seed})"
        + ("; an edited case's counterfactuals are not stored." if result.edited else "; the stored ones of this row.")
    )

# -- to the Regional explorer -----------------------------------------------------------------------------
reason = result.why_not_a_query(undesirable)
if st.button("Explore this case's region", key="w_wi_region", disabled=reason is not None, type="primary"):
    s[S.QUERY] = row
    if s[S.WHERE] is not None and row not in set(fc.importance.rows_meeting(task, [row], s[S.WHERE]).tolist()):
        s[S.WHERE] = None  # the region criterion the explorer had does not hold for this case
    st.switch_page("app_pages/regional.py")
if reason is not None:
    st.caption(plain(reason))
else:
    st.caption(f"Row {row} becomes the Regional explorer's query: its region is it and its nearest factuals.")
