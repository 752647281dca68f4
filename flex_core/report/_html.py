"""A self-contained HTML report: figures, tables and a plain-language reading of each.

The report opens offline: plotly.js is embedded once, the figures follow as
``<div>`` + script, the tables as plain HTML. Text is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd
import plotly.graph_objects as go

__all__ = ["ReportSection", "build_html_report"]

_CSS = """
body{font-family:Inter,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#0f172a}
h1{margin-bottom:.2em} h2{margin-top:2em;border-bottom:1px solid #e2e8f0;padding-bottom:.2em}
p.reading{background:#f1f5f9;border-left:4px solid #2563eb;padding:.6em .9em;line-height:1.5}
table{border-collapse:collapse;font-size:13px;margin:.8em 0} th,td{border:1px solid #e2e8f0;padding:3px 8px;text-align:right}
th{background:#f8fafc} dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;color:#475569}
dl.meta dt{font-weight:600}
"""


@dataclass(frozen=True)
class ReportSection:
    """One part of the report: a heading, a plain-language reading, and optionally a figure and a table."""

    title: str
    reading: str
    figure: go.Figure | None = None
    table: pd.DataFrame | None = None


def build_html_report(
    sections: Sequence[ReportSection],
    *,
    title: str = "FLEX Studio report",
    meta: Mapping[str, str] | None = None,
    float_format: str = "{:.3f}",
) -> str:
    """The whole report as one HTML document (str); ``meta`` lists the settings that produced it."""
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.</p>",
    ]
    if meta:
        parts.append("<dl class='meta'>")
        parts += [f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(str(v))}</dd>" for k, v in meta.items()]
        parts.append("</dl>")
    plotly_js_included = False
    for section in sections:
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        parts.append(f"<p class='reading'>{html.escape(section.reading)}</p>")
        if section.figure is not None:
            parts.append(
                section.figure.to_html(
                    full_html=False,
                    include_plotlyjs=not plotly_js_included,  # embedded once: the file works offline
                    config={"displaylogo": False, "responsive": True},
                )
            )
            plotly_js_included = True
        if section.table is not None:
            parts.append(
                section.table.to_html(
                    float_format=lambda v: float_format.format(v), na_rep="–", border=0, escape=True
                )
            )
    parts.append("</body></html>")
    return "\n".join(parts)
