"""ui.text.plain through Streamlit's own Markdown in Chromium: hostile and random text reads as itself, and
nothing in it renders as a link, an image, HTML, a directive, an icon, an emoji, math or formatting."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.browser.test_state_browser import new_page
from tests.ui.test_text import ATTACKS
from tools.serve import CHROMIUM, CHROMIUM_TEST_ARGS, REPO, free_port

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
]

#: A page that shows each text as the app does: in an alert, as Markdown and as a caption.
SCRIPT = """
import json, sys
import streamlit as st
from ui.text import plain
for i, text in enumerate(json.load(open(sys.argv[1]))):
    with st.container(key=f"text{i}"):
        st.warning(plain(text))
        st.markdown(plain(text))
        st.caption(plain(text))
st.markdown("all drawn")
"""
#: Pieces Markdown and Streamlit give meaning to, and plain ones, joined at random.
PIECES = ["[", "]", "(", ")", "!", "<", ">", "<a href='http://x.example'>", "</a>", "<img src=x>", "http://x.example",
          "www.x.example", "a@b.example", ":red[", ":blue-background[", ":material/home:", ":streamlit:", ":smile:",
          "$", "$$", "x^2", "**", "_", "`", "~~", "#", "- ", "1. ", "> ", "|", "\\", "&amp;", "&lt;", "&#65;",
          " -> ", " -- ", " >= ", "\n", "\n\n", "    ", " ", "word", "é", "日本", "[x](http://x.example)", "![y](z)"]
#: Where each of the three shows its text.
SHOWN = "[data-testid='stAlertContentWarning'], [data-testid='stMarkdownContainer']"
#: What would make a rendered text more than text.
LIVE = ("a, img, svg, code, pre, strong, em, del, h1, h2, h3, h4, h5, h6, ul, ol, li, blockquote, table, hr, .katex, "
        "[class*='stMarkdownColored'], [data-testid='stIconMaterial'], [data-testid='stMarkdownBadge']")


def texts() -> list[str]:
    rng = random.Random(31)
    return [*ATTACKS, *("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14))) for _ in range(150))]


def lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.replace("\u2060", "").split("\n") if line.strip()]


@pytest.fixture(scope="module")
def text_page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("text")
    (folder / "texts.json").write_text(json.dumps(texts()))
    (folder / "show.py").write_text(SCRIPT)
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", str(folder / "show.py"), "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
               "--", str(folder / "texts.json")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(folder / "server.log", "wb") as log:
        server = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                        break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise RuntimeError((folder / "server.log").read_text()[-2000:]) from None
                    time.sleep(0.3)
            yield f"http://127.0.0.1:{port}"
        finally:
            server.terminate()
            server.wait(timeout=10)


def test_every_text_reads_as_itself_in_streamlits_markdown(text_page):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_TEST_ARGS)
        try:
            page = new_page(browser)
            page.goto(text_page, wait_until="domcontentloaded")
            page.get_by_text("all drawn", exact=True).wait_for()
            page.wait_for_timeout(1000)  # Streamlit loads its Markdown plugins (math, emoji) on demand
            wrong = []
            for i, text in enumerate(texts()):
                for shown in page.locator(f".st-key-text{i}").locator(SHOWN).all():
                    live = shown.locator(LIVE).count()
                    if live or lines(shown.inner_text()) != lines(text):
                        wrong.append((text, shown.inner_text(), shown.inner_html()[:300]))
            assert page.locator(".st-key-text0").locator(SHOWN).count() == 3  # the alert, the text, the caption
            assert wrong == [], wrong[:5]
        finally:
            browser.close()
