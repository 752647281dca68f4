"""Typed errors raised at the public boundary of :mod:`flex_core`.

Every message says what is wrong *and* what to do about it, so the CLI can print
it as one line and the app can show it with ``st.error``.
"""

__all__ = ["FlexError", "DataError", "ConfigError", "GenerationError"]


class FlexError(ValueError):
    """Base class of every error a user can act on."""


class DataError(FlexError):
    """The input data cannot be used as given (empty, wrong columns, bad values)."""


class ConfigError(FlexError):
    """An option is invalid or inconsistent with the data (unknown feature, bad τ, ...)."""


class GenerationError(FlexError):
    """Counterfactual generation could not run at all (not: found no counterfactual)."""
