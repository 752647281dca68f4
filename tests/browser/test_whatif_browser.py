"""Chromium on loan: the model-quality cutoff slider and the what-if editor (edit, see it follow, send to Regional)."""

from __future__ import annotations

import contextlib
import os
import time

import pytest

from tests.browser.test_browser import ARTIFACTS, app_page
from tests.conftest import data_dir
from tools.serve import CHROMIUM

LOAN = data_dir() / "loan_approval_dataset.csv"
VIEW = f"dataset=loan:{LOAN}&cv_folds=0&n_factuals=10&n_cf=3"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
    pytest.mark.skipif(not LOAN.exists(), reason=f"{LOAN} not found (set FLEX_DATA_DIR to the paper's data folder)"),
]


def _open(page, path: str) -> None:
    """Go to the app's page at ``path`` with the loan view; a "Page not found" notice (issue 20) is closed."""
    from urllib.parse import urlsplit

    parts = urlsplit(page.url)
    page.goto(f"{parts.scheme}://{parts.netloc}/{path}?{VIEW}", wait_until="domcontentloaded")
    notice = page.get_by_text("Page not found", exact=True)
    with contextlib.suppress(Exception):
        notice.wait_for(timeout=5_000)
        page.keyboard.press("Escape")


def _no_errors(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0


def _metric(page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']").filter(has_text=label).first
    return box.locator("[data-testid='stMetricValue']").inner_text()


def test_moving_the_cutoff_slider_recounts_the_confusion_matrix(app):
    with app_page(app, VIEW) as page:
        _open(page, "data-and-model")
        title = page.get_by_text("Confusion matrix at cutoff 0.50", exact=False).first
        title.wait_for(timeout=120_000)
        matrix = page.locator(".js-plotly-plot:visible").filter(has_text="Confusion matrix").first
        matrix.scroll_into_view_if_needed()
        before = [t for t in matrix.locator("text").all_text_contents() if "%)" in t]  # the four cells
        page.screenshot(path=str(ARTIFACTS / "model_quality_cutoff_050.png"), full_page=True)
        cutoff = page.locator("[data-testid='stSlider']").filter(has_text="Decision cutoff").first
        thumb = cutoff.locator("input[type='range'], [role='slider']").first
        thumb.focus()
        for _ in range(30):  # 30 steps of 0.01
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(50)
        page.get_by_text("Confusion matrix at cutoff 0.80", exact=False).first.wait_for(timeout=60_000)
        matrix = page.locator(".js-plotly-plot:visible").filter(has_text="Confusion matrix").first
        after = [t for t in matrix.locator("text").all_text_contents() if "%)" in t]
        assert len(before) == len(after) == 4 and after != before, (before, after)
        page.get_by_text("Calibration (reliability diagram)").first.wait_for(timeout=30_000)
        page.get_by_text("held-out 20% test split", exact=False).first.wait_for(timeout=30_000)
        page.screenshot(path=str(ARTIFACTS / "model_quality_cutoff_080.png"), full_page=True)
        _no_errors(page)


def test_the_what_if_editor_follows_an_edit_and_sends_the_case_to_regional(app):
    with app_page(app, VIEW) as page:
        _open(page, "what-if-editor")
        page.get_by_text("What-if editor", exact=True).first.wait_for(timeout=120_000)
        table = page.locator("[data-testid='stDataFrame']").first
        table.wait_for(timeout=120_000)
        p_before = _metric(page, "P(Rejected)")
        assert _metric(page, "Prediction") == "Rejected"
        page.screenshot(path=str(ARTIFACTS / "what_if_row.png"), full_page=True)
        # An edit that keeps the case rejected: the case's line and its counterfactuals follow.
        box = page.get_by_label("CIBIL score", exact=False).first
        box.fill("500")
        started = time.monotonic()
        box.press("Enter")
        page.get_by_text("Edited from row", exact=False).first.wait_for(timeout=30_000)
        print(f"edit to updated page: {time.monotonic() - started:.2f} s")
        edited = page.locator("[data-testid='stMarkdownContainer']").filter(has_text="Edited from row").first
        assert "CIBIL score (417 points → 500 points)" in edited.inner_text()
        page.get_by_text("edited cells in blue", exact=False).first.wait_for(timeout=30_000)
        page.screenshot(path=str(ARTIFACTS / "what_if_edited.png"), full_page=True)
        # The shorter loan term the counterfactuals proposed: the case is now approved, nothing to change.
        term = page.get_by_label("Loan term", exact=False).first
        term.fill("5")
        term.press("Enter")
        page.get_by_text("none needed", exact=True).first.wait_for(timeout=30_000)
        assert _metric(page, "P(Rejected)") != p_before
        assert _metric(page, "Prediction") == "Approved"
        page.locator("[data-testid='stMetricDelta']").first.wait_for(timeout=30_000)
        page.screenshot(path=str(ARTIFACTS / "what_if_flipped.png"), full_page=True)
        region = page.get_by_role("button", name="Explore this case's region")
        assert region.is_disabled()
        page.get_by_text("not a row of the data", exact=False).first.wait_for(timeout=10_000)
        page.get_by_role("button", name="Reset to row").click()
        page.get_by_text("Edited from row", exact=False).first.wait_for(state="detached", timeout=30_000)
        region.click()
        page.get_by_text("Regional explorer", exact=True).first.wait_for(timeout=120_000)
        page.wait_for_url("**/regional-explorer**", timeout=60_000)
        assert "query=1" in page.url
        _no_errors(page)
