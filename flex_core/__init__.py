"""flex_core: FLEX feature importance from layered counterfactual explanations.

The public API; everything else lives in private modules. Data arguments are
positional, options keyword-only; errors are :class:`FlexError` subclasses whose
message says what to fix. This package never imports Streamlit.
"""

__version__ = "0.1.0"

from ._analysis import (
    DEFAULT_GENERATOR,
    GENERATORS,
    CounterfactualStore,
    factual_rows,
    generator_key,
    make_generator,
    model_summary,
    random_query,
    register_generator,
    run_global,
    run_regional,
    sample_factuals,
    training_ranges,
)
from ._counterfactuals import CounterfactualGenerator, CounterfactualSet, decode_rows, encode_rows
from ._data import (
    BUILTIN_DATASETS,
    SYNTHETIC_GROUND_TRUTH,
    Feature,
    TaskSpec,
    load_accidents,
    load_builtin,
    load_csv,
    load_dataset,
    load_loan,
    make_task,
)
from ._dice import DiceGenerator
from ._errors import ConfigError, DataError, FlexError, GenerationError
from ._importance import (
    compare_with_global,
    flex_importance,
    hamming_distances,
    mode_shift,
    parse_criterion,
    regional_importance,
    select_region,
)
from ._models import MODELS, FittedModel, fit_model
from ._results import QUADRANT_MEANING, FlexResult, RegionalResult

__all__ = [
    "DEFAULT_GENERATOR",
    "BUILTIN_DATASETS",
    "GENERATORS",
    "MODELS",
    "QUADRANT_MEANING",
    "SYNTHETIC_GROUND_TRUTH",
    "ConfigError",
    "CounterfactualGenerator",
    "CounterfactualSet",
    "CounterfactualStore",
    "DataError",
    "DiceGenerator",
    "Feature",
    "FittedModel",
    "FlexError",
    "FlexResult",
    "GenerationError",
    "RegionalResult",
    "TaskSpec",
    "compare_with_global",
    "decode_rows",
    "encode_rows",
    "factual_rows",
    "fit_model",
    "flex_importance",
    "generator_key",
    "hamming_distances",
    "load_accidents",
    "load_builtin",
    "load_csv",
    "load_dataset",
    "load_loan",
    "make_generator",
    "make_task",
    "mode_shift",
    "model_summary",
    "parse_criterion",
    "random_query",
    "regional_importance",
    "register_generator",
    "run_global",
    "run_regional",
    "sample_factuals",
    "select_region",
    "training_ranges",
]
