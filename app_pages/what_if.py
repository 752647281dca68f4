"""What-if editor: start from a row, edit its values within the data's ranges and levels, and see the
prediction and the case's minimal counterfactuals at once; an unedited factual goes to the Regional explorer.

A page of its own, not a part of Counterfactuals: that page shows the stored counterfactuals of the
data's factuals, while this one holds an edited case that is not a row of the data (its own state, its
own link).
"""


import streamlit as st

import flex_core as fc
from ui import cache, regression, reporting
from ui import state as S
from ui import what_if as editor
from ui.case import generator_says
from ui.components import highlighted_counterfactuals, settings_strip
from ui.context import require_analysis
from ui.glossary import term, terms_shown
from ui.text import plain

#: Beyond this many rows the case is chosen by typing its row number (a list that long is slow to send).
LISTED_ROWS = 5_000

st.title("What-if editor")
analysis = require_analysis()
settings_strip(analysis)
task, model = analysis.task, analysis.model
undesirable = task.undesirable_words
rows = task.frame.index.to_numpy()
factuals = set(int(r) for r in analysis.pool)
s = st.session_state

# -- the row the case starts from, and the edits the feature settings still allow ------------------------
row = editor.start_row(task, factuals)
editor.restore_edits(analysis.explainer, row)

left, right = st.columns([2, 3])
label = "Start from row"
if len(rows) <= LISTED_ROWS:
    left.selectbox(label, [int(r) for r in rows], index=[int(r) for r in rows].index(int(row)), key=editor.ROW_WIDGET,
                   on_change=editor.pick_row, args=(task,),
                   format_func=lambda r: f"row {r}" + (f" (predicted {undesirable})" if r in factuals else ""))
else:
    s.setdefault(editor.ROW_WIDGET, row)
    left.number_input(label, min_value=int(rows.min()), max_value=int(rows.max()), step=1, key=editor.ROW_WIDGET,
                      on_change=editor.pick_row, args=(task,), help="A row number of the data (rows dropped for missing values are not).")
right.caption(plain(
    "Change any value below: the model's prediction and this case's smallest ways out (the smallest changes that make "
    f"the model predict {task.desirable_words}) follow at once. Numbers stay within the data's range, categories "
    "within its levels; immutable features are shown but cannot be edited."
))

# -- the editor ---------------------------------------------------------------------------------------
edits = s[S.WHATIF_EDITS]
with st.container(border=True):
    for j, f in enumerate(task.features):
        if j % 4 == 0:  # one row of four boxes at a time, so a value shown beneath a box keeps the rows in line
            columns = st.columns(4)
        col = columns[j % 4]
        help_text = "Immutable: a way out never changes it, so it cannot be edited here." if f.immutable else None
        title = plain(reporting.header(f)) + (" 🔒" if f.immutable else "") + (" ✎" if f.name in edits else "")
        if f.is_continuous:
            low, high = analysis.explainer.feature_range(f.name)
            if f.integer:
                col.number_input(title, min_value=int(low), max_value=int(high), step=editor.nice_step(high - low, integer=True),
                                 key=editor.widget(f.name), disabled=f.immutable, on_change=editor.edit(task, f.name), help=help_text,
                                 format="%d")
            else:
                col.number_input(title, min_value=low, max_value=high, step=editor.nice_step(high - low, integer=False),
                                 key=editor.widget(f.name), disabled=f.immutable, on_change=editor.edit(task, f.name), help=help_text)
            grouped = editor.grouped_value(f, low, high)
            if grouped is not None:
                col.caption(plain(grouped))
        else:
            col.selectbox(title, list(f.categories), key=editor.widget(f.name), disabled=f.immutable,
                          on_change=editor.edit(task, f.name), help=help_text, format_func=f.level_label)
if edits:
    changes = ", ".join(
        f"{task.feature(n).label} ({task.feature(n).format_value(task.frame.loc[row, n])} → {task.feature(n).format_value(v)})"
        for n, v in edits.items()
    )
    st.markdown(f"**Edited from row {row}:** {plain(changes)}")
    st.button(f"Reset to row {row}'s values", key="w_wi_reset", on_click=editor.load_row, args=(task, row))

# -- the prediction and counterfactuals -----------------------------------------------------------------
try:
    result = cache.what_if(analysis.explainer, analysis.store_id, row, edits)
except fc.FlexError as exc:
    st.error(plain(exc))
    st.stop()
original = cache.what_if(analysis.explainer, analysis.store_id, row, {}) if edits else result

cols = st.columns(3)
points = round(100 * (result.probability - original.probability))
if task.band is not None:  # a regressor: the predicted number, and whether it is in the band
    regression.what_if_metrics(cols, task, model, result, original, row)
else:
    cols[0].metric(
        reporting.probability_label(task), f"{result.probability:.0%}",
        delta=None if not edits else (f"{points:+d} points from row {row}" if points else f"as row {row}"),
        delta_color="inverse" if points else "off", delta_arrow="auto" if points else "off",
    )
    cols[1].metric("Prediction", undesirable if result.predicted_undesirable else task.desirable_words)
if result.counterfactuals is None:
    cols[2].metric(term("Smallest ways out", "minimal counterfactuals"), "none needed")
    st.success(plain(f"The model predicts this case {task.desirable_words}, not {undesirable}: there is nothing to change, so no "
                     "way out is searched."))
else:
    cols[2].metric(term("Smallest ways out", "minimal counterfactuals"), f"{result.n_valid} of {analysis.explainer.n_cf} requested",
                   help="Distinct and valid; fewer than requested means the model offers only so many smallest ways out.")
    table, changed = reporting.counterfactual_table(task, model, result.counterfactuals, result.query_id)
    for sentence in generator_says(result.counterfactuals, result.query_id, analysis.explainer.n_cf):
        st.caption(sentence)
    highlighted_counterfactuals(task, table, changed, edited=result.edited)
    st.caption(
        "The first line is this case" + (" (edited cells in blue)" if result.edited else "") + "; each further line "
        "is a smallest change the generator found that the model predicts differently, changed cells in yellow; "
        "the features that change come first, then the prediction, then the others. "
        f"Found in {result.seconds * 1000:,.0f} ms as on the other pages ("
        + reporting.generator_text(analysis.explainer.generator_used, analysis.explainer.refine_mode, words=not terms_shown())
        + f", up to {reporting.plural(analysis.explainer.n_cf, 'way')} out, seed {analysis.explainer.seed})"
        + ("; an edited case's ways out are not stored." if result.edited else "; the stored ones of this row.")
    )

# -- to the Regional explorer -----------------------------------------------------------------------------
reason = result.why_not_a_query(undesirable)
if st.button("Explore this case's region", key="w_wi_region", disabled=reason is not None, type="primary"):
    s[S.QUERY] = row
    if s[S.WHERE] is not None and not len(analysis.explainer.factuals_meeting(s[S.WHERE], [row])):
        s[S.WHERE] = None  # the region criterion the explorer had does not hold for this case
    st.switch_page("app_pages/regional.py")
if reason is not None:
    st.caption(plain(reason))
else:
    st.caption(f"Row {row} becomes the Regional explorer's query: its region is it and its nearest cases.")
