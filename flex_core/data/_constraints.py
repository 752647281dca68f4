"""A feature's level order and actionability constraints (direction, range, allowed levels), each checked
against its kind and levels: steps of :func:`flex_core.data.make_task`, which builds the features first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from .._errors import ConfigError
from ._columns import category_text

#: Ways a feature may be constrained to move in a counterfactual ("either" = no constraint).
DIRECTIONS = ("increase", "decrease", "either")


def ordered_levels(name: str, levels: list[str], order: Sequence, seen: set) -> list[str]:
    """An ordinal feature's levels in the given order; the order must hold every level, once, and only known ones."""
    order = [category_text(v).strip() if not isinstance(v, str) else v.strip() for v in order]
    extra = [v for v in levels if v not in order]
    if extra:
        raise ConfigError(f"Ordinal feature {name!r} has values missing from its order: {', '.join(extra)}.")
    unknown = [v for v in order if v not in seen]
    if unknown or len(set(order)) != len(order):
        problem = f"no value {', '.join(map(repr, unknown))}" if unknown else "a value twice in its order"
        raise ConfigError(f"{name!r} has {problem}; its values are: {', '.join(sorted(seen))}.")
    return [v for v in order if v in set(levels)]


def with_constraints(feature, direction, bounds, allowed):
    """The :class:`~flex_core.data.Feature` with its actionability constraints, each checked against its kind and levels."""
    name = feature.name
    if direction in (None, "", "either"):
        direction = None
    elif direction not in DIRECTIONS:
        raise ConfigError(f"The direction of {name!r} must be one of {', '.join(DIRECTIONS)}, not {direction!r}.")
    elif feature.kind == "categorical":
        raise ConfigError(
            f"{name!r} is categorical without an order, so it has no direction; give its order first "
            f"(e.g. --order \"{name}=low<mid<high\")."
        )
    if bounds is not None:
        if not feature.is_continuous:
            raise ConfigError(f"{name!r} is not continuous: give its allowed values instead of a range.")
        bounds = tuple(bounds)
        if len(bounds) != 2:
            raise ConfigError(f"The range of {name!r} must be (low, high).")
        try:
            low, high = (None if b is None or b == "" else float(b) for b in bounds)
        except (TypeError, ValueError):
            raise ConfigError(f"The range of {name!r} must be two numbers, not {bounds!r}.") from None
        if (low is not None and np.isnan(low)) or (high is not None and np.isnan(high)):
            raise ConfigError(f"The range of {name!r} must be two numbers, not {bounds!r}.")
        if low is not None and high is not None and low > high:
            raise ConfigError(f"The range of {name!r} is empty: {low:g} > {high:g}.")
        bounds = None if low is None and high is None else (low, high)
    if allowed is not None:
        if feature.is_continuous:
            raise ConfigError(f"{name!r} is continuous: give it a range (LO:HI) instead of allowed values.")
        allowed = [category_text(v) if not isinstance(v, str) else v.strip() for v in allowed]
        unknown = [v for v in allowed if v not in feature.levels]
        if unknown or not allowed:
            raise ConfigError(
                f"{name!r} has no value {', '.join(map(repr, unknown)) or '(none given)'}; "
                f"its values are: {', '.join(feature.levels)}."
            )
        allowed = tuple(v for v in feature.levels if v in set(allowed))
    if feature.immutable and (direction or bounds is not None or allowed is not None):
        raise ConfigError(f"{name!r} is immutable: it never changes, so a direction, range or allowed values do not apply.")
    return replace(feature, direction=direction, bounds=bounds, allowed=allowed)
