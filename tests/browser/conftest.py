"""The browser tests' shared fixtures: one Chromium per test module, and the app served beside it.

Playwright's sync API allows one driver at a time in a thread, so each module holds one Chromium (``browser``) and,
where it tests the app, one ``streamlit run app.py`` with a private counterfactual cache (``app``: (url, browser)).
Each test opens its own pages (each a new Streamlit session); the module's pages share one browser context, as a
person's tabs share one browser window, and a test's closed tab is the next test's new one (its address loaded
anew: a new session).
"""

from __future__ import annotations

import pytest

from tools.serve import CHROMIUM, CHROMIUM_TEST_ARGS, running_app


class _Tab:
    """A tab of the shared context; ``close()`` hands it back for the module's next ``new_page`` (its session storage
    cleared, then blank), so the next test's address loads in a renderer whose scripts are compiled already: a goto in
    a kept tab cost 2.0-4.6 s of CPU against 6.7-8.3 s for a new tab (measured 2026-11-29, Glossary, Thresholds and
    Global on loan). The next goto is a new Streamlit session, as in a new tab. A tab a test hooked (events, routes,
    scripts) is closed for good, so nothing it added reaches another test.
    """

    _HOOKS = frozenset({"on", "once", "route", "route_from_har", "expose_function", "expose_binding", "add_init_script"})

    def __init__(self, page, spare: list):
        self._page, self._spare, self._hooked = page, spare, False

    def __getattr__(self, name: str):
        if name in self._HOOKS:
            self._hooked = True
        return getattr(self._page, name)

    def close(self, **options) -> None:
        page = self._page
        if page.is_closed():
            return
        if not self._hooked and not options and not self._spare:
            try:
                if page.url.startswith("http"):
                    page.evaluate("sessionStorage.clear()")
                page.goto("about:blank", timeout=10_000)
            except Exception:  # a page that cannot leave (a dialog, a crash) is not handed on
                pass
            else:
                self._spare.append(page)
                return
        page.close(**options)


class SharedContext:
    """A Chromium whose ``new_page(viewport=...)`` opens a tab in one browser context kept for the module, reusing
    the tab the module's last test closed (:class:`_Tab`).

    A page in a context of its own (Playwright's ``Browser.new_page``) cost about 3 s of CPU more, a new renderer
    and the app's scripts compiled again (measured 2026-11-29: 8.1-8.7 s against 5.1-5.6 s a page load, the
    Glossary on loan), most of a browser test's time. Any other option gets a context of its own; everything else
    is the Browser's.
    """

    def __init__(self, chromium):
        self._chromium = chromium
        self._context = None
        self._spare: list = []

    def new_page(self, *, viewport: dict | None = None, **options):
        if options:
            return self._chromium.new_page(viewport=viewport, **options)
        if self._context is None:
            self._context = self._chromium.new_context()
        page = self._spare.pop() if self._spare else self._context.new_page()
        page.set_viewport_size(viewport or {"width": 1280, "height": 720})  # Playwright's default size
        return _Tab(page, self._spare)

    def __getattr__(self, name: str):
        return getattr(self._chromium, name)


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module (:class:`SharedContext`); each test opens its own pages."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_TEST_ARGS)
        try:
            yield SharedContext(chromium)
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def app(tmp_path_factory, browser):
    """The app on a free port with its own counterfactual cache, and the module's Chromium: (url, browser)."""
    with running_app(env={"FLEX_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}) as url:
        yield url, browser
