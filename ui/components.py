"""Page sections used on more than one page (layout only; the work is in flex_core and ui.cache)."""

from __future__ import annotations

import streamlit as st

import flex_core as fc
from ui import cache
from ui import state as S
from ui.context import Analysis, run_or_stop


def lime_beside_flex(analysis: Analysis, regional: fc.RegionalResult, *, key: str) -> None:
    """The region's FLEX next to LIME (the paper's Fig. 3); LIME runs only when asked, then is cached."""
    samples = st.select_slider(
        "LIME samples per factual", options=[500, 1000, 2000, 5000], value=5000, key=f"{key}_lime_samples"
    )
    request = [analysis.model_id, [int(m) for m in regional.members], int(samples)]
    if st.session_state[S.LIME_REQUEST] != request:
        if st.button(f"Run LIME on the region's {len(regional.members)} factuals", key=f"{key}_run_lime"):
            st.session_state[S.LIME_REQUEST] = request
            st.rerun()
        st.caption("LIME fits a local linear model around each factual; it takes a few seconds per factual.")
        return
    seed = int(st.session_state[S.SEED])
    lime = run_or_stop(
        cache.lime_result, analysis.task, analysis.model, analysis.model_id, tuple(request[1]), int(samples), seed
    )
    st.plotly_chart(fc.plotting.regional_lime_figure(regional, lime), key=f"{key}_lime_chart", width="stretch",
                    config={"displaylogo": False})
    st.caption(
        "FLEX: share of the region's counterfactuals that change the feature (± spread over the region's factuals). "
        "LIME: mean |weight| over the same factuals, divided by its largest value (as the paper's Fig. 3). "
        "Where they disagree, LIME measures local sensitivity of the score, FLEX what it takes to flip the decision."
    )
