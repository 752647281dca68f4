"""The Streamlit side of FLEX Studio: session state, caching and the shared sidebar.

``flex_core`` does the computing and builds the figures; this package only holds
what is tied to Streamlit. All caching lives in :mod:`ui.cache`, all Session State
defaults in :func:`ui.state.init_state`.
"""
