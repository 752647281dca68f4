"""Chromium on loan: the model's curves on the held-out cases (Data & model) and permutation importance as a fourth
ranking on request (Compare), each screenshotted."""

from __future__ import annotations

import os
import time

import pytest

from tests.browser.test_browser import ARTIFACTS, app_page
from tests.browser.test_whatif_browser import LOAN, VIEW, _no_errors, _open
from tools.serve import CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
    pytest.mark.skipif(not LOAN.exists(), reason=f"{LOAN} not found (set FLEX_DATA_DIR to the paper's data folder)"),
]


def test_the_held_out_curves_and_permutation_importance_open_on_loan(app):
    with app_page(app, VIEW) as page:
        _open(page, "data-and-model")
        page.get_by_text("How well the model ranks cases it never saw", exact=True).first.wait_for(timeout=120_000)
        curves = page.locator(".js-plotly-plot:visible").filter(has_text="ROC: AUC").first
        curves.wait_for(timeout=60_000)
        curves.scroll_into_view_if_needed()
        text = " ".join(curves.locator("text").all_text_contents())
        assert "Precision-recall: AP" in text and "Cumulative gain" in text and "cutoff 0.50" in text
        reading = page.get_by_text("of one Rejected and one Approved case drawn at random", exact=False).first
        reading.wait_for(timeout=30_000)
        curves.screenshot(path=str(ARTIFACTS / "model_curves_loan.png"))
        page.screenshot(path=str(ARTIFACTS / "data_model_curves_loan.png"), full_page=True)
        _no_errors(page)

        _open(page, "compare-methods")
        button = page.get_by_role("button", name="Run permutation importance on the held-out cases")
        button.wait_for(timeout=120_000)
        started = time.monotonic()
        button.click()
        page.get_by_text("vs permutation", exact=False).first.wait_for(timeout=120_000)
        print(f"permutation importance, click to drawn: {time.monotonic() - started:.2f} s")
        table = page.locator("[data-testid='stDataFrame']").first
        table.scroll_into_view_if_needed()
        page.get_by_text("Permutation importance shuffles one feature at a time", exact=False).first.wait_for()
        page.screenshot(path=str(ARTIFACTS / "compare_permutation_loan.png"), full_page=True)
        _no_errors(page)
