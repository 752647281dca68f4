"""Chromium on loan with its shipped data dictionary: the pages' rendered text (their tables' cells included)
holds no raw column name and no "undesirable", and the case tables name the money and the units."""

from __future__ import annotations

import contextlib
import os
import re
from urllib.parse import urlsplit

import pytest

import flex_core as fc
from tests.browser.test_browser import ARTIFACTS
from tests.browser.test_state_browser import wait_idle
from tests.browser.test_whatif_browser import LOAN, VIEW, app_page
from tools.serve import CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
    pytest.mark.skipif(not LOAN.exists(), reason=f"{LOAN} not found (set FLEX_DATA_DIR to the paper's data folder)"),
]

#: (address, a text the page shows once it has drawn)
PAGES = [("data-and-model", "Model quality at a decision cutoff"), ("", "Generator coverage"),
         ("regional-explorer", "What the model asks of each group"), ("tau-thresholds", "Thresholds (τ)"),
         ("counterfactual-tables", "Changed most often for this case"), ("what-if-editor", "Explore this case's region"),
         ("compare-methods", "Region: FLEX next to LIME"), ("session-report", "Report"), ("glossary", "Hamming distance")]


def raw_names(task: fc.TaskSpec) -> list[str]:
    """The ways a column's own name could show: as written (cibil_score) and with spaces only (cibil score), for
    every feature the dictionary renames into other words."""
    out = []
    for f in task.features:
        spaced = f.name.replace("_", " ")
        out += [f.name] + ([spaced] if spaced.lower() != f.label.lower() else [])
    return sorted(set(out))


def main_text(page) -> str:
    """What the reader sees in the page's main area (the sidebar's settings keep the analyst's names), with the
    tables' cells: a table is drawn on a canvas, its cells are in the grid's accessible copy (text, not shown)."""
    main = page.locator("[data-testid='stMain']")
    grids = page.locator("[data-testid='stMain'] [data-testid='stDataFrame']")
    return main.inner_text() + "\n" + "\n".join(grids.nth(i).text_content() or "" for i in range(grids.count()))


def test_loan_pages_speak_the_dictionarys_words(tmp_path):
    task = fc.data.load_loan(LOAN)
    raw = raw_names(task)
    assert "cibil_score" in raw and "income annum" in raw and "loan amount" not in raw
    with app_page(tmp_path, VIEW) as page:
        for path, ready in PAGES:
            parts = urlsplit(page.url)
            page.goto(f"{parts.scheme}://{parts.netloc}/{path}?{VIEW}", wait_until="domcontentloaded")
            with contextlib.suppress(Exception):  # a "Page not found" notice on a first address (issue 20)
                page.get_by_text("Page not found", exact=True).wait_for(timeout=3_000)
                page.keyboard.press("Escape")
            page.get_by_text(ready, exact=False).first.wait_for(timeout=180_000)
            wait_idle(page)  # the whole page drawn, not only its first part
            page.wait_for_timeout(1_000)
            text = main_text(page)
            page.screenshot(path=str(ARTIFACTS / f"words_{path or 'global'}.png"), full_page=True)
            assert page.locator("[data-testid='stException']").count() == 0, path
            found = [name for name in raw if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text)]
            assert not found, (path, found)
            said = [text[max(0, m.start() - 60): m.end() + 20] for m in re.finditer("undesirable", text, re.IGNORECASE)]
            assert not said and "not Rejected" not in text, (path, said)
            if path == "counterfactual-tables":
                headers = page.locator("[data-testid='stDataFrame']").first.text_content() or ""
                assert "P(Rejected)" in text and "CIBIL score (points)" in headers and "Loan amount (₹)" in headers
                assert "Loan term (years)" in headers
            if path == "data-and-model":
                assert "₹" in text and "Rejected" in text and "Approved" in text
