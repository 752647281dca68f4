"""Cached SHAP and LIME runs for the Compare page (they are slow: they run only when asked, once per input).

Same convention as :mod:`ui.cache`: arguments starting with ``_`` are not hashed and
come with a hashable identity argument that decides the cache entry.
"""

from __future__ import annotations

import streamlit as st

import flex_core as fc


@st.cache_data(show_spinner="Running SHAP on the same factuals as FLEX…", max_entries=16)
def shap_result(_task: fc.TaskSpec, _model: fc.FittedModel, model_identity: str, rows: tuple[int, ...], seed: int) -> fc.ShapImportance:
    return fc.shap_importance(_model, _task, list(rows), seed=seed)


@st.cache_data(show_spinner="Running LIME on the region's factuals…", max_entries=64)
def lime_result(
    _task: fc.TaskSpec, _model: fc.FittedModel, model_identity: str, rows: tuple[int, ...], num_samples: int, seed: int
) -> fc.LimeImportance:
    return fc.lime_importance(_model, _task, list(rows), num_samples=num_samples, seed=seed)
