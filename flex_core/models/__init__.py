"""Models: the project's own scikit-learn pipelines, the fitted-model wrapper FLEX explains, and model files."""

from ._files import load_model, save_model
from ._fit import MODELS, FittedModel, adequacy_note, align_task, build_pipeline, fit_model

__all__ = ["MODELS", "FittedModel", "build_pipeline", "fit_model", "adequacy_note", "align_task", "load_model", "save_model"]
