"""Typed errors raised at the public boundary of :mod:`flex_core`.

Every message says what is wrong *and* what to do about it, so the CLI can print
it as one line and the app can show it with ``st.error``.
"""

__all__ = ["FlexError", "DataError", "UnseenCategoryError", "ConfigError", "ModelFileRefused", "GenerationError"]


class FlexError(ValueError):
    """Base class of every error a user can act on."""


class DataError(FlexError):
    """The input data cannot be used as given (empty, wrong columns, bad values)."""


class UnseenCategoryError(DataError):
    """A categorical value the model never saw in training (it would silently take it as missing).

    Attributes
    ----------
    column : str
        The data's column.
    values : tuple
        The unseen values, as the data holds them.
    """

    def __init__(self, message: str, *, column: str, values: tuple):
        super().__init__(message)
        self.column = column
        self.values = values


class ConfigError(FlexError):
    """An option is invalid or inconsistent with the data (unknown feature, bad τ, ...)."""


class ModelFileRefused(ConfigError):
    """A model file refused before anything in it was built or run.

    It is not a ``.skops`` file, breaks a size or entry cap, or names a class or function that
    is not on FLEX's list of trusted names (:mod:`flex_core.models`, docs/bring-your-own-model.md).
    """


class GenerationError(FlexError):
    """Counterfactual generation could not run at all (not: found no counterfactual)."""
