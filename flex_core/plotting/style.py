"""The look every FLEX figure shares, for figures drawn outside :mod:`flex_core.plotting`.

The dashboard draws a few charts of its own: the Regional page's factual map (``ui/factual_map.py``, built from
data only the app has) and the Regions sections' figures (``ui/figures.py``); with these they match the library's
figures, and a notebook can do the same for a chart shown beside them. The figures themselves are :mod:`flex_core.plotting`'s API; this module is the small,
stable part of their making that others may build on:

- :func:`new_figure` ``(**subplots)``: an empty figure on the light template, or ``make_subplots(**subplots)`` on it.
- :func:`apply_style` ``(fig, title=..., height=...)``: the title, height, font, margins and bottom legend.
- :func:`as_floats` ``(values)``: plain floats for a trace, NaN as ``None`` so the spec stays valid JSON.
- :func:`panel_axes` ``(col)``: a trace's axes in panel ``col`` of a one-row grid (for traces written as dicts).
- :data:`FLEX_COLOUR`: the colour of F in every figure.

Importing it needs plotly (the ``plots`` extra), as drawing any figure does.
"""

from __future__ import annotations

from .._extras import require

require("plotly", "Drawing a figure")

from ._flex import FLEX_COLOUR, apply_style, as_floats, new_figure, panel_axes  # noqa: E402  (after the extra's check)

__all__ = ["new_figure", "apply_style", "as_floats", "panel_axes", "FLEX_COLOUR"]
