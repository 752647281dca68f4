"""new_figure copies a cached skeleton: the figures must be exactly what make_subplots builds, and independent."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from flex_core.plotting._flex import _template, new_figure

SUBPLOTS = [
    {},
    {"rows": 1, "cols": 2, "shared_yaxes": True, "horizontal_spacing": 0.04, "column_widths": [0.62, 0.38]},
    {"rows": 1, "cols": 3, "shared_yaxes": True, "horizontal_spacing": 0.03, "subplot_titles": ["τ = 0.1", "τ = 0.5", "τ = 0.9"]},
    {"rows": 2, "cols": 1, "shared_xaxes": True, "row_heights": [0.72, 0.28], "vertical_spacing": 0.06},
]


def _reference(**subplots) -> go.Figure:
    fig = go.Figure(layout={"template": _template()})
    return make_subplots(**subplots, figure=fig) if subplots else fig


def _draw(fig: go.Figure, subplots: dict) -> go.Figure:
    """A trace in every cell and an axis update by row and column, as the chart builders do."""
    rows, cols = subplots.get("rows", 1), subplots.get("cols", 1)
    for row in range(1, rows + 1):
        for col in range(1, cols + 1):
            cell = {"row": row, "col": col} if subplots else {}
            fig.add_trace(go.Bar(x=[row, col], y=["a", "b"], orientation="h"), **cell)
            fig.update_xaxes(range=[0, row + col], title_text=f"x{row}{col}", **cell)
    return fig


@pytest.mark.parametrize("subplots", SUBPLOTS)
def test_a_figure_from_the_skeleton_is_the_one_make_subplots_builds(subplots):
    for _ in range(2):  # the first call builds the skeleton, the second copies it
        assert new_figure(**subplots).to_dict() == _reference(**subplots).to_dict()
        assert _draw(new_figure(**subplots), subplots).to_dict() == _draw(_reference(**subplots), subplots).to_dict()


def test_figures_from_one_skeleton_do_not_share_anything():
    subplots = SUBPLOTS[1]
    first = _draw(new_figure(**subplots), subplots)
    first.update_layout(title_text="changed", height=999)
    second = new_figure(**subplots)
    assert second.to_dict() == _reference(**subplots).to_dict()
    assert len(second.data) == 0 and second.layout.title.text is None
