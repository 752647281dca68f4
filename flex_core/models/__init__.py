"""Models: the project's own scikit-learn pipelines and the fitted-model wrapper FLEX explains."""

from ._fit import MODELS, FittedModel, adequacy_note, build_pipeline, fit_model, model_summary

__all__ = ["MODELS", "FittedModel", "build_pipeline", "fit_model", "model_summary", "adequacy_note"]
