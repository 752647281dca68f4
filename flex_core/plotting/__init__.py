"""Plotly figures. Every function takes results (FlexResult, RegionalResult, ...), not loose arrays.

Plotly loads on first use of a figure, not at ``import flex_core.plotting``; without it that use is
one error naming the extra (``pip install "flex-studio[plots]"``).

:mod:`flex_core.plotting.style` is the look these figures share (template, title, legend, margins), public for
charts drawn elsewhere in the same style: the app's factual map (``ui/factual_map.py``) is one.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .._extras import require

if TYPE_CHECKING:
    from ._compare import rank_scatter_figure, ranking_bars_figure, regional_lime_figure
    from ._flex import (
        importance_figure,
        regional_scatter,
        regions_heatmap,
        tau_panels_figure,
        tau_sweep_figure,
        what_must_change_figure,
        with_current_tau,
        with_settings,
    )
    from ._quality import calibration_figure, confusion_matrix_figure, model_curves_figure
    from ._shap import case_contributions_figure, ice_figure, shap_beeswarm_figure, shap_dependence_figure

#: the module defining each public name (imported, with plotly, on first access)
_MODULES = {
    "._flex": ("importance_figure", "regional_scatter", "regions_heatmap", "tau_panels_figure", "tau_sweep_figure",
               "what_must_change_figure", "with_current_tau", "with_settings"),
    "._compare": ("rank_scatter_figure", "ranking_bars_figure", "regional_lime_figure"),
    "._quality": ("confusion_matrix_figure", "calibration_figure", "model_curves_figure"),
    "._shap": ("shap_beeswarm_figure", "shap_dependence_figure", "case_contributions_figure", "ice_figure"),
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "importance_figure", "regional_scatter", "regions_heatmap", "tau_panels_figure", "tau_sweep_figure",
    "what_must_change_figure", "with_current_tau", "with_settings",
    "rank_scatter_figure", "ranking_bars_figure", "regional_lime_figure", "confusion_matrix_figure", "calibration_figure",
    "model_curves_figure", "shap_beeswarm_figure", "shap_dependence_figure", "case_contributions_figure", "ice_figure",
]


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'flex_core.plotting' has no attribute {name!r}")
    require("plotly", "Drawing a figure")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
