"""The band of a numeric target on the CSV form: which predictions are undesirable, set by number boxes or by
selecting on the target's histogram, drawn on it, and kept in Session State (and so in the link) as one mapping.

Session State and the link keep a band as ``{"target", "above", "below", "inclusive"}``: the band ``make_task`` takes
as ``undesirable`` (undesirable above ``above``, below ``below``, or outside ``[below, above]`` when both are given;
``inclusive``: a prediction exactly at a threshold is undesirable too) with the target's name
(:func:`ui.url_state.library_band` drops the name). The form edits a draft of it: the side and two numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import flex_core as fc
from flex_core.formatting import format_number
from flex_core.plotting.style import apply_style, as_floats, new_figure
from ui import state as S
from ui.text import plain
from ui.url_state import check_band

__all__ = ["SIDES", "SIDE_WORDS", "CHART_KEY", "band_form", "side_of", "selected_span", "histogram_figure"]

SIDES = ("above", "below", "outside")
SIDE_WORDS = {"above": "Above a threshold", "below": "Below a threshold", "outside": "Outside a range"}
EDGE_WORDS = {True: "undesirable", False: "fine"}
#: The form's numbers, {"side", "low", "high", "inclusive"}: not a widget's key, since Streamlit forgets the state of
#: a widget not drawn in a run (the range's high end while the side is "above").
DRAFT_KEY = "sb_band_draft"
#: The widgets' keys, by the draft's field.
WIDGETS = {"side": "w_band_side", "low": "w_band_low", "high": "w_band_high", "inclusive": "w_band_edge"}
CHART_KEY = "sb_band_chart"
FOR_KEY = "sb_band_for"  # the target the draft was last filled for
LAST_KEY = "sb_band_last"  # the last band of the form that could be used (drawn while the numbers are wrong)
BAD_COLOUR, LINE_COLOUR, BAR_COLOUR = "rgba(214, 39, 40, 0.16)", "#d62728", "#4C78A8"


def side_of(band: Mapping) -> str:
    """"outside" for a range, else "above" or "below"."""
    if band.get("above") is not None and band.get("below") is not None:
        return "outside"
    return "above" if band.get("above") is not None else "below"


def band_words(band: Mapping) -> str:
    """The band's undesirable values as the pages say them once it is loaded (``task.undesirable_words``, the library's
    words): "above 24", "at or below 12", "outside 8 to 20", "outside 8 to 20 (ends included)"."""
    at = "at or " if band["inclusive"] else ""
    if band.get("above") is not None and band.get("below") is not None:
        return (f"outside {format_number(band['below'])} to {format_number(band['above'])}"
                + (" (ends included)" if band["inclusive"] else ""))
    if band.get("above") is not None:
        return f"{at}above {format_number(band['above'])}"
    return f"{at}below {format_number(band['below'])}"


def _round(value: float, span: float) -> float:
    """``value`` rounded to about a two-hundredth of ``span`` (1, 2 or 5 times a power of ten), so a selection on the
    chart gives a number a person would type."""
    if not span > 0:
        return float(value)
    step = 10.0 ** math.floor(math.log10(span / 200))
    return float(round(value / step) * step)


def selected_span(event: Mapping | None) -> tuple[float, float] | None:
    """The x-range a selection on the histogram covers: a box's ends, else the selected bars' outer edges."""
    selection = (event or {}).get("selection") or {}
    boxes = selection.get("box") or []
    if boxes and len(boxes[-1].get("x") or []) == 2:
        x0, x1 = boxes[-1]["x"]
        return min(x0, x1), max(x0, x1)
    edges = [p["customdata"] for p in selection.get("points") or [] if len(p.get("customdata") or []) == 2]
    if not edges:
        return None
    return min(e[0] for e in edges), max(e[1] for e in edges)


def _apply_selection(values: pd.Series) -> None:
    """A new selection on the chart sets the thresholds: above, where it starts; below, where it ends; outside a
    range, the selected range is the fine one."""
    span = selected_span(st.session_state.get(CHART_KEY))
    if span is None or not S.fresh_selection(CHART_KEY, span):
        return
    width = float(values.max() - values.min())
    low, high = (_round(v, width) for v in span)
    draft = st.session_state[DRAFT_KEY]
    if draft["side"] in ("above", "outside"):  # the draft's low: the "above" threshold, or the range's low end
        draft["low"] = low
    if draft["side"] in ("below", "outside"):
        draft["high"] = high


def _quartiles(values: pd.Series) -> tuple[float, float]:
    width = float(values.max() - values.min())
    low, high = (_round(float(values.quantile(q)), width) for q in (0.25, 0.75))
    return low, high


def _fill_draft(target: str, values: pd.Series) -> None:
    """Start the band's draft for ``target``: from the band a link or reload kept for it, else undesirable above the
    upper quartile. Only when the target changed: the user's numbers are never overwritten."""
    s = st.session_state
    if s.get(FOR_KEY) == target:
        return
    kept = s[S.BAND] if s[S.BAND] and s[S.BAND]["target"] == target else None
    q1, q3 = _quartiles(values)
    if kept is None:  # above the upper quartile; switched to below, the lower one
        s[DRAFT_KEY] = {"side": "above", "low": q3, "high": q1, "inclusive": False}
    else:
        side = side_of(kept)
        low, high = {"above": (kept["above"], q1), "below": (q3, kept["below"]),
                     "outside": (kept["below"], kept["above"])}[side]
        s[DRAFT_KEY] = {"side": side, "inclusive": bool(kept["inclusive"]), "low": float(low), "high": float(high)}
    s[FOR_KEY], s[LAST_KEY] = target, None


def _changed(field: str, values: pd.Series):
    """``on_change`` of a band widget: its value into the draft; a side changed to a range whose ends are the wrong
    way round (the above/below defaults) gets the middle half of the values."""

    def copy() -> None:
        s = st.session_state
        draft = s[DRAFT_KEY]
        draft[field] = s[WIDGETS[field]]
        if field == "side" and draft["side"] == "outside" and not draft["low"] < draft["high"]:
            draft["low"], draft["high"] = _quartiles(values)

    return copy


def _widget(field: str, values: pd.Series) -> dict:
    """A band widget's keyword arguments: its key, showing the draft's value, and its ``on_change``."""
    st.session_state[WIDGETS[field]] = st.session_state[DRAFT_KEY][field]
    return {"key": WIDGETS[field], "on_change": _changed(field, values)}


def histogram_figure(values: pd.Series, band: Mapping | None, *, name: str, bins: int = 40) -> go.Figure:
    """The target's histogram with the band drawn: its undesirable area shaded, each threshold a line."""
    counts, edges = np.histogram(values.to_numpy(dtype=float), bins=bins)
    fig = new_figure()
    fig.add_trace(go.Bar(x=as_floats((edges[:-1] + edges[1:]) / 2), y=as_floats(counts), width=as_floats(np.diff(edges)),
                         customdata=np.column_stack([edges[:-1], edges[1:]]).tolist(), marker_color=BAR_COLOUR,
                         hovertemplate="%{customdata[0]:,.4~g} to %{customdata[1]:,.4~g}: %{y:,} rows<extra></extra>",
                         name="rows"))
    if band is not None:
        lo, hi = float(edges[0]), float(edges[-1])
        above, below = band.get("above"), band.get("below")
        for start, end in ([(above, hi)] if above is not None else []) + ([(lo, below)] if below is not None else []):
            if end > start:
                fig.add_vrect(x0=start, x1=end, fillcolor=BAD_COLOUR, line_width=0, layer="below")
        for at in (below, above):
            if at is not None:
                fig.add_vline(x=at, line_color=LINE_COLOUR, line_width=2, annotation_text=format_number(at),
                              annotation_position="top right",  # inside the plot: above it ran into the title
                              annotation=dict(yanchor="top", bgcolor="rgba(255, 255, 255, 0.85)"))
    fig.update_layout(bargap=0.02, showlegend=False, dragmode="select", xaxis_title=name, yaxis_title="rows",
                      clickmode="event+select")
    apply_style(fig, title=f"{name}: rows per value", height=300)
    return fig.update_layout(margin=dict(l=45, r=10, t=45, b=40))  # the sidebar is narrow: no room for wide margins


def _band_of_draft(target: str) -> dict:
    """The band the form's draft says (above: its low number; below: its high one; outside: both)."""
    draft = st.session_state[DRAFT_KEY]
    low, high = float(draft["low"]), float(draft["high"])
    above, below = {"above": (low, None), "below": (None, high), "outside": (high, low)}[draft["side"]]
    return {"target": target, "above": above, "below": below, "inclusive": bool(draft["inclusive"])}


SELECT_HELP = {"above": "Click a bar or drag a box over the values that are undesirable: the threshold moves to where "
                        "your selection starts.",
               "below": "Click a bar or drag a box over the values that are undesirable: the threshold moves to where "
                        "your selection ends.",
               "outside": "Drag a box over the values that are fine: the range becomes what you selected."}
#: Said under the chart, whatever the side.
SHADED = "The shaded area is undesirable. "


def band_form(frame: pd.DataFrame, target: str) -> dict | None:
    """The CSV form's band for a numeric ``target``: its histogram, the side, the threshold(s) and the edge.

    Returns the band, or None after one error (then the form loads nothing and the active dataset stays).
    """
    values = pd.to_numeric(frame[target], errors="coerce").dropna()
    _fill_draft(target, values)
    _apply_selection(values)
    st.markdown(f"**{plain(target)}** holds numbers ({values.nunique():,} different values). Which values are "
                "undesirable?")  # plain: a column name is the file's text, never Markdown
    side = st.radio("Undesirable when the prediction is", SIDES, format_func=SIDE_WORDS.get, **_widget("side", values))
    left, right = st.columns(2)
    width = float(values.max() - values.min())
    step = _round(width / 100, width) or 1.0
    whole = bool((values == values.round()).all())  # whole numbers (amounts, counts): no ".00" in the boxes
    if side != "below":
        left.number_input("above" if side == "above" else "below", step=step, format="%.0f" if whole else None,
                          **_widget("low", values))
    if side != "above":
        (right if side == "outside" else left).number_input("below" if side == "below" else "or above", step=step,
                                                            format="%.0f" if whole else None, **_widget("high", values))
    st.radio("A prediction exactly at a threshold is", (True, False), format_func=EDGE_WORDS.get, horizontal=True,
             **_widget("inclusive", values))
    drafted = _band_of_draft(target)
    try:
        check_band(drafted)
    except fc.ConfigError as exc:
        st.error(plain(f"{exc} Fix the numbers or select the range again on the chart; the previous dataset stays "
                       "active."))
        band, shown = None, st.session_state.get(LAST_KEY)  # the last band that could be used stays drawn
    else:
        band = shown = st.session_state[LAST_KEY] = drafted
        st.markdown(f"Undesirable: **{plain(f'{target} {band_words(drafted)}')}**.")
    st.plotly_chart(histogram_figure(values, shown, name=target), key=CHART_KEY, on_select="rerun",
                    selection_mode=("points", "box"), width="stretch", config={"displaylogo": False})
    st.caption(SHADED + SELECT_HELP[side])
    return band
