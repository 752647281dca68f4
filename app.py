"""FLEX Studio: the router and the shared sidebar. Run with ``streamlit run app.py``."""

import sys

import streamlit as st

from ui import paths, state
from ui.auth import require_login
from ui.components import load_chart_code
from ui.sidebar import render_sidebar

# `streamlit run app.py -- --project DIR` opens a folder written by FlexExplainer.save(DIR).
st.set_page_config(page_title="FLEX Studio", page_icon=":material/insights:", layout="wide")
require_login()  # a hosted app with an [auth] section in its secrets: nothing below runs before sign-in
state.init_state(st.query_params.to_dict(), project=paths.project_argument(sys.argv[1:]))

# The page scripts live in app_pages/, not pages/: Streamlit treats a folder named pages/ beside the entry
# script as its legacy page list until the first st.navigation call, so a fresh server's first request
# listed the files in the sidebar (running one without this router) and said "Page not found" for any
# address but the root. The addresses (url_path) are the ones links have always carried.
pages = [
    st.Page("app_pages/data_model.py", title="Data & model", icon=":material/table_chart:", url_path="data-and-model"),
    global_page := st.Page("app_pages/global.py", title="Global", icon=":material/bar_chart:", url_path="global-view", default=True),
    st.Page("app_pages/regional.py", title="Regional explorer", icon=":material/scatter_plot:", url_path="regional-explorer"),
    st.Page("app_pages/thresholds.py", title="Thresholds", icon=":material/tune:", url_path="tau-thresholds"),
    st.Page("app_pages/counterfactuals.py", title="Counterfactuals", icon=":material/compare_arrows:", url_path="counterfactual-tables"),
    st.Page("app_pages/what_if.py", title="What-if", icon=":material/edit_note:", url_path="what-if-editor"),
    st.Page("app_pages/compare.py", title="Compare", icon=":material/balance:", url_path="compare-methods"),
    st.Page("app_pages/report.py", title="Report", icon=":material/description:", url_path="session-report"),
    st.Page("app_pages/glossary.py", title="Glossary", icon=":material/menu_book:", url_path="glossary"),
]


def _to_global() -> None:
    """/global-importance, the Global page's address in older links, opens it (view included)."""
    st.switch_page(global_page, query_params=st.query_params.to_dict())


# The default page is served at "/" only (Streamlit drops its url_path), so the old address needs a page of its own.
old_global = st.Page(_to_global, title="Global", url_path="global-importance", visibility="hidden")
page = st.navigation([*pages, old_global])
if page.url_path == old_global.url_path:
    page.run()  # forwards at once: the sidebar's analysis is computed on the Global page, not twice
load_chart_code()
try:
    render_sidebar()
    page.run()
finally:  # also when a page stops early: the address bar always holds the view, so F5 restores it
    state.sync_query_params()
