"""The browser tests' shared fixtures: one Chromium per test module, and the app served beside it.

Playwright's sync API allows one driver at a time in a thread, so each module holds one Chromium (``browser``) and,
where it tests the app, one ``streamlit run app.py`` with a private counterfactual cache (``app``: (url, browser)).
"""

from __future__ import annotations

import pytest

from tools.serve import CHROMIUM, CHROMIUM_ARGS, running_app


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module; each test opens its own pages."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def app(tmp_path_factory, browser):
    """The app on a free port with its own counterfactual cache, and the module's Chromium: (url, browser)."""
    with running_app(env={"FLEX_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}) as url:
        yield url, browser
