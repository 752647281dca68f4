"""The task schema: :class:`Feature`, :class:`TaskSpec`, and :func:`make_task`, which builds and validates one.

Every loader (built-ins, the paper's two datasets, generic CSV; see ``_catalogue.py``)
ends in :func:`make_task`, which validates once and never drops a row without saying so.
It runs as named steps, in this order (each refusal is one :class:`DataError` or
:class:`ConfigError` naming what to fix):

1. :func:`_check_frame`: the frame has rows and columns (and, with :func:`_check_target`, the target).
2. :func:`_check_target`, :func:`_undesirable_values`, ``_columns.check_class_target``: the target column exists, at
   least one undesirable value is named, and the target holds classes, not a measured number.
3. :func:`_feature_columns`: the features exist and do not include the target.
4.-8. in ``_rows.py`` (``Rules.checked``, then ``clean_rows``): every feature a kind, order, constraint or
   immutability names is one of them and every kind is one of ``KINDS``; "na"-like text is missing and empty
   features are dropped; two outcomes remain, the undesirable one among them; each feature's kind, its cells read
   as numbers or as text; rows with a missing feature value dropped or imputed, and counted.
9. :func:`_features`: :func:`_build_features` (with ``_constraints.ordered_levels``), ``_constraints.with_constraints``,
   :func:`_check_some_mutable`, then ``_dictionary.apply_dictionary`` (the data dictionary's words, checked against
   the features): the :class:`Feature` list; then the constraints between features,
   parsed against it (:mod:`.rules`).
10. :func:`_fingerprint`: a content hash for cache keys (the outcome's words included).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd

from .._errors import ConfigError, DataError
from .._format import listing
from ._band import Band, band_of
from ._columns import Kind, check_class_target
from ._constraints import DIRECTIONS, ordered_levels, with_constraints
from ._dictionary import DataDictionary, FeatureWords, apply_dictionary, tidy_name
from ._rows import Rules, clean_rows
from .rules import Constraint, parse_constraints

__all__ = ["Feature", "TaskSpec", "make_task", "DIRECTIONS"]

#: Said in a task's notes when a constraint between features was given twice (make_task keeps it once).
REPEATED_CONSTRAINT_NOTE = "A constraint between features given more than once is kept once."


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

    @property
    def header(self) -> str:
        """A table column's header: the label with its unit or currency ("Loan amount (₹)", "Loan term (years)")."""
        return f"{self.label} ({self.unit})" if self.unit else self.label

    def format_value(self, value, *, bare: bool = False) -> str:
        """A value as the reader knows it: a number with its currency, format and unit, a level in its words.

        ``bare``: a number without its currency and unit (a table's header names them).
        """
        if self.is_continuous:
            return self.words.number(value, integer=self.integer, bare=bare)
        return self.level_label(value)

    def format_span(self, low, high, *, sep: str = " to ") -> str:
        """A range of a number as the reader knows it: the currency on both ends, the unit once after them
        ("₹1,000 to ₹2,000", "650–700 points" with ``sep="–"``). An end given as text is taken as written (a
        mode-shift bin's "16 to 20" split in two); levels are put in their words."""
        if not self.is_continuous:
            return f"{self.level_label(low)}{sep}{self.level_label(high)}"

        def end(value) -> str:
            text = value.strip() if isinstance(value, str) else self.words.number(value, integer=self.integer, bare=True)
            sign, text = ("-", text[1:]) if text[:1] in "-−" and text else ("", text)
            return f"{sign}{self.words.currency}{text}"

        return f"{end(low)}{sep}{end(high)}" + (f" {self.words.unit}" if self.words.unit else "")

    def format_mode(self, mode) -> str:
        """A mode-shift mode (:mod:`flex_core.regions`) in the reader's words: a level in the dictionary's
        ("under 1 year"), a number's bin with its currency and unit ("16 to 20 years", "₹300,000 to ₹2,700,000")."""
        if not self.is_continuous:
            return self.format_value(mode)
        mode = str(mode)
        return self.format_span(*mode.split(" to ", 1)) if " to " in mode else mode

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
    """A binary "undesirable vs not" task over a frame: a classification, or a regression whose undesirable outcome is
    a :class:`~flex_core.data.Band` of the number (``undesirable`` then holds that one band; see :attr:`band`).

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
    #: Constraints between features (:mod:`.rules`), each checked against ``features``.
    rules: tuple[Constraint, ...] = ()
    dictionary: DataDictionary | None = None
    #: Target values a counterfactual must reach (DiCE's ``desired_class``); () : any value not undesirable.
    desired: tuple = ()
    _fingerprint: str = field(default="", repr=False)

    # -- views -------------------------------------------------------------------------
    @property
    def band(self) -> Band | None:
        """The band of a regression task (its undesirable outcome: the number above, below or outside thresholds);
        None for a classification task."""
        return band_of(self.undesirable)

    @property
    def target_label(self) -> str:
        """The target as the reader knows it: the dictionary's name for it (a regression's target may have one),
        else the column name tidied ("loan_amount" -> "Loan amount")."""
        words = self.dictionary.words(self.target) if self.dictionary else None
        return (words.name if words else "") or tidy_name(self.target)

    def format_target(self, value, *, bare: bool = False) -> str:
        """A value of a regression's target with the dictionary's currency, format and unit ("₹25,000,000"); whole
        numbers without decimals when every value of the target is whole. ``bare``: without currency and unit."""
        words = self.dictionary.words(self.target) if self.dictionary else FeatureWords()
        integer = bool(np.all(np.mod(self.frame[self.target].to_numpy(dtype=float), 1) == 0))
        return words.number(value, integer=integer, bare=bare)

    @property
    def feature_names(self) -> list[str]:
        return [f.name for f in self.features]

    @property
    def undesirable_words(self) -> str:
        """The undesirable outcome as the dictionary says it ("Rejected"), else its values joined by "or"; a band's
        in its own words ("Loan amount above ₹25,000,000": the dictionary's outcome words name classes)."""
        if self.band is not None:
            return f"{self.target_label} {self.band.describe(self.format_target)[0]}"
        given = self.dictionary.undesirable if self.dictionary else ""
        return given or " or ".join(map(str, self.undesirable))

    @property
    def desirable_words(self) -> str:
        """The other outcome as the dictionary says it ("Approved"), else the target's other values joined by "or";
        with desired values, those (a counterfactual must reach one of them)."""
        if self.band is not None:
            return f"{self.target_label} {self.band.describe(self.format_target)[1]}"
        given = self.dictionary.desirable if self.dictionary else ""
        if self.desired:
            return " or ".join(map(str, self.desired))
        others = sorted({str(v) for v in pd.unique(self.frame[self.target])} - {str(v) for v in self.undesirable})
        return given or " or ".join(others) or f"not {self.undesirable_words}"

    @property
    def model_labels(self) -> np.ndarray:
        """The labels a model trained here learns, shape (n_rows,): :attr:`y` (1 undesirable, else 0), and with
        desired values 2 for those (so the model can tell the goal from the other desirable outcomes)."""
        if not self.desired:
            return self.y
        return np.where(self.frame[self.target].isin(self.desired).to_numpy(), 2, self.y)

    @property
    def X(self) -> pd.DataFrame:
        """Feature columns only, shape (n_rows, n_features)."""
        return self.frame[self.feature_names]

    @property
    def y(self) -> np.ndarray:
        """1 where the outcome is undesirable (a regression's: the number in the undesirable band), else 0; shape (n_rows,)."""
        if self.band is not None:
            return self.band.undesirable(self.frame[self.target].to_numpy(dtype=float)).astype(int)
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

    @property
    def rule_texts(self) -> list[str]:
        """The constraints between features as written (``make_task(constraints=...)``)."""
        return [r.text for r in self.rules]

    def rule_breaks(self, rows: np.ndarray, factuals: np.ndarray) -> np.ndarray:
        """Which coded row breaks which constraint between features, shape (n, len(rules)) bool.

        ``rows`` and ``factuals`` are coded (n, F) as :func:`flex_core.counterfactuals.encode_rows` makes them
        (levels are codes); row i's factual is ``factuals[i]``, or one factual row (F,) serves every row.
        """
        rows = np.atleast_2d(np.asarray(rows, dtype=float))
        factuals = np.broadcast_to(np.asarray(factuals, dtype=float), rows.shape)
        index = {name: j for j, name in enumerate(self.feature_names)}
        out = np.zeros((len(rows), len(self.rules)), dtype=bool)
        for k, rule in enumerate(self.rules):
            out[:, k] = ~rule.holds(rows, factuals, index)
        return out

    def rules_hold(self, rows: np.ndarray, factuals: np.ndarray) -> np.ndarray:
        """Which coded rows (n, F) hold every constraint between features, given their factuals; (n,) bool.

        All True for a task without such constraints. A generator calls this on its candidates to keep only
        those that hold before making them minimal (``batch`` does through its validity rule).
        """
        return np.asarray(~self.rule_breaks(rows, factuals).any(axis=1), dtype=bool)

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
        """max - min of each continuous feature over the whole frame (NaN for others); shape (n_features,).

        Read once per task (its frame does not change) and kept; each call gets its own copy."""
        return self._frame_ranges.copy()

    @functools.cached_property
    def _frame_ranges(self) -> np.ndarray:
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
        constraints: Sequence[str] | None = None,
    ) -> TaskSpec:
        """A new task with some feature kinds, the immutable set, the features or the constraints changed.

        ``features`` keeps only those features (in that order), e.g. the ones a user's model
        takes; the features left out are named in ``notes``. Each constraint mapping given
        replaces that kind of constraint for every feature; one left as None keeps the task's
        own (dropped for a feature whose kind no longer fits it). ``constraints`` (texts) replaces the
        constraints between features; None keeps the task's own, each checked again on the new features.
        """
        kinds = dict(kinds or {})
        names = self.feature_names if features is None else list(features)
        unknown = [n for n in names if n not in self.feature_names]
        if unknown:
            raise ConfigError(f"Unknown {listing('feature', unknown)}; the features are: {', '.join(self.feature_names)}.")
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
        notes = [n for n in self.notes if n != REPEATED_CONSTRAINT_NOTE]  # make_task says it again if it still holds
        if left_out:
            notes.append(f"Left out {'a column' if len(left_out) == 1 else 'columns'} the model does not take: "
                     f"{', '.join(left_out)}.")
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
            constraints=self.rule_texts if constraints is None else constraints,
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
            desired=self.desired,
        )

    def with_desired(self, desired) -> TaskSpec:
        """The same task whose counterfactuals must reach one of the target values ``desired`` (DiCE's
        ``desired_class``; () : any value not undesirable), checked as :func:`make_task` checks them."""
        desired = _desired_values(self.frame, self.target, desired, self.undesirable)
        return replace(self, desired=desired, _fingerprint=_fingerprint(
            self.frame, self.target, self.undesirable, list(self.features), self.raw_dtypes, self.dictionary,
            self.rule_texts, desired))

    def _kept_dictionary(self, names: list[str]) -> DataDictionary | None:
        """The task's dictionary without the features left out of ``names`` (so it still fits the new task)."""
        if self.dictionary is None:
            return None
        kept = {*names, self.target}  # a regression's target keeps its words
        return replace(self.dictionary, features=tuple((n, w) for n, w in self.dictionary.features if n in kept))

    def with_dictionary(self, dictionary) -> TaskSpec:
        """The same task in a dictionary's words (a DataDictionary, a TOML path, TOML text or a mapping), checked
        against the features; None takes the words away. Its fingerprint changes, so cached results carry the labels."""
        # A display name the old dictionary gave goes with it; one given otherwise (a built-in's) stays.
        dictionary, features = apply_dictionary(
            [replace(f, display_name="" if f.display_name == f.words.name else f.display_name) for f in self.features],
            dictionary, numbers=() if self.band is None else (self.target,))
        return replace(self, features=tuple(features), dictionary=dictionary,
                       _fingerprint=_fingerprint(self.frame, self.target, self.undesirable, features, self.raw_dtypes,
                                                 dictionary, self.rule_texts, self.desired))

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
    desired=(),
    features: Iterable[str] | None = None,
    kinds: Mapping[str, str] | None = None,
    ordinal_orders: Mapping[str, Sequence] | None = None,
    immutable: Iterable[str] = (),
    monotone: Mapping[str, str] | None = None,
    bounds: Mapping[str, Sequence] | None = None,
    allowed: Mapping[str, Iterable] | None = None,
    display_names: Mapping[str, str] | None = None,
    constraints: Sequence[str] = (),
    dictionary=None,
    missing: Literal["drop", "impute"] = "drop",
    name: str = "custom",
    description: str = "",
    notes: Iterable[str] = (),
    source: str = "",
    rows_in_file: int | None = None,
    raw_dtypes: Mapping[str, str] | None = None,
) -> TaskSpec:
    """Validate a frame and build a :class:`TaskSpec` (the steps are listed in this module's docstring).

    Parameters
    ----------
    frame : DataFrame of shape (n_rows, n_columns)
        Index is kept as each row's identity (its position in the input file).
    target : str
        The outcome column.
    undesirable : value, sequence of values, or Band
        Target values that count as the undesirable outcome (``"Rejected"``), or a number target's band (regression):
        ``{"above": T}``, ``{"below": T}``, ``{"below": LO, "above": HI}`` (outside), ``"inclusive": True`` for ≥ / ≤.
    desired : value or sequence of values, optional
        Target values a counterfactual must reach (DiCE's ``desired_class``; default: any value not undesirable).
    features : sequence of str, optional
        Columns to use as features; default all but the target.
    kinds : mapping feature -> "categorical" | "continuous" | "ordinal", optional
        Overrides of the inferred kinds.
    ordinal_orders : mapping feature -> list, optional
        Level order of ordinal features (default: sorted levels); a feature given an order becomes ordinal.
    immutable : sequence of str
        Features a counterfactual may not change.
    monotone : mapping feature -> "increase" | "decrease" | "either", optional
        The only way a counterfactual may move a continuous or ordinal feature.
    bounds : mapping feature -> (low, high), optional
        Permitted range of a continuous feature's changed values (None for an open end).
    allowed : mapping feature -> levels, optional
        Levels a categorical or ordinal feature may change to.
    constraints : sequence of str, optional
        Constraints between features, e.g. ``cf.loan_amount <= 5 * cf.income_annum`` (:mod:`flex_core.data.rules`).
    display_names : mapping feature -> str, optional
        Labels of some features (a dictionary's names win).
    dictionary : path, TOML text or mapping, optional
        The expert's words (names, units, formats, currencies, level and outcome words), checked against the features.
    missing : {"drop", "impute"}
        Rows missing a feature value are dropped or imputed (mode / median), counted in ``notes`` (as those without a target).
    raw_dtypes : mapping feature -> dtype name, optional
        The column types a model fitted elsewhere saw (default: ``frame``'s own), given back to a user's model
        (:meth:`flex_core.models.FittedModel.estimator_input`).
    """
    _check_frame(frame, target)
    rows_in_file, notes = len(frame) if rows_in_file is None else rows_in_file, list(notes)
    undesirable, feature_names = _undesirable_values(undesirable, frame, target), _feature_columns(frame, target, features)
    rules = Rules.checked(feature_names, kinds=kinds, immutable=immutable, ordinal_orders=ordinal_orders,
                           monotone=monotone, bounds=bounds, allowed=allowed)
    raw_dtypes = {c: str(frame[c].dtype) for c in feature_names} if raw_dtypes is None else dict(raw_dtypes)
    df, feature_names, undesirable, resolved_kinds, seen_levels = clean_rows(frame, feature_names, target, undesirable,
                                                                             rules, missing=missing, notes=notes)
    desired = _desired_values(df, target, desired, undesirable)
    dictionary, specs, between = _features(df, feature_names, resolved_kinds, seen_levels, rules, display_names,
                                           dictionary, constraints, notes, target if band_of(undesirable) else None)
    return TaskSpec(
        name=name, frame=df, target=target, undesirable=undesirable, features=tuple(specs), description=description,
        notes=tuple(notes), source=source, rows_in_file=rows_in_file, desired=desired, rules=between,
        raw_dtypes={c: raw_dtypes.get(c, "object") for c in feature_names}, dictionary=dictionary,
        _fingerprint=_fingerprint(df, target, undesirable, specs, raw_dtypes, dictionary, [r.text for r in between], desired),
    )


def _features(df, feature_names, kinds, seen_levels, rules: Rules, display_names, dictionary, constraints, notes,
              number_target=None):
    """(the dictionary read, the :class:`Feature` list, the constraints between them): built, constrained, checked
    that one may change, worded, and the constraints between features parsed against them. ``number_target``: a
    regression's target column, which the dictionary may word as a number too."""
    specs = _build_features(df, feature_names, kinds, seen_levels, rules.ordinal_orders, rules.immutable,
                            dict(display_names or {}))
    specs = [with_constraints(f, rules.monotone.get(f.name), rules.bounds.get(f.name), rules.allowed.get(f.name))
             for f in specs]
    _check_some_mutable(specs)
    dictionary, specs = apply_dictionary(specs, dictionary, numbers=() if number_target is None else (number_target,))
    if number_target is not None and dictionary is not None and (dictionary.undesirable or dictionary.desirable):
        notes.append(f"The data dictionary's outcome words ({dictionary.undesirable or '-'} / "
                     f"{dictionary.desirable or '-'}) name classes; with a band of {number_target} the outcome is said "
                     "by the band instead.")
    return dictionary, specs, _between(constraints, specs, notes)


def _check_frame(frame, target: str) -> None:
    """Refuse anything but a data frame with at least one row and one column, and a target not among its columns."""
    if not isinstance(frame, pd.DataFrame) or frame.shape[0] == 0:
        raise DataError("The data has no rows: upload a CSV with a header line and at least one data row.")
    if frame.shape[1] == 0:
        raise DataError("The data has no columns: check the file is a comma-separated CSV with a header line.")
    _check_target(frame, target)


def _check_target(frame: pd.DataFrame, target: str) -> None:
    """Refuse a target that is not one of the frame's columns, naming the columns."""
    if target not in frame.columns:
        raise DataError(
            f"Target column {target!r} not found; the columns are: {', '.join(map(str, frame.columns))}."
        )


def _undesirable_values(undesirable, frame: pd.DataFrame, target: str) -> tuple:
    """The undesirable outcome(s) as a non-empty tuple (one value or a sequence of them), of a target that holds
    classes (``_columns.check_class_target``: a measured number is refused, not read as one value against the rest)."""
    if isinstance(undesirable, Mapping):  # a band of a number target: {"above": 30}
        undesirable = band_of(undesirable)
    if isinstance(undesirable, (str, int, float, bool, np.generic, Band)):
        undesirable = (undesirable,)
    undesirable = tuple(undesirable)
    if any(isinstance(u, Band) for u in undesirable):
        if len(undesirable) > 1:
            raise ConfigError("Give one band as the undesirable outcome, not a band with other values.")
        return undesirable  # a number target: clean_rows reads it as numbers
    if not undesirable:
        raise ConfigError("Name at least one undesirable target value (e.g. --undesired Rejected).")
    check_class_target(frame[target], target, undesirable)
    return undesirable


def _no_desired_with_band(band: Band | None, desired) -> None:
    """Refuse desired values beside a band: a regression's goal is the band's inside."""
    named = desired is not None and (isinstance(desired, (str, int, float, bool, np.generic)) or len(tuple(desired)) > 0)
    if band is not None and named:
        raise ConfigError(f"A band's desired outcome is its inside ({band.desired_words}); leave out the desired values.")


def _desired_values(df: pd.DataFrame, target: str, desired, undesirable: tuple) -> tuple:
    """The desired values as the target column holds them (matched as text too, as the undesirable ones): each a
    value some row has, none undesirable; () when none is named."""
    _no_desired_with_band(band_of(undesirable), desired)
    wanted = (desired,) if isinstance(desired, (str, int, float, bool, np.generic)) else tuple(desired or ())
    values_text = {str(v): v for v in df[target].unique()}
    unknown = [d for d in wanted if str(d) not in values_text]
    if unknown:
        raise DataError(f"No row has the desired outcome {', '.join(map(repr, unknown))}; "
                        f"the target values are: {', '.join(sorted(values_text))}.")
    resolved = tuple(dict.fromkeys(values_text[str(d)] for d in wanted))
    both = [d for d in resolved if d in set(undesirable)]
    if both:
        raise ConfigError(f"{', '.join(map(repr, both))} cannot be both undesirable and desired.")
    return resolved


def _feature_columns(frame: pd.DataFrame, target: str, features: Iterable[str] | None) -> list[str]:
    """The feature columns: those named, or every column but the target; each must exist and none be the target."""
    feature_names = [c for c in frame.columns if c != target] if features is None else list(features)
    if not feature_names:
        raise DataError("The data has no feature columns besides the target.")
    unknown = [f for f in feature_names if f not in frame.columns]
    if unknown:
        raise ConfigError(f"The data has no {listing('column', unknown)} named as {'a feature' if len(unknown) == 1 else 'features'}.")
    if target in feature_names:
        raise ConfigError(f"The target {target!r} cannot also be a feature.")
    return feature_names


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


def _between(constraints, specs: list[Feature], notes: list[str]) -> tuple[Constraint, ...]:
    """The constraints between features, parsed against the built features (a repeated one noted once)."""
    between = parse_constraints(constraints, specs)
    if not isinstance(constraints, str) and len(between) < len(list(constraints or ())):
        notes.append(REPEATED_CONSTRAINT_NOTE)
    return between


def _check_some_mutable(specs: list[Feature]) -> None:
    """Refuse a task in which every feature is immutable: no counterfactual could exist."""
    if all(s.immutable for s in specs):
        raise ConfigError("Every feature is immutable, so no counterfactual can exist; leave at least one mutable.")


def _fingerprint(df: pd.DataFrame, target: str, undesirable: tuple, specs: list[Feature], raw_dtypes: Mapping[str, str],
                 dictionary: DataDictionary | None = None, rules: Sequence[str] = (), desired: tuple = ()) -> str:
    """16 hex digits of a SHA-256 over the rows (with their index), the target, the outcome, the features, their words,
    the constraints between them and the desired values (none adds nothing, so a task without them keeps its
    fingerprint)."""
    digest = hashlib.sha256()
    digest.update(pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes())
    words = (dictionary.undesirable, dictionary.desirable) if dictionary is not None else ()
    digest.update(repr((target, undesirable, specs, sorted(raw_dtypes.items()), *words)).encode())
    if rules:
        digest.update(repr(("constraints", list(rules))).encode())
    if desired:
        digest.update(repr(("desired", list(desired))).encode())
    return digest.hexdigest()[:16]
