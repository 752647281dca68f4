"""Plotly figures of SHAP's own views and of partial dependence: the beeswarm, a dependence plot, one case's
contributions beside its counterfactuals' changes, and ICE curves with the query's ways out marked.

Same conventions as :mod:`._flex`: plain lists in the spec, and a point that stands for a row carries its id in
``customdata``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .._format import plural
from ..compare._dependence import DependenceCurves
from ..compare._shap import ShapImportance
from ..compare._shap_views import CaseAgreement
from ..data import TaskSpec
from ._flex import FLEX_COLOUR, apply_style, as_floats, new_figure

__all__ = ["shap_beeswarm_figure", "shap_dependence_figure", "case_contributions_figure", "ice_figure"]

#: Low to high feature value (blue to red), as SHAP's own plots colour them.
VALUE_SCALE = [[0.0, "#2563eb"], [0.5, "#c4b5fd"], [1.0, "#dc2626"]]
TOWARD, AWAY = "#dc2626", "#2563eb"
ICE_COLOUR, QUERY_COLOUR, WAYS_OUT_COLOUR = "rgba(100,116,139,0.22)", "#d97706", "#059669"
#: The beeswarm shows at most this many features (the largest mean |SHAP|).
BEESWARM_TOP = 15


def _scaled(column: pd.Series, spec) -> np.ndarray:
    """A feature's values as 0..1 for the colour scale: a number by its range here, levels by their order."""
    if spec.is_continuous:
        values = column.astype(float).to_numpy()
        low, high = np.nanmin(values), np.nanmax(values)
        return np.zeros(len(values)) if high <= low else (values - low) / (high - low)
    codes = pd.Categorical(column.astype(str), categories=[str(v) for v in spec.levels]).codes.astype(float)
    return codes / max(len(spec.levels) - 1, 1)


def shap_beeswarm_figure(shap: ShapImportance, task: TaskSpec, *, top: int = BEESWARM_TOP) -> go.Figure:
    """SHAP's summary plot: one row of dots per feature (largest mean |SHAP| at the top), a dot per explained case at
    its SHAP value, coloured by the case's value of that feature (low blue, high red; levels by their order).

    Dots are spread vertically by a seeded jitter (seed 0) so that equal values stay visible. Trace i is feature
    i from the top; ``customdata`` holds the row ids.
    """
    frame = task.frame.loc[shap.query_index]
    order = sorted(range(len(shap.feature_names)), key=lambda j: (-shap.mean_abs[j], j))[:top]
    rng = np.random.default_rng(0)
    fig = new_figure()
    for position, j in enumerate(order):
        name, label = shap.feature_names[j], shap.display_names[j]
        values = shap.values[:, j]
        fig.add_trace(go.Scatter(
            name=label, x=as_floats(values), y=as_floats(position + rng.uniform(-0.3, 0.3, len(values))),
            mode="markers", customdata=[int(r) for r in shap.query_index], text=[str(v) for v in frame[name]],
            marker=dict(size=6, color=as_floats(_scaled(frame[name], task.feature(name))), coloraxis="coloraxis",
                        line=dict(width=0)),
            hovertemplate=f"{label} = %{{text}}<br>SHAP %{{x:+.3f}}<br>row %{{customdata}}<extra></extra>",
            showlegend=False,
        ))
    fig.update_layout(coloraxis=dict(colorscale=VALUE_SCALE, cmin=0, cmax=1, colorbar=dict(
        title="feature value", tickvals=[0, 1], ticktext=["low", "high"], thickness=12)))
    fig.update_yaxes(tickvals=list(range(len(order))), ticktext=[shap.display_names[j] for j in order],
                     autorange="reversed", zeroline=False)
    fig.add_vline(x=0, line=dict(color="#94a3b8", width=1))
    fig.update_xaxes(title_text=f"SHAP value (→ pushes toward {task.undesirable_words})")
    title = f"SHAP values of {plural(len(shap.query_index), 'case')}, features by mean |SHAP|"
    return apply_style(fig, title=title, height=140 + 42 * len(order))


def shap_dependence_figure(shap: ShapImportance, task: TaskSpec, feature: str, colour_by: str | None) -> go.Figure:
    """A feature's SHAP value (y) against its value (x) for each explained case, coloured by ``colour_by``'s value
    (a number on the blue-red scale; levels one trace each). ``customdata`` holds the row ids."""
    j = shap.feature_names.index(feature)
    frame = task.frame.loc[shap.query_index]
    spec, label = task.feature(feature), shap.display_names[j]
    x = frame[feature].astype(float).tolist() if spec.is_continuous else [str(v) for v in frame[feature]]
    y = shap.values[:, j]
    rows = np.asarray([int(r) for r in shap.query_index])
    fig = new_figure()
    colour_label = task.feature(colour_by).label if colour_by else ""
    hover = f"{label} = %{{x}}<br>SHAP %{{y:+.3f}}<br>row %{{customdata}}"
    if colour_by is None:
        fig.add_trace(go.Scatter(x=x, y=as_floats(y), mode="markers", customdata=rows.tolist(), name=label,
                                 marker=dict(size=7, color=FLEX_COLOUR), hovertemplate=hover + "<extra></extra>"))
    elif task.feature(colour_by).is_continuous:
        other = frame[colour_by].astype(float)
        fig.add_trace(go.Scatter(
            x=x, y=as_floats(y), mode="markers", customdata=rows.tolist(), name=label, showlegend=False,
            text=[f"{v:g}" for v in other],
            marker=dict(size=7, color=as_floats(other), colorscale=VALUE_SCALE,
                        colorbar=dict(title=colour_label, thickness=12)),
            hovertemplate=hover + f"<br>{colour_label} = %{{text}}<extra></extra>"))
    else:
        levels = [str(v) for v in task.feature(colour_by).levels]
        for level in levels:
            at = (frame[colour_by].astype(str) == level).to_numpy()
            if at.any():
                fig.add_trace(go.Scatter(
                    x=[x[i] for i in np.flatnonzero(at)], y=as_floats(y[at]), mode="markers",
                    customdata=rows[at].tolist(), name=f"{colour_label} = {level}", marker=dict(size=7),
                    hovertemplate=hover + "<extra>%{fullData.name}</extra>"))
    fig.add_hline(y=0, line=dict(color="#94a3b8", width=1))
    if not spec.is_continuous:
        fig.update_xaxes(categoryorder="array", categoryarray=[str(v) for v in spec.levels])
    fig.update_xaxes(title_text=f"{label} ({spec.unit})" if spec.unit else label)
    fig.update_yaxes(title_text=f"SHAP value of {label}")
    title = f"SHAP dependence of {label}" + (f", coloured by {colour_label}" if colour_by else "")
    return apply_style(fig, title=title, height=460)


def case_contributions_figure(agreement: CaseAgreement) -> go.Figure:
    """One case: its SHAP contributions (left; red toward the undesirable outcome, blue away) and the share of its
    counterfactuals changing each feature (right, local FLEX F_j), features in order of |SHAP|."""
    a = agreement
    order = sorted(range(len(a.labels)), key=lambda j: (-abs(a.contributions[j]), j))
    labels = [a.labels[j] + (" (fixed)" if a.immutable[j] else "") for j in order]
    fig = new_figure(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                     subplot_titles=("SHAP contribution", "share of its ways out changing it (FLEX)"))
    values = a.contributions[order]
    fig.add_trace(go.Bar(name="SHAP", orientation="h", y=labels, x=as_floats(values), showlegend=False,
                         marker=dict(color=[TOWARD if v > 0 else AWAY for v in values]),
                         hovertemplate="%{y}<br>SHAP %{x:+.3f}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Bar(name="FLEX", orientation="h", y=labels, x=as_floats(a.frequency[order]), showlegend=False,
                         marker=dict(color=FLEX_COLOUR), hovertemplate="%{y}<br>F = %{x:.2f}<extra></extra>"),
                  row=1, col=2)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(range=[0, 1.05], row=1, col=2)
    return apply_style(fig, title=f"Row {a.row}: SHAP's pushes beside what its ways out change",
                       height=150 + 30 * len(order))


def ice_figure(curves: DependenceCurves, *, probability: str = "P(undesirable)",
               valid_below: float | None = None) -> go.Figure:
    """ICE curves (thin grey), their average (the partial dependence, black), the query's own curve (orange) with
    its counterfactuals' values of the feature marked on it (green), and the decision boundary; ``valid_below``
    (below the boundary) adds a dotted line where a counterfactual counts (the validity rule's margin).

    Traces: 0 the individual curves (one trace, gaps between rows), 1 the average, then the query's curve and its
    marks when there is a query.
    """
    c = curves
    grid = c.grid.tolist() if c.continuous else [str(v) for v in c.grid]
    x, y = [], []
    for curve in c.individual[:-1] if c.query is not None else c.individual:
        x += [*grid, None]
        y += [*as_floats(curve), None]
    mode = "lines" if c.continuous else "lines+markers"
    fig = new_figure()
    fig.add_trace(go.Scatter(name=f"{len(c.individual) - (c.query is not None)} cases (ICE)", x=x, y=y, mode=mode,
                             line=dict(color=ICE_COLOUR, width=1), marker=dict(size=3, color=ICE_COLOUR),
                             hoverinfo="skip"))
    fig.add_trace(go.Scatter(name="average (partial dependence)", x=grid, y=as_floats(c.average), mode=mode,
                             line=dict(color="#111827", width=3),
                             hovertemplate=f"{c.label} = %{{x}}<br>average {probability} %{{y:.2f}}<extra></extra>"))
    if c.query is not None:
        fig.add_trace(go.Scatter(name=f"row {c.query} (now {c.query_text})", x=grid,
                                 y=as_floats(c.query_curve), mode=mode, line=dict(color=QUERY_COLOUR, width=3),
                                 hovertemplate=f"{c.label} = %{{x}}<br>{probability} %{{y:.2f}}<extra>row {c.query}</extra>"))
        if c.counterfactual_values:
            marks = list(c.counterfactual_values) if c.continuous else [str(v) for v in c.counterfactual_values]
            fig.add_trace(go.Scatter(
                name=f"values its ways out propose for {c.label} (with only that change)", x=marks, y=as_floats(c.at(c.counterfactual_values)), mode="markers",
                marker=dict(symbol="diamond", size=12, color=WAYS_OUT_COLOUR, line=dict(color="white", width=1)),
                hovertemplate=f"a way out sets {c.label} = %{{x}}<br>{probability} with only this change "
                              "%{y:.2f}<extra></extra>"))
    # The lines' words on a light box at the right, where the grey curves would otherwise cross them.
    label = dict(bgcolor="rgba(255,255,255,0.85)", font=dict(size=11))
    fig.add_hline(y=c.threshold, line=dict(color="#dc2626", width=1, dash="dash"),
                  annotation=dict(text="decision boundary", **label), annotation_position="top right")
    if valid_below is not None and valid_below < c.threshold:
        fig.add_hline(y=valid_below, line=dict(color=WAYS_OUT_COLOUR, width=1, dash="dot"),
                      annotation=dict(text=f"a way out needs {probability} below {valid_below:.2f}", **label),
                      annotation_position="bottom right")
    if not c.continuous:
        fig.update_xaxes(categoryorder="array", categoryarray=grid)
    fig.update_xaxes(title_text=f"{c.label} ({c.unit})" if c.unit else c.label)
    fig.update_yaxes(range=[-0.02, 1.02], title_text=probability)
    return apply_style(fig, title=f"How {probability} moves with {c.label}: each case, the average"
                       + (f" and row {c.query}" if c.query is not None else ""), height=480)
