"""Models: the project's own scikit-learn pipelines, the fitted-model wrapper FLEX explains, and model files."""

from ._files import load_model, save_model
from ._fit import MODELS, FittedModel, adequacy_note, build_pipeline, fit_model, from_file_estimator

__all__ = ["MODELS", "FittedModel", "build_pipeline", "fit_model", "adequacy_note", "from_file_estimator", "load_model", "save_model"]
