"""Models: the project's own scikit-learn pipelines, the fitted-model wrapper FLEX explains, and model files."""

from ._files import MAX_MODEL_BYTES, TRUSTED_MODULES, load_model, save_model, untrusted_types
from ._fit import (
    MODELS,
    BinaryClassifierView,
    FittedModel,
    adequacy_note,
    align_task,
    build_pipeline,
    check_columns,
    fit_model,
    from_file_estimator,
    model_feature_names,
    model_summary,
    resolve_undesired,
)
from ._quality import calibration_table, held_out_predictions, quality_at_cutoff

__all__ = ["calibration_table", "held_out_predictions", "quality_at_cutoff", "MODELS", "adequacy_note", "FittedModel", "BinaryClassifierView", "build_pipeline", "fit_model", "model_summary", "model_feature_names", "check_columns", "align_task", "from_file_estimator", "resolve_undesired", "TRUSTED_MODULES", "MAX_MODEL_BYTES", "load_model", "save_model", "untrusted_types"]
