"""A self-contained HTML report: figures, tables and a plain-language reading of each.

The report opens offline: plotly.js is embedded once, the figures follow as
``<div>`` + script, the tables as plain HTML. Text is escaped. The layout is one
column, and printing starts each section on a new page, so the browser's "Print to
PDF" gives a document to hand on.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd
import plotly.graph_objects as go

from ._tables import settings_table

__all__ = ["ReportSection", "build_html_report"]

_CSS = """
body{font-family:Inter,Segoe UI,Helvetica,Arial,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#0f172a;
line-height:1.45}
h1{margin-bottom:.2em} h2{margin-top:2.2em;border-bottom:1px solid #e2e8f0;padding-bottom:.2em}
div.reading{background:#f1f5f9;border-left:4px solid #2563eb;padding:.3em .9em;margin:.8em 0}
div.reading p{margin:.5em 0}
aside.howto{border:1px solid #bfdbfe;background:#eff6ff;border-radius:6px;padding:.2em 1em;margin:1.2em 0}
table{border-collapse:collapse;font-size:13px;margin:.8em 0;max-width:100%}
th,td{border:1px solid #e2e8f0;padding:3px 8px;text-align:left;vertical-align:top} th{background:#f8fafc}
div.figure{width:100%;margin:.6em 0}
@media print{
  body{max-width:none;margin:0;font-size:11pt}
  section{break-before:page;page-break-before:always}
  div.figure,table{break-inside:avoid;page-break-inside:avoid}
  .modebar{display:none!important}
}
"""


@dataclass(frozen=True)
class ReportSection:
    """One part of the report: a heading, a plain-language reading (paragraphs split by a blank line),
    and any number of figures and tables."""

    title: str
    reading: str
    figures: Sequence[go.Figure] = ()
    tables: Sequence[pd.DataFrame] = ()


def _paragraphs(text: str) -> str:
    return "".join(f"<p>{html.escape(p.strip())}</p>" for p in text.split("\n\n") if p.strip())


def _table_html(table: pd.DataFrame, float_format: str) -> str:
    # A table whose index is just 0..n-1 carries no information: leave it out.
    plain_index = isinstance(table.index, pd.RangeIndex) and table.index.name is None
    return table.to_html(index=not plain_index, float_format=lambda v: float_format.format(v), na_rep="–",
                         border=0, escape=True)


def build_html_report(
    sections: Sequence[ReportSection],
    *,
    title: str = "FLEX Studio report",
    meta: Mapping | None = None,
    intro: str | None = None,
    float_format: str = "{:.3f}",
) -> str:
    """The whole report as one HTML document (str).

    ``meta`` lists the settings that produced it (values may be nested mappings, shown as
    readable text); ``intro`` is the text of a short "How to read FLEX" box printed before the
    sections (:data:`HOW_TO_READ`).
    """
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.</p>",
    ]
    if intro:
        parts.append(f"<aside class='howto'><h3>How to read FLEX</h3>{_paragraphs(intro)}</aside>")
    if meta:
        parts.append("<h3>Settings</h3>")
        parts.append(_table_html(settings_table(meta), float_format))
    plotly_js_included = False
    for section in sections:
        parts.append(f"<section><h2>{html.escape(section.title)}</h2>")
        parts.append(f"<div class='reading'>{_paragraphs(section.reading)}</div>")
        for figure in section.figures:
            parts.append("<div class='figure'>")
            parts.append(
                figure.to_html(
                    full_html=False,
                    include_plotlyjs=not plotly_js_included,  # embedded once: the file works offline
                    config={"displaylogo": False, "responsive": True},
                )
            )
            parts.append("</div>")
            plotly_js_included = True
        parts += [_table_html(table, float_format) for table in section.tables]
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)
