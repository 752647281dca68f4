"""Issue 31 in a real browser: a hosted server refuses a code-running .skops upload, nothing in it runs,
the page says the file was refused and why, and the previous model stays active."""

from __future__ import annotations

import os
import re

import pytest

import flex_core as fc
from tests.browser.test_browser import ARTIFACTS, BARS
from tests.browser.test_state_browser import new_page, wait_idle
from tests.factories import user_pipeline
from tests.payloads import gadget_file
from tools.serve import CHROMIUM, CHROMIUM_TEST_ARGS, app_server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
]


def use_model_file(page, sidebar, path) -> None:
    upload = sidebar.locator("[data-testid='stFileUploader']").filter(has_text="Model file (.skops)")
    upload.locator("input[type='file']").set_input_files(str(path))
    # The server has the file (a click before that would press the button for the file chosen before it).
    sidebar.get_by_text(re.compile(rf"Chosen, not yet in use: {re.escape(path.name)}")).wait_for()
    sidebar.get_by_role("button", name="Use this model").click()
    wait_idle(page)


def test_a_hosted_server_refuses_a_code_running_model_file_and_keeps_the_previous_model(tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    task = fc.data.load_builtin("toy2d")
    good = fc.models.save_model(user_pipeline(task.frame, target=task.target), tmp_path / "good.skops")
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.skops"
    evil.write_bytes(gadget_file(marker))  # numpy's runstring, trusted by the old prefix rule: it would create marker
    env = {"FLEX_HOSTED": "1", "FLEX_CACHE_DIR": str(tmp_path / "cache")}
    with app_server(env=env) as (url, _), playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_TEST_ARGS)
        try:
            page = new_page(browser)
            page.goto(f"{url}/?dataset=builtin:toy2d&n_factuals=10&n_cf=2", wait_until="domcontentloaded")
            page.get_by_text(re.compile(r"Active: toy2d")).first.wait_for()
            wait_idle(page)
            sidebar = page.locator("[data-testid='stSidebar']")
            sidebar.get_by_text("Load a model file").click()
            wait_idle(page)
            use_model_file(page, sidebar, good)
            sidebar.get_by_text("Active model file: good.skops").wait_for()
            page.wait_for_selector(BARS)
            wait_idle(page)

            use_model_file(page, sidebar, evil)
            error = sidebar.locator("[data-testid='stAlertContentError']")
            error.first.wait_for()
            messages = [e.inner_text() for e in error.all()]
            assert len(messages) == 1, messages
            assert messages[0].startswith("The model file was refused: it names a skops ConstructorFromReduceNode "
                                          "of numpy.testing._private.utils.runstring"), messages
            assert "Nothing in it was built or run. The previous model stays active." in messages[0]
            assert "not loaded" not in messages[0]
            assert sidebar.get_by_text("Active model file: good.skops").count() == 1
            page.wait_for_selector(BARS)  # the previous model's chart is still drawn
            assert page.locator("[data-testid='stException']").count() == 0
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "model_file_refused.png"), full_page=True)
            page.close()
        finally:
            browser.close()
    assert not marker.exists(), "the model file's code ran on the server"
