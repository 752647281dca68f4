"""The browser tests' shared fixtures: one Chromium per test module, and the app served beside it.

Playwright's sync API allows one driver at a time in a thread, so each module holds one Chromium (``browser``) and,
where it tests the app, one ``streamlit run app.py`` with a private counterfactual cache (``app``: (url, browser)).
Each test opens its own pages (each a new Streamlit session); the module's pages share one browser context, as a
person's tabs share one browser window.
"""

from __future__ import annotations

import pytest

from tools.serve import CHROMIUM, CHROMIUM_ARGS, running_app


class SharedContext:
    """A Chromium whose ``new_page(viewport=...)`` opens a tab in one browser context kept for the module.

    A page in a context of its own (Playwright's ``Browser.new_page``) cost about 3 s of CPU more, a new renderer
    and the app's scripts compiled again (measured 2026-11-29: 8.1-8.7 s against 5.1-5.6 s a page load, the
    Glossary on loan), most of a browser test's time. Any other option gets a context of its own; everything else
    is the Browser's.
    """

    def __init__(self, chromium):
        self._chromium = chromium
        self._context = None

    def new_page(self, *, viewport: dict | None = None, **options):
        if options:
            return self._chromium.new_page(viewport=viewport, **options)
        if self._context is None:
            self._context = self._chromium.new_context()
        page = self._context.new_page()
        if viewport:
            page.set_viewport_size(viewport)
        return page

    def __getattr__(self, name: str):
        return getattr(self._chromium, name)


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module (:class:`SharedContext`); each test opens its own pages."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield SharedContext(chromium)
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def app(tmp_path_factory, browser):
    """The app on a free port with its own counterfactual cache, and the module's Chromium: (url, browser)."""
    with running_app(env={"FLEX_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}) as url:
        yield url, browser
