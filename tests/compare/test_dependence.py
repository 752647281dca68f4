"""Partial dependence and ICE (issue 40 item 3) on planted models with a known answer: the planted driver's curves
cross the decision boundary at the planted threshold; a pure-noise feature's curves stay flat."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from tests.factories import planted
from tests.planted_learned import NOISE_FEATURES, SPEED_LIMIT, planted_forest, planted_task


def _rule_task():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"speed": rng.uniform(20, 120, 300).round(1), "road": rng.choice(["urban", "rural"], 300),
                          "temp": rng.normal(15, 8, 300).round(1)})
    return planted(frame, lambda X: (X["speed"].astype(float) > SPEED_LIMIT) & (X["road"] == "rural"))


def test_a_rule_coded_as_a_model_crosses_exactly_at_its_threshold_and_its_noise_is_flat():
    task, model = _rule_task()
    query = int(task.frame.index[(task.frame["road"] == "rural") & (task.frame["speed"] > 90)][0])
    ways_out = task.frame.loc[[query], task.feature_names].assign(speed=SPEED_LIMIT)  # the rule's own way out
    curves = fc.compare.dependence_curves(model, task, "speed", query=query, counterfactuals=ways_out, n_rows=100)
    assert curves.rows[-1] == query and curves.individual.shape == (101, len(curves.grid))
    rural = (task.frame.loc[curves.rows, "road"] == "rural").to_numpy()
    step = np.diff(curves.grid).max()
    for crossing, is_rural in zip(curves.crossings(), rural):
        # Rural: undesirable exactly above 60, so the one crossing is the first grid value past 60. Urban: never.
        assert (len(crossing) == 1 and SPEED_LIMIT < crossing[0] <= SPEED_LIMIT + step) if is_rural else crossing == []
    # The way out's value sits on the grid and on the boundary's desirable side; the query's own value above it.
    assert curves.counterfactual_values == (SPEED_LIMIT,) and curves.at([SPEED_LIMIT]).tolist() == [0.0]
    assert curves.at([curves.query_value]).tolist() == [1.0]
    np.testing.assert_allclose(curves.average, curves.individual.mean(axis=0))
    flat = fc.compare.dependence_curves(model, task, "temp", n_rows=100)
    assert np.ptp(flat.individual, axis=1).max() == 0.0  # the rule never reads temp
    levels = fc.compare.dependence_curves(model, task, "road", query=query)
    assert list(levels.grid) == list(task.feature("road").levels) and levels.at(["urban"]).tolist() == [0.0]


@pytest.mark.slow
def test_a_forest_learned_from_noisy_planted_data_crosses_near_the_threshold_and_noise_stays_flat():
    task = planted_task()
    model = planted_forest(task)
    curves = fc.compare.dependence_curves(model, task, "speed")
    rural = (task.frame.loc[curves.rows, "road"] == "rural").to_numpy()
    step = np.diff(curves.grid).max()  # 100 / 39: about 2.6
    crossings = curves.crossings()
    # Nearly every rural case's curve crosses the boundary once, within one grid step of 60 (a few memorised
    # flipped labels may add a crossing elsewhere; they stay under 10%).
    near = [any(abs(c - SPEED_LIMIT) <= step for c in row) for row, r in zip(crossings, rural) if r]
    assert np.mean(near) >= 0.9
    spans = np.ptp(curves.individual, axis=1)
    assert np.median(spans[rural]) >= 0.8 and np.ptp(curves.average) >= 0.4
    # Pure noise: the average (partial dependence) moves by at most 0.1 across the whole range, and the median
    # case's curve by at most 0.15 (a forest memorises some flipped labels, so single curves wiggle).
    for feature in NOISE_FEATURES:
        noise = fc.compare.dependence_curves(model, task, feature)
        assert np.ptp(noise.average) <= 0.1, feature
        assert np.median(np.ptp(noise.individual, axis=1)) <= 0.15, feature


def test_bad_input_is_one_clear_error():
    task, model = _rule_task()
    with pytest.raises(fc.ConfigError, match="no feature 'sped'"):
        fc.compare.dependence_curves(model, task, "sped")
    with pytest.raises(fc.ConfigError, match="no row 99999"):
        fc.compare.dependence_curves(model, task, "speed", query=99999)
    with pytest.raises(ValueError, match="levels"):
        fc.compare.dependence_curves(model, task, "road").crossings()


def test_the_ice_figure_highlights_the_query_and_marks_its_ways_out():
    task, model = _rule_task()
    query = int(task.frame.index[(task.frame["road"] == "rural") & (task.frame["speed"] > 90)][0])
    ways_out = task.frame.loc[[query], task.feature_names].assign(speed=SPEED_LIMIT)
    curves = fc.compare.dependence_curves(model, task, "speed", query=query, counterfactuals=ways_out, n_rows=5)
    fig = fc.plotting.ice_figure(curves, probability="P(bad)")
    names = [t.name for t in fig.data]
    assert names[0] == "5 cases (ICE)" and names[1] == "average (partial dependence)"
    assert names[2] == f"row {query} (now {task.feature('speed').format_value(curves.query_value)})" and names[3] == "values its ways out propose for Speed (with only that change)"
    assert list(fig.data[3].x) == [SPEED_LIMIT] and list(fig.data[3].y) == [0.0]
    assert list(fig.data[2].y) == curves.query_curve.tolist()
    assert fig.data[0].x.count(None) == 5  # five grey curves, each ended by a gap
    assert [shape.y0 for shape in fig.layout.shapes] == [0.5]
    margin = fc.plotting.ice_figure(curves, probability="P(bad)", valid_below=0.35)
    assert [shape.y0 for shape in margin.layout.shapes] == [0.5, 0.35]  # the boundary, and where a way out counts
    assert margin.layout.annotations[1].text == "a way out needs P(bad) below 0.35"
