"""The undesirable outcome of a regression: a band of the predicted number (issue 38).

A :class:`Band` says when a prediction is undesirable: above a threshold, below one, or outside
``[below, above]``; ``inclusive`` says whether the threshold itself is undesirable too (≥ / ≤ instead
of > / <). It is given where a classification task names its undesirable value(s), as a mapping
(``make_task(undesirable={"above": 30})``, ``{"below": 10, "above": 20, "inclusive": True}``) or a Band, so every
loader takes it unchanged; the task holds it as ``task.band``.

The pipeline runs on a score in [0, 1] (a classifier's P(undesirable)): :meth:`Band.score` maps a
prediction to ``0.5 + 0.5 d / (|d| + s)``, ``d`` the prediction's signed distance outside the
desired band (:meth:`Band.distance`) and ``s`` a scale in the target's units. It rises with ``d``,
is below 0.5 exactly when the prediction is in the desired band (the boundary is pinned to the side
``inclusive`` gives it: one float step from 0.5) and above 0.5 exactly when it is undesirable. The
validity rule's margin ``m`` (score < 0.5 - m) then asks the prediction to lie at least
``s m / (0.5 - m)`` inside the band (:meth:`Band.margin_width`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._errors import ConfigError
from .._format import format_number

__all__ = ["Band", "BAND_KEYS", "band_of"]

_BELOW_HALF = float(np.nextafter(0.5, 0.0))
_ABOVE_HALF = float(np.nextafter(0.5, 1.0))


@dataclass(frozen=True)
class Band:
    """When a predicted number is undesirable: above ``above``, below ``below``, or outside ``[below, above]``.

    Parameters
    ----------
    above : float, optional
        Predictions above it are undesirable (at or above it with ``inclusive``).
    below : float, optional
        Predictions below it are undesirable (at or below it with ``inclusive``).
    inclusive : bool, default False
        Whether a prediction exactly at a threshold is undesirable too.

    Examples
    --------
    ``Band(above=30)``: undesirable when the prediction is > 30, desired when ≤ 30.
    ``Band(above=30, inclusive=True)``: undesirable when ≥ 30. ``Band(below=10, above=20)``: undesirable
    outside [10, 20] (``inclusive``: outside (10, 20)).
    """

    above: float | None = None
    below: float | None = None
    inclusive: bool = False

    def __post_init__(self):
        for name in ("above", "below"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not math.isfinite(value):
                raise ConfigError(f"The band's {name} threshold must be a finite number; got {value!r}.")
            object.__setattr__(self, name, float(value))
        if self.above is None and self.below is None:
            raise ConfigError("A band needs a threshold: above T, below T, or both (outside LO:HI).")
        if self.above is not None and self.below is not None and not self.below < self.above:
            raise ConfigError(f"The band's low end ({format_number(self.below)}) must be below its high end "
                              f"({format_number(self.above)}).")
        object.__setattr__(self, "inclusive", bool(self.inclusive))

    # -- the rule ---------------------------------------------------------------------------
    def distance(self, values) -> np.ndarray:
        """Signed distance of each value outside the desired band (> 0 outside it, <= 0 inside), same shape."""
        values = np.asarray(values, dtype=float)
        parts = []
        if self.above is not None:
            parts.append(values - self.above)
        if self.below is not None:
            parts.append(self.below - values)
        return parts[0] if len(parts) == 1 else np.maximum(parts[0], parts[1])

    def undesirable(self, values) -> np.ndarray:
        """Which values (any shape) are undesirable, bool."""
        d = self.distance(values)
        return d >= 0 if self.inclusive else d > 0

    def score(self, values, scale: float) -> np.ndarray:
        """The off-band score of predictions (see the module docstring): monotone in :meth:`distance`, < 0.5
        exactly where desirable, > 0.5 exactly where undesirable. ``scale`` (> 0) is ``s``, in the target's units."""
        d = self.distance(values)
        raw = 0.5 + 0.5 * d / (np.abs(d) + float(scale))
        return np.where(self.undesirable(values), np.maximum(raw, _ABOVE_HALF), np.minimum(raw, _BELOW_HALF))

    @staticmethod
    def margin_width(margin: float, scale: float) -> float:
        """How far inside the band (target units) a prediction must lie to score below 0.5 - ``margin``."""
        return float(scale) * float(margin) / (0.5 - float(margin))

    # -- words ------------------------------------------------------------------------------
    def describe(self, number=format_number) -> tuple[str, str]:
        """(the undesirable outcome, the desired one) in words, each threshold written by ``number`` (e.g. the
        target's currency and unit, ``TaskSpec.format_target``): ("above 30", "at most 30"), ("at or above 30",
        "below 30"), ("outside 10 to 20", "10 to 20"), ("outside 10 to 20 (ends included)", "strictly between 10 and
        20")."""
        if self.above is not None and self.below is not None:
            low, high = number(self.below), number(self.above)
            if self.inclusive:
                return f"outside {low} to {high} (ends included)", f"strictly between {low} and {high}"
            return f"outside {low} to {high}", f"{low} to {high}"
        if self.above is not None:
            value = number(self.above)
            return (f"at or above {value}", f"below {value}") if self.inclusive else (f"above {value}", f"at most {value}")
        value = number(self.below)
        return (f"at or below {value}", f"above {value}") if self.inclusive else (f"below {value}", f"at least {value}")

    def __str__(self) -> str:
        """The undesirable outcome in words: "above 30", "at or above 30", "outside 10 to 20"."""
        return self.describe()[0]

    @property
    def desired_words(self) -> str:
        """The desired outcome in words: "at most 30", "below 30", "10 to 20"."""
        return self.describe()[1]

    def as_dict(self) -> dict:
        """The band as plain data (the JSON's ``band``)."""
        return {"above": self.above, "below": self.below, "inclusive": self.inclusive, "undesirable": str(self),
                "desired": self.desired_words}


#: The keys of a band given as a mapping (``make_task(undesirable={"above": 30})``).
BAND_KEYS = ("above", "below", "inclusive")


def band_of(undesirable) -> Band | None:
    """The band ``undesirable`` gives (a Band, a mapping of :data:`BAND_KEYS`, or a one-Band tuple), else None."""
    if isinstance(undesirable, Mapping):
        unknown = [str(k) for k in undesirable if k not in BAND_KEYS]
        if unknown:
            raise ConfigError(f"A band takes the keys {', '.join(BAND_KEYS)}; not {', '.join(unknown)}.")
        return Band(**undesirable)
    if isinstance(undesirable, Band):
        return undesirable
    if isinstance(undesirable, tuple) and len(undesirable) == 1 and isinstance(undesirable[0], Band):
        return undesirable[0]
    return None
