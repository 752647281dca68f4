"""Report: every table as CSV, a self-contained HTML report, and a link that reproduces this view."""

import streamlit as st

from ui import report, reporting, url_state
from ui import state as S
from ui.components import safe_csv, settings_strip, settings_text
from ui.context import require_analysis, run_or_stop
from ui.text import plain

st.title("Report")
analysis = require_analysis()
settings_strip(analysis)
task = analysis.task
global_result = run_or_stop(analysis.global_result)
query, k, where = st.session_state[S.QUERY], int(st.session_state[S.K]), st.session_state[S.WHERE]
rule = st.session_state[S.RULE]
if rule:  # the Regional explorer shows a rule-defined region
    regional = run_or_stop(analysis.rule_region, rule)
else:
    regional = run_or_stop(analysis.regional_result, query, k, where) if query is not None else None
saved = {r["name"]: run_or_stop(analysis.saved_region, r) for r in st.session_state[S.SAVED_REGIONS]}
sweep = analysis.tau_sweep() if task.continuous_names else None

# -- the link ------------------------------------------------------------------------------------
st.subheader("Link to this view")
view = S.current_view()
# The link opens the app's main page (the Global view): the view in its parameters carries the rest.
page_url = (st.context.url or "").split("?")[0]
link = url_state.view_link(page_url.rsplit("/", 1)[0] + "/", view)
st.code(link, language=None)
if S.dataset_spec(st.session_state[S.DATASET]) is None:
    st.warning("This dataset was uploaded, and a link cannot carry a file: the link opens the default dataset "
               "with the same settings. Load the file from a path to make the link complete.")
if st.session_state[S.MODEL_FILE] is not None:
    st.warning("The model was loaded from a file, and a link cannot carry a file: the link opens the view with a "
               "model trained in the app. Save a project folder (FlexExplainer.save) and open it with --project to "
               "share the model too.")

# -- tables as CSV -------------------------------------------------------------------------------
st.subheader("Tables (CSV)")
tables = {
    "global_importance.csv": global_result.to_frame(),
    "local_frequencies.csv": global_result.local_frame(),
    "counterfactuals.csv": analysis.explainer.counterfactuals(global_result.query_index).to_frame(task),
    "features.csv": reporting.feature_table(task),
    "class_balance.csv": reporting.class_balance(task),
}
if sweep is not None:
    tables["tau_sweep.csv"] = sweep
if regional is not None:
    tables["regional_importance.csv"] = regional.to_frame()
    tables["mode_shift.csv"] = regional.mode_shift_frame()
if st.session_state[S.REGION_SEARCH] is not None:
    tables["regions_that_differ.csv"] = run_or_stop(analysis.found_regions, st.session_state[S.REGION_SEARCH]).to_frame()
if st.session_state[S.GROUPS_BY] is not None:
    tables["groups.csv"] = run_or_stop(analysis.compared_groups, st.session_state[S.GROUPS_BY]).to_frame()
for name, reg in saved.items():
    tables[f"saved_region_{name}.csv".replace(" ", "_").replace("/", "-")] = reg.to_frame()
cols = st.columns(3)
for i, (name, frame) in enumerate(tables.items()):
    csv = safe_csv(frame, analysis, index=name == "local_frequencies.csv")
    cols[i % 3].download_button(name, csv, file_name=name,
                                mime="text/csv", key=f"csv.{name}")

# -- the HTML reports ---------------------------------------------------------------------------
built_from = {"view": S.numbers_view(view, task), "data": task.fingerprint}


def offer(html: str | None, made_from: dict | None, *, label: str, file_name: str, key: str) -> None:
    """A download of a report built earlier, only while its numbers still match the page."""
    if not html:
        return
    if (made_from or {}) == built_from:
        st.download_button(label, html, file_name=file_name, mime="text/html", key=key)
    else:  # never offer a file whose numbers no longer match the page
        changes = S.view_changes((made_from or {}).get("view", {}), built_from["view"]) or ["the data"]
        st.warning(plain("The report built earlier is out of date; settings changed since (" + "; ".join(changes)
                         + "). Build it again to download it."))


st.subheader("Interactive report for domain experts")
st.caption(
    "One HTML file that opens offline in any browser, with no server and no network: the reader moves τ (global and "
    "per number) and the charts, regions and tables redraw with the app's numbers; picks a region (the one shown, the "
    "saved ones and any the Regional explorer found); finds a case by row id or value and browses its "
    "ways out, changed cells marked; and reads the settings, the model's quality and every note. A snapshot: "
    "it says when it was built and from which data."
)
if st.button("Build the interactive report", key="build_snapshot", type="primary"):
    st.session_state[S.REPORT_SNAPSHOT] = {
        "html": run_or_stop(report.interactive_report, analysis, regional, saved, link), "view": built_from}
snapshot = st.session_state[S.REPORT_SNAPSHOT] or {}
offer(snapshot.get("html"), snapshot.get("view"), label="Download interactive_report.html",
      file_name="flex_interactive_report.html", key="download_snapshot")

st.subheader("Print-friendly HTML report")
results = run_or_stop(report.session_results, analysis, global_result, regional, saved)
sections = reporting.session_sections(results, settings=settings_text(analysis))
st.caption(
    "One file that opens offline in any browser and prints to PDF one section per page. It holds every result of "
    "this session, each with a plain-language reading: " + "; ".join(section.title for section in sections) + ". "
    "Run SHAP or LIME on the Compare page, or save regions, to add them."
)
if st.button("Build the print-friendly report", key="build_report"):
    st.session_state[S.REPORT_HTML] = reporting.build_html_report(
        sections, title=f"FLEX Studio report: {task.name}", meta=report.report_settings(analysis, link),
        intro=reporting.HOW_TO_READ,
    )
    st.session_state[S.REPORT_VIEW] = built_from
offer(st.session_state[S.REPORT_HTML], st.session_state[S.REPORT_VIEW], label="Download report.html",
      file_name="flex_report.html", key="download_report")
for section in sections:
    with st.expander(section.title):
        st.markdown(plain(section.reading))
