"""The view link and selection events: pure helpers of the dashboard."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pytest

import flex_core as fc
from flex_core.limits import LIMITS
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
    with pytest.raises(fc.ConfigError, match="Link parameter k .* from 0 to 1,000; got -1"):
        url_state.view_from_query_params({"k": "-1"})
    with pytest.raises(fc.ConfigError, match="model"):
        url_state.view_from_query_params({"model": "svm"})
    with pytest.raises(fc.ConfigError, match="refine"):
        url_state.view_from_query_params({"refine": "smallest"})
    with pytest.raises(fc.ConfigError, match="Unknown view field"):
        url_state.view_to_query_params({"colour": "red"})


def test_every_setting_that_changes_a_number_round_trips():
    view = {**url_state.VIEW_DEFAULTS, "dataset": "accidents:/data/RTA.csv", "missing": "impute",
            "immutable": ["Sex_of_driver"], "kinds": {"Driving_experience": "ordinal"}, "cv_folds": 3,
            "generator_settings": {"max_rounds": "20"}, "tau_features": {}}
    params = url_state.view_to_query_params(view)
    assert params["missing"] == "impute" and params["immutable"] == "Sex_of_driver"
    assert params["kind.Driving_experience"] == "ordinal" and params["gen.max_rounds"] == "20"
    assert url_state.view_from_query_params(params) == view
    # "No feature is immutable" differs from "the dataset's own": an empty list travels as an empty value.
    none_fixed = url_state.view_to_query_params({**url_state.VIEW_DEFAULTS, "immutable": []})
    assert none_fixed == {"immutable": ""} and url_state.view_from_query_params(none_fixed)["immutable"] == []
    assert url_state.view_from_query_params({})["immutable"] is None
    with pytest.raises(fc.ConfigError, match="kind.age"):
        url_state.view_from_query_params({"kind.age": "big"})
    with pytest.raises(fc.ConfigError, match="missing"):
        url_state.view_from_query_params({"missing": "guess"})
    with pytest.raises(fc.ConfigError, match="cv_folds"):
        url_state.view_from_query_params({"cv_folds": "1"})


@pytest.mark.parametrize("key, value", [("n_cf", "51"), ("n_factuals", "5001"), ("cv_folds", "11"), ("cv_rows", "9"),
                                        ("seed", str(2**32)), ("k", "1001")])
def test_values_the_sidebar_cannot_show_are_refused(key, value):
    high = f"{LIMITS[key].high:,}"
    with pytest.raises(fc.ConfigError, match=f"Link parameter {key} .* to {high}(, not 1)?; got {int(value):,}"):
        url_state.view_from_query_params({key: value})


@pytest.mark.parametrize("params, message", [
    # the security review's link: 20 factuals x 20,000,000 candidates each
    ({"dataset": "builtin:toy2d", "n_factuals": "20", "gen.samples": "20000000"},
     "Link parameter gen.samples .* from 1 to 10,000; got 20,000,000"),
    ({"gen.max_rounds": "100000"}, "gen.max_rounds .* from 1 to 1,000; got 100,000"),
    ({"gen.time_limit": "-1"}, "gen.time_limit .* from 0 to 86,400; got -1"),
    ({"gen.n_jobs": "100000"}, "gen.n_jobs .* from -1 to 64, not 0; got 100,000"),
    ({"seed": "-1"}, "Link parameter seed .* from 0 to 4,294,967,295; got -1"),
])
def test_a_link_with_a_number_out_of_range_is_refused_with_its_range(params, message):
    with pytest.raises(fc.ConfigError, match=message) as caught:
        url_state.view_from_query_params(params)
    assert "[" not in str(caught.value) and "'" not in str(caught.value)  # the number as read, no raw text


def test_the_sidebar_and_the_link_share_the_limits():
    """One maximum per setting: the sidebar's number boxes take min and max from flex_core.limits.LIMITS."""
    from ui import sidebar

    assert sidebar._range("n_cf") == {"min_value": 1, "max_value": LIMITS["n_cf"].high}
    assert sidebar._range("seed") == {"min_value": 0, "max_value": 2**32 - 1}
    assert sidebar._range("time_limit") == {"min_value": 0.0, "max_value": 86_400.0}
    assert sidebar._range("not_bounded") == {}
    with pytest.raises(fc.ConfigError, match="generator setting samples .* 10,000; got 20,000,000"):
        sidebar._parse_optional_number("samples", "20000000")


def test_saved_regions_travel_in_the_link():
    regions = [{"name": "fast, rural; (2)", "query": 12, "k": 4, "where": "road_type=rural"},
               {"name": "row 3", "query": 3, "k": 2, "where": None}]
    params = url_state.view_to_query_params({**url_state.VIEW_DEFAULTS, "regions": regions})
    assert url_state.view_from_query_params(params)["regions"] == regions
    for bad in ("[[1,2]]", "not json", '[["a", "x", 2, null]]', '[["a", 1, -2, null]]'):
        with pytest.raises(fc.ConfigError, match="regions="):
            url_state.view_from_query_params({"regions": bad})


def test_display_settings_that_change_the_bars_travel_too():
    view = {**url_state.VIEW_DEFAULTS, "necessary_only": True, "whiskers": "std", "terms": True}
    params = url_state.view_to_query_params(view)
    assert params == {"necessary_only": "true", "whiskers": "std", "terms": "true"}
    assert url_state.view_from_query_params(params) == view
    with pytest.raises(fc.ConfigError, match="necessary_only="):
        url_state.view_from_query_params({"necessary_only": "maybe"})
    with pytest.raises(fc.ConfigError, match="terms="):
        url_state.view_from_query_params({"terms": "maybe"})


def test_tau_cannot_mark_a_report_of_categorical_data_out_of_date():
    from types import SimpleNamespace

    from ui import state

    view = {"dataset": "builtin:toy2d", "tau": 0.4, "tau_features": {"speed": 0.2}, "k": 4}
    categorical_only = SimpleNamespace(continuous_names=[])
    with_numbers = SimpleNamespace(continuous_names=["speed"])
    assert state.numbers_view(view, categorical_only) == {"dataset": "builtin:toy2d", "k": 4}
    assert state.numbers_view(view, with_numbers) == view
    before = state.numbers_view({**view, "tau": 0.1}, categorical_only)
    assert state.view_changes(before, state.numbers_view(view, categorical_only)) == []


def test_the_what_if_case_round_trips_and_bad_edits_are_refused():
    view = {**url_state.VIEW_DEFAULTS, "whatif_row": 42, "whatif_edits": {"speed": 35.5, "road type": "rural", "age": 3}}
    params = url_state.view_to_query_params(view)
    assert params["whatif_row"] == "42" and json.loads(params["whatif_edits"]) == view["whatif_edits"]
    back = url_state.view_from_query_params(params)
    assert (back["whatif_row"], back["whatif_edits"]) == (42, view["whatif_edits"])
    assert "whatif_edits" not in url_state.view_to_query_params(url_state.VIEW_DEFAULTS)
    for key, bad in (("whatif_edits", '["speed"]'), ("whatif_edits", '{"speed": true}'), ("whatif_row", "-1")):
        with pytest.raises(fc.ConfigError, match=key):
            url_state.view_from_query_params({key: bad})


def test_constraints_between_features_travel_in_the_link():
    rules = ['cf.speed <= x.speed + 10', 'if cf.lighting != x.lighting then cf."speed" >= x.speed']
    view = {**url_state.VIEW_DEFAULTS, "constraints": rules}
    params = url_state.view_to_query_params(view)
    assert json.loads(params["constraints"]) == rules
    assert url_state.view_from_query_params(params) == view
    # None (the data's own) stays out of the link; an empty list (none at all) travels.
    assert "constraints" not in url_state.view_to_query_params(url_state.VIEW_DEFAULTS)
    cleared = url_state.view_to_query_params({**url_state.VIEW_DEFAULTS, "constraints": []})
    assert url_state.view_from_query_params(cleared)["constraints"] == []
    with pytest.raises(fc.ConfigError, match="Link parameter constraints"):
        url_state.view_from_query_params({"constraints": '{"a": 1}'})


def test_a_numeric_targets_band_round_trips_and_a_bad_one_is_refused():
    band = {"target": "loan amount", "above": 25_000_000.0, "below": None, "inclusive": True}
    params = url_state.view_to_query_params({**url_state.VIEW_DEFAULTS, "band": band})
    assert params == {"band": '{"above":25000000,"inclusive":true,"target":"loan amount"}'}
    assert url_state.view_from_query_params(params)["band"] == band
    outside = {"target": "y", "above": 20.0, "below": 8.5, "inclusive": False}
    assert url_state.view_from_query_params(url_state.view_to_query_params({"band": outside}))["band"] == outside
    assert url_state.view_from_query_params({})["band"] is None
    for bad in ('{"target":"y","sideways":1}', '{"target":"y"}', '{"target":"y","below":"x"}', '{"target":"y","above":true}',
                '{"target":"y","above":1,"inclusive":"yes"}', '[1]', '{"above":1}', '{"target":"y","above":NaN}'):
        with pytest.raises(fc.ConfigError, match="Link parameter band="):
            url_state.view_from_query_params({"band": bad})
    with pytest.raises(fc.ConfigError, match=r"band=.*low end \(20\) must be below its high end \(8\)"):
        url_state.view_from_query_params({"band": '{"target":"y","above":8,"below":20}'})
