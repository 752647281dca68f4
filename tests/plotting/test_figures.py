"""The pure figure builders and the dashboard's helpers, on hand-made results and small real runs."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import flex_core as fc
from flex_core._uncertainty import wilson_interval
from flex_core.plotting._flex import (
    QUADRANT_COLOURS,
    QUADRANT_SHORT,
    apply_style,
    as_floats,
    diagonal_line,
    frequency_whiskers,
    inert_links,
    new_figure,
    thin_labels,
)
from ui import reporting, selection
from ui.factual_map import factual_map_figure, project_factuals
from ui.reporting import class_balance, counterfactual_table, feature_table

TAU_PANELS = (0.1, 0.5, 0.9)  # the paper's threshold panels


def _set(task, factuals, counterfactuals, valid=None):
    counterfactuals = np.asarray(counterfactuals, float)
    found = ~np.isnan(counterfactuals).any(axis=2)
    return fc.counterfactuals.CounterfactualSet(
        tuple(task.feature_names), np.arange(len(factuals)), np.asarray(factuals, float), counterfactuals,
        found, found if valid is None else np.asarray(valid), "hand", 0.0,
    )


@pytest.fixture(scope="module")
def toy_result(toy_task):
    # Two factuals, two counterfactuals each; ranges 100 (speed) and 1 (visibility).
    cfset = _set(
        toy_task,
        [[100.0, 0.2], [90.0, 0.5]],
        [[[70.0, 0.2], [100.0, 0.9]], [[90.0, 0.95], [85.0, 0.5]]],
    )
    return fc.importance.flex_importance(cfset, toy_task, tau=0.1, ranges=np.array([100.0, 1.0]))


def test_importance_figure_sorts_features_and_carries_mean_std_mu_and_dice(toy_result):
    fig = fc.plotting.importance_figure(toy_result, whiskers="std")
    flex, mu, dice = fig.data
    # Hand-computed: speed changes > 10 in 1 of 2 CFs of factual 0, 0 of 2 of factual 1 -> F = 0.25;
    # visibility > 0.1 in 1 of 2 for both -> F = 0.5. Sorted descending: visibility, speed.
    assert list(flex.customdata) == ["visibility", "vehicle_speed"]
    assert list(flex.x) == [0.5, 0.25]
    assert list(flex.error_x.array) == [0.0, 0.25]
    # μ for speed: factual 0 (30/100 + 0)/2 = 0.15, factual 1 (0 + 5/100)/2 = 0.025 -> 0.0875
    assert math.isclose(dict(zip(mu.customdata, mu.x))["vehicle_speed"], 0.0875)
    # DiCE counts any change: speed changed in 2 of 4 CFs, visibility in 2 of 4.
    assert list(dice.x) == [0.5, 0.5]
    assert "Global" in fig.layout.title.text


def test_importance_figure_whiskers_default_to_the_95_percent_interval(toy_result):
    flex = fc.plotting.importance_figure(toy_result).data[0]
    # visibility F = 0.5 and speed F = 0.25 over 2 factuals: the continuity-corrected Wilson interval of each.
    order = [toy_result.feature_names.index(name) for name in flex.customdata]
    intervals = wilson_interval(toy_result.frequency_mean[order], 2)
    assert flex.error_x.symmetric is False
    np.testing.assert_allclose(flex.error_x.array, intervals[:, 1] - toy_result.frequency_mean[order])
    np.testing.assert_allclose(flex.error_x.arrayminus, toy_result.frequency_mean[order] - intervals[:, 0])
    assert "95% interval" in fig_title(fc.plotting.importance_figure(toy_result))
    with pytest.raises(ValueError, match="whiskers"):
        fc.plotting.importance_figure(toy_result, whiskers="iqr")


def fig_title(fig) -> str:
    return fig.layout.xaxis.title.text


def test_the_importance_chart_built_without_validation_is_what_plotly_validates(toy_result, synthetic_task,
                                                                                 synthetic_model, tmp_path):
    """Written as plain data (Plotly's checks cost 14 ms on every τ change): Plotly must accept it unchanged."""
    explainer = fc.FlexExplainer.from_task(synthetic_task, synthetic_model, n_cf=3, cache_dir=tmp_path)
    result = explainer.explain_global(n_factuals=8, tau=0.1)  # numbers, categories and a fixed feature
    assert any(result.immutable) and "continuous" in result.kinds and "categorical" in result.kinds
    for res in (toy_result, result, result.only_necessary(), replace(result, level="regional")):
        for options in ({}, {"dice": False}, {"whiskers": "std"}, {"title": "T"}):
            fig = fc.plotting.importance_figure(res, **options)
            spec = fig.to_dict()
            assert go.Figure(spec).to_dict() == spec, options  # validation raises on a wrong property, changes nothing
            panels = 1 if options.get("dice") is False else 2
            assert {t.get("xaxis") for t in spec["data"]} == ({"x"} if panels == 1 else {"x", "x2"})
            fig.add_trace(go.Bar(x=[0.5], y=[spec["data"][0]["y"][0]]), row=1, col=panels)  # the subplot grid is kept
            assert fig.data[-1].xaxis == ("x" if panels == 1 else "x2")


def test_what_must_change_figure_shows_the_scores_it_has(toy_result):
    fig = fc.plotting.what_must_change_figure(toy_result)
    assert [trace.name for trace in fig.data] == ["changed"]  # no model: no necessary F, no necessity
    withall = replace(toy_result, necessary_frequency=np.array([0.25, 0.0]), flip_alone=np.array([0.4, 0.1]),
                      flip_alone_interval=np.array([[0.3, 0.5], [0.05, 0.2]]), needed=np.array([0.9, 0.0]),
                      needed_interval=np.array([[0.8, 0.95], [0.0, 0.1]]))
    fig = fc.plotting.what_must_change_figure(withall)
    assert [trace.name.split(":")[0] for trace in fig.data] == ["changed", "changed and needed", "flips it alone",
                                                                "needed"]
    # The analyst's terms put the paper's symbols first; the two shares have none.
    named = fc.plotting.what_must_change_figure(withall, terms=True)
    assert [trace.name for trace in named.data] == ["F: changed", "necessary F: changed and needed",
                                                    "flips it alone: share of cases", "needed: no way around it found"]
    assert list(fig.data[1].customdata) == ["visibility", "vehicle_speed"] and list(fig.data[1].x) == [0.0, 0.25]


def test_importance_figure_marks_immutable_features(synthetic_task):
    cfset = _set(synthetic_task, [[90, 0, 0, 50, 0, 0]], [[[60, 0, 1, 50, 0, 0]]])
    fig = fc.plotting.importance_figure(fc.importance.flex_importance(cfset, synthetic_task), dice=False)
    assert len(fig.data) == 2  # F bars and μ markers, no DiCE panel
    assert "Road type (fixed)" in fig.data[0].y


def _regional(task, regional_f, global_f, immutable=()):
    imp = fc.importance.flex_importance(_set(task, [[100.0, 0.2]], [[[100.0, 0.2]]]), task, level="regional")

    imp = replace(imp, frequency_mean=np.asarray(regional_f, float), immutable=tuple(immutable or [False] * len(regional_f)))
    r, quadrants, thresholds = fc.importance.compare_with_global(imp.frequency_mean, np.asarray(global_f, float),
                                                      ~np.array(imp.immutable))
    return fc.RegionalResult(imp, 0, (0,), (0.0,), None, (), np.asarray(global_f, float), r, quadrants, thresholds)


def test_regional_scatter_has_identity_line_r_in_title_and_quadrant_labels(toy_task):
    reg = _regional(toy_task, [0.9, 0.1], [0.2, 0.6])
    fig = fc.plotting.regional_scatter(reg)
    points, line = fig.data[0], fig.data[1]
    assert list(points.x) == [0.2, 0.6] and list(points.y) == [0.9, 0.1]
    assert list(line.x) == list(line.y)
    # two features always give ±1: not reported; r has a line of its own, so a narrow column cannot cut it off
    first, second = fig.layout.title.text.split("<br>")
    assert first == "Regional vs global importance" and "agreement with all cases = undefined" in second
    # plain words by default; the paper's symbols only when the reader asks for them (the sidebar's switch)
    assert fig.layout.xaxis.title.text == "global importance (all cases)" and "F_j" not in str(fig.to_dict())
    with_terms = fc.plotting.regional_scatter(reg, terms=True)
    assert with_terms.layout.xaxis.title.text == "global importance F_j (all cases)"
    assert "agreement with all cases (Pearson r) = undefined" in with_terms.layout.title.text
    assert fig.layout.margin.t > fc.plotting.importance_figure(reg.importance).layout.margin.t  # room for the line
    # speed: high regional, low global -> A; visibility: low regional, high global -> D
    assert points.hovertext == ("Vehicle speed (A: important here only)", "Visibility (0-1) (D: important overall, less so here)")
    assert with_terms.data[0].hovertext[0] == "Vehicle speed (quadrant A: important here only)"
    assert points.text == ("Vehicle speed", "Visibility (0-1)")  # both far from y = x: both labelled
    legend = [t.name for t in fig.data if t.showlegend is not False and t.name]
    assert "A: important here only" in legend and "D: important overall, less so here" in legend


def _regional_scatter_by_plotly(regional, *, title=None, terms=False):
    """regional_scatter as it was built through Plotly's validated objects: the reference for the plain-data one."""
    imp = regional.importance
    importance = "importance F_j" if terms else "importance"
    keep = [j for j, q in enumerate(regional.quadrants) if q is not None]
    x = as_floats(regional.global_frequency[keep])
    y = as_floats(imp.frequency_mean[keep])
    quads = [regional.quadrants[j] for j in keep]
    side_text = {"above": "above y = x: more often changed here than globally",
                 "below": "below y = x: less often changed here than globally",
                 "on": "on y = x: as often changed here as globally", None: "undefined"}
    sides = [side_text[regional.diagonal_side[j]] for j in keep]
    finite = [v for v in x + y if v is not None]
    top = min(1.05, max(finite + [0.1]) * 1.15 + 0.03)
    labelled = thin_labels(regional.global_frequency[keep], imp.frequency_mean[keep], min_gap=(0.2 * top, 0.06 * top))
    names = [imp.display_names[j] for j in keep]
    fig = new_figure()
    fig.add_trace(
        go.Scatter(
            name="features",
            mode="markers+text",
            x=x,
            y=y,
            text=[name if show else "" for name, show in zip(names, labelled)],
            hovertext=[f"{name} ({'quadrant ' if terms else ''}{q}: {QUADRANT_SHORT[q]})" for name, q in zip(names, quads)],
            textposition="top center",
            marker=dict(size=13, color=[QUADRANT_COLOURS[q] for q in quads], line=dict(color="white", width=1)),
            customdata=[imp.feature_names[j] for j in keep],
            hovertemplate=[f"%{{hovertext}}<br>global {importance} = %{{x:.3f}}<br>regional {importance} = %{{y:.3f}}<br>"
                           f"{side}<extra></extra>" for side in sides],
            showlegend=False,
            cliponaxis=False,
        )
    )
    fig.add_trace(diagonal_line(0, top, name="y = x (same importance as globally)"))
    for q in sorted(set(quads)):
        fig.add_trace(go.Scatter(name=f"{q}: {QUADRANT_SHORT[q]}", x=[None], y=[None], mode="markers",
                                 marker=dict(size=11, color=QUADRANT_COLOURS[q]), hoverinfo="skip"))
    g_mid, r_mid = regional.quadrant_thresholds
    if not (math.isnan(g_mid) or math.isnan(r_mid)):
        fig.add_vline(x=g_mid, line=dict(color="#cbd5e1", dash="dot"))
        fig.add_hline(y=r_mid, line=dict(color="#cbd5e1", dash="dot"))
        corners = {"A": (0.01, 0.99, "left", "top"), "B": (0.01, 0.01, "left", "bottom"),
                   "C": (0.99, 0.99, "right", "top"), "D": (0.99, 0.01, "right", "bottom")}
        for q, (cx, cy, xa, ya) in corners.items():
            fig.add_annotation(x=cx, y=cy, xref="paper", yref="paper", text=f"<b>{q}</b>", showarrow=False,
                               xanchor=xa, yanchor=ya, font=dict(size=18, color=QUADRANT_COLOURS[q]), opacity=0.6)
    r = regional.pearson_r
    r_text = "undefined" if math.isnan(r) else f"{r:.2f}"
    low, high = regional.pearson_r_interval
    if not math.isnan(r):
        r_text += " (no interval)" if math.isnan(low) else f" (95% interval {low:.2f} to {high:.2f})"
    pad = 0.06 * top
    fig.update_xaxes(range=[-pad, top + pad], title_text=f"global {importance} (all cases)")
    fig.update_yaxes(range=[-pad, top + pad], title_text=f"regional {importance} (this region)")
    agreement = "agreement with all cases (Pearson r)" if terms else "agreement with all cases"
    r_line = f"<span style='font-size:13px'>{agreement} = {r_text}</span>"
    fig = apply_style(fig, title=title or f"Regional vs global importance<br>{r_line}", height=540)
    return fig.update_layout(margin=dict(b=135, t=84 if title else 102))


def test_the_regional_scatter_built_without_validation_is_what_plotly_builds(toy_task, synthetic_task, synthetic_model,
                                                                            tmp_path):
    """Written as plain data (a τ change redraws it): equal to the Plotly-built chart, and Plotly accepts it unchanged."""
    explainer = fc.FlexExplainer.from_task(synthetic_task, synthetic_model, n_cf=3, cache_dir=tmp_path)
    region = explainer.explain_region(k=6, n_factuals=12, tau=0.1)  # a fixed feature (no quadrant) among them
    assert None in region.quadrants and not math.isnan(region.pearson_r)
    nan = float("nan")
    regions = [
        region,
        replace(region, pearson_r_interval=(nan, nan)),  # r without an interval
        replace(region, quadrant_thresholds=(nan, 0.3)),  # no quadrant lines or corner letters
        replace(region, global_frequency=np.where(np.arange(len(region.global_frequency)) == 1, nan,
                                                  region.global_frequency)),  # a missing global F
        _regional(toy_task, [0.9, 0.1], [0.2, 0.6]),  # r undefined
        _regional(toy_task, [0.0, 0.0], [0.0, 0.0]),  # all zero: the smallest axes
    ]
    for reg in regions:
        for title, terms in ((None, False), ("T", False), (None, True)):
            fig = fc.plotting.regional_scatter(reg, title=title, terms=terms)
            spec = fig.to_plotly_json()
            assert spec == _regional_scatter_by_plotly(reg, title=title, terms=terms).to_plotly_json()
            assert go.Figure(spec).to_plotly_json() == spec  # validation raises on a wrong property, changes nothing
            fig.add_trace(go.Scatter(x=[0.5], y=[0.5]))  # still a figure to draw into
            assert fig.data[-1].x == (0.5,)


def test_thin_labels_keeps_the_top_and_the_far_and_drops_crowded_ones():
    # Twelve features: two clear leaders, one far above y = x, and nine crowded near the origin (as on loan).
    x = [0.9, 0.05, 0.6] + [0.01 + 0.002 * i for i in range(9)]
    y = [0.8, 0.55, 0.62] + [0.012 + 0.002 * i for i in range(9)]
    shown = thin_labels(x, y, top=3, far=0.12, min_gap=0.05)
    assert shown[:3].tolist() == [True, True, True]  # leaders and the point far from the diagonal
    assert not shown[3:].any()  # the crowd near the origin is neither top nor far: hover text only
    labelled = np.flatnonzero(shown)
    pts = np.c_[x, y][labelled]
    gaps = np.abs(pts[:, None] - pts[None]).max(axis=2) + np.eye(len(labelled))
    assert gaps.min() >= 0.05  # no two labels on each other
    # Labels are wide: side by side within the x gap and the y gap, only one keeps its label; far apart in x, both.
    assert thin_labels([0.1, 0.2], [0.5, 0.52], top=2, min_gap=(0.2, 0.05)).tolist() == [True, False]
    assert thin_labels([0.1, 0.5], [0.5, 0.52], top=2, min_gap=(0.2, 0.05)).tolist() == [True, True]
    # Two top points on top of each other: only the more important one keeps its label.
    assert thin_labels([0.5, 0.48, 0.1], [0.5, 0.47, 0.1], top=3, min_gap=0.05).tolist() == [True, False, True]


def test_thin_labels_ignores_missing_points_and_respects_top():
    shown = thin_labels([0.5, np.nan, 0.1, 0.3], [0.5, 0.9, 0.1, 0.3], top=1, far=0.5, min_gap=0.01)
    assert shown.tolist() == [True, False, False, False]


def test_share_whiskers_stay_inside_zero_one(toy_result):
    from dataclasses import replace

    wide = replace(toy_result, frequency_mean=np.array([0.9, 0.05]), frequency_std=np.array([0.3, 0.2]))
    whiskers, _ = frequency_whiskers(wide, [0, 1], whiskers="std")
    assert whiskers["array"] == pytest.approx([0.1, 0.2]) and whiskers["arrayminus"] == pytest.approx([0.3, 0.05])
    fig = fc.plotting.importance_figure(wide)
    assert fig.data[1].cliponaxis is False  # μ diamonds at 0 are drawn whole


def test_factual_map_is_reproducible_and_round_trips_a_click(toy_task, toy_model):
    rows = fc.counterfactuals.factual_rows(toy_task, toy_model)
    a = project_factuals(toy_task, toy_model, rows)
    b = project_factuals(toy_task, toy_model, rows[::-1])
    pd.testing.assert_frame_equal(a.frame.set_index("row").sort_index(), b.frame.set_index("row").sort_index())
    assert (a.frame["probability"] > 0.5).all() and a.method == "isomap" and "Isomap" in a.description
    fig = factual_map_figure(a, query=int(rows[0]), members=[int(r) for r in rows[:3]])
    point = {"customdata": fig.data[0].customdata[5]}
    assert selection.rows_from_selection({"points": [point]}) == [int(a.frame["row"].iloc[5])]
    assert [t.name for t in fig.data] == ["cases", "region members", "query",
                                          "cases (zoom)", "region members", "query"]
    # The zoom panel frames the region: every member and the query lie inside its ranges.
    xr, yr = fig.layout.xaxis2.range, fig.layout.yaxis2.range
    region = a.frame.set_index("row").loc[[int(r) for r in rows[:3]]]
    assert region["x"].between(*xr).all() and region["y"].between(*yr).all()
    marked = factual_map_figure(a, query=int(rows[0]), members=[int(r) for r in rows[:3]],
                                            meeting=[int(r) for r in rows[:5]], criterion="road type = rural")
    opacity = marked.data[0].marker.opacity
    assert sum(o == 1.0 for o in opacity) == 5 and "meets road type = rural" in [t.name for t in marked.data]
    # A lasso or box drag mode turns a click into an empty selection: dragging must pan, clicks select.
    assert fig.layout.dragmode == "pan" and fig.layout.clickmode == "event+select"


def test_the_factual_map_built_without_validation_is_what_plotly_validates(toy_task, toy_model):
    """The map's traces skip Plotly's validation (it cost 0.2 s a click): Plotly must accept them unchanged."""
    rows = fc.counterfactuals.factual_rows(toy_task, toy_model)
    fmap = project_factuals(toy_task, toy_model, rows)
    members = [int(r) for r in rows[1:4]]
    for options in ({}, {"query": int(rows[0]), "members": members},
                    {"query": int(rows[0]), "members": members, "meeting": [int(r) for r in rows[:5]], "criterion": "c"}):
        spec = factual_map_figure(fmap, **options).to_dict()
        assert go.Figure(spec).to_dict() == spec, options  # validation raises on a wrong property, and changes nothing
        # A named colour scale that plotly.js does not know would reach the browser as an unknown name.
        assert isinstance(spec["data"][0]["marker"]["colorscale"], (list, tuple))
        if "query" in options:  # the zoom panel's traces sit on the second pair of axes
            assert {(t.get("xaxis"), t.get("yaxis")) for t in spec["data"][:3]} == {("x", "y")}
            assert {(t.get("xaxis"), t.get("yaxis")) for t in spec["data"][3:6]} == {("x2", "y2")}


def test_a_large_factual_pool_is_sampled_on_the_map_with_a_note(toy_task, toy_model):
    rows = fc.counterfactuals.factual_rows(toy_task, toy_model)
    whole = project_factuals(toy_task, toy_model, rows)
    assert whole.total == len(rows) and whole.note == ""
    sampled = project_factuals(toy_task, toy_model, rows, max_points=20)
    assert len(sampled.frame) == 20 and sampled.total == len(rows)
    assert set(sampled.frame["row"]) <= set(rows.tolist()) and sampled.frame["row"].is_monotonic_increasing
    assert f"20 of the {len(rows):,} cases to choose from" in sampled.note


def test_rows_a_sample_left_out_are_placed_with_the_maps_own_axes(toy_task, toy_model):
    import dataclasses

    rows = fc.counterfactuals.factual_rows(toy_task, toy_model)
    sampled = project_factuals(toy_task, toy_model, rows, max_points=20)
    assert sampled.including(toy_task, toy_model, sampled.frame["row"][:3]) is sampled  # nothing missing
    # A row of the sample, taken out and added back, lands where the fit put it.
    row = int(sampled.frame["row"].iloc[5])
    without = dataclasses.replace(sampled, frame=sampled.frame[sampled.frame["row"] != row])
    again = without.including(toy_task, toy_model, [row]).frame.set_index("row").loc[row]
    np.testing.assert_allclose(again[["x", "y", "probability"]].to_numpy(dtype=float),
                               sampled.frame.set_index("row").loc[row, ["x", "y", "probability"]].to_numpy(dtype=float))
    outside = next(int(r) for r in rows if r not in set(sampled.frame["row"]))
    grown = sampled.including(toy_task, toy_model, [outside])
    assert len(grown.frame) == 21 and outside in set(grown.frame["row"]) and grown.note == sampled.note


def test_regions_heatmap_has_global_first_and_r_in_labels(toy_task, toy_result):
    reg = _regional(toy_task, [0.9, 0.1], [0.2, 0.6])
    fig = fc.plotting.regions_heatmap({"fast roads": reg}, toy_result)
    heat = fig.data[0]
    assert heat.y == ("global (all cases)", "fast roads (agreement = n/a)")  # two features: r undefined
    assert "F_j" not in str(fig.to_dict())
    terms = fc.plotting.regions_heatmap({"fast roads": reg}, toy_result, terms=True)
    assert terms.data[0].y[1] == "fast roads (r = n/a)" and "change frequency F_j per feature" in terms.layout.title.text
    assert list(heat.z[0]) == [0.5, 0.25] and list(heat.z[1]) == [0.1, 0.9]  # columns in global order


def test_tau_sweep_is_monotone_and_matches_flex_at_each_tau(toy_task):
    cfset = _set(toy_task, [[100.0, 0.2]], [[[70.0, 0.2], [95.0, 0.9], [100.0, 0.25]]])
    sweep = fc.importance.tau_sweep(cfset, toy_task, ranges=np.array([100.0, 1.0]), taus=[0.0, 0.04, 0.1, 0.5, 0.8])
    speed = sweep[sweep["feature"] == "vehicle_speed"]["frequency_mean"].tolist()
    # |Δ|/range for speed: 0.30, 0.05, 0 -> counts above τ: 2, 2, 1, 0, 0 (of 3)
    assert speed == pytest.approx([2 / 3, 2 / 3, 1 / 3, 0, 0])
    vis = sweep[sweep["feature"] == "visibility"]["frequency_mean"].tolist()
    assert vis == pytest.approx([2 / 3, 2 / 3, 1 / 3, 1 / 3, 0])  # 0, 0.7, 0.05
    fig = fc.plotting.tau_sweep_figure(sweep, current=0.1)
    assert {t.customdata[0] for t in fig.data} == {"vehicle_speed", "visibility"}
    panels = fc.plotting.tau_panels_figure({t: fc.importance.flex_importance(cfset, toy_task, tau=t, ranges=np.array([100.0, 1.0]))
                                   for t in TAU_PANELS})
    assert [t.name for t in panels.data] == ["τ = 0.1", "τ = 0.5", "τ = 0.9"]


def test_the_tau_sweep_lines_come_most_often_changed_first():
    """The legend reads as the bars: by frequency at the smallest τ (Term 0.6, Score 0.3, then Income and Assets
    tied at 0, in the sweep's order)."""
    rows = {"income": [0.0, 0.0], "score": [0.3, 0.2], "assets": [0.0, 0.0], "term": [0.6, 0.1]}
    sweep = pd.DataFrame([{"feature": name, "label": name.title(), "tau": t, "frequency_mean": f}
                          for name, fs in rows.items() for t, f in zip([0.0, 0.5], fs)])
    fig = fc.plotting.tau_sweep_figure(sweep)
    assert [t.name for t in fig.data] == ["Term", "Score", "Income", "Assets"]
    assert list(fig.data[0].y) == [0.6, 0.1]


def test_the_current_tau_line_and_the_settings_subtitle_are_what_plotly_would_write(toy_task, toy_result):
    """Both skip Plotly's validation (6-9 ms a chart on every τ change): they must equal Plotly's own way, unchanged."""
    cfset = _set(toy_task, [[100.0, 0.2]], [[[70.0, 0.2], [95.0, 0.9], [100.0, 0.25]]])
    sweep = fc.importance.tau_sweep(cfset, toy_task, ranges=np.array([100.0, 1.0]))
    lines = fc.plotting.tau_sweep_figure(sweep)  # no current τ: the lines alone
    before = lines.to_dict()
    base = fc.plotting.tau_sweep_figure(sweep)
    assert base.to_dict() == before  # no current τ: the lines alone
    marked = fc.plotting.with_current_tau(lines, 0.35)
    marked.update_layout(title_text="drawn into")  # a caller's copy: the kept lines stay as they were
    assert lines.to_dict() == before
    by_plotly = go.Figure(base).add_vline(x=0.35, line=dict(color="#64748b", dash="dot"),
                                         annotation_text="current τ = 0.35", annotation_position="top right")
    marked = fc.plotting.with_current_tau(lines, 0.35)
    assert marked.to_dict() == by_plotly.to_dict()
    assert fc.plotting.tau_sweep_figure(sweep, current=0.35).to_dict() == by_plotly.to_dict()
    assert go.Figure(marked.to_dict()).to_dict() == marked.to_dict()
    named = fc.plotting.tau_sweep_figure(sweep, current=0.35, terms=True)  # the paper's symbols when asked for
    assert named.layout.annotations[0].text == "current τ = 0.35"  # the Thresholds page's slider names τ anyway
    assert named.layout.yaxis.title.text == "change frequency F_j" and base.layout.yaxis.title.text == "change frequency"
    other = sweep.assign(frequency_mean=sweep["frequency_mean"] / 2)  # another sweep: other lines
    assert fc.plotting.tau_sweep_figure(other).data[0].y != base.data[0].y

    for settings in ("loan · random forest", "a long settings line · " * 5 + "τ = 0.10"):
        for fig in (fc.plotting.importance_figure(toy_result), marked):
            before = fig.to_dict()
            titled = fc.plotting.with_settings(fig, settings)
            assert fig.to_dict() == before
            lines = 2 if len(settings) > 70 else 1
            top = fig.layout.margin.t
            by_plotly = go.Figure(fig).update_layout(
                title_subtitle=dict(text=titled.layout.title.subtitle.text, font=dict(size=11, color="#475569")),
                margin=dict(t=top + 8 + 14 * lines))
            assert titled.to_dict() == by_plotly.to_dict()
            assert go.Figure(titled.to_dict()).to_dict() == titled.to_dict()
            assert titled.layout.title.subtitle.text.replace("<br>", " · ") == settings.strip()


def test_a_link_in_any_text_of_a_chart_is_drawn_as_text(toy_result):
    # A column name, a level or a file name can hold an <a> tag, which Plotly draws as a live link.
    link = "<a href='http://x.example'>Session expired: sign in</a>"
    fig = go.Figure(go.Bar(x=[0.4, 0.2], y=[link, "speed"], name=f"{link} <A HREF=x>b</A>", customdata=[[link], ["x"]],
                           hovertext=np.array([link, "<b>bold</b>"], dtype=object)))
    fig.update_layout(title_text=f"Importance of {link}<br>second line", yaxis_title_text=link)
    drawn = fc.plotting.with_settings(fig, f"data: {link} · τ = 0.10")
    text = drawn.to_json()
    assert not re.search(r"<a[\s>]|</a>", text, re.IGNORECASE)
    assert "&lt;a href='http://x.example'>Session expired: sign in&lt;/a>" in drawn.layout.title.text
    assert drawn.layout.title.text.endswith("<br>second line") and drawn.data[0].hovertext[1] == "<b>bold</b>"  # ours stay
    assert list(drawn.data[0].y) == [link.replace("<", "&lt;"), "speed"]
    assert json.loads(go.Figure(drawn.to_dict()).to_json()) == json.loads(text)  # Plotly's validation accepts it
    spec = fc.plotting.importance_figure(toy_result).to_dict()  # a chart without links: the very same dict
    assert inert_links(spec) is spec


def test_counterfactual_table_marks_exactly_the_changed_cells(toy_task, toy_model):
    row = int(fc.counterfactuals.factual_rows(toy_task, toy_model)[0])
    f = toy_task.frame.loc[row, toy_task.feature_names].to_numpy(float)
    cfs = [[f[0] - 30, f[1]], [f[0], f[1] + 0.3], [np.nan, np.nan]]
    cfset = fc.counterfactuals.CounterfactualSet(tuple(toy_task.feature_names), np.array([row]), f[None], np.array([cfs]),
                                 np.array([[True, True, False]]), np.array([[True, False, False]]), "hand", 0.0)
    table, changed = counterfactual_table(toy_task, toy_model, cfset, row)
    assert list(table.index) == ["factual", "counterfactual 1", "counterfactual 2"]  # the empty slot is left out
    assert changed.to_numpy().tolist() == [[False, False], [True, False], [False, True]]
    assert table["valid"].tolist() == [False, True, False]
    assert table["P(undesirable)"].iloc[0] > 0.5


def test_plain_language_readings_name_the_top_features(toy_result):
    text = reporting.describe_global(toy_result, undesirable=("Severe",))
    assert text.startswith("Across 2 cases predicted Severe")
    assert text.index("Visibility") < text.index("Vehicle speed")
    coverage = {"queries": 2, "counterfactuals_found": 4, "counterfactuals_requested": 4, "validity": 1.0,
                "queries_without": 0}
    assert "4 distinct ways out were found (4 requested)" in reporting.describe_coverage(coverage)


def test_rows_meeting_and_data_summaries(synthetic_task):
    rows = synthetic_task.frame.index[:50]
    kept = fc.importance.rows_meeting(synthetic_task, rows, "road_type=rural")
    assert (synthetic_task.frame.loc[kept, "road_type"] == "rural").all()
    assert len(fc.importance.rows_meeting(synthetic_task, rows, None)) == 50
    with pytest.raises(fc.ConfigError):
        fc.importance.rows_meeting(synthetic_task, rows, "speed=3")
    balance = class_balance(synthetic_task)
    assert balance["rows"].sum() == len(synthetic_task.frame) and math.isclose(balance["share"].sum(), 1.0)
    features = feature_table(synthetic_task)
    assert features.set_index("feature").loc["road_type", "immutable"]


def test_the_zoom_panel_draws_only_the_region_and_its_nearest_cases(toy_task, toy_model):
    from ui.factual_map import NEIGHBOURHOOD

    rows = fc.counterfactuals.factual_rows(toy_task, toy_model)
    fmap = project_factuals(toy_task, toy_model, rows)
    region = [int(r) for r in rows[1:6]]
    fig = factual_map_figure(fmap, query=int(rows[0]), members=region)
    zoomed = [int(c[0]) for c in fig.data[3].customdata]
    assert len(fmap.frame) > 10 * len(zoomed) and len(zoomed) == 1 + len(region) + NEIGHBOURHOOD
    assert {int(rows[0]), *region} <= set(zoomed)
    # The others are the cases nearest the region on the map: none left out is nearer than one drawn.
    points = fmap.frame.set_index("row")[["x", "y"]]
    core = points.loc[[int(rows[0]), *region]].to_numpy()
    gap = {r: float(np.sqrt(((core - points.loc[r].to_numpy()) ** 2).sum(axis=1)).min()) for r in points.index}
    others = set(zoomed) - {int(rows[0]), *region}
    assert max(gap[r] for r in others) <= min(gap[r] for r in set(points.index) - set(zoomed))


def test_cases_identical_to_the_model_are_parted_and_few_cases_get_pca(toy_task, toy_model):
    rows = fc.counterfactuals.factual_rows(toy_task, toy_model)
    fmap = project_factuals(toy_task, toy_model, rows)
    encoded = toy_task.X.loc[fmap.frame["row"]].round(6)
    twins = encoded.duplicated(keep=False).to_numpy()
    positions = fmap.frame[["x", "y"]].round(9)
    assert not positions.duplicated().any()  # even rows the model cannot tell apart sit apart
    assert twins.sum() == 0 or positions[twins].drop_duplicates().shape[0] == twins.sum()
    few = project_factuals(toy_task, toy_model, rows[:20])
    assert few.method == "pca" and math.isclose(few.explained.sum(), 1.0) and "PCA" in few.description
