"""The dashboard's figures of region discovery and group comparison: what each region's and each group's ways out change.

Drawn here, not in :mod:`flex_core.plotting`, since only the app's Regions sections and its HTML report show them;
with :mod:`flex_core.plotting.style` they look like the library's figures.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from flex_core.plotting.style import FLEX_COLOUR, apply_style, as_floats, new_figure

__all__ = ["regions_small_multiples", "groups_frequency_figure"]

#: The colour of the pool's (all factuals') F beside a region's.
GLOBAL_COLOUR = "#888888"


def regions_small_multiples(found, *, top: int = 6, columns: int = 3) -> go.Figure:
    """One small bar chart per found region (the first ``top``, in rank order): its F over the mutable features,
    with the pool's F as a grey tick, so where the region's drivers differ shows at a glance.

    ``found`` is a :class:`flex_core.regions.RegionsResult`; features follow the pool's F, largest first.
    """
    regions = list(found.regions[:top])
    mutable = [j for j, fixed in enumerate(found.immutable) if not fixed]
    order = sorted(mutable, key=lambda j: -found.global_frequency[j])
    labels = [found.display_names[j] for j in order]
    if not regions:
        fig = new_figure()
        return apply_style(fig, title="No region to show", height=200)
    rows = math.ceil(len(regions) / columns)
    titles = [f"{i + 1}. {_short(r.text)}" + (" *" if r.significant else "") for i, r in enumerate(regions)]
    fig = new_figure(rows=rows, cols=min(columns, len(regions)), subplot_titles=titles, shared_yaxes=True,
                     horizontal_spacing=0.04, vertical_spacing=0.24 if rows > 1 else 0.1)
    for i, region in enumerate(regions):
        row, col = i // columns + 1, i % columns + 1
        fig.add_trace(go.Bar(x=labels, y=as_floats(region.frequency[order]), marker_color=FLEX_COLOUR,
                             name="region", showlegend=i == 0,
                             hovertemplate="%{x}: in %{y:.0%} of the region's ways out<extra></extra>"), row=row, col=col)
        fig.add_trace(go.Scatter(x=labels, y=as_floats(found.global_frequency[order]), mode="markers",
                                 marker=dict(symbol="line-ew", size=18, line=dict(width=3, color=GLOBAL_COLOUR)),
                                 name="all sampled cases", showlegend=i == 0,
                                 hovertemplate="%{x}: in %{y:.0%} of all sampled cases' ways out<extra></extra>"), row=row, col=col)
    fig.update_yaxes(range=[0, 1])
    fig.update_xaxes(tickangle=-40, tickfont=dict(size=10))
    fig.update_annotations(font=dict(size=11))
    title = "What each region's ways out change (bars), against all sampled cases (grey ticks); * differs significantly"
    return apply_style(fig, title=title, height=120 + 260 * rows)


def groups_frequency_figure(groups) -> go.Figure:
    """F per mutable feature for each group of a :class:`flex_core.regions.GroupsResult`, with 95% intervals."""
    mutable = [j for j, fixed in enumerate(groups.immutable) if not fixed]
    labels = [groups.display_names[j] for j in mutable]
    fig = new_figure()
    for g in groups.groups:
        y = as_floats(g.frequency[mutable])
        low = [None if v is None else v - lo for v, lo in zip(y, as_floats(g.frequency_ci[mutable, 0]))]
        high = [None if v is None else hi - v for v, hi in zip(y, as_floats(g.frequency_ci[mutable, 1]))]
        fig.add_trace(go.Bar(x=labels, y=y, name=f"{groups.by_label} = {g.value}" if not g.value[:1].isdigit() else
                             f"{groups.by_label} {g.value}",
                             error_y=dict(type="data", array=high, arrayminus=low, visible=True, thickness=1),
                             hovertemplate="%{x}: %{y:.0%} of the ways out<extra>%{fullData.name}</extra>"))
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[0, 1.05], title="change frequency (share of the ways out changing it)")
    return apply_style(fig, title=f"What each group of {groups.by_label} must change (95% intervals)",
                       height=380)


def _short(text: str, width: int = 38) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
