"""One real browser: Debian's chromium, driven by Playwright, against `streamlit run app.py`."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from tools.serve import CHROMIUM

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
BARS = ".js-plotly-plot .barlayer .point path"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed (apt-get install chromium chromium-driver)"),
]


@contextlib.contextmanager
def app_page(app, query: str):
    """A new Chromium page on the module's app (the ``app`` fixture: one `streamlit run app.py` with a private
    counterfactual cache, which may read FLEX_DATA_DIR), opened at ``/?query``: a new session; closed after."""
    url, browser = app
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{url}/?{query}", wait_until="domcontentloaded")
        yield page
    finally:
        page.close()


def test_app_opens_on_a_builtin_and_renders_the_global_chart(app):
    # The run really generates counterfactuals, on the built-in toy2d with small N.
    with app_page(app, "dataset=builtin:toy2d&n_factuals=10&n_cf=3") as page:
        page.get_by_text("Global feature importance", exact=True).first.wait_for(timeout=60_000)
        page.wait_for_selector(BARS, timeout=90_000)
        # toy2d: 2 features, FLEX and DiCE panels -> 4 bars
        assert page.locator(BARS).count() >= 4
        # The chart can now show before the rest of the page has arrived (Plotly's code loads early): wait for it.
        page.get_by_text("Cases explained").first.wait_for(timeout=60_000)
        page.screenshot(path=str(ARTIFACTS / "global_page.png"), full_page=True)
        assert page.locator("[data-testid='stException']").count() == 0


def test_a_skops_model_uploaded_in_the_sidebar_is_explained(app, tmp_path):
    import flex_core as fc
    from tests.factories import user_pipeline

    task = fc.data.load_builtin("toy2d")
    model_file = fc.models.save_model(user_pipeline(task.frame, target="Accident_severity"), tmp_path / "users_model.skops")
    with app_page(app, "dataset=builtin:toy2d&n_factuals=10&n_cf=3") as page:
        page.wait_for_selector(BARS, timeout=90_000)
        sidebar = page.locator("section[data-testid='stSidebar']")
        sidebar.get_by_text("Load a model file").click()
        sidebar.locator("input[type='file']").set_input_files(str(model_file))
        sidebar.get_by_role("button", name="Use this model").click()
        sidebar.get_by_text("users_model.skops", exact=False).first.wait_for(timeout=90_000)
        page.get_by_text("Accuracy", exact=True).first.wait_for(timeout=90_000)
        page.wait_for_selector(BARS, timeout=90_000)
        assert page.locator(BARS).count() >= 4
        page.screenshot(path=str(ARTIFACTS / "global_page_uploaded_model.png"), full_page=True)
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.locator("[data-testid='stAlertContentError']").count() == 0
        # The view link cannot carry the file: the Report page says so beside the link.
        page.get_by_role("link", name="Report").click()
        page.get_by_text("The model was loaded from a file", exact=False).first.wait_for(timeout=90_000)
        assert page.locator("[data-testid='stException']").count() == 0


def test_what_must_change_is_computed_on_a_click_and_read_in_plain_words(app):
    with app_page(app, "dataset=builtin:synthetic-regional&n_factuals=12&n_cf=3") as page:
        page.wait_for_selector(BARS, timeout=90_000)
        page.get_by_role("button", name="Which features flip the outcome alone", exact=False).click()
        sentence = page.get_by_text("alone flips", exact=False).first
        sentence.wait_for(timeout=90_000)
        # "Changing speed alone flips 67% of the sampled cases (35–89%)."
        assert "of the sampled cases (" in sentence.inner_text()
        page.get_by_text("no way out was found", exact=False).first.wait_for(timeout=30_000)
        chart = page.locator(".js-plotly-plot:visible").filter(has_text="What must change").first
        chart.scroll_into_view_if_needed()
        assert chart.locator(".legendtext").filter(has_text="flips it alone").count() == 1
        page.screenshot(path=str(ARTIFACTS / "what_must_change.png"), full_page=True)
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.locator("[data-testid='stAlertContentError']").count() == 0


def test_rerunning_the_cases_with_another_generator_is_a_click(app):
    with app_page(app, "dataset=builtin:synthetic-regional&n_factuals=12&n_cf=3") as page:
        page.wait_for_selector(BARS, timeout=90_000)
        box = page.get_by_role("combobox", name="Rerun these cases with")
        box.scroll_into_view_if_needed()
        box.click()
        page.get_by_role("option", name="batch-plausible").click()
        page.get_by_role("button", name="Compare", exact=True).click()
        reading = page.get_by_text("Rerun with batch-plausible instead of tree", exact=False).first
        reading.wait_for(timeout=90_000)
        reading.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "generator_check.png"), full_page=False)
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.locator("[data-testid='stAlertContentError']").count() == 0


def test_a_case_with_more_smallest_ways_out_than_asked_for_says_so_on_its_page(app):
    """toy2d's row 6 has three smallest ways out; with one asked for, its Counterfactuals page, reached by the
    sidebar's link from a link naming the case, says that more exist and which is shown."""
    with app_page(app, "dataset=builtin:toy2d&n_factuals=10&n_cf=1&query=6") as page:
        page.get_by_text("Global feature importance", exact=True).first.wait_for(timeout=60_000)
        page.get_by_role("link", name="Counterfactuals").first.click()
        page.get_by_text("Counterfactuals of one case", exact=True).first.wait_for(timeout=60_000)
        said = page.get_by_text("This case has more smallest ways out than the 1 asked for", exact=False)
        said.first.wait_for(timeout=60_000)
        assert said.count() == 1
        assert page.locator("[data-testid='stException']").count() == 0
