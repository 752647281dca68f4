"""Issue 22 in a real browser: "Find regions" on the Regional explorer, then a click on a found region's row
opens it in the explorer as a rule-defined region."""

from __future__ import annotations

import os

import pytest

from tests.browser.test_browser import ARTIFACTS, app_page
from tests.browser.test_state_browser import wait_idle
from tools.serve import CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
]

ROW_HEIGHT = 35  # st.dataframe's default row height (the header row has the same)


def test_a_click_on_a_found_region_opens_it_in_the_explorer(app):
    with app_page(app, "dataset=builtin:synthetic-regional&n_factuals=60&n_cf=3") as page:
        # As a person does: the first page has loaded before a link is clicked. (A click while the very
        # first run is still going can reset the sidebar's settings: a known Streamlit race, see issue 20's note.)
        page.get_by_text("Global feature importance", exact=True).first.wait_for(timeout=120_000)
        wait_idle(page)
        page.get_by_role("link", name="Regional explorer").click()
        page.get_by_role("button", name="Find regions").wait_for(timeout=120_000)
        wait_idle(page)
        page.get_by_role("button", name="Find regions").click()
        page.get_by_text("candidate regions differ significantly", exact=False).first.wait_for(timeout=120_000)
        grid = page.locator("[data-testid='stDataFrame']").first
        grid.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "regions_found.png"), full_page=True)
        box = grid.bounding_box()
        # The first column is the row selector: a click there selects the first region (rank 1).
        page.mouse.click(box["x"] + 12, box["y"] + ROW_HEIGHT * 1.5)
        heading = page.get_by_role("heading", name="Region: ", exact=False).first
        heading.wait_for(timeout=90_000)
        assert page.get_by_text("Showing the rule-defined region", exact=False).count() >= 1
        heading.scroll_into_view_if_needed()
        page.wait_for_timeout(1500)
        page.screenshot(path=str(ARTIFACTS / "regions_opened.png"), full_page=True)
        multiples = page.locator(".js-plotly-plot:visible").filter(has_text="What each region's ways out change").first
        multiples.scroll_into_view_if_needed()
        page.wait_for_timeout(1000)
        assert "F per" not in multiples.inner_text() and "F =" not in multiples.inner_text()  # a reader's words
        page.screenshot(path=str(ARTIFACTS / "regions_small_multiples.png"))
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.locator("[data-testid='stAlertContentError']").count() == 0
