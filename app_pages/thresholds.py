"""Thresholds: a global τ and one per continuous feature, updating the charts from stored counterfactuals."""

import streamlit as st

import flex_core as fc
from ui import cache, reporting
from ui import state as S
from ui.components import chart, settings_strip
from ui.context import Analysis, require_analysis, run_or_stop
from ui.glossary import terms_shown
from ui.text import plain

st.title("Thresholds (τ)")
analysis = require_analysis()
task = analysis.task


def _initial(key: str, value: float) -> dict:
    """``value=`` only for a widget not yet in Session State (a callback may have set its value)."""
    return {} if key in st.session_state else {"value": float(value)}


def _set_global_tau() -> None:
    tau = st.session_state["w_tau"]
    st.session_state[S.TAU] = tau
    # Per-feature sliders without their own τ follow the global one.
    for name in task.continuous_names:
        if name not in st.session_state[S.TAU_FEATURES]:
            st.session_state[f"w_tau.{name}"] = tau


def _set_feature_tau(name: str) -> None:
    value = st.session_state[f"w_tau.{name}"]
    per_feature = dict(st.session_state[S.TAU_FEATURES])
    if value == st.session_state[S.TAU]:
        per_feature.pop(name, None)
    else:
        per_feature[name] = value
    st.session_state[S.TAU_FEATURES] = per_feature


def _reset_feature_tau() -> None:
    st.session_state[S.TAU_FEATURES] = {}
    for name in task.continuous_names:
        st.session_state[f"w_tau.{name}"] = st.session_state[S.TAU]


# A τ change reruns only this part: the sidebar and the three fixed-τ panels below do not depend on τ,
# so neither the server nor the browser builds or draws them again (with ten people moving sliders on one
# server, the whole page's rerun is what they wait for).
@st.fragment
def tau_section(analysis: Analysis) -> None:
    settings_strip(analysis)
    st.markdown(
        "A change to a number only counts as a change when it is larger than **τ × the feature's range** "
        "(τ = 0.1: a tenth of the range). Moving a slider recomputes the importances from the ways out "
        "already found; nothing is searched again."
    )
    if not task.continuous_names:
        st.info("This dataset has no continuous feature, so τ changes nothing here.")
    st.slider("Global τ (all continuous features)", 0.0, 1.0, step=0.01, key="w_tau", on_change=_set_global_tau,
              **_initial("w_tau", st.session_state[S.TAU]))
    if task.continuous_names:
        with st.expander("Per-feature τ", expanded=bool(st.session_state[S.TAU_FEATURES])):
            for name in task.continuous_names:
                current = st.session_state[S.TAU_FEATURES].get(name, st.session_state[S.TAU])
                st.slider(plain(task.feature(name).label), 0.0, 1.0, step=0.01, key=f"w_tau.{name}",
                          on_change=_set_feature_tau, args=(name,), **_initial(f"w_tau.{name}", current))
            st.button("Use the global τ for every feature", key="reset_feature_tau", on_click=_reset_feature_tau)

    result = run_or_stop(analysis.global_result)
    chart(fc.plotting.importance_figure(result, title="Global importance at the current τ", terms=terms_shown()),
          analysis, key="tau_chart")
    all_zero = reporting.describe_all_zero(result)
    if all_zero:
        st.warning(plain(all_zero))
    st.caption(plain(reporting.describe_global(result, undesirable=(task.undesirable_words,))))

    if task.continuous_names:
        st.subheader("τ sweep")
        sweep = analysis.tau_sweep()
        chart(analysis.tau_sweep_chart(float(st.session_state[S.TAU]), terms=terms_shown()), analysis, key="tau_sweep")
        st.caption(plain(reporting.describe_tau_sweep(sweep)))
    # A fragment's rerun skips app.py, which writes the view into the address bar after a full run.
    S.sync_query_params()


tau_section(analysis)
if task.continuous_names:
    st.subheader("The paper's panels: τ = 0.1, 0.5, 0.9")
    chart(cache.tau_panels_figure(analysis.explainer, analysis.store_id, analysis.n_factuals, terms_shown()), analysis,
          key="tau_panels",
          tau=False)
    st.caption(
        "The same ways out read with three thresholds: categorical features do not depend on the threshold; "
        "a number whose bar shrinks quickly is usually changed only a little."
    )
