"""The cached refits of the Global page's "Does it survive retraining?" box.

Kept apart from ``ui/cache.py`` (being reworked elsewhere): one cached call, for the lead to move there.
"""

from __future__ import annotations

import streamlit as st

import flex_core as fc


@st.cache_data(show_spinner=False, max_entries=4)
def retrain_stability(_explainer: fc.FlexExplainer, identity: str, rows: tuple[int, ...], k: int, tau,
                      _progress=None) -> dict:
    """F, the stable verdicts and the counterfactuals' validity under ``k`` refits, over these factuals
    (``identity``: the store's; ``_progress(done, total)`` is called as refits and their runs finish)."""
    store = _explainer.store
    result = fc.importance.flex_importance(store.ensure(list(rows)), store.task, tau=tau, ranges=store.ranges)
    return _explainer.survives_retraining(result, k, tau=tau, progress=_progress)
