"""Models: the project's own scikit-learn pipelines, the fitted-model wrapper FLEX explains, and model files."""

from ._curves import model_curves
from ._files import load_model, save_model
from ._fit import MODELS, NO_LABELS_NOTE, FittedModel, adequacy_note, build_pipeline, fit_model, from_file_estimator
from ._quality import calibration_table, held_out_predictions, quality_at_cutoff, quality_table

__all__ = ["MODELS", "NO_LABELS_NOTE", "FittedModel", "build_pipeline", "fit_model", "adequacy_note", "from_file_estimator", "load_model", "save_model",
           "held_out_predictions", "quality_at_cutoff", "calibration_table", "quality_table",
           "model_curves"]
