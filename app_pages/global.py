"""Global FLEX: which features the counterfactuals change, over a random sample of factuals."""

import streamlit as st

from ui import reporting
from ui import state as S
from ui.components import (
    generator_check,
    importance_chart,
    retrain_check,
    settings_strip,
    show_table,
    what_must_change,
)
from ui.context import require_analysis, run_or_stop, show_notes
from ui.glossary import term
from ui.lead import lead_reading
from ui.text import plain

st.title("Global feature importance")
analysis = require_analysis()
settings_strip(analysis)
task = analysis.task
result = run_or_stop(analysis.global_result)

lead = lead_reading(result, task)  # the plain reading first, in the data's words and units
if lead:
    st.markdown(f"**{plain(lead)}**")
st.markdown(plain(reporting.describe_global(result, undesirable=(task.undesirable_words,))))
importance_chart(analysis, result, key="global")
numbers = bool(task.continuous_names)  # μ and τ concern numbers only: data without any is not told about them
st.caption(
    f"Left: FLEX's {term('change frequency', 'F_j')}, the share of each case's ways out that change the feature, "
    "averaged over the cases (bar), with its 95% interval (Wilson score, over the cases and their ways out) or ± its "
    "spread across cases (whisker)"
    + (f"; red diamonds show the {term('mean change size', 'μ_j')}, how large the change to a number typically is "
       "as a share of its range. A change to a number only counts above the threshold (set it on the Thresholds "
       "page; now "
       + f"{st.session_state[S.TAU]:g}" + (" with per-feature values" if st.session_state[S.TAU_FEATURES] else "")
       + ")" if numbers else "")
    + ". Right: DiCE's own count, where any change counts, however small. Features marked (fixed) cannot change."
)

st.subheader("What must change")
what_must_change(analysis, result, key="global", cases="the sampled cases")

st.subheader("Does it depend on the generator?")
generator_check(analysis, result)

st.subheader("Does it survive retraining?")
retrain_check(analysis, result)

coverage = analysis.explainer.counterfactuals(result.query_index).coverage()
st.subheader("Generator coverage")
cols = st.columns(4)
cols[0].metric(term("Cases explained", "factuals"), f"{coverage['queries']:,}")
cols[1].metric(term("Different ways out", "distinct counterfactuals"), f"{coverage['counterfactuals_found']:,}",
               help=f"{coverage['counterfactuals_requested']:,} requested; "
                    f"{coverage['distinct_mean']:.1f} per case on average. Copies are merged, and with minimal "
                    "changes a case often has only a few different ways out.")
cols[2].metric("Validity", f"{coverage['validity']:.0%}", help=f"Share of the ways out found that the model really predicts {task.desirable_words}.")
cols[3].metric(term("Cases without a way out", "factuals without any"), f"{coverage['queries_without']:,}")
st.caption(plain(reporting.describe_coverage(coverage) + f" Generator: {result.generator.get('name', '')}."))

show_notes(analysis, *task.notes, *result.notes)

with st.expander("The numbers"):
    show_table(reporting.importance_table(result))
