"""Chromium on loan, one test per view issue 40 adds to the Compare page: ICE with the case's ways out, SHAP's
beeswarm, its dependence plot with the suggested colour, and one case's SHAP beside its ways out."""

from __future__ import annotations

import contextlib
import os

import pytest

from tests.browser.test_browser import ARTIFACTS, app_page
from tests.browser.test_whatif_browser import LOAN, _no_errors
from tools.serve import CHROMIUM

VIEW = f"dataset=loan:{LOAN}&cv_folds=0&n_factuals=100&n_cf=10"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
    pytest.mark.skipif(not LOAN.exists(), reason=f"{LOAN} not found (set FLEX_DATA_DIR to the paper's data folder)"),
]


def _open(page, path: str) -> None:
    """The app's page at ``path`` on this file's loan view; a "Page not found" notice (issue 20) is closed."""
    from urllib.parse import urlsplit

    parts = urlsplit(page.url)
    page.goto(f"{parts.scheme}://{parts.netloc}/{path}?{VIEW}", wait_until="domcontentloaded")
    notice = page.get_by_text("Page not found", exact=True)
    with contextlib.suppress(Exception):
        notice.wait_for(timeout=5_000)
        page.keyboard.press("Escape")


def _figure(page, title: str):
    """The visible Plotly chart whose text holds ``title``, scrolled into view once drawn."""
    figure = page.locator(".js-plotly-plot:visible").filter(has_text=title).first
    figure.wait_for(timeout=120_000)
    figure.scroll_into_view_if_needed()
    return figure


def _with_shap(page) -> None:
    """The Compare page on loan with SHAP run on its 100 factuals."""
    _open(page, "compare-methods")
    page.get_by_role("button", name="Run SHAP on these cases").click(timeout=180_000)
    _figure(page, "SHAP values of 100 cases")


def test_ice_shows_every_case_the_average_and_the_cases_ways_out(app):
    with app_page(app, VIEW) as page:
        _open(page, "compare-methods")
        ice = _figure(page, "How P(Rejected) moves with")
        legend = " ".join(ice.locator("text").all_text_contents())
        assert "average (partial dependence)" in legend and "values its ways out propose for" in legend and "cases (ICE)" in legend
        page.get_by_text("Green diamonds are the values its ways out give", exact=False).first.wait_for(timeout=30_000)
        page.screenshot(path=str(ARTIFACTS / "compare_ice.png"), full_page=True)
        ice.screenshot(path=str(ARTIFACTS / "compare_ice_chart.png"))
        _no_errors(page)


def test_the_beeswarm_shows_each_factuals_shap_value_per_feature(app):
    with app_page(app, VIEW) as page:
        _with_shap(page)
        bees = _figure(page, "SHAP values of 100 cases")
        ticks = bees.locator("text").all_text_contents()
        assert "CIBIL score" in " ".join(ticks) and "feature value" in " ".join(ticks)
        bees.screenshot(path=str(ARTIFACTS / "compare_shap_beeswarm.png"))
        _no_errors(page)


def test_the_dependence_plot_is_coloured_by_the_suggested_feature(app):
    with app_page(app, VIEW) as page:
        _with_shap(page)
        dependence = _figure(page, "SHAP dependence of CIBIL score, coloured by")
        caption = page.get_by_text("Suggested colour:", exact=False).first
        caption.wait_for(timeout=30_000)
        suggested = caption.inner_text().split("Suggested colour: ", 1)[1].split(". ", 1)[0]
        assert f"coloured by {suggested}" in " ".join(dependence.locator("text").all_text_contents())  # drawn with it
        dependence.screenshot(path=str(ARTIFACTS / "compare_shap_dependence.png"))
        _no_errors(page)


def test_one_case_shows_its_shap_beside_its_ways_out_and_says_where_they_agree(app):
    with app_page(app, VIEW) as page:
        _with_shap(page)
        case = _figure(page, "SHAP's pushes beside what its ways out change")
        sentence = page.get_by_text("SHAP and FLEX agree", exact=False).first
        sentence.wait_for(timeout=30_000)
        assert "Rejected" in sentence.inner_text()
        page.screenshot(path=str(ARTIFACTS / "compare_shap_page.png"), full_page=True)
        case.screenshot(path=str(ARTIFACTS / "compare_case_shap.png"))
        _no_errors(page)
