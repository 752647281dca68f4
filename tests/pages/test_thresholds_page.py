"""Thresholds: τ sliders recompute from the stored counterfactuals, never regenerate."""

import os
from pathlib import Path

import pytest

from tests.pages.conftest import chart, start

# Every test here drives the real app through AppTest (seconds each): not in the fast run.
pytestmark = pytest.mark.slow


def _frequencies(at, key="tau_chart"):
    flex = chart(at, key)["data"][0]
    return dict(zip(flex["customdata"], flex["x"]))


def _chunks() -> int:
    return len(list(Path(os.environ["FLEX_CACHE_DIR"]).rglob("chunk-*.npz")))


def test_moving_the_global_tau_changes_the_frequencies_without_generating():
    at = start("toy2d", page="app_pages/thresholds.py")
    low = _frequencies(at)
    chunks = _chunks()
    at.slider(key="w_tau").set_value(0.6).run()
    assert not at.exception
    high = _frequencies(at)
    assert high != low
    # A larger τ can only remove changes (Algorithm 1): no frequency grows.
    assert all(high[f] <= low[f] for f in low)
    assert _chunks() == chunks, "a τ change must not generate counterfactuals"
    # The global page follows the session's τ.
    at.switch_page("app_pages/global.py").run()
    assert _frequencies(at, "global_chart") == high


def test_a_per_feature_tau_changes_only_that_feature():
    at = start("toy2d", page="app_pages/thresholds.py")
    before = _frequencies(at)
    at.slider(key="w_tau.visibility").set_value(0.9).run()
    after = _frequencies(at)
    assert after["vehicle_speed"] == before["vehicle_speed"]
    assert after["visibility"] <= before["visibility"]
    assert at.session_state["tau_features"] == {"visibility": 0.9}


def test_sweep_and_panels_carry_one_curve_per_continuous_feature():
    at = start("toy2d", page="app_pages/thresholds.py")
    sweep = chart(at, "tau_sweep")
    assert {t["customdata"][0] for t in sweep["data"]} == {"vehicle_speed", "visibility"}
    for trace in sweep["data"]:
        assert trace["x"][0] == 0.0 and trace["x"][-1] == 1.0
        assert all(a >= b for a, b in zip(trace["y"], trace["y"][1:])), "F_j never grows with τ"
    panels = chart(at, "tau_panels")
    assert [t["name"] for t in panels["data"]] == ["τ = 0.1", "τ = 0.5", "τ = 0.9"]
    # The τ = 0.1 panel equals the sweep at 0.1.
    at_01 = {t["customdata"][0]: t["y"][t["x"].index(0.1)] for t in sweep["data"]}
    assert dict(zip(panels["data"][0]["customdata"], panels["data"][0]["x"])) == at_01


def test_a_tau_change_moves_the_sweeps_marker_and_keeps_its_lines(monkeypatch):
    """The sweep's lines are drawn once and kept in ui/ (the library keeps no figures); a τ change adds its marker."""
    import flex_core as fc

    drawn = []
    draw = fc.plotting.tau_sweep_figure
    monkeypatch.setattr(fc.plotting, "tau_sweep_figure", lambda sweep, **k: drawn.append(1) or draw(sweep, **k))
    at = start("toy2d", page="app_pages/thresholds.py")
    lines = [t["y"] for t in chart(at, "tau_sweep")["data"]]
    at.slider(key="w_tau").set_value(0.6).run()
    sweep = chart(at, "tau_sweep")
    assert [t["y"] for t in sweep["data"]] == lines
    assert [a["text"] for a in sweep["layout"]["annotations"] if "current" in a["text"]] == ["current τ = 0.6"]
    assert len(drawn) <= 1, "the lines were drawn again on a τ change"
