"""The model-quality figures: a confusion matrix at a cutoff and a reliability diagram with counts per bin."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..models._quality import CutoffQuality
from ._flex import FLEX_COLOUR, apply_style, as_floats, diagonal_line, new_figure

__all__ = ["confusion_matrix_figure", "calibration_figure"]


def confusion_matrix_figure(quality: CutoffQuality, *, undesirable: str = "undesirable",
                            desirable: str | None = None) -> go.Figure:
    """A 2×2 heat map: rows the true outcome, columns the predicted one, each cell its count and share.

    ``undesirable`` and ``desirable`` name the two outcomes (a data dictionary's "Rejected" and "Approved");
    without ``desirable`` the other one is "not" the undesirable one.
    """
    matrix = quality.matrix()
    labels = [desirable or f"not {undesirable}", undesirable]
    share = matrix / max(quality.n, 1)
    text = [[f"{matrix[i, j]:,}<br>({share[i, j]:.0%})" for j in range(2)] for i in range(2)]
    names = [["true negative", "false positive"], ["false negative", "true positive"]]
    fig = new_figure()
    fig.add_trace(
        go.Heatmap(
            z=matrix.tolist(), x=labels, y=labels, text=text, texttemplate="%{text}", textfont=dict(size=15),
            customdata=names, hovertemplate="true %{y}, predicted %{x}: %{z:,} rows (%{customdata})<extra></extra>",
            colorscale=[[0.0, "#eff6ff"], [1.0, FLEX_COLOUR]], showscale=False,
        )
    )
    fig.update_xaxes(title_text="predicted", side="bottom", type="category")
    fig.update_yaxes(title_text="true outcome", autorange="reversed", type="category")
    apply_style(fig, title=f"Confusion matrix at cutoff {quality.cutoff:.2f} ({quality.n:,} rows)", height=360)
    fig.update_layout(margin=dict(b=40))
    return fig


def calibration_figure(table: pd.DataFrame, *, undesirable: str = "undesirable") -> go.Figure:
    """Observed share undesirable against mean P(undesirable) per bin (points sized by count), the y = x line
    of a perfectly calibrated model, and the rows per bin as bars beneath on a second axis. ``undesirable``
    names the outcome in the axis titles ("predicted P(Rejected)")."""
    fig = new_figure(rows=2, cols=1, shared_xaxes=True, row_heights=[0.72, 0.28], vertical_spacing=0.06)
    fig.add_trace(diagonal_line(0.0, 1.0, name="perfectly calibrated"), row=1, col=1)
    rows = table["rows"].to_numpy()
    size = 7 + 14 * np.sqrt(rows / max(rows.max(), 1)) if len(rows) else []
    fig.add_trace(
        go.Scatter(
            name="model", mode="lines+markers", x=as_floats(table["mean_predicted"]), y=as_floats(table["observed"]),
            marker=dict(color=FLEX_COLOUR, size=list(size)), line=dict(color=FLEX_COLOUR),
            customdata=np.column_stack([table["bin_low"], table["bin_high"], rows]).tolist(),
            hovertemplate=("P in %{customdata[0]:.1f}–%{customdata[1]:.1f}: mean predicted %{x:.2f}, "
                           "observed %{y:.2f} over %{customdata[2]:,} rows<extra></extra>"),
        ),
        row=1, col=1,
    )
    fig.add_trace(
        go.Bar(
            name="rows per bin", x=as_floats((table["bin_low"] + table["bin_high"]) / 2), y=rows.tolist(),
            width=as_floats(table["bin_high"] - table["bin_low"]), marker=dict(color="#cbd5e1"),
            text=[f"{r:,}" for r in rows], textposition="outside", cliponaxis=False,
            hovertemplate="%{y:,} rows<extra></extra>",
        ),
        row=2, col=1,
    )
    fig.update_xaxes(range=[0, 1], row=1, col=1)
    fig.update_xaxes(range=[0, 1], title_text=f"predicted P({undesirable})", row=2, col=1)
    fig.update_yaxes(range=[0, 1], title_text=f"observed share {undesirable}", row=1, col=1)
    fig.update_yaxes(title_text="rows", row=2, col=1, rangemode="tozero")
    apply_style(fig, title="Calibration (reliability diagram)", height=470)
    return fig
