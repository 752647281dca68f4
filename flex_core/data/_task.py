"""The task schema: :class:`Feature`, :class:`TaskSpec`, and :func:`make_task`, which builds and validates one.

Every loader (built-ins, the paper's two datasets, generic CSV; see ``_catalogue.py``)
ends in :func:`make_task`, which validates once and never drops a row without saying so.
It runs as named steps, in this order (each refusal is one :class:`DataError` or
:class:`ConfigError` naming what to fix):

1. :func:`_check_frame`: the frame has rows and columns.
2. :func:`_check_target`, :func:`_undesirable_values`: the target column exists, at least one undesirable value is named.
3. :func:`_feature_columns`: the features exist and do not include the target.
4. :func:`_check_named_features`, :func:`_check_kind_names`: every feature a kind, order, constraint or
   immutability names is one of them, and every kind is one of :data:`KINDS`.
5. :func:`_blank_missing_markers`, :func:`_drop_empty_columns`: "na"-like text is missing; empty features are dropped.
6. :func:`_drop_rows_without_target`, :func:`_resolve_undesirable`: two outcomes remain, the undesirable one among them.
7. :func:`_resolve_kinds`: each feature's kind, its cells read as numbers or as text.
8. :func:`_handle_missing`: rows with a missing feature value dropped or imputed, and counted.
9. :func:`_features`: :func:`_build_features` (with ``_constraints.ordered_levels``), ``_constraints.with_constraints``,
   :func:`_check_some_mutable`, then ``_dictionary.apply_dictionary`` (the data dictionary's words, checked against
   the features): the :class:`Feature` list.
10. :func:`_fingerprint`: a content hash for cache keys (the outcome's words included).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, cast

import numpy as np
import pandas as pd

from .._errors import ConfigError, DataError
from ._columns import KINDS, Kind, as_category_text, as_numbers, infer_kind, mostly_numeric
from ._constraints import DIRECTIONS, ordered_levels, with_constraints
from ._dictionary import DataDictionary, FeatureWords, apply_dictionary, tidy_name
from ._read import MISSING_MARKERS

__all__ = ["Feature", "TaskSpec", "make_task", "DIRECTIONS"]

@dataclass(frozen=True)
class Feature:
    """One input feature of a task.

    ``categories`` lists the levels of a categorical or ordinal feature (for an
    ordinal one, in their order) and is ``None`` for a continuous one. ``words`` are the data
    dictionary's display name, unit, number format, currency and level words (see
    :mod:`flex_core.data._dictionary`); :attr:`label`, :meth:`format_value` and :meth:`level_label`
    use them.
    """

    name: str
    kind: Kind
    immutable: bool = False
    display_name: str = ""
    categories: tuple | None = None
    integer: bool = False
    #: Actionability: "increase" / "decrease" (continuous or ordinal only), or None for either way.
    direction: str | None = None
    #: Permitted range (low, high) of a continuous feature's changed values, either end may be None.
    bounds: tuple | None = None
    #: Levels a categorical or ordinal feature may change to (None: all of them).
    allowed: tuple | None = None
    words: FeatureWords = field(default_factory=FeatureWords)

    @property
    def label(self) -> str:
        """The display name: the dictionary's or one given, else the column name tidied ("cibil_score" -> "Cibil score")."""
        return self.display_name or self.words.name or tidy_name(self.name)

    @property
    def unit(self) -> str:
        """The dictionary's unit of a number ("months"), its currency ("₹") when it has none, else ""."""
        return self.words.unit or self.words.currency

    def format_value(self, value, *, bare: bool = False) -> str:
        """A value as the reader knows it: a number with its currency, format and unit, a level in its words.

        ``bare``: a number without its currency and unit (a table's header names them).
        """
        if self.is_continuous:
            return self.words.number(value, integer=self.integer, bare=bare)
        return self.level_label(value)

    def level_label(self, level) -> str:
        """The dictionary's words for a level (the level itself without them)."""
        return self.words.level(level)

    @property
    def levels(self) -> tuple:
        """``categories``, or ``()`` for a continuous feature (which has none)."""
        return self.categories or ()

    @property
    def is_continuous(self) -> bool:
        return self.kind == "continuous"

    @property
    def is_ordinal(self) -> bool:
        return self.kind == "ordinal"

    @property
    def constraint(self) -> dict:
        """The feature's actionability constraints as plain data (empty when it may move freely)."""
        out: dict = {}
        if self.direction:
            out["direction"] = self.direction
        if self.bounds is not None:
            out["range"] = list(self.bounds)
        if self.allowed is not None:
            out["allowed"] = list(self.allowed)
        if self.is_ordinal:
            out["order"] = list(self.levels)
        return out


@dataclass(frozen=True, eq=False)
class TaskSpec:
    """A binary "undesirable vs not" classification task over a frame.

    The frame's index is each row's 0-based position in the input file, so rows
    keep their identity when others were dropped for missing values.
    """

    name: str
    frame: pd.DataFrame
    target: str
    undesirable: tuple
    features: tuple[Feature, ...]
    description: str = ""
    notes: tuple[str, ...] = ()
    source: str = ""
    rows_in_file: int = 0
    raw_dtypes: Mapping[str, str] = field(default_factory=dict)
    dictionary: DataDictionary | None = None
    _fingerprint: str = field(default="", repr=False)

    # -- views -------------------------------------------------------------------------
    @property
    def feature_names(self) -> list[str]:
        return [f.name for f in self.features]

    @property
    def undesirable_words(self) -> str:
        """The undesirable outcome as the dictionary says it ("Rejected"), else its values joined by "or"."""
        given = self.dictionary.undesirable if self.dictionary else ""
        return given or " or ".join(map(str, self.undesirable))

    @property
    def desirable_words(self) -> str:
        """The other outcome as the dictionary says it ("Approved"), else the target's other values joined by "or"."""
        given = self.dictionary.desirable if self.dictionary else ""
        others = sorted({str(v) for v in pd.unique(self.frame[self.target])} - {str(v) for v in self.undesirable})
        return given or " or ".join(others) or f"not {self.undesirable_words}"

    @property
    def X(self) -> pd.DataFrame:
        """Feature columns only, shape (n_rows, n_features)."""
        return self.frame[self.feature_names]

    @property
    def y(self) -> np.ndarray:
        """1 where the outcome is undesirable, else 0; shape (n_rows,)."""
        return self.frame[self.target].isin(self.undesirable).to_numpy().astype(int)

    @property
    def continuous_names(self) -> list[str]:
        return [f.name for f in self.features if f.is_continuous]

    @property
    def categorical_names(self) -> list[str]:
        return [f.name for f in self.features if not f.is_continuous]

    @property
    def immutable_names(self) -> list[str]:
        return [f.name for f in self.features if f.immutable]

    @property
    def mutable_names(self) -> list[str]:
        return [f.name for f in self.features if not f.immutable]

    @property
    def constraints(self) -> dict[str, dict]:
        """Every feature's direction, range, allowed levels and order, by name (the JSON ``config`` records this)."""
        return {f.name: f.constraint for f in self.features if f.constraint}

    def feature(self, name: str) -> Feature:
        for f in self.features:
            if f.name == name:
                return f
        raise ConfigError(f"Unknown feature {name!r}; the features are: {', '.join(self.feature_names)}.")

    @property
    def fingerprint(self) -> str:
        """A short content hash of the data and the spec, for on-disk cache keys."""
        return self._fingerprint

    def ranges(self) -> np.ndarray:
        """max - min of each continuous feature over the whole frame (NaN for others); shape (n_features,)."""
        out = np.full(len(self.features), np.nan)
        for j, f in enumerate(self.features):
            if f.is_continuous:
                col = self.frame[f.name].astype(float)
                out[j] = float(col.max() - col.min())
        return out

    def with_overrides(
        self,
        *,
        kinds: Mapping[str, str] | None = None,
        immutable: Iterable[str] | None = None,
        features: Iterable[str] | None = None,
        monotone: Mapping[str, str] | None = None,
        bounds: Mapping[str, Sequence] | None = None,
        allowed: Mapping[str, Iterable] | None = None,
        ordinal_orders: Mapping[str, Sequence] | None = None,
    ) -> TaskSpec:
        """A new task with some feature kinds, the immutable set, the features or the constraints changed.

        ``features`` keeps only those features (in that order), e.g. the ones a user's model
        takes; the features left out are named in ``notes``. Each constraint mapping given
        replaces that kind of constraint for every feature; one left as None keeps the task's
        own (dropped for a feature whose kind no longer fits it).
        """
        kinds = dict(kinds or {})
        names = self.feature_names if features is None else list(features)
        unknown = [n for n in names if n not in self.feature_names]
        if unknown:
            raise ConfigError(f"Unknown feature(s) {', '.join(map(str, unknown))}; the features are: {', '.join(self.feature_names)}.")
        kept = [f for f in self.features if f.name in set(names)]
        new_kinds = {f.name: kinds.get(f.name, f.kind) for f in kept}
        if ordinal_orders is None:
            ordinal_orders = {f.name: list(f.levels) for f in kept if f.is_ordinal and new_kinds[f.name] == "ordinal"}
        # An order makes a feature ordinal (make_task's rule), so the kept constraints must fit that kind.
        final_kind = {n: "ordinal" if n in ordinal_orders else k for n, k in new_kinds.items()}
        if monotone is None:
            monotone = {f.name: f.direction for f in kept if f.direction and final_kind[f.name] != "categorical"}
        if bounds is None:
            bounds = {f.name: f.bounds for f in kept if f.bounds is not None and final_kind[f.name] == "continuous"}
        if allowed is None:
            allowed = {f.name: f.allowed for f in kept if f.allowed is not None and final_kind[f.name] != "continuous"}
        immutable = [f.name for f in kept if f.immutable] if immutable is None else list(immutable)
        left_out = [n for n in self.feature_names if n not in set(names)]
        notes = list(self.notes)
        if left_out:
            notes.append(f"Left out column(s) the model does not take: {', '.join(left_out)}.")
        return make_task(
            self.frame,
            target=self.target,
            undesirable=self.undesirable,
            features=names,
            kinds={n: k for n, k in new_kinds.items() if n not in ordinal_orders},
            ordinal_orders=ordinal_orders,
            monotone=monotone,
            bounds=bounds,
            allowed=allowed,
            # Names the task does not know go through, so make_task refuses them instead of dropping them silently.
            immutable=[n for n in immutable if n in set(names) or n not in self.feature_names],
            display_names={f.name: f.display_name for f in kept if f.display_name},
            dictionary=self._kept_dictionary(names),
            name=self.name,
            description=self.description,
            notes=notes,
            source=self.source,
            rows_in_file=self.rows_in_file,
            raw_dtypes=self.raw_dtypes,
        )

    def _kept_dictionary(self, names: list[str]) -> DataDictionary | None:
        """The task's dictionary without the features left out of ``names`` (so it still fits the new task)."""
        if self.dictionary is None:
            return None
        return replace(self.dictionary, features=tuple((n, w) for n, w in self.dictionary.features if n in set(names)))

    def with_dictionary(self, dictionary) -> TaskSpec:
        """The same task in a dictionary's words (a DataDictionary, a TOML path, TOML text or a mapping), checked
        against the features; None takes the words away. Its fingerprint changes, so cached results carry the labels."""
        # A display name the old dictionary gave goes with it; one given otherwise (a built-in's) stays.
        dictionary, features = apply_dictionary(
            [replace(f, display_name="" if f.display_name == f.words.name else f.display_name) for f in self.features],
            dictionary)
        return replace(self, features=tuple(features), dictionary=dictionary,
                       _fingerprint=_fingerprint(self.frame, self.target, self.undesirable, features, self.raw_dtypes,
                                                 dictionary))

    def summary(self) -> dict:
        y = self.y
        return {
            "name": self.name,
            "source": self.source,
            "rows_in_file": self.rows_in_file,
            "rows_used": len(self.frame),
            "undesirable_rows": int(y.sum()),
            "features": len(self.features),
            "notes": list(self.notes),
        }


# -- construction and validation --------------------------------------------------------
def make_task(
    frame: pd.DataFrame,
    *,
    target: str,
    undesirable,
    features: Iterable[str] | None = None,
    kinds: Mapping[str, str] | None = None,
    ordinal_orders: Mapping[str, Sequence] | None = None,
    immutable: Iterable[str] = (),
    monotone: Mapping[str, str] | None = None,
    bounds: Mapping[str, Sequence] | None = None,
    allowed: Mapping[str, Iterable] | None = None,
    display_names: Mapping[str, str] | None = None,
    dictionary=None,
    missing: Literal["drop", "impute"] = "drop",
    name: str = "custom",
    description: str = "",
    notes: Iterable[str] = (),
    source: str = "",
    rows_in_file: int | None = None,
    raw_dtypes: Mapping[str, str] | None = None,
) -> TaskSpec:
    """Validate a frame and build a :class:`TaskSpec`.

    Parameters
    ----------
    frame : DataFrame of shape (n_rows, n_columns)
        Index is kept as each row's identity (its position in the input file).
    target : str
        Column holding the outcome.
    undesirable : value or sequence of values
        Target values that count as the undesirable outcome (e.g. ``"Rejected"``).
    features : sequence of str, optional
        Columns to use as features; default all but the target.
    kinds : mapping feature -> "categorical" | "continuous" | "ordinal", optional
        Overrides of the inferred kinds.
    ordinal_orders : mapping feature -> list, optional
        Level order of ordinal features (default: sorted levels). A feature given an
        order becomes ordinal.
    immutable : sequence of str
        Features a counterfactual may not change.
    monotone : mapping feature -> "increase" | "decrease" | "either", optional
        The only way a counterfactual may move a continuous or ordinal feature.
    bounds : mapping feature -> (low, high), optional
        Permitted range of a continuous feature's changed values (None for an open end).
        A counterfactual keeps the factual's own value or moves inside the range.
    allowed : mapping feature -> levels, optional
        Levels a categorical or ordinal feature may change to.
    display_names : mapping feature -> str, optional
        Labels of some features (a dictionary's names win).
    dictionary : path, TOML text or mapping, optional
        The expert's words (names, units, formats, currencies, level and outcome words), checked against the features.
    missing : {"drop", "impute"}
        Rows with a missing feature value are dropped, or imputed (mode for
        categorical, median for continuous). Either way the count is recorded in
        ``notes``. A missing target always drops the row, also recorded.
    raw_dtypes : mapping feature -> dtype name, optional
        The column types a model fitted elsewhere saw (default: ``frame``'s own). The
        task holds categorical values as text; a user's model gets them back in these
        types (see :meth:`flex_core.models.FittedModel.estimator_input`).
    """
    _check_frame(frame)
    rows_in_file = len(frame) if rows_in_file is None else rows_in_file
    notes = list(notes)
    _check_target(frame, target)
    undesirable = _undesirable_values(undesirable)
    feature_names = _feature_columns(frame, target, features)
    rules = _Rules.checked(feature_names, kinds=kinds, immutable=immutable, ordinal_orders=ordinal_orders,
                           monotone=monotone, bounds=bounds, allowed=allowed)
    raw_dtypes = {c: str(frame[c].dtype) for c in feature_names} if raw_dtypes is None else dict(raw_dtypes)
    df, feature_names, undesirable, resolved_kinds, seen_levels = _clean_rows(
        frame, feature_names, target, undesirable, rules, missing=missing, notes=notes
    )
    dictionary, specs = _features(df, feature_names, resolved_kinds, seen_levels, rules, display_names, dictionary)
    return TaskSpec(
        name=name, frame=df, target=target, undesirable=undesirable, features=tuple(specs), description=description,
        notes=tuple(notes), source=source, rows_in_file=rows_in_file,
        raw_dtypes={c: raw_dtypes.get(c, "object") for c in feature_names}, dictionary=dictionary,
        _fingerprint=_fingerprint(df, target, undesirable, specs, raw_dtypes, dictionary),
    )


def _features(df, feature_names, kinds, seen_levels, rules: _Rules, display_names, dictionary):
    """(the dictionary read, the :class:`Feature` list): built, constrained, checked that one may change, and worded."""
    specs = _build_features(df, feature_names, kinds, seen_levels, rules.ordinal_orders, rules.immutable,
                            dict(display_names or {}))
    specs = [with_constraints(f, rules.monotone.get(f.name), rules.bounds.get(f.name), rules.allowed.get(f.name))
             for f in specs]
    _check_some_mutable(specs)
    return apply_dictionary(specs, dictionary)


@dataclass(frozen=True)
class _Rules:
    """What :func:`make_task` is told about named features: kinds, immutability, orders and constraints."""

    kinds: dict
    immutable: list
    ordinal_orders: dict
    monotone: dict
    bounds: dict
    allowed: dict

    @classmethod
    def checked(cls, feature_names: list[str], *, kinds, immutable, ordinal_orders, monotone, bounds, allowed) -> _Rules:
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


def _clean_rows(frame, feature_names, target, undesirable, rules: _Rules, *, missing, notes):
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
    undesirable = _resolve_undesirable(df, target, undesirable)
    df, resolved_kinds, seen_levels = _resolve_kinds(df, feature_names, rules.kinds, rules.ordinal_orders, notes)
    df = _handle_missing(df, feature_names, target, undesirable, resolved_kinds, missing, notes)
    return df, feature_names, undesirable, resolved_kinds, seen_levels


def _check_frame(frame) -> None:
    """Refuse anything but a data frame with at least one row and one column."""
    if not isinstance(frame, pd.DataFrame) or frame.shape[0] == 0:
        raise DataError("The data has no rows: upload a CSV with a header line and at least one data row.")
    if frame.shape[1] == 0:
        raise DataError("The data has no columns: check the file is a comma-separated CSV with a header line.")


def _check_target(frame: pd.DataFrame, target: str) -> None:
    """Refuse a target that is not one of the frame's columns, naming the columns."""
    if target not in frame.columns:
        raise DataError(
            f"Target column {target!r} not found; the columns are: {', '.join(map(str, frame.columns))}."
        )


def _undesirable_values(undesirable) -> tuple:
    """The undesirable outcome(s) as a non-empty tuple (one value or a sequence of them)."""
    if isinstance(undesirable, (str, int, float, bool, np.generic)):
        undesirable = (undesirable,)
    undesirable = tuple(undesirable)
    if not undesirable:
        raise ConfigError("Name at least one undesirable target value (e.g. --undesired Rejected).")
    return undesirable


def _feature_columns(frame: pd.DataFrame, target: str, features: Iterable[str] | None) -> list[str]:
    """The feature columns: those named, or every column but the target; each must exist and none be the target."""
    feature_names = [c for c in frame.columns if c != target] if features is None else list(features)
    if not feature_names:
        raise DataError("The data has no feature columns besides the target.")
    unknown = [f for f in feature_names if f not in frame.columns]
    if unknown:
        raise ConfigError(f"Feature column(s) not found: {', '.join(map(str, unknown))}.")
    if target in feature_names:
        raise ConfigError(f"The target {target!r} cannot also be a feature.")
    return feature_names


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
        raise ConfigError(f"Unknown kind(s) {bad_kinds}; use one of {', '.join(KINDS)}.")


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
        raise DataError(f"Column(s) {', '.join(map(str, sorted(named & set(empty), key=str)))} have no values at all "
                        "but a setting names them: fill them in or drop the setting.")
    if not kept:
        raise DataError(f"Every feature column is empty ({', '.join(map(str, empty))}): the file has nothing to explain.")
    notes.append(f"Dropped {'an empty column' if len(empty) == 1 else 'empty columns'} (no value in any row): "
                 f"{', '.join(map(str, empty))}.")
    return kept


def _drop_rows_without_target(df: pd.DataFrame, target: str, notes: list[str]) -> pd.DataFrame:
    """Rows with no target value are dropped, and counted in ``notes``."""
    target_missing = df[target].isna()
    if target_missing.any():
        notes.append(f"Dropped {int(target_missing.sum()):,} row(s) with no target value.")
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
        notes.append(f"Dropped {int(rows_with_missing.sum()):,} row(s) with a missing feature value ({detail}).")
        df = df[~rows_with_missing]
    elif missing == "impute":
        for c in feature_names:
            if per_col[c]:
                fill = df[c].median() if kinds[c] == "continuous" else df[c].mode().iloc[0]
                df[c] = df[c].fillna(fill)
        notes.append(
            f"Imputed missing values in {int(rows_with_missing.sum()):,} row(s) "
            f"(mode for categorical, median for continuous; {detail})."
        )
    else:
        raise ConfigError(f"missing must be 'drop' or 'impute', not {missing!r}.")
    if len(df) == 0:
        raise DataError("Every row has a missing feature value; choose missing='impute' or fewer features.")
    if df[target].nunique() < 2 or not df[target].isin(undesirable).any():
        raise DataError("After dropping rows with missing values only one outcome is left; use missing='impute'.")
    return df


def _build_features(
    df: pd.DataFrame,
    feature_names: list[str],
    kinds: Mapping[str, Kind],
    seen_levels: Mapping[str, set],
    ordinal_orders: Mapping[str, Sequence],
    immutable: list[str],
    display_names: Mapping[str, str],
) -> list[Feature]:
    """One :class:`Feature` per column, without constraints yet.

    A continuous feature records whether every value is a whole number; any other its
    levels, sorted as text, or in the given order for an ordinal feature.
    """
    specs = []
    for c in feature_names:
        kind = kinds[c]
        if kind == "continuous":
            col = df[c]
            specs.append(
                Feature(c, kind, c in immutable, display_names.get(c, ""), None, bool(np.all(np.mod(col, 1) == 0)))
            )
            continue
        levels = sorted(df[c].unique(), key=str)
        if kind == "ordinal" and c in ordinal_orders:
            levels = ordered_levels(c, levels, ordinal_orders[c], seen_levels[c])
        specs.append(Feature(c, kind, c in immutable, display_names.get(c, ""), tuple(levels)))
    return specs


def _check_some_mutable(specs: list[Feature]) -> None:
    """Refuse a task in which every feature is immutable: no counterfactual could exist."""
    if all(s.immutable for s in specs):
        raise ConfigError("Every feature is immutable, so no counterfactual can exist; leave at least one mutable.")


def _fingerprint(df: pd.DataFrame, target: str, undesirable: tuple, specs: list[Feature], raw_dtypes: Mapping[str, str],
                 dictionary: DataDictionary | None = None) -> str:
    """16 hex digits of a SHA-256 over the rows (with their index), the target, the outcome, the features and their words."""
    digest = hashlib.sha256()
    digest.update(pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes())
    words = (dictionary.undesirable, dictionary.desirable) if dictionary is not None else ()
    digest.update(repr((target, undesirable, specs, sorted(raw_dtypes.items()), *words)).encode())
    return digest.hexdigest()[:16]
