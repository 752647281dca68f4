"""Two sessions of the app on one server share the explainer (one shelf entry) and nothing else they set."""

import json

import pytest

from tests.pages.conftest import start
from ui import cache
from ui.shelf import Shelf

pytestmark = pytest.mark.slow  # the real app through AppTest, twice


def _explainers() -> list:
    return [key for key in cache.SHELF.sizes() if key[:2] == ("ui.cache", "explainer")]


def _link(at) -> str:
    """The Report page's link to this view: what the session would save or share."""
    return at.code[0].value


@pytest.fixture
def shelf(monkeypatch):
    """A fresh shelf for this server, so the explainers on it are the two sessions' only."""
    monkeypatch.setattr(cache, "SHELF", Shelf(2**31, ttl=1800))


def test_one_sessions_tau_and_query_never_reach_another_sessions_state_link_or_project(shelf, tmp_path):
    """Issue 34 item 2: session A moves τ and picks a query; session B, opened after on the same data and settings,
    gets the same shared explainer but its own defaults, in Session State and in the view it would share; and a
    project saved from that explainer holds neither session's view."""
    a = start("toy2d", page="app_pages/thresholds.py")
    a.slider(key="w_tau").set_value(0.63).run()
    a.switch_page("app_pages/regional.py").run()
    first = a.session_state["query"]
    a.button(key="random_query").click().run()
    query = a.session_state["query"]
    assert not a.exception and query != first
    a.switch_page("app_pages/report.py").run()
    assert "tau=0.63" in _link(a) and f"query={query}" in _link(a)

    shared = _explainers()

    b = start("toy2d", page="app_pages/report.py")
    assert not b.exception
    assert _explainers() == shared and len(shared) == 1  # the same explainer object serves both sessions
    assert b.session_state["tau"] == 0.1 and b.session_state["query"] != query
    assert "0.63" not in _link(b) and f"query={query}" not in _link(b)

    b.switch_page("app_pages/regional.py").run()  # B's own query, on the explainer A used
    a.switch_page("app_pages/report.py").run()
    assert a.session_state["tau"] == 0.63 and a.session_state["query"] == query
    assert "tau=0.63" in _link(a) and f"query={query}" in _link(a)

    explainer = cache.SHELF.get_or_make(shared[0], lambda: pytest.fail("the shared explainer left the shelf"))
    folder = explainer.save(tmp_path / "project")
    assert json.loads((folder / "settings.json").read_text()).get("view", {}) == {}
