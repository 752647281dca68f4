"""Page sections used on more than one page (layout only; the work is in flex_core and ui.cache)."""

from __future__ import annotations

from functools import partial

import plotly.graph_objects as go
import streamlit as st

import flex_core as fc
from ui import cache, reporting
from ui import state as S
from ui.context import Analysis, run_or_stop
from ui.glossary import terms_shown
from ui.text import plain

#: Tables up to this many rows are shown whole; longer ones scroll and say how many rows they hold.
WHOLE_TABLE_ROWS = 25


def settings_text(analysis: Analysis, *, tau: bool = True) -> str:
    """The settings strip's words (:func:`flex_core.report.describe_settings`) for the current analysis.

    Read from the analysis and the sidebar, so a page that computes no FLEX result still names them.
    ``tau=False`` leaves τ out, for what does not depend on it. N_F, N_cf and τ are said in words unless the
    reader asked for the analyst's terms."""
    return reporting.describe_settings(words=not terms_shown(), settings={
        "dataset": reporting.dataset_label(analysis.task),
        "model": analysis.model.name if analysis.model.trained_here else analysis.model.label,
        "encoding": analysis.model.encoding,
        "generator": analysis.explainer.generator_used,  # the one that ran: tree hands a model it cannot read to batch
        "refine": analysis.explainer.refine_mode,
        "n_factuals": analysis.n_factuals,
        "n_cf": analysis.explainer.n_cf,
        "seed": analysis.explainer.seed,
        "tau": analysis.tau if tau and analysis.task.continuous_names else None,
    })


def settings_strip(analysis: Analysis) -> None:
    """One line under the page title naming what the numbers on the page depend on."""
    st.caption(f":material/tune: **Settings:** {plain(settings_text(analysis))}")


def chart(fig: go.Figure, analysis: Analysis, *, key: str, container=None, tau: bool = True, **kwargs):
    """A Plotly chart whose subtitle names the settings (so a PNG saved from its toolbar says them too).

    ``tau=False`` for a chart that does not depend on the current τ (model quality, the paper's three fixed
    τ panels): its subtitle does not name a τ it was not drawn with, and a τ change leaves the chart as it is,
    so the browser does not draw it again.
    """
    # with_settings draws on a copy (cached figures stay as they are), not validated again: validating the map's
    # copy cost 60 ms a rerun.
    fig = fc.plotting.with_settings(fig, settings_text(analysis, tau=tau))
    return (container or st).plotly_chart(fig, key=key, width="stretch", config={"displaylogo": False}, **kwargs)


#: The key of the hidden chart :func:`load_chart_code` draws (Streamlit gives its container the class st-key-KEY).
CHART_CODE_KEY = "chart_code_loader"


def load_chart_code() -> None:
    """Draw an empty, hidden Plotly chart, so the browser loads Plotly's code while the first run computes.

    The browser fetches and compiles Plotly only when a page first shows a chart: on a session's first
    page the Global chart's box stayed empty for about two seconds after its text had appeared, though the
    server sent both within 0.1 s. Drawn before the sidebar computes the analysis, the hidden chart
    overlaps that load with the computation.
    """
    with st.container(key=CHART_CODE_KEY):  # the style hides its own container: no gap above the page
        st.html(f"<style>.st-key-{CHART_CODE_KEY} {{display: none;}}</style>")
        st.plotly_chart(go.Figure(), key=f"{CHART_CODE_KEY}_chart", config={"staticPlot": True})


def safe_csv(frame, analysis: Analysis, **kwargs) -> str:
    """:func:`flex_core.data.to_safe_csv` with a first metadata line naming the settings."""
    text = fc.data.to_safe_csv(frame, settings=settings_text(analysis), **kwargs)
    if text is None:  # to_safe_csv returns None only when it wrote to a path
        raise TypeError("safe_csv returns the CSV as text: pass no path.")
    return text


def number_columns(task: fc.TaskSpec, extra: dict | None = None) -> dict:
    """Column settings that print the task's numbers with thousands separators (8,200,000, not 8200000).

    Keyed by header: tables show features by their labels with the unit (:func:`labelled`)."""
    config = {reporting.header(f): st.column_config.NumberColumn(format="localized") for f in task.features
              if f.is_continuous}
    return {**config, **(extra or {})}


def labelled(frame, task: fc.TaskSpec):
    """``frame`` with feature columns named by their labels and units ("Dependants (people)", not
    ``no_of_dependents``; :func:`ui.reporting.header`) and the levels of a feature in the data dictionary's words
    ("under 1 year", not "Below 1yr"); numbers stay numbers."""
    worded = frame.copy()
    for f in task.features:
        if not f.is_continuous and f.name in worded.columns and f.words.levels:
            worded[f.name] = worded[f.name].map(f.level_label)
    return worded.rename(columns={f.name: reporting.header(f) for f in task.features})


def pinned_first(frame, *, hide_index: bool = True, column_config: dict | None = None) -> dict:
    """``column_config`` with the table's first column (the row labels, or the first column when they are hidden)
    pinned: a table wider than its place scrolls sideways with the names of its lines in view."""
    config = dict(column_config or {})
    key = frame.columns[0] if hide_index and len(frame.columns) else "_index"
    base = config.get(key)
    if isinstance(base, dict):
        config[key] = {**base, "pinned": True}
    else:  # nothing set, or only a label
        config[key] = st.column_config.Column(base, pinned=True)
    return config


def show_table(frame, *, hide_index: bool = True, column_config: dict | None = None, **kwargs) -> None:
    """A table sized to its rows, so none hides behind a fixed height; a long one says how many rows it has.
    Its first column is pinned (:func:`pinned_first`)."""
    kwargs["column_config"] = pinned_first(frame, hide_index=hide_index, column_config=column_config)
    if len(frame) <= WHOLE_TABLE_ROWS:
        st.dataframe(frame, hide_index=hide_index, width="stretch", height="content", **kwargs)
    else:
        st.dataframe(frame, hide_index=hide_index, width="stretch", **kwargs)
        st.caption(f"{len(frame):,} rows: scroll the table to see them all.")


def lime_beside_flex(analysis: Analysis, regional: fc.RegionalResult, *, key: str) -> None:
    """The region's FLEX next to LIME (the paper's Fig. 3); LIME runs only when asked, then is cached."""
    samples = st.select_slider(
        "LIME samples per case", options=[500, 1000, 2000, 5000], value=5000, key=f"{key}_lime_samples"
    )
    members = tuple(int(m) for m in regional.members)
    request = [analysis.model_id, list(members), int(samples)]
    seed = int(st.session_state[S.SEED])
    if st.session_state[S.LIME_REQUEST] != request:
        if st.button(f"Run LIME on the region's {reporting.plural(len(regional.members), 'case')}", key=f"{key}_run_lime"):
            st.session_state[S.LIME_REQUEST] = request
            st.rerun()
        estimate = run_or_stop(cache.lime_estimate, analysis.task, analysis.model, analysis.model_id,
                               members, int(samples), seed)
        st.caption(f"LIME fits a local linear model around each case. It will take {estimate}.")
        return
    lime = run_or_stop(cache.lime_with_progress, analysis.explainer, analysis.model_id, members, int(samples))
    chart(fc.plotting.regional_lime_figure(regional, lime, terms=terms_shown()), analysis, key=f"{key}_lime_chart")
    all_zero = reporting.describe_all_zero(regional)
    if all_zero:
        st.warning(plain(all_zero))
    st.caption(
        "FLEX: share of the region's ways out that change the feature (whisker: its 95% interval given how few "
        "cases the region holds). "
        "LIME: mean |weight| over the same cases, divided by its largest value (as the paper's Fig. 3). "
        "Where they disagree, LIME measures local sensitivity of the score, FLEX what it takes to flip the decision."
    )


def importance_chart(analysis: Analysis, result: fc.FlexResult, *, key: str, dice: bool = True) -> None:
    """The F_j bar chart with two view toggles: count only necessary changes; interval or ± std whiskers."""
    left, right = st.columns(2)
    left.toggle("Count only necessary changes", key=f"{key}_necessary_only", value=st.session_state[S.NECESSARY_ONLY],
                on_change=S.bind(f"{key}_necessary_only", S.NECESSARY_ONLY),
                help="A change is necessary when undoing it alone makes the way out lose the desired outcome.")
    right.radio("Whiskers", ["interval", "std"], key=f"{key}_whiskers", horizontal=True,
                index=["interval", "std"].index(st.session_state[S.WHISKERS]),
                on_change=S.bind(f"{key}_whiskers", S.WHISKERS),
                format_func={"interval": "95% interval", "std": "± std across cases"}.get)
    shown = result.only_necessary() if st.session_state[S.NECESSARY_ONLY] else result
    chart(fc.plotting.importance_figure(shown, dice=dice, whiskers=st.session_state[S.WHISKERS], terms=terms_shown()),
          analysis,
          key=f"{key}_chart")
    all_zero = reporting.describe_all_zero(shown)
    if all_zero:
        st.warning(plain(all_zero))


def what_must_change(analysis: Analysis, result: fc.FlexResult, *, key: str, cases: str = "these cases") -> None:
    """F and necessary F, and, when asked, the shares of cases a feature flips alone and that need it."""
    rows = tuple(int(r) for r in result.query_index)
    request = [analysis.store_id, list(rows)]
    if request in st.session_state[S.SUFFICIENCY_REQUESTS]:
        scores = run_or_stop(analysis.necessity_sufficiency, rows)
        result = fc.importance.with_necessity_sufficiency(result, scores)
        st.markdown(plain(reporting.describe_what_must_change(result, cases=cases)))
        st.caption(plain(f"Searched with {scores.budget['generator']}: {scores.generator_runs:,} generator runs over "
                         f"{reporting.plural(len(rows), 'case')}, {reporting.format_duration(scores.seconds)} (they do "
                         "not depend on τ). \"Needed\" means no way out was found within that search. Intervals: 95% "
                         "Wilson, over the cases."))
    else:
        features = len(analysis.explainer.varying_features)
        if st.button(f"Which features flip the outcome alone, and which are needed? ({2 * features} generator runs)",
                     key=f"{key}_sufficiency"):
            st.session_state[S.SUFFICIENCY_REQUESTS] = [*st.session_state[S.SUFFICIENCY_REQUESTS], request]
            st.rerun()
    chart(fc.plotting.what_must_change_figure(result, terms=terms_shown()), analysis, key=f"{key}_must_change_chart")
    # Full width: with the two shares and the two ratios the table has eight columns.
    must = reporting.what_must_change_frame(result, terms=terms_shown())
    st.dataframe(must, hide_index=True, width="stretch", height="content", column_config=pinned_first(must))
    with st.expander("How to read these numbers"):
        st.markdown("\n".join(f"- {sentence}" for sentence in reporting.what_must_change_reading(terms=terms_shown())))


def generator_check(analysis: Analysis, result: fc.FlexResult) -> None:
    """The same cases rerun with another generator on request: each one's F with its interval, and what differs."""
    own = analysis.explainer.generator_name
    others = [name for name in fc.counterfactuals.GENERATORS if name != own]
    rows = tuple(int(r) for r in result.query_index)
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    other = left.selectbox("Rerun these cases with", others, key="w_generator_check",
                           help="Every other setting stays; the other generator uses its own default size of changes.")
    if right.button("Compare", key="global_compare_generators"):
        st.session_state[S.GENERATOR_CHECK] = [analysis.store_id, list(rows), other]
    request = st.session_state[S.GENERATOR_CHECK]
    if request is None or request[:2] != [analysis.store_id, list(rows)]:
        st.caption(f"FLEX measures the generator as much as the model: rerunning the {len(rows):,} cases with "
                   "another one shows which findings hold either way.")
        return
    sensitivity = run_or_stop(analysis.generator_sensitivity, rows, (request[2],), analysis.tau)
    st.markdown(plain(reporting.describe_generator_sensitivity(sensitivity)))
    show_table(reporting.generator_sensitivity_table(sensitivity))


def retrain_check(analysis: Analysis, result: fc.FlexResult) -> None:
    """The model refitted K times on request: F's range, a stable verdict per feature, validity per refit."""
    rows = tuple(int(r) for r in result.query_index)
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    k = left.number_input("Refits", min_value=1, max_value=analysis.explainer.max_refits, value=3, step=1,
                          key="w_retrain_k", help="Each refit trains the same kind of model on a bootstrap of the "
                          "training rows with another seed, then reruns these cases.")
    if right.button("Refit", key="global_retrain"):
        st.session_state[S.RETRAIN_CHECK] = [analysis.store_id, list(rows), int(k)]
    request = st.session_state[S.RETRAIN_CHECK]
    if request is None or request[:2] != [analysis.store_id, list(rows)]:
        st.caption(f"One fitted model allows trade-offs another fit of the same data does not: refitting it and "
                   f"rerunning the {len(rows):,} cases shows which findings hold beyond this fit.")
        return
    block = run_or_stop(cache.retrain_stability, analysis.explainer, analysis.store_id, rows, request[2], analysis.tau)
    st.markdown(reporting.describe_retrain(block))
    show_table(reporting.retrain_table(block))


def evaluation_caption(model: fc.FittedModel) -> str:
    """What the model's accuracy and F1 rows were measured on, for the Data & model page."""
    m = model.metrics
    baseline = ("Balanced accuracy averages the share right within each outcome; \"always the most common outcome\" "
                "is the accuracy of a model that always predicts the most common outcome, the number the model's "
                "accuracy has to beat.")
    note = " " + m["note"] if m.get("note") else ""
    if model.trained_here:
        test = f"the held-out test part ({m.get('test_rows', 0):,} rows)"
        lines = (f"Row 1: mean over {reporting.plural(m['cv_folds'], 'cross-validation fold')} of the training part "
                 f"({m.get('train_rows', 0):,} rows); row 2: {test}. ") if m.get("cv_folds") else f"Measured on {test}. "
        return lines + f"Encoding: {model.encoding}. " + baseline + note
    if "test_accuracy" not in m:
        return "A model trained elsewhere, without outcomes to score it against."
    # One line only (no cross-validation of a model fitted elsewhere): name what it was measured on, not a "row 2".
    return f"A model trained elsewhere, measured on {m['evaluated_on']}. " + baseline + note


def highlighted_counterfactuals(task: fc.TaskSpec, table, changed, *, edited=()) -> None:
    """A case and its counterfactuals with changed cells in yellow and the case's edited cells in blue; features
    under their labels with their units, as in the charts, numbers as the dictionary writes them (8,200,000;
    453, not 453.00) and levels in its words; the probability as "P(Rejected)".

    The features that change come first, then the outcome, then the features no way out touches
    (:func:`ui.reporting.changed_first`): a table wider than the page shows what to change without scrolling."""
    headers = {f.name: reporting.header(f) for f in task.features}
    moved, still = reporting.changed_first(task, changed, edited)
    outcome = [c for c in table.columns if c not in headers]
    table = reporting.display_case_table(task, table[[*moved, *outcome, *still]])
    changed = changed.rename(columns=headers).set_axis(table.index, axis=0)
    edited = {headers.get(name, name) for name in edited}

    def style(frame):
        marks = changed.reindex(index=frame.index, columns=frame.columns, fill_value=False)
        out = marks.replace({True: "background-color: #fde68a; font-weight: 600", False: ""}).astype(object)
        for name in edited & set(frame.columns):
            out.loc[frame.index[0], name] = "background-color: #bfdbfe; font-weight: 600"
        return out

    formats = {reporting.header(f): partial(f.format_value, bare=True) for f in task.features}
    prediction = "{:.2f}" if task.band is None else task.format_target  # a regressor's: its number
    styled = table.style.apply(style, axis=None).format({**formats, reporting.probability_label(task): prediction})
    st.dataframe(styled, width="stretch", height="content",  # sized to its rows: a fixed height hid the last ones
                 column_config=pinned_first(table, hide_index=False))
