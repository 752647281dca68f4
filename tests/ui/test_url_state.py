"""The view link and selection events: pure helpers of the dashboard."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

import flex_core as fc
from ui import selection, url_state


def test_rows_from_selection_reads_customdata_in_order_without_repeats():
    event = {"points": [{"customdata": [7]}, {"customdata": 3}, {"customdata": [7]}, {"x": 1}, {"customdata": ["x"]}]}
    assert selection.rows_from_selection(event) == [7, 3]
    assert selection.rows_from_selection(event, allowed=[3]) == [3]
    assert selection.rows_from_selection(None) == [] and selection.rows_from_selection({"points": []}) == []


def test_view_link_round_trip_and_bad_values():
    view = {**url_state.VIEW_DEFAULTS, "dataset": "builtin:toy2d", "query": 17, "k": 6, "where": "road_type=rural",
            "tau": 0.25, "tau_features": {"speed": 0.5}, "model": "gb", "refine": "none"}
    link = url_state.view_link("http://localhost:8501/", view)
    params = {k: v[0] for k, v in parse_qs(urlparse(link).query).items()}
    assert params["tau.speed"] == "0.5" and "seed" not in params  # defaults stay out of the link
    assert url_state.view_from_query_params(params) == view
    with pytest.raises(fc.ConfigError, match="k="):
        url_state.view_from_query_params({"k": "-1"})
    with pytest.raises(fc.ConfigError, match="model"):
        url_state.view_from_query_params({"model": "svm"})
    with pytest.raises(fc.ConfigError, match="refine"):
        url_state.view_from_query_params({"refine": "smallest"})
    with pytest.raises(fc.ConfigError, match="Unknown view field"):
        url_state.view_to_query_params({"colour": "red"})
