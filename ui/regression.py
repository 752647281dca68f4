"""A regression task's views (issue 38): the model's quality in words with its errors on held-out rows (Data & model),
and the what-if case's predicted number (What-if). A regression's undesirable outcome is a band of the number
(``task.band``); the pages read its words from ``task.undesirable_words`` / ``desirable_words``."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import flex_core as fc
from flex_core.plotting.style import FLEX_COLOUR, apply_style, as_floats, new_figure
from ui import cache, reporting
from ui.band import BAD_COLOUR, LINE_COLOUR, histogram_figure
from ui.components import chart
from ui.context import Analysis
from ui.text import plain

__all__ = ["NO_CLASSIFIER_VIEWS", "evaluation_note", "residual_figure", "quality_view", "predicted_value",
           "what_if_metrics"]

#: Why the Data & model page shows no cutoff, calibration, ROC or precision-recall for a regressor.
NO_CLASSIFIER_VIEWS = (
    "The model predicts a number, not the chance of an outcome, so the views of a classifier (a decision cutoff, the "
    "confusion matrix, calibration, ROC and precision-recall curves) do not apply. How far its numbers are from the "
    "true ones says how good it is: below, on rows it never saw."
)


def evaluation_note(model: fc.FittedModel) -> str:
    """What a regressor's scores were measured on (the Data & model page's caption under them)."""
    m = model.metrics
    note = " " + m["note"] if m.get("note") else ""
    if model.trained_here:
        return (f"Measured on the held-out test part ({m.get('test_rows', 0):,} rows), which the model did not learn "
                f"from; the average is that of the training part ({m.get('train_rows', 0):,} rows)." + note)
    return (f"A model trained elsewhere, measured on {m.get('evaluated_on') or 'the rows given'}: they may include rows it "
            "learned from, so the numbers may be optimistic." + note)


def residual_figure(held, band, *, name: str) -> go.Figure:
    """Each held-out row's error (true minus predicted) against its prediction, the zero line, and the predictions
    the band counts undesirable shaded. ``held``: :func:`flex_core.models.held_out_predictions` of a regressor (its
    ``rows``, ``actual`` and ``predicted``); ``band``: the task's (``task.band``)."""
    values = pd.DataFrame({"row": held.rows, "actual": held.actual, "predicted": held.predicted})
    fig = new_figure()
    residual = values["actual"] - values["predicted"]
    fig.add_trace(go.Scatter(
        x=as_floats(values["predicted"]), y=as_floats(residual), mode="markers", name="held-out row",
        marker=dict(color=FLEX_COLOUR, size=6, opacity=0.7), customdata=values[["row", "actual"]].to_numpy().tolist(),
        hovertemplate=("row %{customdata[0]}: predicted %{x:,.4~g}, true %{customdata[1]:,.4~g}"
                       "<br>error %{y:,.4~g}<extra></extra>"),
    ))
    fig.add_hline(y=0, line_dash="dash", line_color="#888888")
    low, high = float(values["predicted"].min()), float(values["predicted"].max())
    areas = ([(band.above, max(high, band.above))] if band.above is not None else []) + \
        ([(min(low, band.below), band.below)] if band.below is not None else [])
    for start, end in areas:
        fig.add_vrect(x0=start, x1=end, fillcolor=BAD_COLOUR, line_width=0, layer="below")
    for at in (band.below, band.above):
        if at is not None:
            fig.add_vline(x=at, line_color=LINE_COLOUR, line_width=2)
    fig.update_xaxes(title_text=f"predicted {name} (shaded: the undesirable band)")
    fig.update_yaxes(title_text=f"true minus predicted {name}")
    return apply_style(fig, title=f"The model's errors on rows it never saw ({len(values):,} rows)", height=420)


def quality_view(analysis: Analysis) -> None:
    """Data & model for a regressor: why the classifier views are not shown, and its errors on held-out rows."""
    task, model = analysis.task, analysis.model
    name = reporting.target_words(task)
    st.info(plain(NO_CLASSIFIER_VIEWS))
    try:
        held = cache.held_out_predictions(task, model, analysis.model_id)
    except fc.FlexError as exc:
        st.info(plain(f"No view of the model's errors: {exc}"))
        return
    left, right = st.columns(2)
    with right:
        band = {"above": task.band.above, "below": task.band.below, "inclusive": task.band.inclusive}
        predicted = cache.predictions(task, model, analysis.model_id)
        chart(histogram_figure(predicted, band, name=reporting.probability_label(task)).update_layout(height=420),
              analysis, key="predictions", tau=False)
        st.caption(plain(f"The model's {name} for each of the {len(predicted):,} rows; the shaded part is the "
                         f"undesirable band ({task.undesirable_words}), whose cases FLEX explains: "
                         f"{int(task.band.undesirable(predicted.to_numpy()).sum()):,} rows are predicted in it."))
    with left:
        _residuals_view(analysis, held)


def _residuals_view(analysis: Analysis, held) -> None:
    task = analysis.task
    name = reporting.target_words(task)
    chart(residual_figure(held, task.band, name=name), analysis, key="residuals", tau=False)
    st.caption(plain(
        f"Each point is a row the model did not learn from: across, the {name} it predicts; up, how far the "
        f"true {name} is above that (below the dashed line: the model predicted too much). Points spread evenly "
        "around the line, with no curve or funnel, mean the model's errors do not depend on how large its prediction "
        "is. The shaded part holds the predictions FLEX explains (the undesirable band); the red line is its threshold."
    ))


def predicted_value(model: fc.FittedModel, case: pd.DataFrame) -> float:
    """The regressor's prediction of one case (the what-if's), in the target's units."""
    return float(model.predict_value(case)[0])


def what_if_metrics(columns, task: fc.TaskSpec, model: fc.FittedModel, result, original, row: int) -> None:
    """The what-if case's predicted number (with its change from ``row``'s) and whether it is in the undesirable band,
    in the first two of ``columns``."""
    now, before = predicted_value(model, result.case), predicted_value(model, original.case)
    change = now - before
    name = reporting.target_words(task)
    columns[0].metric(f"Predicted {name}", task.format_target(now),
                      delta=None if result is original else (f"{task.format_target(change)} from row {row}" if change else
                                                              f"as row {row}"),
                      delta_color="inverse" if change and task.band.above is not None else "off")
    inside = "in the undesirable band" if result.predicted_undesirable else "not in the undesirable band"
    columns[1].metric("In the undesirable band", "yes" if result.predicted_undesirable else "no",
                      help=f"The undesirable band: {task.undesirable_words}; the rest: {task.desirable_words}.")
    st.caption(plain(f"The model predicts {name} = {task.format_target(now)}: {inside} ({task.undesirable_words})."))
