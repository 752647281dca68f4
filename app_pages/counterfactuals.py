"""Counterfactuals: for any factual, its counterfactuals with the changed cells highlighted."""

import streamlit as st

from ui import reporting
from ui import state as S
from ui.components import labelled, settings_strip
from ui.context import require_analysis, run_or_stop
from ui.text import plain

st.title("Counterfactuals of one case")
analysis = require_analysis()
settings_strip(analysis)
task = analysis.task
pool = [int(r) for r in analysis.pool]
if not pool:
    st.error("The model predicts no case as undesirable, so there is nothing to explain. Try another model.")
    st.stop()

default = st.session_state[S.CF_ROW] or st.session_state[S.QUERY] or pool[0]
default = default if default in pool else pool[0]
stored = set(pool) - set(analysis.explainer.not_generated(pool))
row = st.selectbox(
    "Case (row of the data predicted undesirable)", pool, index=pool.index(default), key="w_cf_row",
    on_change=S.bind("w_cf_row", S.CF_ROW),
    format_func=lambda r: f"row {r}" + ("" if r in stored else " (counterfactuals not generated yet)"),
)
analysis.ensure([row], what="case")
table, changed = run_or_stop(reporting.counterfactual_table, task, analysis.model, analysis.explainer.counterfactuals([row]), row)
table, changed = labelled(table, task), labelled(changed, task)  # labels, as in the charts

before = table["P(undesirable)"].iloc[0]
valid = table["valid"].iloc[1:]
after = table["P(undesirable)"].iloc[1:][valid]
cols = st.columns(3)
cols[0].metric("P(undesirable) now", f"{before:.0%}")
cols[1].metric("Distinct counterfactuals", f"{int(valid.sum())} of {analysis.explainer.n_cf} requested",
               help="Each one is valid and different from the others. With minimal changes, fewer than "
                    "requested means no more were found: the model offers only so many smallest ways out.")
cols[2].metric("P(undesirable) after (mean)", "n/a" if after.empty else f"{after.mean():.0%}")


def _highlight(frame):
    return changed.reindex(index=frame.index, columns=frame.columns, fill_value=False).replace(
        {True: "background-color: #fde68a; font-weight: 600", False: ""}
    )


# Numbers as people write them (8,200,000; 0.4512): a Styler otherwise prints six decimals or 2.15e+07.
number_formats = {f.label: reporting.format_number for f in task.features if f.is_continuous}
# Sized to its rows: a fixed height hid the last counterfactuals.
st.dataframe(table.style.apply(_highlight, axis=None).format({**number_formats, "P(undesirable)": "{:.2f}"}),
             width="stretch", height="content")
st.caption(
    "The first line is the case as it is; each further line is an alternative the generator found that the model "
    "predicts differently. Highlighted cells are the changes. 'valid' means the model really predicts the "
    "desirable outcome for that alternative. Each alternative is listed once: copies are merged, so every "
    "count on these pages is over distinct alternatives."
)
changes = changed.iloc[1:].sum().sort_values(ascending=False)
changes = changes[changes > 0]
if len(changes):
    st.markdown("**Changed most often for this case:** " + ", ".join(
        f"{plain(label)} ({c}×)" for label, c in changes.items()))
