"""Plotly figures comparing FLEX with SHAP and LIME: pure functions from numbers to ``go.Figure``.

Same conventions as :mod:`flex_core._figures`: numbers in the spec are plain lists
and every point that stands for a feature carries its name in ``customdata``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from .._format import plural
from .._results import RegionalResult, importance_rank
from ..compare._agreement import RankAgreement
from ..compare._lime import LimeImportance, normalise_to_max
from ._flex import FLEX_COLOUR, apply_style, diagonal_line, feature_bars, frequency_whiskers, named, new_figure

__all__ = ["ranking_bars_figure", "rank_scatter_figure", "regional_lime_figure", "METHOD_COLOURS"]

#: One colour per method, FLEX first; further methods take the next colours in turn.
METHOD_COLOURS = (FLEX_COLOUR, "#d97706", "#059669", "#7c3aed", "#64748b")


def _checked_include(n: int, include: np.ndarray | Sequence[bool] | None) -> np.ndarray:
    return np.ones(n, bool) if include is None else np.asarray(include, dtype=bool)


def ranking_bars_figure(
    names: Sequence[str],
    labels: Sequence[str],
    scores: Mapping[str, np.ndarray],
    *,
    include: np.ndarray | Sequence[bool] | None = None,
    title: str = "Importance by method, each divided by its largest value",
) -> go.Figure:
    """Grouped horizontal bars: each method's importances normalised to its maximum.

    Parameters
    ----------
    names, labels : sequences of length n_features (feature names and display labels)
    scores : mapping method -> ndarray of shape (n_features,)
        Features are ordered by the first method, most important at the top.
    include : bool ndarray of shape (n_features,), optional
        Features to show (e.g. only the mutable ones).

    Returns
    -------
    Figure with one bar trace per method (x = value / max, customdata = feature name).
    """
    keep = _checked_include(len(names), include)
    methods = list(scores)
    first = np.asarray(scores[methods[0]], dtype=float)[keep]
    order = np.lexsort((np.arange(len(first)), importance_rank(first)))
    kept_names = np.asarray(names, dtype=object)[keep][order]
    kept_labels = np.asarray(labels, dtype=object)[keep][order]
    fig = new_figure()
    for i, method in enumerate(methods):
        values = np.asarray(scores[method], dtype=float)[keep]
        fig.add_trace(
            feature_bars(method, kept_labels, normalise_to_max(values)[order], kept_names,
                         colour=METHOD_COLOURS[i % len(METHOD_COLOURS)], hover=method, digits=2, unit="of its maximum")
        )
    fig.update_layout(barmode="group")
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(range=[0, 1.05], title_text="importance / largest importance of that method")
    return apply_style(fig, title=title, height=160 + 16 * len(order) * len(methods))


def rank_scatter_figure(
    names: Sequence[str],
    labels: Sequence[str],
    a: np.ndarray,
    b: np.ndarray,
    *,
    methods: tuple[str, str] = ("FLEX", "SHAP"),
    agreement: RankAgreement | None = None,
    include: np.ndarray | Sequence[bool] | None = None,
) -> go.Figure:
    """Rank under method a (x) against rank under method b (y); points on the diagonal agree.

    Ranks are recomputed over the included features (1 = most important, ties share the
    best rank). The first trace holds the features (customdata = feature name).
    """
    keep = _checked_include(len(names), include)
    rank_a = importance_rank(np.asarray(a, dtype=float)[keep])
    rank_b = importance_rank(np.asarray(b, dtype=float)[keep])
    kept_names = [n for n, ok in zip(names, keep) if ok]
    kept_labels = [label for label, ok in zip(labels, keep) if ok]
    top = len(kept_names) + 0.5
    fig = new_figure()
    fig.add_trace(
        go.Scatter(
            name="features",
            mode="markers+text",
            x=[int(r) for r in rank_a],
            y=[int(r) for r in rank_b],
            text=kept_labels,
            textposition="top center",
            marker=dict(size=12, color=FLEX_COLOUR, line=dict(color="white", width=1)),
            customdata=kept_names,
            hovertemplate=f"%{{text}}<br>{methods[0]} rank %{{x}}<br>{methods[1]} rank %{{y}}<extra></extra>",
            showlegend=False,
            cliponaxis=False,
        )
    )
    fig.add_trace(diagonal_line(0.5, top, name="same rank"))
    # Rank 1 sits at the top: a little room above it, and labels may cross the axis edge (cliponaxis off).
    ticks = list(range(1, len(kept_names) + 1))
    fig.update_xaxes(range=[top, 0.4], tickvals=ticks, title_text=f"rank by {methods[0]} (1 = most important)")
    fig.update_yaxes(range=[top, 0.1], tickvals=ticks, title_text=f"rank by {methods[1]}")
    title = f"{methods[0]} rank against {methods[1]} rank"
    if agreement is not None:
        parts = []
        for label, value in (("Spearman", agreement.spearman), ("Kendall", agreement.kendall)):
            parts.append(f"{label} {'undefined' if math.isnan(value) else f'{value:.2f}'}")
        title += f" — {', '.join(parts)}, top-{agreement.k} overlap {agreement.top_k_overlap:.2f}"
    return apply_style(fig, title=title, height=480)


def regional_lime_figure(regional: RegionalResult, lime: LimeImportance, *, title: str | None = None,
                         terms: bool = False) -> go.Figure:
    """A region's FLEX F_j (with its 95% interval, or ± std) next to LIME's normalised importance, as the paper's Fig. 3.

    Features are ordered by FLEX. Trace 0 is FLEX (x = F_j, whiskers as :func:`frequency_whiskers`), trace 1 LIME
    (x = mean |weight| / max); both carry feature names in ``customdata``. ``terms``: F_j and r named after the
    plain words (:func:`._flex.named`).
    """
    imp = regional.importance
    if tuple(lime.feature_names) != tuple(imp.feature_names):
        raise ValueError("LIME and FLEX results are for different features.")
    values = np.nan_to_num(imp.frequency_mean, nan=-1.0)
    order = sorted(range(len(values)), key=lambda j: (-values[j], imp.feature_names[j]))
    labels = [imp.display_names[j] + (" (fixed)" if imp.immutable[j] else "") for j in order]
    names = [imp.feature_names[j] for j in order]
    whiskers, spread = frequency_whiskers(imp, order)
    fig = new_figure()
    fig.add_trace(
        feature_bars(f"FLEX {named('change frequency', 'F_j', terms)} ({spread})", labels, imp.frequency_mean[order],
                     names, colour=METHOD_COLOURS[0], hover=f"FLEX {named('change frequency', 'F', terms)}", digits=2,
                     error_x=whiskers)
    )
    fig.add_trace(
        feature_bars("LIME (normalised)", labels, lime.normalised[order], names, colour=METHOD_COLOURS[1], hover="LIME",
                     digits=2, unit="of its maximum")
    )
    fig.update_layout(barmode="group")
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(range=[0, 1.05], title_text="FLEX change frequency · LIME |weight| / max")
    r = regional.pearson_r
    agreement = "r vs global" if terms else "agreement with all cases"
    default = (f"Region of {plural(len(regional.members), 'case')} — FLEX vs LIME ({agreement} = "
               f"{'undefined' if math.isnan(r) else f'{r:.2f}'})")
    return apply_style(fig, title=title or default, height=160 + 44 * len(order))
