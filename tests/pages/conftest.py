"""AppTest helpers: the real app (app.py and its pages) on tiny workloads, with a private counterfactual cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Counterfactual chunks go to a temporary folder, never the developer's .flex_cache/."""
    monkeypatch.setenv("FLEX_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "flex_cache"))


def start(dataset: str = "toy2d", *, n_factuals: int = 12, n_cf: int = 3, page: str | None = None) -> AppTest:
    """The app on a built-in dataset with small N_F and N_cf (the session set before the first run)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset"] = {"kind": "builtin", "name": dataset}
    at.session_state["sb_builtin"] = dataset
    at.session_state["sb_n_factuals"] = n_factuals
    at.session_state["sb_n_cf"] = n_cf
    at.session_state["sb_cv_folds"] = 3
    at.run()
    assert not at.exception, at.exception
    if page:
        at.switch_page(page).run()
        assert not at.exception, at.exception
    return at


def start_csv(frame, *, target: str, undesirable: list[str], n_factuals: int = 8, n_cf: int = 2,
              page: str | None = None) -> AppTest:
    """The app on a CSV, as after "Load CSV" in the sidebar."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["sb_source"] = "CSV upload"
    at.session_state["dataset"] = {"kind": "csv", "data": frame.to_csv(index=False).encode(), "filename": "data.csv",
                                   "target": target, "undesirable": undesirable}
    at.session_state["sb_n_factuals"] = n_factuals
    at.session_state["sb_n_cf"] = n_cf
    at.session_state["sb_cv_folds"] = 2
    at.run()
    assert not at.exception, at.exception
    if page:
        at.switch_page(page).run()
        assert not at.exception, at.exception
    return at


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


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]
