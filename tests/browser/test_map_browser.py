"""Chromium on loan: a click on the factual map picks the dot nearest the pointer, and the hover names the row.

Plotly picks among the dots whose disc holds the pointer the one drawn last, not the nearest centre; the map
keeps such ties rare (cases spread by Isomap, 6 px dots) and a click beside a dot picks it.
"""

from __future__ import annotations

import math
import os
import re

import pytest

from tests.browser.test_browser import app_page
from tests.browser.test_state_browser import wait_idle
from tests.browser.test_whatif_browser import ARTIFACTS, LOAN, VIEW, _no_errors, _open
from tools.serve import CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
    pytest.mark.skipif(not LOAN.exists(), reason=f"{LOAN} not found (set FLEX_DATA_DIR to the paper's data folder)"),
]

#: Every dot of the whole-map panel as [row, x, y, trace name], in page pixels.
DOTS = """gd => {
  const L = gd._fullLayout, box = gd.getBoundingClientRect(), out = [];
  gd._fullData.forEach(t => {
    if (t.xaxis !== 'x' || !t.customdata) return;
    for (let j = 0; j < t.x.length; j++) {
      if (t.x[j] === null) continue;
      out.push([t.customdata[j][0], box.left + L.xaxis._offset + L.xaxis.l2p(t.x[j]),
                box.top + L.yaxis._offset + L.yaxis.l2p(t.y[j]), t.name]);
    }
  });
  return out;
}"""


def _heading_row(page) -> int:
    heading = page.get_by_text(re.compile(r"^Region around row \d+")).first
    heading.wait_for(timeout=120_000)
    return int(re.search(r"row (\d+)", heading.inner_text()).group(1))


def test_a_click_beside_a_dot_picks_the_nearest_dot(app):
    with app_page(app, VIEW) as page:
        page.get_by_text("Global feature importance", exact=True).first.wait_for(timeout=120_000)
        _open(page, "regional-explorer")
        first = _heading_row(page)
        page.wait_for_selector(".js-plotly-plot .scatterlayer .trace:first-child path.point", timeout=120_000)
        wait_idle(page)
        plot = page.locator(".js-plotly-plot:visible").first
        plot.scroll_into_view_if_needed()
        dots = plot.evaluate(DOTS)
        taken = {int(r) for r, _, _, name in dots if name != "cases"} | {first}
        # A factual with a neighbour 6-12 px away (dots are 6 px wide): the pointer goes 2 px from its centre
        # toward that neighbour. On PCA's three stripes such a click landed on whichever dot was drawn on top.
        pairs = []
        for row, x, y, name in dots:
            if name != "cases" or int(row) in taken:
                continue
            other = min((d for d in dots if d[0] != row), key=lambda d: math.dist((x, y), d[1:3]))
            gap = math.dist((x, y), other[1:3])
            if 6.0 <= gap <= 12.0:
                pairs.append((gap, (x, y), other[1:3]))
        assert pairs, "no dot with a close neighbour on the loan map"
        _, (x, y), (ox, oy) = sorted(pairs)[len(pairs) // 2]
        step = 2.0 / math.dist((x, y), (ox, oy))
        pointer = (x + step * (ox - x), y + step * (oy - y))
        nearest = int(min(dots, key=lambda d: math.dist(pointer, d[1:3]))[0])
        page.mouse.move(*pointer)
        hover = page.locator(".hoverlayer .hovertext").first
        hover.wait_for(timeout=10_000)
        assert f"row {nearest}" in hover.text_content()  # the hover names the row a click would pick
        page.mouse.click(*pointer)
        page.wait_for_function(
            f"() => [...document.querySelectorAll('h2, h3')].some(h => h.innerText.startsWith('Region around row {nearest}'))",
            timeout=120_000,
        )
        assert _heading_row(page) == nearest
        page.screenshot(path=str(ARTIFACTS / "loan_map_click.png"), full_page=True)
        _no_errors(page)
