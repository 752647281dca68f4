"""flex_core.plotting.style: the public look of the library's figures, which the app's own chart uses."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import plotly.graph_objects as go

import flex_core as fc
from flex_core.plotting import style


def test_a_chart_drawn_with_the_style_looks_like_the_library_figures():
    fig = style.new_figure(rows=1, cols=2)
    fig.add_trace(go.Scatter(x=style.as_floats([1, float("nan")]), y=[0.0, 1.0], **style.panel_axes(2)))
    spec = style.apply_style(fig, title="a chart of one's own", height=400).to_dict()
    assert spec["data"][0]["x"] == [1.0, None]
    assert (spec["data"][0]["xaxis"], spec["data"][0]["yaxis"]) == ("x2", "y2")
    sweep = pd.DataFrame({"feature": ["speed"] * 2, "label": ["speed"] * 2, "tau": [0.0, 0.5], "frequency_mean": [0.8, 0.3]})
    library = fc.plotting.tau_sweep_figure(sweep).to_dict()
    for key in ("template", "font", "margin", "legend"):
        assert spec["layout"][key] == library["layout"][key], key
    assert spec["layout"]["title"]["text"] == "a chart of one's own" and spec["layout"]["height"] == 400


def test_without_plotly_the_style_is_one_error_naming_the_extra():
    code = "import sys\nsys.modules['plotly'] = None\nimport flex_core.plotting.style\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == ("flex_core._extras.MissingDependencyError: Drawing a figure needs plotly, "
                                            'which is not installed: pip install "flex-studio[plots]".')
