"""The Streamlit side of FLEX Studio: session state, caching and the shared sidebar, and the dashboard's own helpers.

``flex_core`` does the computing and builds the result figures; this package holds what is tied to
Streamlit (all caching lives in :mod:`ui.cache`, all Session State defaults in :func:`ui.state.init_state`)
and the pure helpers only the dashboard uses: the readings, tables and HTML report (:mod:`ui.reporting`),
the factual map (:mod:`ui.factual_map`) and how long SHAP and LIME will take (:mod:`ui.estimates`).
"""
