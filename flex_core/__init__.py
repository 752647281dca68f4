"""flex_core: FLEX feature importance from layered counterfactual explanations.

Start with :class:`FlexExplainer` (any fitted classifier with ``predict_proba``)::

    import flex_core as fc
    explainer = fc.FlexExplainer(model, X, undesired="severe", n_cf=10, seed=0)
    result = explainer.explain_global(n_factuals=200, tau=0.1)

The top level holds the explainer, the task and model entry points, the result types
(and :func:`read_result`, which reads any of them back) and the errors; the pipeline's
stages are subpackages (the runs the explainer makes are in :mod:`~flex_core.importance`): :mod:`~flex_core.data`, :mod:`~flex_core.models`,
:mod:`~flex_core.counterfactuals`, :mod:`~flex_core.importance`, :mod:`~flex_core.regions`,
:mod:`~flex_core.compare`, :mod:`~flex_core.plotting`, :mod:`~flex_core.cli`,
:mod:`~flex_core.reproduce` and :mod:`~flex_core.snapshot` (the interactive report file). Each exports (``__all__``) only what a library user
calls; the dashboard's own helpers (readings, display tables, the HTML report, the
factual map) live in the app's ``ui`` package. Everything loads on first use, so
``import flex_core`` stays light: plotly, shap, lime, dice_ml and Streamlit load only
where they are used, and a missing one is an error naming its extra. Data arguments
are positional, options keyword-only; errors are
:class:`FlexError` subclasses whose message says what to fix.
"""

from __future__ import annotations

import importlib

__version__ = "0.5.0"

#: public name -> the module that defines it (imported on first access)
_LAZY = {
    "FlexExplainer": "._explainer",
    "TaskSpec": ".data",
    "Feature": ".data",
    "make_task": ".data",
    "load_dataset": ".data",
    "FittedModel": ".models",
    "fit_model": ".models",
    "FeatureScores": "._results",
    "FlexResult": "._results",
    "RegionalResult": "._results",
    "RegionsResult": ".regions",
    "GroupsResult": ".regions",
    "read_result": "._kinds",
    "FlexError": "._errors",
    "ConfigError": "._errors",
    "DataError": "._errors",
    "UnseenCategoryError": "._errors",
    "GenerationError": "._errors",
}
_SUBPACKAGES = ("data", "models", "counterfactuals", "importance", "regions", "compare", "plotting", "cli", "reproduce",
                "snapshot")

__all__ = [*_LAZY, *_SUBPACKAGES]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'flex_core' has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

