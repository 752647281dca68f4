"""The model-quality figures: a confusion matrix at a cutoff, a reliability diagram with counts per bin, and the
ROC, precision-recall, gain and precision-by-bin panels of held-out rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..models._curves import ModelCurves
from ..models._quality import CutoffQuality
from ._flex import FLEX_COLOUR, MU_COLOUR, apply_style, as_floats, diagonal_line, new_figure

__all__ = ["confusion_matrix_figure", "calibration_figure", "model_curves_figure"]


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


def model_curves_figure(curves: ModelCurves, *, at: CutoffQuality | None = None,
                        undesirable: str = "undesirable") -> go.Figure:
    """Four panels of :func:`flex_core.models.model_curves`, each against what a model without skill draws (dashed):
    the ROC curve (AUC; no skill the diagonal, 0.5), the precision-recall curve (average precision; no skill the
    share undesirable), the cumulative gain (no skill the diagonal; a perfect model's bound dotted) and precision by
    bin of predicted probability (bars, rows per bin on each; no skill the share undesirable).

    ``at`` marks the point of a decision cutoff (:func:`flex_core.models.quality_at_cutoff`) on the first three;
    ``undesirable`` names the outcome ("P(Rejected)").
    """
    fig = new_figure(rows=2, cols=2, horizontal_spacing=0.12, vertical_spacing=0.2,
                     subplot_titles=("ROC", "Precision-recall", "Cumulative gain", "Precision by predicted probability"))
    cutoffs = [f"{t:.3f}" if np.isfinite(t) else "above every case" for t in curves.thresholds]
    _curve(fig, curves.fpr, curves.tpr, cutoffs, 1, 1, hover="cutoff %{customdata}: %{y:.1%} of the " + undesirable
           + " cases found, %{x:.1%} of the others flagged")
    _curve(fig, curves.recall, curves.precision, None, 1, 2,
           hover="recall %{x:.1%}: precision %{y:.1%}")
    _curve(fig, curves.gain_share, curves.gain_found, [f"{v:.2f}" for v in np.nan_to_num(curves.gain_lift, nan=0)],
           2, 1, hover="the %{x:.0%} most likely " + undesirable + " hold %{y:.1%} of them (lift %{customdata})")
    base, share = curves.prevalence, f"{curves.prevalence:.1%}"
    _no_skill(fig, [0, 1], [0, 1], 1, 1, "no skill (AUC 0.5)")
    _no_skill(fig, [0, 1], [base, base], 1, 2, f"no skill (precision {share}, the share {undesirable})")
    _no_skill(fig, [0, 1], [0, 1], 2, 1, "no skill (taking cases at random)")
    fig.add_trace(go.Scatter(x=[0, base, 1], y=[0, 1, 1], mode="lines", line=dict(color="#94a3b8", dash="dot"),
                             name="a perfect model", hoverinfo="skip", showlegend=False), row=2, col=1)
    mid = (curves.bin_low + curves.bin_high) / 2
    fig.add_trace(go.Bar(
        x=as_floats(mid), y=as_floats(curves.bin_precision), width=as_floats((curves.bin_high - curves.bin_low) * 0.9),
        marker=dict(color=FLEX_COLOUR), text=[f"{n:,}" for n in curves.bin_rows], textposition="outside",
        cliponaxis=False, name="precision", showlegend=False,
        customdata=np.column_stack([curves.bin_low, curves.bin_high, curves.bin_rows, curves.bin_undesirable]).tolist(),
        hovertemplate=(f"P({undesirable}) in %{{customdata[0]:.1f}}–%{{customdata[1]:.1f}}: %{{customdata[3]:,}} of "
                       f"%{{customdata[2]:,}} are {undesirable} (%{{y:.1%}})<extra></extra>"),
    ), row=2, col=2)
    _no_skill(fig, [0, 1], [base, base], 2, 2, f"no skill ({share})")
    if at is not None:
        _mark_cutoff(fig, at)
    titles = (f"ROC: AUC {curves.roc_auc:.3f} (no skill 0.5)",
              f"Precision-recall: AP {curves.average_precision:.3f} (no skill {curves.prevalence:.3f})",
              "Cumulative gain", f"Precision by predicted P({undesirable}) (rows on each bar)")
    for annotation, text in zip(fig.layout.annotations, titles):
        annotation.text = text
    axes = [("false positive rate", "true positive rate (recall)"), ("recall", "precision"),
            (f"share of cases, highest P({undesirable}) first", f"share of the {undesirable} found"),
            (f"predicted P({undesirable})", f"share {undesirable} (precision)")]
    for i, (x_title, y_title) in enumerate(axes):
        fig.update_xaxes(title_text=x_title, range=[0, 1], row=i // 2 + 1, col=i % 2 + 1)
        # Room above the bars for their counts, below the panel's title.
        fig.update_yaxes(title_text=y_title, range=[0, 1.05 if i < 3 else 1.15], row=i // 2 + 1, col=i % 2 + 1)
    rows = int(curves.config.get("rows", 0))
    apply_style(fig, title=f"ROC, precision-recall, gain and precision by bin on {rows:,} held-out cases", height=720)
    fig.update_layout(showlegend=False)
    return fig


def _curve(fig: go.Figure, x, y, customdata, row: int, col: int, *, hover: str) -> None:
    fig.add_trace(go.Scatter(x=as_floats(x), y=as_floats(y), mode="lines", line=dict(color=FLEX_COLOUR, width=2.5),
                             name="model", customdata=customdata, hovertemplate=hover + "<extra></extra>"),
                  row=row, col=col)


def _no_skill(fig: go.Figure, x: list, y: list, row: int, col: int, name: str) -> None:
    fig.add_trace(go.Scatter(x=x, y=y, mode="lines", line=dict(color="#94a3b8", dash="dash"), name=name,
                             hovertemplate=name + "<extra></extra>"), row=row, col=col)


def _mark_cutoff(fig: go.Figure, at: CutoffQuality) -> None:
    """The cutoff's own point on the ROC, precision-recall and gain panels (from its confusion matrix)."""
    fpr = at.fp / max(at.fp + at.tn, 1)
    taken = (at.tp + at.fp) / max(at.n, 1)
    points = ((fpr, at.recall, 1, 1), (at.recall, at.precision, 1, 2), (taken, at.recall, 2, 1))
    for x, y, row, col in points:
        if x != x or y != y:  # no case predicted undesirable: no precision to mark
            continue
        fig.add_trace(go.Scatter(x=[x], y=[y], mode="markers+text", text=[f"cutoff {at.cutoff:.2f}"],
                                 textposition="bottom right" if x < 0.7 else "bottom left", marker=dict(color=MU_COLOUR, size=10),
                                 name=f"cutoff {at.cutoff:.2f}", hovertemplate=f"cutoff {at.cutoff:.2f}<extra></extra>"),
                      row=row, col=col)
