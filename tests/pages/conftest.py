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


def _run(state: dict, page: str | None) -> AppTest:
    """The app with ``state`` in Session State before its first run, then optionally on ``page``."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in state.items():
        at.session_state[key] = value
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
              page: str | None = None) -> AppTest:
    """The app on a CSV, as after "Load CSV" in the sidebar."""
    dataset = {"kind": "csv", "data": frame.to_csv(index=False).encode(), "filename": "data.csv",
               "target": target, "undesirable": undesirable}
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


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]
