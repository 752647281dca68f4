"""Plotly figures for FLEX results: pure functions from results to ``go.Figure``.

Every figure carries its numbers as plain lists (not numpy), so the chart spec
itself can be read back and checked, and every trace point that stands for a
feature or a row carries it in ``customdata``.
"""

from __future__ import annotations

import copy
import functools
import math
import re
from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .._format import plural
from .._results import FlexResult, RegionalResult

__all__ = [
    "importance_figure",
    "regional_scatter",
    "regions_heatmap",
    "tau_sweep_figure",
    "tau_panels_figure",
    "what_must_change_figure",
    "frequency_whiskers",
    "QUADRANT_COLOURS",
    "thin_labels",
]

FLEX_COLOUR = "#2563eb"
DICE_COLOUR = "#94a3b8"
MU_COLOUR = "#dc2626"
FIXED_COLOUR = "#cbd5e1"
QUADRANT_COLOURS = {"A": "#dc2626", "B": "#64748b", "C": "#2563eb", "D": "#d97706"}
#: The quadrants in a few words, for a legend (the full sentences are QUADRANT_MEANING).
QUADRANT_SHORT = {
    "A": "important here only",
    "B": "minor here and overall",
    "C": "important everywhere",
    "D": "important overall, less so here",
}
_FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=13)


#: The parts of Plotly's "plotly_white" layout these charts use, built once. A figure gets it when it is
#: created (:func:`new_figure`): swapping a template into a finished figure cost 40-70 ms a chart,
#: most of a page's rerun after a τ change.
_LAYOUT_KEYS = ("autotypenumbers", "colorway", "font", "hovermode", "hoverlabel", "paper_bgcolor", "plot_bgcolor",
                "xaxis", "yaxis", "shapedefaults", "annotationdefaults", "title", "coloraxis")
_TEMPLATE: dict | None = None


def _template() -> dict:
    global _TEMPLATE
    if _TEMPLATE is None:
        import plotly.io as pio

        layout = pio.templates["plotly_white"].layout.to_plotly_json()
        _TEMPLATE = {"layout": {key: layout[key] for key in _LAYOUT_KEYS if key in layout}}
    return _TEMPLATE


def new_figure(**subplots) -> go.Figure:
    """An empty figure on the light template; with keyword arguments, ``make_subplots(**subplots)`` on it.

    Built from a copy of a skeleton made once per set of arguments: ``make_subplots`` and the template
    cost about 10 ms a figure (validating every layout key one by one), as much as the rest of a chart,
    and a τ change rebuilds its charts. ``make_subplots`` keeps its grid (for ``row=``/``col=``) beside
    the layout, so the copy gets the skeleton's grid too (tests compare both ways to the last byte).
    """
    return go.Figure(copy.deepcopy(_skeleton(_skeleton_key(subplots))))


#: What a figure is made of in its ``to_dict()``; anything else in :func:`_figure_dict` is what Plotly's copy
#: protocol carries beside it (the subplot grid).
_FIGURE_KEYS = ("data", "layout", "frames")


def _figure_dict(fig: go.Figure) -> dict:
    """``fig`` as the Figure-like dict Plotly's own copy and pickle protocol makes of it.

    Its ``to_dict()`` (a copy) and, beside it, what ``row=``/``col=`` need: the subplot grid that
    ``make_subplots`` keeps beside the layout. ``go.Figure`` rebuilds the figure, grid included, from this
    dict, as ``copy.deepcopy`` and ``pickle`` do; read through that protocol, no private attribute of
    Plotly is named here (a test draws by ``row=``/``col=`` on every kind of figure that has a grid).
    """
    _, args = cast(tuple, fig.__reduce__())[:2]
    return dict(args[0])


def _unchecked(spec: dict) -> go.Figure:
    """A figure from a Figure-like dict (:func:`_figure_dict`) that Plotly already checked (or that a test checks),
    not validated again. It keeps a copy of the dict's subplot grid, if any.
    """
    grid = {key: copy.deepcopy(value) for key, value in spec.items() if key not in _FIGURE_KEYS}
    return go.Figure({**spec, **grid}, _validate=False)


def _skeleton_key(subplots: dict) -> tuple:
    return tuple(sorted((name, tuple(v) if isinstance(v, list) else v) for name, v in subplots.items()))


def panel_axes(col: int | None) -> dict:
    """A trace's axes in panel ``col`` of a one-row grid, as ``add_trace(row=1, col=col)`` names them (none: no grid)."""
    return {} if col is None else {"xaxis": f"x{col if col > 1 else ''}", "yaxis": f"y{col if col > 1 else ''}"}


class _Spec:
    """A figure written as plain data: the skeleton's layout, traces as dicts, layout changes merged in.

    For the charts a τ change redraws: Plotly checks every property it is given one by one, which
    cost about 14 ms for the importance chart; the spec becomes a figure once, unchecked
    (:func:`_unchecked`), and the tests check that Plotly's validation accepts each such figure unchanged.
    Traces and updates are written as Plotly's ``to_dict`` writes them (``marker.color``, not ``marker_color``).
    """

    def __init__(self, **subplots) -> None:
        self._skeleton = _skeleton(_skeleton_key(subplots))
        self.layout: dict = copy.deepcopy(self._skeleton["layout"])
        self.data: list[dict] = []

    def add_trace(self, trace: dict, *, col: int | None = None) -> None:
        """``trace`` on the grid's first row, panel ``col`` (as ``add_trace(row=1, col=col)`` places it)."""
        self.data.append({**trace, **panel_axes(col)})

    def update(self, **layout) -> None:
        """Merge into the layout as ``update_layout`` does: dicts into dicts, anything else replaced."""
        _merge(self.layout, layout)

    def figure(self) -> go.Figure:
        return _unchecked({**self._skeleton, "data": self.data, "layout": self.layout})


def _merge(into: dict, updates: Mapping) -> None:
    for key, value in updates.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value) if isinstance(value, (dict, list)) else value


@functools.lru_cache(maxsize=64)
def _skeleton(subplots: tuple) -> dict:
    """:func:`_figure_dict` of :func:`new_figure` with these ``make_subplots`` arguments (as sorted pairs); never changed."""
    fig = go.Figure(layout={"template": _template()})
    if subplots:
        fig = make_subplots(**{name: list(v) if isinstance(v, tuple) else v for name, v in subplots}, figure=fig)
    return _figure_dict(fig)


def apply_style(fig: go.Figure, *, title: str, height: int) -> go.Figure:
    fig.update_layout(**_style(title, height))
    return fig


def _style(title: str, height: int) -> dict:
    """Every chart's title, height, font, margins and legend (as a layout update)."""
    return dict(
        # The title starts below the strip where Plotly shows its modebar, which used to cover it.
        title=dict(font=dict(size=16), pad=dict(t=34), text=title, x=0.0, xanchor="left", y=1.0, yanchor="top",
                   yref="container"),
        height=height,
        font=dict(_FONT),
        # The legend sits at the bottom of the figure, below the axis titles: above the plot it
        # collides with the title in narrow columns ("container" coordinates keep it clear at any height).
        margin=dict(b=95, l=10, r=30, t=84),
        legend=dict(orientation="h", x=0.0, xanchor="left", y=0.01, yanchor="bottom", yref="container"),
    )


#: Height a title's second line (:func:`_second_title_line`) adds above the plot.
SECOND_TITLE_LINE_PX = 18


def _second_title_line(text: str) -> str:
    """A title's second line, a size smaller than the first (the settings subtitle moves down below it)."""
    return f"<span style='font-size:13px'>{text}</span>"


#: The start of an ``<a>`` tag: Plotly draws ``<a href="http…">`` in any text of a figure (titles, axis labels,
#: hover text, legend names) as a live link, and a column name, a level or a file name can hold one.
_ANCHOR = re.compile(r"<(?=/?a(?:\s|>|/|$))", re.IGNORECASE)


def inert_links(value):
    """``value`` (a figure's dict, or any part of it) with every ``<a …>`` in its text written ``&lt;a …>``.

    Plotly shows ``&lt;`` as ``<``, so the text reads the same and no link is drawn. Containers and strings
    without one are returned as they are (a figure without links is unchanged).
    """
    if isinstance(value, str):
        return _ANCHOR.sub("&lt;", value) if "<" in value else value
    if isinstance(value, dict):
        items = {k: inert_links(v) for k, v in value.items()}
        return value if all(items[k] is value[k] for k in value) else items
    if isinstance(value, (list, tuple)):
        parts = [inert_links(v) for v in value]
        return value if all(a is b for a, b in zip(parts, value)) else type(value)(parts)
    if isinstance(value, np.ndarray) and value.dtype.kind in "OU":
        parts = [inert_links(v) for v in value.ravel().tolist()]
        return value if parts == value.ravel().tolist() else np.array(parts, dtype=object).reshape(value.shape)
    return value


def with_settings(fig: go.Figure, settings: str) -> go.Figure:
    """A copy of the figure with ``settings`` (:func:`flex_core.report.describe_settings`) as its subtitle, so an
    exported PNG names the data, model, generator and τ it was drawn with. ``fig`` is left as it is.

    The copy is made from the figure's dict, which Plotly built and checked, without checking it again: the
    app calls this for every chart on every rerun, and Plotly's checked copy and ``update_layout`` cost
    6-9 ms a chart (tests check that Plotly's validation accepts the result unchanged). Every chart the app
    and its HTML report draw passes here, so here its text loses any ``<a>`` link (:func:`inert_links`).
    """
    whole = _figure_dict(fig)
    spec = {**whole, **inert_links({key: value for key, value in whole.items() if key in _FIGURE_KEYS})}
    if settings:
        layout = spec.setdefault("layout", {})
        margin = layout.setdefault("margin", {})
        top = margin.get("t", 84)
        parts = settings.split(" · ")
        lines = 1
        if len(settings) > 70 and len(parts) > 1:  # two lines: one long line was cut off in a half-width column
            cut = min(range(1, len(parts)), key=lambda i: abs(len(" · ".join(parts[:i])) - len(settings) / 2))
            settings, lines = " · ".join(parts[:cut]) + "<br>" + " · ".join(parts[cut:]), 2
        layout.setdefault("title", {})["subtitle"] = {"text": inert_links(settings),
                                                      "font": {"color": "#475569", "size": 11}}
        margin["t"] = top + 8 + 14 * lines
    return _unchecked(spec)


def diagonal_line(low: float, high: float, *, name: str) -> go.Scatter:
    """The dashed y = x reference line from (low, low) to (high, high)."""
    return go.Scatter(_diagonal_spec(low, high, name=name))


def _diagonal_spec(low: float, high: float, *, name: str) -> dict:
    """:func:`diagonal_line` as the plain dict Plotly's ``to_dict`` gives (for :class:`_Spec`)."""
    return {"hoverinfo": "skip", "line": {"color": "#94a3b8", "dash": "dash"}, "mode": "lines", "name": name,
            "x": [low, high], "y": [low, high], "type": "scatter"}


def _reference_line(axis: str, at: float, line: dict) -> dict:
    """A line across the plot at ``at`` on ``axis`` ("x": vertical), as Plotly's ``add_vline``/``add_hline`` write it."""
    across = "y" if axis == "x" else "x"
    return {"line": line, "type": "line", f"{axis}0": at, f"{axis}1": at, f"{axis}ref": axis,
            f"{across}0": 0, f"{across}1": 1, f"{across}ref": f"{across} domain"}


def as_floats(values) -> list:
    """Plain floats for the spec; NaN becomes None so JSON stays valid."""
    return [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in np.asarray(values, dtype=float)]


def feature_bars(name: str, labels: Sequence[str], values, names: Sequence[str], *, colour, hover: str,
                 digits: int = 3, unit: str = "", **extra) -> go.Bar:
    """Horizontal bars, one per feature in ``labels`` order; the feature names ride in ``customdata``.

    ``hover`` names the value in the tooltip ("F", "LIME"); ``unit`` follows the number
    ("of its maximum"); ``extra`` goes to ``go.Bar`` (error bars, ``showlegend``).
    """
    return go.Bar(_bar_spec(name, labels, values, names, colour=colour, hover=hover, digits=digits, unit=unit), **extra)


def _bar_spec(name: str, labels: Sequence[str], values, names: Sequence[str], *, colour, hover: str, digits: int = 3,
              unit: str = "") -> dict:
    """:func:`feature_bars` as the plain dict Plotly's ``to_dict`` gives (for :class:`_Spec`)."""
    return {
        "customdata": list(names),
        "hovertemplate": f"%{{y}}<br>{hover} = %{{x:.{digits}f}}" + (f" {unit}" if unit else "") + "<extra></extra>",
        "marker": {"color": colour},
        "name": name,
        "orientation": "h",
        "x": as_floats(values),
        "y": list(labels),
        "type": "bar",
    }


def thin_labels(x, y, *, top: int = 3, far: float = 0.12, min_gap: float | tuple[float, float] = 0.05) -> np.ndarray:
    """Which points of a y-against-x scatter of importances get a text label.

    A point is a candidate when it is among the ``top`` largest on either axis or lies at
    least ``far`` (in axis units) from the line y = x. Candidates are then taken in order
    of importance (max(x, y) + distance from y = x), and a candidate is dropped when its
    label would sit on one already placed: when it is closer than ``min_gap`` to a
    labelled point on both axes (``min_gap`` = (x gap, y gap); a label is wider than it is
    tall, so the x gap is usually the larger). Points with a missing coordinate are never
    labelled.

    Parameters
    ----------
    x, y : array-like of shape (n_points,)

    Returns
    -------
    bool ndarray of shape (n_points,)
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    gap_x, gap_y = cast(tuple[float, float], (min_gap, min_gap) if np.isscalar(min_gap) else min_gap)
    finite = ~(np.isnan(x) | np.isnan(y))
    off_diagonal = np.abs(y - x)
    candidate = finite & (off_diagonal >= far)
    for axis in (x, y):
        ranked = [j for j in np.argsort(-np.nan_to_num(axis, nan=-np.inf), kind="stable") if finite[j]]
        candidate[ranked[:top]] = True
    priority = np.nan_to_num(np.maximum(x, y) + off_diagonal, nan=-np.inf)
    shown = np.zeros(len(x), bool)
    for j in np.argsort(-priority, kind="stable"):
        if not candidate[j]:
            continue
        labelled = np.flatnonzero(shown)
        clash = (np.abs(x[labelled] - x[j]) < gap_x) & (np.abs(y[labelled] - y[j]) < gap_y)
        if not clash.any():
            shown[j] = True
    return shown


def named(words: str, symbol: str, terms: bool) -> str:
    """``words`` as a chart says them; with the paper's terms asked for, ``symbol`` after them ("change frequency
    F_j"). The app's sidebar switch sets ``terms``; plain words are the default, for the domain experts."""
    return f"{words} {symbol}" if terms else words


def _order(result: FlexResult) -> list[int]:
    """Feature positions by decreasing F_j (NaN last, ties by name) — the reading order of every bar chart."""
    values = np.nan_to_num(result.frequency_mean, nan=-1.0)
    return sorted(range(len(values)), key=lambda j: (-values[j], result.feature_names[j]))


def _tick_labels(result: FlexResult, order: Sequence[int]) -> list[str]:
    return [result.display_names[j] + (" (fixed)" if result.immutable[j] else "") for j in order]


def frequency_whiskers(result: FlexResult, order: Sequence[int], *, whiskers: str = "interval") -> tuple[dict, str]:
    """Plotly ``error_x`` for F_j in ``order`` and the words for the axis title.

    ``"interval"``: the 95% interval of F_j (``frequency_ci``, asymmetric), when the
    result has one; ``"std"``: ± the std of f_j(i) across factuals, clipped to [0, 1].
    """
    if whiskers not in ("interval", "std"):
        raise ValueError(f"whiskers must be 'interval' or 'std', not {whiskers!r}")
    style = dict(type="data", color="#334155", thickness=1.2)
    if whiskers == "interval" and result.frequency_ci is not None:
        mean = result.frequency_mean[order]
        low, high = result.frequency_ci[order, 0], result.frequency_ci[order, 1]
        return {**style, "symmetric": False, "array": as_floats(high - mean), "arrayminus": as_floats(mean - low)}, "95% interval"
    # A share cannot leave [0, 1], so neither may its whisker: ± std is clipped at both ends.
    mean, std = result.frequency_mean[order], result.frequency_std[order]
    return {**style, "symmetric": False, "array": as_floats(np.minimum(std, 1.0 - mean)),
            "arrayminus": as_floats(np.minimum(std, mean))}, "± std"


def importance_figure(
    result: FlexResult, *, title: str | None = None, dice: bool = True, whiskers: str = "interval", terms: bool = False
) -> go.Figure:
    """Sorted F_j (FLEX) with its whiskers and μ_j markers for continuous features, and DiCE's Algorithm 2 beside it.

    Parameters
    ----------
    result : FlexResult
        A global, regional or local result (``result.only_necessary()`` counts only necessary changes).
    dice : bool
        Add the right-hand panel with DiCE's frequency on the same counterfactuals.
    whiskers : {"interval", "std"}
        The 95% interval of F_j (default; ``FlexResult.frequency_ci``), or ± the std across factuals.
    terms : bool
        Name the paper's symbols (F_j, μ_j) after the plain words (:func:`named`).

    Returns
    -------
    Figure whose first trace holds F_j (x) per feature (customdata = feature name), in
    decreasing order from the top; then the μ_j markers; then DiCE's bars.
    """
    order = _order(result)
    labels = _tick_labels(result, order)
    names = [result.feature_names[j] for j in order]
    spec = _Spec(rows=1, cols=2 if dice else 1, shared_yaxes=True, horizontal_spacing=0.04,
                 column_widths=[0.62, 0.38] if dice else None)
    colours = [FIXED_COLOUR if result.immutable[j] else FLEX_COLOUR for j in order]
    error_x, whisker_text = frequency_whiskers(result, order, whiskers=whiskers)
    frequency = named("change frequency", "F_j", terms)
    spec.add_trace({**_bar_spec(f"{frequency} (FLEX)", labels, result.frequency_mean[order], names, colour=colours,
                                hover=frequency), "error_x": error_x}, col=1)
    continuous = [k for k, j in enumerate(order) if result.kinds[j] == "continuous"]
    if continuous:
        spec.add_trace(
            {
                "cliponaxis": False,  # a diamond at μ = 0 stays whole
                "customdata": [names[k] for k in continuous],
                "hovertemplate": f"%{{y}}<br>{named('mean change size', 'μ', terms)} = %{{x:.3f}}<extra></extra>",
                "marker": {"color": MU_COLOUR, "line": {"color": "white", "width": 1}, "size": 11, "symbol": "diamond"},
                "mode": "markers",
                "name": f"{named('mean change size', 'μ_j', terms)} (share of range)",
                "x": as_floats(result.magnitude_mean[[order[k] for k in continuous]]),
                "y": [labels[k] for k in continuous],
                "type": "scatter",
            },
            col=1,
        )
    if dice:
        spec.add_trace(_bar_spec("DiCE frequency", labels, result.dice_frequency[order], names, colour=DICE_COLOUR,
                                 hover="DiCE"), col=2)
        spec.update(xaxis2={"range": [0, 1.05], "title": {"text": "DiCE (Algorithm 2): any change counts"}})
    counted = "necessary changes only" if result.config.get("count") else "share of ways out changing it"
    spec.update(xaxis={"range": [0, 1.05], "title": {"text": f"FLEX {frequency} ({whisker_text}): {counted}"}},
                yaxis={"autorange": "reversed"})
    level = {"global": "Global", "regional": "Regional", "local": "Local"}.get(result.level, result.level)
    default_title = f"{level} feature importance from {plural(result.n_factuals_used, 'case')}"
    spec.update(**_style(title or default_title, max(300, 170 + 34 * len(order))))
    return spec.figure()


def regional_scatter(regional: RegionalResult, *, title: str | None = None, terms: bool = False) -> go.Figure:
    """Regional F_j against global F_j for the mutable features, as the paper's Fig. 4.

    The y = x line marks "as important here as everywhere"; dotted lines at the means
    split the plane into quadrants A (specific to the region), B, C (everywhere), D.
    The first trace holds the features (x = global, y = regional, customdata = name, hovertext = label and quadrant;
    the hover also says the side of y = x).

    Written as plain data (:class:`_Spec`): a τ change on the Regional page redraws it, and Plotly's checks
    were most of its 20 ms. ``terms``: name F_j after the plain words (:func:`named`).
    """
    imp = regional.importance
    importance = named("importance", "F_j", terms)
    keep = [j for j, q in enumerate(regional.quadrants) if q is not None]
    x = as_floats(regional.global_frequency[keep])
    y = as_floats(imp.frequency_mean[keep])
    quads = [regional.quadrants[j] for j in keep]
    side_text = {"above": "above y = x: more often changed here than globally",
                 "below": "below y = x: less often changed here than globally",
                 "on": "on y = x: as often changed here as globally", None: "undefined"}
    sides = [side_text[regional.diagonal_side[j]] for j in keep]
    finite = [v for v in x + y if v is not None]
    top = min(1.05, max(finite + [0.1]) * 1.15 + 0.03)
    # Only the features that matter carry a label (the top ones, those far from y = x); the rest have hover text.
    # A label is about a fifth of the plot wide and a twentieth tall.
    labelled = thin_labels(regional.global_frequency[keep], imp.frequency_mean[keep], min_gap=(0.2 * top, 0.06 * top))
    names = [imp.display_names[j] for j in keep]
    spec = _Spec()
    spec.add_trace({
        "cliponaxis": False,  # labels of points near an edge stay readable
        "customdata": [imp.feature_names[j] for j in keep],
        "hovertemplate": [f"%{{hovertext}}<br>global {importance} = %{{x:.3f}}<br>regional {importance} = %{{y:.3f}}<br>"
                          f"{side}<extra></extra>"
                          for side in sides],  # one template per point: the side of y = x differs from feature to feature
        "hovertext": [f"{name} ({'quadrant ' if terms else ''}{q}: {QUADRANT_SHORT[q]})" for name, q in zip(names, quads)],
        "marker": {"color": [QUADRANT_COLOURS[q] for q in quads], "line": {"color": "white", "width": 1}, "size": 13},
        "mode": "markers+text",
        "name": "features",
        "showlegend": False,
        "text": [name if show else "" for name, show in zip(names, labelled)],
        "textposition": "top center",
        "x": x,
        "y": y,
        "type": "scatter",
    })
    spec.add_trace(_diagonal_spec(0, top, name="y = x (same importance as globally)"))
    # The quadrants' meaning goes in the legend (one entry per quadrant present), not on every point.
    for q in sorted(set(quads)):
        spec.add_trace({"hoverinfo": "skip", "marker": {"color": QUADRANT_COLOURS[q], "size": 11}, "mode": "markers",
                        "name": f"{q}: {QUADRANT_SHORT[q]}", "x": [None], "y": [None], "type": "scatter"})
    g_mid, r_mid = regional.quadrant_thresholds
    if not (math.isnan(g_mid) or math.isnan(r_mid)):
        quadrant_line = {"color": "#cbd5e1", "dash": "dot"}
        corners = {"A": (0.01, 0.99, "left", "top"), "B": (0.01, 0.01, "left", "bottom"),
                   "C": (0.99, 0.99, "right", "top"), "D": (0.99, 0.01, "right", "bottom")}
        spec.update(
            shapes=[_reference_line("x", float(g_mid), quadrant_line), _reference_line("y", float(r_mid), quadrant_line)],
            annotations=[{"font": {"color": QUADRANT_COLOURS[q], "size": 18}, "opacity": 0.6, "showarrow": False,
                          "text": f"<b>{q}</b>", "x": cx, "xanchor": xa, "xref": "paper", "y": cy, "yanchor": ya,
                          "yref": "paper"} for q, (cx, cy, xa, ya) in corners.items()],
        )
    r = regional.pearson_r
    r_text = "undefined" if math.isnan(r) else f"{r:.2f}"
    low, high = regional.pearson_r_interval
    if not math.isnan(r):
        r_text += " (no interval)" if math.isnan(low) else f" (95% interval {low:.2f} to {high:.2f})"
    pad = 0.06 * top
    spec.update(xaxis={"range": [-pad, top + pad], "title": {"text": f"global {importance} (all cases)"}},
                yaxis={"range": [-pad, top + pad], "title": {"text": f"regional {importance} (this region)"}})
    # r and its interval on a line of their own: on one line with the title a half-width column cut the
    # interval off mid-number ("0.31 to 1."), which reads as another bound.
    agreement = named("agreement with all cases", "(Pearson r)", terms)
    style = _style(title or f"Regional vs global importance<br>{_second_title_line(f'{agreement} = {r_text}')}", 540)
    # Room for the quadrant legend under the axis title, and for the r line above the plot.
    style["margin"].update(b=135, t=style["margin"]["t"] + (0 if title else SECOND_TITLE_LINE_PX))
    spec.update(**style)
    return spec.figure()


def regions_heatmap(regions: Mapping[str, RegionalResult], global_result: FlexResult, *, terms: bool = False) -> go.Figure:
    """Saved regions × features: regional F_j per cell, with each region's r in its label (``terms``: F_j and r
    named after the plain words, :func:`named`).

    The first row is the global result for reference. ``z`` rows follow ``regions``' order
    after it; columns follow the global importance order.
    """
    order = _order(global_result)
    labels = _tick_labels(global_result, order)
    rows = ["global (all cases)"]
    agreement, frequency = ("r", "F_j") if terms else ("agreement", "change frequency")
    z = [as_floats(global_result.frequency_mean[order])]
    for name, reg in regions.items():
        r = reg.pearson_r
        rows.append(f"{name} ({agreement} = {'n/a' if math.isnan(r) else f'{r:.2f}'})")
        z.append(as_floats(reg.importance.frequency_mean[order]))
    fig = new_figure()
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=labels,
            y=rows,
            zmin=0,
            zmax=1,
            colorscale="Blues",
            text=[["" if v is None else f"{v:.2f}" for v in line] for line in z],
            texttemplate="%{text}",
            colorbar=dict(thickness=12),  # the title says what the colour is; a bar title crowded the ticks
            hovertemplate=f"%{{y}}<br>%{{x}}: {frequency} = %{{z:.3f}}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickangle=-30)
    return apply_style(fig, title=f"Saved regions compared: {named('change frequency', 'F_j', terms)} per feature "
                                  "(darker: changed more often)", height=200 + 45 * len(rows))


def tau_sweep_figure(sweep: pd.DataFrame, *, current: float | None = None, terms: bool = False) -> go.Figure:
    """F_j against τ, one line per continuous feature (from :func:`tau_sweep`); a marker line at ``current``.

    A caller that redraws the chart at every τ change keeps ``tau_sweep_figure(sweep)`` (the lines alone; the app
    keeps them in ``ui/``) and adds the current τ to a copy with :func:`with_current_tau`. ``terms``: name F_j and τ
    after the plain words (:func:`named`).
    """
    return with_current_tau(_tau_sweep_lines(sweep, terms), current)


def with_current_tau(lines: go.Figure, current: float | None) -> go.Figure:
    """A copy of the τ sweep's lines (``tau_sweep_figure(sweep)``) with a marker at τ = ``current`` (``lines`` unchanged).

    The line is written as Plotly's ``add_vline`` writes it (a test compares the two) without Plotly's validation:
    a τ change in the app redraws this chart, and building it anew cost about 19 ms.
    """
    spec = _figure_dict(lines)
    if current is not None:
        layout = spec.setdefault("layout", {})
        x = float(current)
        layout["shapes"] = [*layout.get("shapes", ()), _reference_line("x", x, {"color": "#64748b", "dash": "dot"})]
        # "τ" even in plain words: the marker sits beside the Thresholds page's own τ slider
        layout["annotations"] = [*layout.get("annotations", ()), {
            "showarrow": False, "text": f"current τ = {current:g}", "x": x, "xanchor": "left", "xref": "x",
            "y": 1, "yanchor": "top", "yref": "y domain"}]
    return _unchecked(spec)


def _tau_sweep_lines(sweep: pd.DataFrame, terms: bool) -> go.Figure:
    """The τ sweep's lines without a current τ (see :func:`with_current_tau`), the most often changed feature first
    (its frequency at the smallest τ; ties in the sweep's order), so the legend reads as the bars do."""
    fig = new_figure()
    frequency = named("change frequency", "F", terms)
    lines = [(key, group.sort_values("tau")) for key, group in sweep.groupby(["feature", "label"], sort=False)]
    lines.sort(key=lambda line: -float(line[1]["frequency_mean"].iloc[0]))  # stable: ties keep the sweep's order
    for (feature, label), group in lines:
        fig.add_trace(
            go.Scatter(
                name=label,
                mode="lines+markers",
                x=as_floats(group["tau"]),
                y=as_floats(group["frequency_mean"]),
                customdata=[feature] * len(group),
                hovertemplate=f"{label}<br>{named('smallest change counted', 'τ', terms)} = %{{x:.2f}}<br>"
                              f"{frequency} = %{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_xaxes(title_text=f"{named('smallest change counted', 'τ', terms)}, as a share of the feature's range",
                     range=[-0.02, 1.02])
    fig.update_yaxes(title_text=named("change frequency", "F_j", terms), range=[0, 1.05])
    return apply_style(fig, title="How the change frequency of each number falls as τ grows", height=420)


def tau_panels_figure(results: Mapping[float, FlexResult], *, terms: bool = False) -> go.Figure:
    """The paper's τ panels: one bar chart of F_j per τ, features in the first panel's order (``terms``: the axes
    name F_j, :func:`named`).

    Trace i holds the panel of the i-th τ (x = F_j, customdata = feature name).
    """
    taus = list(results)
    first = results[taus[0]]
    order = _order(first)
    labels = _tick_labels(first, order)
    fig = new_figure(rows=1, cols=len(taus), shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=[f"τ = {t:g}" for t in taus])
    for col, tau in enumerate(taus, start=1):
        res = results[tau]
        fig.add_trace(
            feature_bars(f"τ = {tau:g}", labels, res.frequency_mean[order], [res.feature_names[j] for j in order],
                         colour=[FIXED_COLOUR if res.immutable[j] else FLEX_COLOUR for j in order],
                         hover=named("change frequency", "F", terms),
                         error_x=frequency_whiskers(res, order)[0], showlegend=False),
            row=1,
            col=col,
        )
        fig.update_xaxes(range=[0, 1.05], title_text=named("change frequency", "F_j", terms), row=1, col=col)
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    return apply_style(fig, title="Global importance at three thresholds (as in the paper)", height=170 + 34 * len(order))


#: The "what must change" scores: (attribute of FlexResult, its interval attribute, (legend words, the paper's symbol
#: or None), colour).
WHAT_MUST_CHANGE = (
    ("frequency_mean", "frequency_ci", ("changed", "F"), FLEX_COLOUR),
    ("necessary_frequency", None, ("changed and needed", "necessary F"), "#0f766e"),
    ("flip_alone", "flip_alone_interval", ("flips it alone: share of cases", None), "#d97706"),
    ("needed", "needed_interval", ("needed: no way around it found", None), "#7c3aed"),
)


def what_must_change_figure(result: FlexResult, *, title: str | None = None, terms: bool = False) -> go.Figure:
    """F, necessary F, and the shares of cases it flips alone and that need it, per mutable feature (grouped bars).

    Features in the order of F. One trace per score that the result carries (the two shares only
    when computed), with its 95% interval as whiskers where it has one; x = score, customdata =
    feature name. Legend names are plain words; ``terms`` puts the paper's symbol before them ("F: changed").
    """
    order = [j for j in _order(result) if not result.immutable[j]]
    labels = _tick_labels(result, order)
    fig = new_figure()
    for attribute, interval_attribute, (words, symbol), colour in WHAT_MUST_CHANGE:
        values = getattr(result, attribute)
        if values is None:
            continue
        name = f"{symbol}: {words}" if terms and symbol else words
        trace = feature_bars(name, labels, values[order], [result.feature_names[j] for j in order], colour=colour,
                             hover=symbol if terms and symbol else words.split(":")[0])
        interval = getattr(result, interval_attribute) if interval_attribute else None
        if interval is not None:
            shown = values[order]
            trace.update(error_x={"type": "data", "symmetric": False, "thickness": 1.2, "width": 3,
                                  "array": np.nan_to_num(interval[order, 1] - shown),
                                  "arrayminus": np.nan_to_num(shown - interval[order, 0])})
        fig.add_trace(trace)
    fig.update_layout(barmode="group")
    fig.update_xaxes(range=[0, 1.05], tickformat=".0%", title_text="share of the ways out; whiskers: 95% interval")
    fig.update_yaxes(autorange="reversed")
    return apply_style(fig, title=title or "What must change", height=max(320, 170 + 22 * len(fig.data) * max(1, len(order)) // 2))
