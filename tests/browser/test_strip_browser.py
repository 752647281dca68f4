"""Chromium: the settings strip on every page, and a τ change shown on Compare."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import pytest

from tools.serve import CHROMIUM, CHROMIUM_TEST_ARGS, running_app

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
QUERY = "dataset=builtin:toy2d&n_factuals=10&n_cf=3"
STRIP = ("toy2d · random forest (one-hot encoding) · minimal ways out read from the model's trees · 10 cases explained · "
         "up to 3 ways out each · seed 0")
TAU_010 = "changes under 10% of a number's range ignored"  # τ = 0.10 in the strip's plain words
PAGES = [("Data & model", "Data & model"), ("Global", "Global feature importance"), ("Regional explorer", "Regional explorer"),
         ("Thresholds", "Thresholds (τ)"), ("Counterfactuals", "Counterfactuals of one case"),
         ("Compare", "FLEX next to SHAP, LIME and DiCE"), ("Report", "Report")]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
]


@contextlib.contextmanager
def browser_on_app(tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    with running_app(env={"FLEX_CACHE_DIR": str(tmp_path / "cache")}) as url, playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_TEST_ARGS)
        try:
            yield url, browser.new_page(viewport={"width": 1400, "height": 1000})
        finally:
            browser.close()


def _strip(page) -> str:
    strip = page.locator("[data-testid='stCaptionContainer']", has_text="Settings:").first
    strip.wait_for(timeout=90_000)
    return strip.inner_text()


def test_the_strip_is_on_every_page_and_compare_follows_a_tau_change(tmp_path):
    with browser_on_app(tmp_path) as (url, page):
        page.goto(f"{url}/?{QUERY}", wait_until="domcontentloaded")
        page.get_by_text("Global feature importance", exact=True).first.wait_for(timeout=90_000)
        for link, title in PAGES:
            page.get_by_role("link", name=link, exact=True).click()
            page.get_by_text(title, exact=True).first.wait_for(timeout=90_000)
            text = _strip(page)
            assert STRIP in text and TAU_010 in text, (link, text)
            if link == "Compare":
                page.get_by_text("FLEX at τ = 0.10", exact=False).first.wait_for(timeout=90_000)
            page.screenshot(path=str(ARTIFACTS / f"strip_{link.split()[0].lower().strip('&')}.png"), full_page=True)

        # Move the global τ on Thresholds with the keyboard: 0.10 -> 0.15.
        page.get_by_role("link", name="Thresholds", exact=True).click()
        slider = page.get_by_role("slider", name="Global τ (all continuous features)")
        slider.wait_for(timeout=90_000)
        slider.focus()
        for _ in range(5):
            slider.press("ArrowRight")
        page.wait_for_function("() => document.body.innerText.includes('τ = 0.15')", timeout=60_000)
        # The τ section reruns on its own (a fragment): it writes τ into the address bar itself, so a reload keeps it.
        page.wait_for_function("() => new URLSearchParams(location.search).get('tau') === '0.15'", timeout=30_000)
        page.reload(wait_until="domcontentloaded")
        page.get_by_text("Global importance at the current τ", exact=False).first.wait_for(timeout=90_000)
        page.wait_for_function("() => [...document.querySelectorAll(\"[data-testid='stCaptionContainer']\")]"
                               ".some(el => el.textContent.includes('Settings:') && el.textContent.includes('under 15% of a number'))",
                               timeout=60_000)
        page.get_by_role("link", name="Compare", exact=True).click()
        page.get_by_text("FLEX next to SHAP, LIME and DiCE", exact=True).first.wait_for(timeout=90_000)
        page.get_by_text("FLEX at τ = 0.15", exact=False).first.wait_for(timeout=90_000)
        assert "changes under 15% of a number's range ignored" in _strip(page)
        assert re.search(r"FLEX is shown at the current τ = 0\.15", page.inner_text("body"))
        page.get_by_text("FLEX at τ = 0", exact=True).first.wait_for(timeout=30_000)  # the legend beside it
        page.screenshot(path=str(ARTIFACTS / "strip_compare_tau.png"), full_page=True)
        assert page.locator("[data-testid='stException']").count() == 0
