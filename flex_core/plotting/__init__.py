"""Plotly figures. Every function takes results (FlexResult, RegionalResult, ...), not loose arrays."""

from ._compare import rank_scatter_figure, ranking_bars_figure, regional_lime_figure
from ._flex import (
    FLEX_COLOUR,
    factual_map_figure,
    frequency_whiskers,
    importance_figure,
    regional_scatter,
    regions_heatmap,
    tau_panels_figure,
    tau_sweep_figure,
    thin_labels,
    what_must_change_figure,
)
from ._map import FactualMap, project_factuals
from ._regions import groups_frequency_figure, regions_small_multiples

__all__ = ["FLEX_COLOUR", "importance_figure", "regional_scatter", "regions_heatmap", "tau_panels_figure", "tau_sweep_figure", "what_must_change_figure", "frequency_whiskers", "factual_map_figure", "rank_scatter_figure", "ranking_bars_figure", "regional_lime_figure", "FactualMap", "project_factuals", "thin_labels", "regions_small_multiples", "groups_frequency_figure"]
