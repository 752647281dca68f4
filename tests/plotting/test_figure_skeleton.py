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


@pytest.mark.parametrize("subplots", SUBPLOTS[1:])
def test_a_titled_copy_keeps_the_grid_without_sharing_it(subplots):
    """with_settings rebuilds the figure unchecked: drawing by row and column on the copy works as on the original."""
    from flex_core.plotting import with_settings

    titled = _draw(with_settings(new_figure(**subplots), "data: x · τ = 0.10"), subplots)
    expected = _draw(_reference(**subplots), subplots).to_dict()
    assert titled.to_dict()["data"] == expected["data"]
    assert {k: v for k, v in titled.to_dict()["layout"].items() if k not in ("title", "margin")} == {
        k: v for k, v in expected["layout"].items() if k not in ("title", "margin")
    }


def test_no_private_plotly_attribute_is_named_in_flex_core_or_ui():
    """The subplot grid travels through Plotly's copy protocol, not by writing its private attributes (issue 34)."""
    from pathlib import Path

    import flex_core

    root = Path(flex_core.__file__).resolve().parent.parent
    offences = [
        f"{path.relative_to(root)}:{number}"
        for folder in ("flex_core", "ui")
        for path in sorted((root / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "_grid_ref" in line or "_grid_str" in line or '__dict__["_' in line
    ]
    assert not offences, offences
