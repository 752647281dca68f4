"""Constraint text as the CLI and the app's features table write it: ``LO:HI`` ranges and ``a < b < c`` orders."""

from __future__ import annotations

from .._errors import ConfigError

__all__ = ["parse_range", "parse_order"]


def parse_range(name: str, text: str) -> tuple:
    """``"LO:HI"`` (either end may be empty) as (low, high) with None for an open end."""
    low, sep, high = str(text).partition(":")
    try:
        if not sep:
            raise ValueError
        return tuple(float(v) if v.strip() else None for v in (low, high))
    except ValueError:
        raise ConfigError(f"The range of {name!r} must be LO:HI (either may be empty), not {text!r}.") from None


def parse_order(text: str) -> list[str]:
    """``"a < b < c"`` as its levels, in order."""
    return [v.strip() for v in str(text).split("<")]
