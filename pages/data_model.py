"""Data & model: a preview, editable feature kinds and immutable features, class balance and test metrics."""

import json

import streamlit as st

import flex_core as fc
from ui import cache
from ui import state as S
from ui.components import number_columns, show_table
from ui.context import load_base_task, require_analysis

st.title("Data & model")
analysis = require_analysis()
task, model = analysis.task, analysis.model
summary = task.summary()

cols = st.columns(4)
cols[0].metric("Rows in the file", f"{summary['rows_in_file']:,}")
cols[1].metric("Rows used", f"{summary['rows_used']:,}")
cols[2].metric("Rows lost to missing values", f"{summary['rows_in_file'] - summary['rows_used']:,}")
cols[3].metric("Features", summary["features"])
if task.description:
    st.caption(task.description)
for note in task.notes:
    st.info(note)

st.subheader("Preview")
st.dataframe(task.frame.head(200), width="stretch", column_config=number_columns(task))
st.caption(f"The first 200 of {len(task.frame):,} rows.")

left, right = st.columns(2)
with left:
    st.subheader("Class balance")
    balance = fc.data.class_balance(task)
    balance["share"] = balance["share"].map(lambda v: fc.report.format_share(v, decimals=1))
    show_table(balance, column_config={"rows": st.column_config.NumberColumn(format="localized")})
with right:
    st.subheader(f"Model: {model.label}")
    metrics = model.metrics
    st.markdown(fc.report.describe_model(metrics, task))
    show_table(fc.report.model_quality_table(metrics))
    st.caption(
        f"Cross-validation: mean over {metrics.get('cv_folds', 0)} folds of the training part "
        f"({metrics['train_rows']:,} rows); held-out test: the part kept aside ({metrics['test_rows']:,} rows). "
        f"Encoding: {model.encoding}."
    )

st.subheader("Features")
st.caption(
    "Change a feature's kind or whether it can change (immutable features are never altered in counterfactuals), "
    "then press Apply. The model is retrained and new counterfactuals are generated for the new setting."
)
edited = st.data_editor(
    fc.data.feature_table(task),
    key="feature_editor",
    hide_index=True,
    width="stretch",
    height="content",  # every feature visible: a fixed height hid the last ones
    disabled=["feature", "values"],
    column_config={
        "kind": st.column_config.SelectboxColumn(options=["categorical", "continuous", "ordinal"], required=True),
        "immutable": st.column_config.CheckboxColumn(),
    },
)
if st.button("Apply feature settings", key="apply_features", type="primary"):
    base = load_base_task(st.session_state[S.DATASET])
    base_kinds = {f.name: f.kind for f in base.features}
    overrides = {
        "kinds": {r.feature: r.kind for r in edited.itertuples() if base_kinds[r.feature] != r.kind},
        "immutable": sorted(r.feature for r in edited.itertuples() if r.immutable),
    }
    try:
        cache.task_with_overrides(base, base.fingerprint, json.dumps(overrides, sort_keys=True))
    except fc.FlexError as exc:
        st.error(f"Those feature settings were not applied: {exc}")
    else:
        S.reset_analysis()
        st.session_state[S.OVERRIDES] = overrides
        st.rerun()
