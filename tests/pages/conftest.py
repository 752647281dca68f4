"""AppTest helpers: the real app (app.py and its pages) on tiny workloads, with a private counterfactual cache."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Counterfactual chunks go to a temporary folder, never the developer's .flex_cache/."""
    monkeypatch.setenv("FLEX_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "flex_cache"))


def _run(state: dict, page: str | None) -> AppTest:
    """The app with ``state`` in Session State before its first run, then optionally on ``page``."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in state.items():
        at.session_state[key] = value
    return first_run(at, page)


def first_run(at: AppTest, page: str | None = None) -> AppTest:
    """``at`` run once without an exception, then switched to ``page`` (if any) without one."""
    at.run()
    assert not at.exception, at.exception
    if page:
        at.switch_page(page).run()
        assert not at.exception, at.exception
    return at


def start(dataset: str = "toy2d", *, n_factuals: int = 12, n_cf: int = 3, page: str | None = None) -> AppTest:
    """The app on a built-in dataset with small N_F and N_cf (the session set before the first run)."""
    return _run({"dataset": {"kind": "builtin", "name": dataset}, "sb_builtin": dataset, "sb_n_factuals": n_factuals,
                 "sb_n_cf": n_cf, "sb_cv_folds": 3}, page)


def start_csv(frame, *, target: str, undesirable: list[str], n_factuals: int = 8, n_cf: int = 2,
              page: str | None = None, desired: list[str] | None = None) -> AppTest:
    """The app on a CSV, as after "Load CSV" in the sidebar."""
    dataset = {"kind": "csv", "data": frame.to_csv(index=False).encode(), "filename": "data.csv",
               "target": target, "undesirable": undesirable, **({"desired": desired} if desired else {})}
    return _run({"sb_source": "CSV upload", "dataset": dataset, "sb_n_factuals": n_factuals, "sb_n_cf": n_cf,
                 "sb_cv_folds": 2}, page)


def chart(at: AppTest, key: str) -> dict:
    """The Plotly spec of the chart drawn with ``key`` (as the browser receives it)."""
    for element in at.get("plotly_chart"):
        if element.proto.id.endswith(f"-{key}"):
            return json.loads(element.proto.spec)
    raise AssertionError(f"no chart with key {key!r}; charts: {[e.proto.id for e in at.get('plotly_chart')]}")


def metric(at: AppTest, label: str) -> str:
    for m in at.metric:
        if m.label == label:
            return m.value
    raise AssertionError(f"no metric {label!r}; metrics: {[m.label for m in at.metric]}")


def shown(markdown: str) -> str:
    """The text Markdown from :func:`ui.text.plain` reads as: its backslash escapes and hard line breaks undone."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown.replace("\\\n", "\n")).replace("\u2060", "")


def syntax_characters(markdown: str) -> list[tuple[int, str]]:
    """(position, character) of each ASCII punctuation character CommonMark reads as syntax: not backslash-escaped."""
    found, i = [], 0
    while i < len(markdown):
        if markdown[i] == "\\":
            run = len(markdown[i:]) - len(markdown[i:].lstrip("\\"))
            after = markdown[i + run] if i + run < len(markdown) else ""
            if run % 2 == 1 and after not in string.punctuation and after != "\n":
                found.append((i + run - 1, "\\"))  # a lone backslash before a letter escapes nothing
            i += run + (1 if run % 2 == 1 and after else 0)
            continue
        if markdown[i] in string.punctuation:
            found.append((i, markdown[i]))
        i += 1
    return found


def live_markdown(markdown: str) -> list[str]:
    """What in ``markdown`` Streamlit would render as more than text: links, images, autolinks, HTML, directives, math."""
    live = dict(syntax_characters(markdown))
    kinds = []
    for i, c in live.items():
        if c == "]" and live.get(i + 1) == "(":
            kinds.append("link or image")
        elif c == "<" and re.match(r"[A-Za-z/!?]", markdown[i + 1:i + 2]):
            kinds.append("HTML or autolink")
        elif c == ":" and re.match(r"[a-z][a-z0-9-]*\[", markdown[i + 1:]):
            kinds.append("directive")
        elif c == "$":
            kinds.append("math")
    # GFM links web and e-mail addresses found in the text, escaped or not, unless a word joiner stands before.
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)
    kinds += ["web address" for _ in re.finditer(r"(?<!\u2060)(?:https?://|www\.)", text, re.IGNORECASE)]
    kinds += ["e-mail address" for _ in re.finditer(r"[-.\w+]@[-\w]+\.", text)]
    return kinds


def errors(at: AppTest) -> list[str]:
    """The red messages as a user reads them."""
    return [shown(e.value) for e in at.error]
