"""Steps 4 to 8 of :func:`~._task.make_task`: the rules a task is told about named features, checked, and the rows
cleaned (missing markers blanked, empty features and rows without an outcome dropped, two outcomes resolved, each
feature's kind resolved, missing values dropped or imputed), every drop counted in the notes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from .._errors import ConfigError, DataError
from .._format import format_number, listing, plural
from ._band import Band, band_of
from ._columns import KINDS, Kind, as_category_text, as_numbers, infer_kind, mostly_numeric
from ._dictionary import tidy_name
from ._read import MISSING_MARKERS

__all__ = ["Rules", "clean_rows"]


@dataclass(frozen=True)
class Rules:
    """What :func:`make_task` is told about named features: kinds, immutability, orders and constraints."""

    kinds: dict
    immutable: list
    ordinal_orders: dict
    monotone: dict
    bounds: dict
    allowed: dict

    @classmethod
    def checked(cls, feature_names: list[str], *, kinds, immutable, ordinal_orders, monotone, bounds, allowed) -> Rules:
        """The rules as plain containers, after refusing one that names a feature the task lacks or an unknown kind."""
        rules = cls(dict(kinds or {}), list(immutable), dict(ordinal_orders or {}), dict(monotone or {}),
                    dict(bounds or {}), dict(allowed or {}))
        _check_named_features(
            feature_names,
            (
                ("kind override", rules.kinds),
                ("immutable feature", rules.immutable),
                ("ordinal order", rules.ordinal_orders),
                ("direction for feature", rules.monotone),
                ("range for feature", rules.bounds),
                ("allowed values for feature", rules.allowed),
            ),
        )
        _check_kind_names(rules.kinds)
        return rules

    @property
    def named(self) -> set:
        """Every feature some rule names (kept even when its column is empty)."""
        return {*self.kinds, *self.immutable, *self.ordinal_orders, *self.monotone, *self.bounds, *self.allowed}


def clean_rows(frame, feature_names, target, undesirable, rules: Rules, *, missing, notes):
    """The task's columns and rows, each step recorded in ``notes``.

    Missing-value markers blanked, empty columns no setting names dropped, rows without a target dropped, the
    undesirable values resolved, kinds resolved and missing values handled. Returns (frame, feature names,
    undesirable values, kinds, levels seen per feature).
    """
    df = frame[feature_names + [target]].copy()
    df = _blank_missing_markers(df)
    feature_names = _drop_empty_columns(df, feature_names, rules.named, notes)
    df = df[feature_names + [target]]
    df = _drop_rows_without_target(df, target, notes)
    band = band_of(undesirable)
    df, undesirable = (_resolve_band(df, target, band), undesirable) if band else (df, _resolve_undesirable(df, target, undesirable))
    df, resolved_kinds, seen_levels = _resolve_kinds(df, feature_names, rules.kinds, rules.ordinal_orders, notes)
    df = _handle_missing(df, feature_names, target, undesirable, resolved_kinds, missing, notes)
    return df, feature_names, undesirable, resolved_kinds, seen_levels


def _check_named_features(feature_names: list[str], named: Iterable[tuple[str, Iterable]]) -> None:
    """Refuse the first setting (kind, immutability, order or constraint) that names a feature the task lacks."""
    for label, names in named:
        bad = [n for n in names if n not in feature_names]
        if bad:
            raise ConfigError(
                f"Unknown {label}: {', '.join(map(str, bad))}; the features are: {', '.join(map(str, feature_names))}."
            )


def _check_kind_names(kinds: Mapping[str, str]) -> None:
    """Refuse a kind override that is not one of :data:`KINDS`."""
    bad_kinds = {n: k for n, k in kinds.items() if k not in KINDS}
    if bad_kinds:
        raise ConfigError(f"Unknown {listing('kind', (f'{k!r} (for {n})' for n, k in bad_kinds.items()))}; use one of {', '.join(KINDS)}.")


def _blank_missing_markers(df: pd.DataFrame) -> pd.DataFrame:
    """Text cells that only mean "missing" (see :data:`MISSING_MARKERS`, after stripping spaces) become NaN."""
    for c in df.columns:
        if df[c].dtype == object:
            stripped = df[c].map(lambda v: v.strip() if isinstance(v, str) else v)
            df[c] = stripped.mask(stripped.isin(MISSING_MARKERS))
    return df


def _drop_empty_columns(df: pd.DataFrame, feature_names: list[str], named: set, notes: list[str]) -> list[str]:
    """The features left once those with no value in any row are dropped (said in ``notes``).

    An empty column tells nothing about any case, so dropping it loses nothing; refusing the file
    made the user edit it first. Refused only when it is all there was, or a setting names it
    (immutable, a kind, a range...): dropping it would silently ignore that setting.
    """
    empty = [c for c in feature_names if df[c].isna().all()]
    if not empty:
        return feature_names
    kept = [c for c in feature_names if c not in empty]
    if named & set(empty):
        named_empty = sorted(named & set(empty), key=str)
        one = len(named_empty) == 1
        raise DataError(f"{listing('Column', named_empty)} {'has' if one else 'have'} no values at all but a setting "
                        f"names {'it' if one else 'them'}: fill {'it' if one else 'them'} in or drop the setting.")
    if not kept:
        raise DataError(f"Every feature column is empty ({', '.join(map(str, empty))}): the file has nothing to explain.")
    notes.append(f"Dropped {'an empty column' if len(empty) == 1 else 'empty columns'} (no value in any row): "
                 f"{', '.join(map(str, empty))}.")
    return kept


def _drop_rows_without_target(df: pd.DataFrame, target: str, notes: list[str]) -> pd.DataFrame:
    """Rows with no target value are dropped, and counted in ``notes``."""
    target_missing = df[target].isna()
    if target_missing.any():
        notes.append(f"Dropped {plural(int(target_missing.sum()), 'row')} with no target value.")
        df = df[~target_missing]
    return df


def _resolve_undesirable(df: pd.DataFrame, target: str, undesirable: tuple) -> tuple:
    """The undesirable values as the target column holds them; both outcomes must be present.

    Values are also matched as text, so ``--undesired 1`` finds a numeric target's 1.
    """
    target_values = df[target].unique()
    if len(target_values) < 2:
        raise DataError(
            f"The target {target!r} has a single value ({target_values[0]!r}); a classifier needs two outcomes."
        )
    values_text = {str(v): v for v in target_values}
    resolved = tuple(values_text.get(str(u), u) for u in undesirable)
    missing_values = [u for u, r in zip(undesirable, resolved) if r not in set(target_values)]
    if missing_values:
        raise DataError(
            f"No row has the undesirable outcome {', '.join(map(repr, missing_values))}; "
            f"the target values are: {', '.join(sorted(map(str, target_values)))}."
        )
    if df[target].isin(resolved).all():
        raise DataError("Every row has the undesirable outcome; the data needs rows with the desirable one too.")
    return resolved


def _resolve_band(df: pd.DataFrame, target: str, band: Band) -> pd.DataFrame:
    """The frame with a regression's target as floats; refused when it holds text, or every row or none is undesirable."""
    numbers = pd.to_numeric(df[target], errors="coerce") if not pd.api.types.is_bool_dtype(df[target]) else df[target] * np.nan
    text = numbers.isna() | ~np.isfinite(numbers.astype(float))
    if text.any():
        first = text.idxmax()
        raise DataError(f"The target {target!r} holds {df[target][first]!r} (row {first}), not a number: a band "
                        f"({band}) needs a number in every row; fix the value or drop the row.")
    undesirable = band.undesirable(numbers.to_numpy(dtype=float))
    span = f"from {format_number(numbers.min())} to {format_number(numbers.max())}"
    if not undesirable.any():
        raise DataError(f"No row's {target} is {band} (the values run {span}); choose a threshold inside that range.")
    if undesirable.all():
        raise DataError(f"Every row's {target} is {band} (the values run {span}); the data needs rows in the desired "
                        f"band ({band.desired_words}) too.")
    df = df.copy()
    df[target] = numbers.astype(float)
    return df


def _is_undesirable(column: pd.Series, undesirable: tuple) -> pd.Series:
    """Which rows' target is undesirable: one of the values, or in the band."""
    band = band_of(undesirable)
    if band is None:
        return column.isin(undesirable)
    return pd.Series(band.undesirable(column.to_numpy(dtype=float)), index=column.index)


def _resolve_kinds(
    df: pd.DataFrame,
    feature_names: list[str],
    kinds: Mapping[str, str],
    ordinal_orders: Mapping[str, Sequence],
    notes: list[str],
) -> tuple[pd.DataFrame, dict[str, Kind], dict[str, set]]:
    """Each feature's kind, and its column read as that kind.

    A declared kind wins; a feature given an order is ordinal; otherwise the kind is
    inferred, and a text column of numbers with a few stray words is continuous.
    Continuous columns become floats (stray text and infinities missing, with notes),
    the others text. Also returns each non-continuous feature's levels before any row
    is dropped (an order may name a level only dropped rows had).
    """
    resolved_kinds: dict[str, Kind] = {}
    seen_levels: dict[str, set] = {}
    for c in feature_names:
        kind = kinds.get(c) or ("ordinal" if c in ordinal_orders else infer_kind(df[c]))
        if c in ordinal_orders:
            if kind == "continuous":
                raise ConfigError(f"{c!r} is declared continuous, so it cannot take an order of levels.")
            kind = "ordinal"  # an ordered feature is ordinal
        if kind == "categorical" and c not in kinds and c not in ordinal_orders and mostly_numeric(df[c]):
            kind = "continuous"
        if kind == "continuous":
            df[c], column_notes = as_numbers(df[c], c, declared=c in kinds)
            notes.extend(column_notes)
        else:
            df[c] = as_category_text(df[c])
            seen_levels[c] = set(df[c].dropna())
        resolved_kinds[c] = cast(Kind, kind)  # make_task checked the declared kinds (_check_kind_names)
    return df, resolved_kinds, seen_levels


def _handle_missing(
    df: pd.DataFrame,
    feature_names: list[str],
    target: str,
    undesirable: tuple,
    kinds: Mapping[str, Kind],
    missing: str,
    notes: list[str],
) -> pd.DataFrame:
    """Rows with a missing feature value are dropped or imputed (``missing``), counted per column in ``notes``.

    Imputation fills the median of a continuous feature and the mode of any other.
    Refused when nothing, or only one outcome, is left.
    """
    feature_missing = df[feature_names].isna()
    rows_with_missing = feature_missing.any(axis=1)
    if not rows_with_missing.any():
        return df
    per_col = feature_missing.sum()
    detail = ", ".join(f"{tidy_name(c)} {int(n):,}" for c, n in per_col.items() if n)  # as labels read, not raw
    if missing == "drop":
        notes.append(f"Dropped {plural(int(rows_with_missing.sum()), 'row')} with a missing feature value ({detail}).")
        df = df[~rows_with_missing]
    elif missing == "impute":
        for c in feature_names:
            if per_col[c]:
                fill = df[c].median() if kinds[c] == "continuous" else df[c].mode().iloc[0]
                df[c] = df[c].fillna(fill)
        notes.append(
            f"Imputed missing values in {plural(int(rows_with_missing.sum()), 'row')} "
            f"(mode for categorical, median for continuous; {detail})."
        )
    else:
        raise ConfigError(f"missing must be 'drop' or 'impute', not {missing!r}.")
    if len(df) == 0:
        raise DataError("Every row has a missing feature value; choose missing='impute' or fewer features.")
    undesirable_rows = _is_undesirable(df[target], undesirable)
    if df[target].nunique() < 2 or not undesirable_rows.any() or (band_of(undesirable) and undesirable_rows.all()):
        raise DataError("After dropping rows with missing values only one outcome is left; use missing='impute'.")
    return df
