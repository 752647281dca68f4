"""The interactive report as one HTML file: the page, plotly.js, the data block and the file's own JavaScript."""

from __future__ import annotations

import html
import json
from importlib import resources

__all__ = ["snapshot_html"]


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def data_block(payload: dict) -> str:
    """``payload`` as JSON that can sit inside a ``<script>`` element: no ``<``, ``>`` or ``&`` left in it.

    They are written as ``\\u003c`` etc., which ``JSON.parse`` reads back as the same characters, so a cell
    holding ``</script><script>alert(1)</script>`` cannot end the element; the page shows it with textContent.
    """
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def snapshot_html(payload: dict) -> str:
    """The whole file (str): opens offline in any browser, with plotly.js embedded once and no request made.

    A Content-Security-Policy in the page allows only its own inline scripts and styles, so nothing in it can
    reach the network even if it tried.
    """
    from plotly.offline import get_plotlyjs

    head, tail = _asset("report.html").split("<!--PARTS-->")
    head = head.replace("<title>FLEX Studio report</title>", f"<title>{html.escape(str(payload['title']))}</title>")
    parts = [
        f"<script>{get_plotlyjs()}</script>",
        f'<script id="flex-data" type="application/json">{data_block(payload)}</script>',
        f"<script>{_asset('flex.js')}</script>",
        f"<script>{_asset('report.js')}</script>",
    ]
    return head + "\n".join(parts) + tail
