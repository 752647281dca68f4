"""One real browser: Debian's chromium, driven by Playwright, against `streamlit run app.py`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.serve import CHROMIUM, CHROMIUM_ARGS, running_app

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

pytestmark = pytest.mark.browser


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed (apt-get install chromium chromium-driver)")
def test_app_opens_on_a_builtin_and_renders_the_global_chart(tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    # A private cache folder: the run really generates counterfactuals, on the built-in toy2d with small N.
    env = {"FLEX_CACHE_DIR": str(tmp_path / "cache")}
    with running_app(env=env) as url, playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/?dataset=builtin:toy2d&n_factuals=10&n_cf=3", wait_until="domcontentloaded")
            page.get_by_text("Global feature importance", exact=True).first.wait_for(timeout=60_000)
            page.wait_for_selector(".js-plotly-plot .barlayer .point path", timeout=90_000)
            bars = page.locator(".js-plotly-plot .barlayer .point path").count()
            # toy2d: 2 features, FLEX and DiCE panels -> 4 bars
            assert bars >= 4
            assert page.get_by_text("Factuals explained").count() >= 1
            page.screenshot(path=str(ARTIFACTS / "global_page.png"), full_page=True)
            assert page.locator("[data-testid='stException']").count() == 0
        finally:
            browser.close()


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed (apt-get install chromium chromium-driver)")
def test_a_skops_model_uploaded_in_the_sidebar_is_explained(tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    import flex_core as fc
    from tests.factories import user_pipeline

    task = fc.data.load_builtin("toy2d")
    model_file = fc.models.save_model(user_pipeline(task.frame, target="Accident_severity"), tmp_path / "users_model.skops")
    env = {"FLEX_CACHE_DIR": str(tmp_path / "cache")}
    with running_app(env=env) as url, playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/?dataset=builtin:toy2d&n_factuals=10&n_cf=3", wait_until="domcontentloaded")
            page.wait_for_selector(".js-plotly-plot .barlayer .point path", timeout=90_000)
            sidebar = page.locator("section[data-testid='stSidebar']")
            sidebar.get_by_text("Load a model file").click()
            sidebar.locator("input[type='file']").set_input_files(str(model_file))
            sidebar.get_by_role("button", name="Use this model").click()
            sidebar.get_by_text("users_model.skops", exact=False).first.wait_for(timeout=90_000)
            page.get_by_text("Accuracy", exact=True).first.wait_for(timeout=90_000)
            page.wait_for_selector(".js-plotly-plot .barlayer .point path", timeout=90_000)
            assert page.locator(".js-plotly-plot .barlayer .point path").count() >= 4
            page.screenshot(path=str(ARTIFACTS / "global_page_uploaded_model.png"), full_page=True)
            assert page.locator("[data-testid='stException']").count() == 0
            assert page.locator("[data-testid='stAlertContentError']").count() == 0
        finally:
            browser.close()
