"""The bounds of every number a user gives, and the memory budget of a run: one table, one check.

Every boundary (the library's functions, the CLI's options, the app's links and sidebar) checks
a number with :func:`check` against :data:`LIMITS`, so each setting has one documented range
(docs/bad-input.md lists them). A value outside it is a :class:`~flex_core.ConfigError` naming
the setting, its range and the value. :func:`check_memory` refuses a run whose estimated size
does not fit :func:`memory_budget` (``FLEX_MEMORY_BUDGET_MB``), before it starts.
"""

from __future__ import annotations

import math
import os
from typing import NamedTuple

from ._errors import ConfigError

__all__ = ["Limit", "LIMITS", "check", "check_each", "memory_budget", "check_memory", "MEMORY_BUDGET_ENV"]


class Limit(NamedTuple):
    """The range of one setting (both ends included) and what it counts."""

    low: float
    high: float
    what: str
    integer: bool = True


#: setting -> its range. The names are the library's keyword arguments (``rows``, ``columns`` and
#: ``cells`` bound a CSV file as read).
LIMITS: dict[str, Limit] = {
    "n_factuals": Limit(1, 5_000, "factuals sampled, N_F"),
    "n_cf": Limit(1, 50, "counterfactuals per factual, N_cf"),
    "chunk_rows": Limit(1, 1_000_000, "factuals generated in one call and stored as one chunk file"),
    "k": Limit(0, 1_000, "nearest neighbours of a region's query"),
    "seed": Limit(0, 2**32 - 1, "random seed"),
    "repeats": Limit(1, 20, "seeds a run is repeated with"),
    "retrain": Limit(0, 20, "refits of the model for the retraining check; 0 skips it"),
    "samples": Limit(1, 10_000, "batch generators: candidates per query and round"),
    "max_rounds": Limit(1, 1_000, "batch generators: rounds of candidates"),
    "n_jobs": Limit(-1, 64, "cores; -1 means all of them"),
    "time_limit": Limit(0, 86_400, "seconds after which a generator starts no new query or chunk", integer=False),
    "num_samples": Limit(10, 100_000, "LIME: perturbation samples per factual"),
    "nsamples": Limit(1, 100_000, "KernelSHAP: model evaluations per row, or \"auto\""),
    "background_size": Limit(1, 1_000, "SHAP: background rows"),
    "cv_folds": Limit(0, 10, "cross-validation folds; 0 skips it"),
    "cv_rows": Limit(10, 1_000_000, "rows cross-validated on"),
    "n_permutations": Limit(100, 100_000, "region search: permutations of the null"),
    "min_support": Limit(2, 5_000, "region search: factuals a region must hold"),
    "bins": Limit(2, 20, "quantile bins of a number"),
    "permutation_repeats": Limit(2, 100, "permutation importance: shuffles per feature"),
    "top": Limit(1, 10_000, "region search: regions written"),
    "rows": Limit(1, 200_000, "data rows of a CSV file"),
    "columns": Limit(1, 500, "columns of a CSV file"),
    "cells": Limit(1, 5_000_000, "cells of a CSV file, rows x columns"),
}
#: Values inside the range that still mean nothing (``n_jobs=0``, one cross-validation fold).
_EXCLUDED = {"n_jobs": (0,), "cv_folds": (1,)}


def _text(x: float) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:g}"


def check(name: str, value, *, label: str | None = None):
    """``value`` as the int (or float) setting ``name`` takes, or a ConfigError naming ``label``, the range and the value.

    ``label`` is how the caller's user spells the setting (``--n-cf``, ``gen.samples``); default ``name``.
    Booleans, text, NaN and fractions where a whole number is needed are refused too.
    """
    limit = LIMITS[name]
    label = label or name
    kind = "a whole number" if limit.integer else "a number"
    span = f"{kind} from {_text(limit.low)} to {_text(limit.high)}"
    try:
        if isinstance(value, bool | str | bytes):
            raise TypeError
        number = float(value)
        if limit.integer:
            if not number.is_integer():
                raise ValueError
            number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{label} ({limit.what}) must be {span}; got {str(value)[:40]!r}.") from None
    if not (math.isfinite(number) and limit.low <= number <= limit.high) or number in _EXCLUDED.get(name, ()):
        excluded = "".join(f", not {x}" for x in _EXCLUDED.get(name, ()))
        raise ConfigError(f"{label} ({limit.what}) must be {span}{excluded}; got {_text(number)}.")
    return number


#: The environment variable that sets the memory one run may use, in MB.
MEMORY_BUDGET_ENV = "FLEX_MEMORY_BUDGET_MB"
_DEFAULT_SHARE = 4  # without it: a quarter of the machine's memory (a shared server runs several sessions)
_FALLBACK_MB = 2048  # where the machine's memory cannot be read


def memory_budget() -> int:
    """Bytes one run may use: ``FLEX_MEMORY_BUDGET_MB`` when set, else a quarter of the machine's memory."""
    text = os.environ.get(MEMORY_BUDGET_ENV, "").strip()
    if text:
        try:
            megabytes = float(text)
        except ValueError:
            megabytes = -1.0
        if not (math.isfinite(megabytes) and megabytes > 0):
            raise ConfigError(f"{MEMORY_BUDGET_ENV} must be a positive number of MB, not {text[:40]!r}.")
        return int(megabytes * 2**20)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        total = _FALLBACK_MB * 2**20 * _DEFAULT_SHARE
    return int(total // _DEFAULT_SHARE)


def check_memory(estimate: int, *, what: str, reduce: str) -> None:
    """Refuse work estimated at ``estimate`` bytes when it exceeds :func:`memory_budget`.

    ``what`` names the work ("finding the ways out of 20 cases"), ``reduce`` the settings that shrink it
    ("the cases to explain (N_F), ...").
    """
    budget = memory_budget()
    if estimate > budget:
        raise ConfigError(
            f"{what[:1].upper()}{what[1:]} would need about {estimate / 2**20:,.0f} MB, more than the "
            f"{budget / 2**20:,.0f} MB a run may use ({MEMORY_BUDGET_ENV}): reduce {reduce}."
        )


def check_each(**values) -> dict:
    """:func:`check` each keyword that is not None; returns the checked values."""
    return {name: check(name, value) for name, value in values.items() if value is not None}
