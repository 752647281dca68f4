"""The notebook (issue 40 item 5): ``explainer.dashboard(inline=True)`` shows the running app in the output, and a
saved project reopens with every setting the docs say it keeps."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
import types

import numpy as np
import pytest

import flex_core as fc
import flex_core.dashboard as dash
from tests.factories import accident_frame, user_pipeline


class _Running:
    """A stand-in for the app's process that keeps running."""

    args = ["streamlit"]
    returncode = None

    def poll(self):
        return None


def _fake_ipython(monkeypatch, *, notebook: bool) -> list:
    """IPython with ``get_ipython`` (None outside a kernel) and a ``display`` that records what it is given."""
    shown: list = []
    root, display = types.ModuleType("IPython"), types.ModuleType("IPython.display")
    root.get_ipython = lambda: object() if notebook else None  # type: ignore[attr-defined]

    class IFrame:
        def __init__(self, src, width, height):
            self.src, self.width, self.height = src, width, height

    display.IFrame, display.display = IFrame, shown.append  # type: ignore[attr-defined]
    root.display = display  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", root)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    return shown


@pytest.fixture
def no_app(monkeypatch):
    """dashboard() without starting Streamlit: a process that runs, and an app that answers at once."""
    monkeypatch.setattr(dash, "start_dashboard", lambda *a, **k: _Running())
    monkeypatch.setattr(dash, "wait_until_ready", lambda url, process, **k: True)


def test_inline_shows_the_app_in_the_notebooks_output(user_explainer, tmp_path, monkeypatch, capsys, no_app):
    shown = _fake_ipython(monkeypatch, notebook=True)
    url = user_explainer.dashboard(directory=tmp_path / "p", port=8765, inline=True, height=640)
    assert url == "http://localhost:8765"
    assert [(f.src, f.width, f.height) for f in shown] == [(url, "100%", 640)]
    assert f"FLEX Studio is starting at {url}" in capsys.readouterr().out
    # Without inline=True nothing is displayed; the address is printed all the same.
    user_explainer.dashboard(directory=tmp_path / "q", port=8766)
    assert len(shown) == 1 and "http://localhost:8766" in capsys.readouterr().out


def test_inline_outside_a_notebook_or_without_ipython_says_where_to_open_it(user_explainer, tmp_path, monkeypatch,
                                                                             capsys, no_app):
    shown = _fake_ipython(monkeypatch, notebook=False)
    user_explainer.dashboard(directory=tmp_path / "p", port=8765, inline=True)
    out = capsys.readouterr().out
    assert not shown and "this is not a notebook: open http://localhost:8765 in a browser" in out
    monkeypatch.setitem(sys.modules, "IPython", None)  # not installed: importing it fails
    assert dash.show_inline("http://localhost:8765") is False
    assert "IPython is not installed here: open http://localhost:8765" in capsys.readouterr().out


def test_waiting_for_the_app_answers_when_it_is_healthy_and_refuses_a_process_that_stopped():
    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok" if self.path == "/_stcore/health" else b"")

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert dash.wait_until_ready(f"http://127.0.0.1:{server.server_port}", _Running(), timeout=10) is True
    finally:
        server.shutdown()
    stopped = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    stopped.wait()
    with pytest.raises(fc.ConfigError, match="stopped before it answered.*exit status 3"):
        dash.wait_until_ready("http://127.0.0.1:9", stopped, timeout=10)


def test_a_saved_project_reopens_with_every_setting(tmp_path):
    """Every setting settings.json holds (the docs: kinds, immutable features, the generator and its settings,
    N_cf, the size of changes, the seed, every constraint, the words, the view) comes back from load."""
    frame = accident_frame(300)
    words = '[outcome]\nundesirable = "Serious"\n[features.speed]\nname = "Speed"\nunit = "km/h"\n'
    explainer = fc.FlexExplainer(
        user_pipeline(frame), frame.drop(columns="severity"), y=frame["severity"], undesired="severe",
        kinds={"district": "categorical"}, immutable=["zone"], seed=7, generator="batch",
        generator_settings={"samples": 40, "max_rounds": 3}, n_cf=3, refine="none",
        monotone={"speed": "decrease"}, bounds={"speed": (30, None)}, allowed={"lighting": ["daylight"]},
        ordinal_orders={"district": ["3", "1", "2"]}, constraints=["cf.speed >= x.speed - 30"], dictionary=words,
        name="roads")
    view = {"n_factuals": 14, "tau": 0.2, "query": 5, "k": 3, "where": {"lighting": "dark"}}
    folder = explainer.save(tmp_path / "project", view=view)
    loaded = fc.FlexExplainer.load(folder)
    assert loaded.settings(view=view) == explainer.settings(view=view)
    assert fc.FlexExplainer.read_settings(folder)["view"] == {**view, "where": "lighting=dark"}
    task, again = loaded.task, explainer.task
    assert task.constraints == again.constraints and task.rule_texts == again.rule_texts
    assert task.feature("district").levels == ("3", "1", "2") and task.feature("speed").unit == "km/h"
    assert (loaded.generator_name, loaded.generator_settings, loaded.n_cf, loaded.refine, loaded.seed) == (
        "batch", {"samples": 40, "max_rounds": 3}, 3, "none", 7)
    # The counterfactuals' identity too, but for the model's content hash: skops writes the model anew.
    assert loaded.y_given and {**loaded.key, "model": None} == {**explainer.key, "model": None}
    np.testing.assert_array_equal(loaded.explain_global(n_factuals=6).frequency_mean,
                                  explainer.explain_global(n_factuals=6).frequency_mean)
