"""Task specifications: a frame, its target, the undesirable outcome and per-feature facts.

All loaders (built-ins, the paper's two datasets, generic CSV) end in
:func:`make_task`, which validates once and never drops a row without saying so.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
import pandas as pd

from .._errors import ConfigError, DataError
from ._read import MAX_FILE_BYTES, MISSING_MARKERS, read_csv, read_notes

__all__ = [
    "Feature",
    "TaskSpec",
    "make_task",
    "load_csv",
    "load_loan",
    "load_accidents",
    "load_builtin",
    "load_dataset",
    "BUILTIN_DATASETS",
    "identifier_columns",
]

Kind = Literal["categorical", "continuous", "ordinal"]
KINDS = ("categorical", "continuous", "ordinal")
#: A column counts as numeric with a few stray text cells when at least this share of its filled cells are numbers.
NUMERIC_SHARE = 0.8
#: Fewer rows than this are too few to call a column of unique values an identifier.
MIN_ROWS_FOR_IDENTIFIER = 20
#: Ways a feature may be constrained to move in a counterfactual ("either" = no constraint).
DIRECTIONS = ("increase", "decrease", "either")

ACCIDENT_FEATURES = (
    "Driving_experience",
    "Cause_of_accident",
    "Types_of_Junction",
    "Type_of_collision",
    "Vehicle_movement",
    "Weather_conditions",
    "Pedestrian_movement",
    "Light_conditions",
    "Road_surface_type",
    "Age_band_of_driver",
    "Sex_of_driver",
)
ACCIDENT_IMMUTABLE = ("Age_band_of_driver", "Sex_of_driver")
#: The natural order of the accident file's ordered features (no direction: the paper's runs are unchanged).
ACCIDENT_ORDERS = {
    "Driving_experience": ["No Licence", "Below 1yr", "1-2yr", "2-5yr", "5-10yr", "Above 10yr", "unknown"],
    "Age_band_of_driver": ["Under 18", "18-30", "31-50", "Over 51", "Unknown"],
    "Educational_level": [
        "Illiterate", "Writing & reading", "Elementary school", "Junior high school",
        "High school", "Above high school", "Unknown",
    ],
}
ACCIDENT_UNDESIRABLE = ("Serious Injury", "Fatal injury")


@dataclass(frozen=True)
class Feature:
    """One input feature of a task.

    ``categories`` lists the levels of a categorical or ordinal feature (for an
    ordinal one, in their order) and is ``None`` for a continuous one.
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

    @property
    def label(self) -> str:
        return self.display_name or self.name.replace("_", " ")

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
    _fingerprint: str = field(default="", repr=False)

    # -- views -------------------------------------------------------------------------
    @property
    def feature_names(self) -> list[str]:
        return [f.name for f in self.features]

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
            name=self.name,
            description=self.description,
            notes=notes,
            source=self.source,
            rows_in_file=self.rows_in_file,
            raw_dtypes=self.raw_dtypes,
        )

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
def _infer_kind(col: pd.Series) -> Kind:
    if pd.api.types.is_bool_dtype(col) or not pd.api.types.is_numeric_dtype(col):
        return "categorical"
    return "categorical" if col.dropna().nunique() <= 2 else "continuous"


def _mostly_numeric(col: pd.Series) -> bool:
    """A text column whose cells are numbers but for a few stray words (at least 3 distinct numbers)."""
    if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        return False
    filled = col.dropna()
    numbers = pd.to_numeric(filled, errors="coerce")
    return numbers.notna().mean() >= NUMERIC_SHARE and numbers.nunique() >= 3 if len(filled) else False


def _rows_text(index: pd.Index) -> str:
    shown = ", ".join(str(r) for r in index[:5])
    return f"row(s) {shown}" + (f" and {len(index) - 5:,} more" if len(index) > 5 else "")


def _as_numbers(col: pd.Series, name: str, *, declared: bool) -> tuple[pd.Series, list[str]]:
    """A continuous column as floats; stray text cells and infinities become missing values, each with a note.

    A column with more text than :data:`NUMERIC_SHARE` allows is refused when it was
    declared continuous (it is read as categorical when its kind was inferred).
    """
    notes = []
    numbers = pd.to_numeric(col, errors="coerce")
    text = col.notna() & numbers.isna()
    if text.any():
        if 1 - text.sum() / col.notna().sum() < NUMERIC_SHARE:
            first = text.idxmax()
            raise DataError(
                f"Column {name!r} is {'declared' if declared else 'read as'} continuous but holds text such as "
                f"{col[first]!r} (row {first}); declare it categorical or fix the values."
            )
        counts = col[text].astype(str).value_counts()
        values = ", ".join(f"{v!r}" + (f" ×{n}" if n > 1 else "") for v, n in counts.head(5).items())
        notes.append(
            f"Column {name!r} holds numbers but {int(text.sum()):,} cell(s) hold text ({values}; "
            f"{_rows_text(col.index[text])}): those cells are read as missing values. "
            "Fix them in the file, or declare the column categorical to keep the text as values."
        )
    numbers = numbers.astype(float)
    infinite = np.isinf(numbers)
    if infinite.any():
        notes.append(
            f"Column {name!r} holds {int(infinite.sum()):,} infinite value(s) ({_rows_text(col.index[infinite])}): "
            "those cells are read as missing values."
        )
        numbers = numbers.mask(infinite)
    return numbers, notes


def category_text(value) -> str:
    """A categorical value as text; integral floats print without '.0' (a CSV's 1/2/3 stay '1')."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _as_category_text(col: pd.Series) -> pd.Series:
    return col.map(category_text, na_action="ignore")


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
    missing : {"drop", "impute"}
        Rows with a missing feature value are dropped, or imputed (mode for
        categorical, median for continuous). Either way the count is recorded in
        ``notes``. A missing target always drops the row, also recorded.
    raw_dtypes : mapping feature -> dtype name, optional
        The column types a model fitted elsewhere saw (default: ``frame``'s own). The
        task holds categorical values as text; a user's model gets them back in these
        types (see :meth:`flex_core.models.FittedModel.estimator_input`).
    """
    if not isinstance(frame, pd.DataFrame) or frame.shape[0] == 0:
        raise DataError("The data has no rows: upload a CSV with a header line and at least one data row.")
    if frame.shape[1] == 0:
        raise DataError("The data has no columns: check the file is a comma-separated CSV with a header line.")
    rows_in_file = len(frame) if rows_in_file is None else rows_in_file
    notes = list(notes)
    if target not in frame.columns:
        raise DataError(
            f"Target column {target!r} not found; the columns are: {', '.join(map(str, frame.columns))}."
        )
    if isinstance(undesirable, (str, int, float, bool, np.generic)):
        undesirable = (undesirable,)
    undesirable = tuple(undesirable)
    if not undesirable:
        raise ConfigError("Name at least one undesirable target value (e.g. --undesired Rejected).")
    feature_names = [c for c in frame.columns if c != target] if features is None else list(features)
    if not feature_names:
        raise DataError("The data has no feature columns besides the target.")
    unknown = [f for f in feature_names if f not in frame.columns]
    if unknown:
        raise ConfigError(f"Feature column(s) not found: {', '.join(map(str, unknown))}.")
    if target in feature_names:
        raise ConfigError(f"The target {target!r} cannot also be a feature.")
    kinds = dict(kinds or {})
    immutable = list(immutable)
    monotone, bounds, allowed = dict(monotone or {}), dict(bounds or {}), dict(allowed or {})
    named = (
        ("kind override", kinds),
        ("immutable feature", immutable),
        ("ordinal order", ordinal_orders or {}),
        ("direction for feature", monotone),
        ("range for feature", bounds),
        ("allowed values for feature", allowed),
    )
    for label, names in named:
        bad = [n for n in names if n not in feature_names]
        if bad:
            raise ConfigError(
                f"Unknown {label}: {', '.join(map(str, bad))}; the features are: {', '.join(map(str, feature_names))}."
            )
    bad_kinds = {n: k for n, k in kinds.items() if k not in KINDS}
    if bad_kinds:
        raise ConfigError(f"Unknown kind(s) {bad_kinds}; use one of {', '.join(KINDS)}.")

    df = frame[feature_names + [target]].copy()
    raw_dtypes = {c: str(frame[c].dtype) for c in feature_names} if raw_dtypes is None else dict(raw_dtypes)
    # Text cells that only mean "missing" become NaN before any check.
    for c in df.columns:
        if df[c].dtype == object:
            stripped = df[c].map(lambda v: v.strip() if isinstance(v, str) else v)
            df[c] = stripped.mask(stripped.isin(MISSING_MARKERS))

    all_missing = [c for c in feature_names if df[c].isna().all()]
    if all_missing:
        raise DataError(
            f"Column(s) with no values at all: {', '.join(map(str, all_missing))}; remove them or fill them in."
        )

    target_missing = df[target].isna()
    if target_missing.any():
        notes.append(f"Dropped {int(target_missing.sum()):,} row(s) with no target value.")
        df = df[~target_missing]

    target_values = df[target].unique()
    if len(target_values) < 2:
        raise DataError(
            f"The target {target!r} has a single value ({target_values[0]!r}); a classifier needs two outcomes."
        )
    # Compare as text too, so --undesired 1 matches a numeric target column.
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
    undesirable = resolved

    resolved_kinds: dict[str, Kind] = {}
    seen_levels: dict[str, set] = {}  # before rows are dropped: an order may name a level only dropped rows had
    for c in feature_names:
        kind = kinds.get(c) or ("ordinal" if c in (ordinal_orders or {}) else _infer_kind(df[c]))
        if c in (ordinal_orders or {}):
            if kind == "continuous":
                raise ConfigError(f"{c!r} is declared continuous, so it cannot take an order of levels.")
            kind = "ordinal"  # an ordered feature is ordinal
        if kind == "categorical" and c not in kinds and c not in (ordinal_orders or {}) and _mostly_numeric(df[c]):
            kind = "continuous"
        if kind == "continuous":
            df[c], column_notes = _as_numbers(df[c], c, declared=c in kinds)
            notes.extend(column_notes)
        else:
            df[c] = _as_category_text(df[c])
            seen_levels[c] = set(df[c].dropna())
        resolved_kinds[c] = cast(Kind, kind)  # checked against KINDS above

    feature_missing = df[feature_names].isna()
    rows_with_missing = feature_missing.any(axis=1)
    if rows_with_missing.any():
        per_col = feature_missing.sum()
        detail = ", ".join(f"{c} {int(n):,}" for c, n in per_col.items() if n)
        if missing == "drop":
            notes.append(f"Dropped {int(rows_with_missing.sum()):,} row(s) with a missing feature value ({detail}).")
            df = df[~rows_with_missing]
        elif missing == "impute":
            for c in feature_names:
                if per_col[c]:
                    fill = df[c].median() if resolved_kinds[c] == "continuous" else df[c].mode().iloc[0]
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

    display_names = dict(display_names or {})
    ordinal_orders = dict(ordinal_orders or {})
    specs = []
    for c in feature_names:
        kind = resolved_kinds[c]
        if kind == "continuous":
            col = df[c]
            specs.append(
                Feature(c, kind, c in immutable, display_names.get(c, ""), None, bool(np.all(np.mod(col, 1) == 0)))
            )
            continue
        levels = sorted(df[c].unique(), key=str)
        if kind == "ordinal" and c in ordinal_orders:
            order = [category_text(v).strip() if not isinstance(v, str) else v.strip() for v in ordinal_orders[c]]
            extra = [v for v in levels if v not in order]
            if extra:
                raise ConfigError(f"Ordinal feature {c!r} has values missing from its order: {', '.join(extra)}.")
            unknown = [v for v in order if v not in seen_levels[c]]
            if unknown or len(set(order)) != len(order):
                problem = f"no value {', '.join(map(repr, unknown))}" if unknown else "a value twice in its order"
                raise ConfigError(f"{c!r} has {problem}; its values are: {', '.join(sorted(seen_levels[c]))}.")
            levels = [v for v in order if v in set(levels)]
        specs.append(Feature(c, kind, c in immutable, display_names.get(c, ""), tuple(levels)))
    specs = [_with_constraints(f, monotone.get(f.name), bounds.get(f.name), allowed.get(f.name)) for f in specs]

    if all(s.immutable for s in specs):
        raise ConfigError("Every feature is immutable, so no counterfactual can exist; leave at least one mutable.")

    digest = hashlib.sha256()
    digest.update(pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes())
    digest.update(repr((target, undesirable, specs, sorted(raw_dtypes.items()))).encode())
    return TaskSpec(
        name=name,
        frame=df,
        target=target,
        undesirable=undesirable,
        features=tuple(specs),
        description=description,
        notes=tuple(notes),
        source=source,
        rows_in_file=rows_in_file,
        raw_dtypes={c: raw_dtypes.get(c, "object") for c in feature_names},
        _fingerprint=digest.hexdigest()[:16],
    )


def _with_constraints(feature: Feature, direction, bounds, allowed) -> Feature:
    """The feature with its actionability constraints, each checked against its kind and levels."""
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


# -- files -------------------------------------------------------------------------------
def _source_label(kind: str, source) -> str:
    return f"{kind}:{source}" if isinstance(source, (str, os.PathLike)) else f"{kind}:upload"


def identifier_columns(frame: pd.DataFrame, *, target: str | None = None) -> list[str]:
    """Columns that name rows rather than describe them: every value present and unique.

    Text columns qualify, and integer columns that count up by one from row to row
    (row numbers such as 1..n); measured numbers (floats, other integers, numbers
    with a few stray text cells) never do, since those are often all distinct too. Frames of fewer than
    :data:`MIN_ROWS_FOR_IDENTIFIER` rows have none.
    """
    n = len(frame)
    if n < MIN_ROWS_FOR_IDENTIFIER:
        return []
    found = []
    for name in frame.columns:
        col = frame[name]
        if name == target or col.isna().any() or col.nunique() != n:
            continue
        if pd.api.types.is_float_dtype(col) or pd.api.types.is_bool_dtype(col) or _mostly_numeric(col):
            continue
        if pd.api.types.is_integer_dtype(col) and not (np.diff(col.to_numpy()) == 1).all():
            continue  # only row numbers counting up by one; other all-distinct integers may be measurements
        found.append(str(name))
    return found


def load_csv(
    source,
    *,
    target: str,
    undesirable,
    immutable: Iterable[str] = (),
    kinds: Mapping[str, str] | None = None,
    features: Iterable[str] | None = None,
    use_identifiers: Iterable[str] = (),
    missing: Literal["drop", "impute"] = "drop",
    name: str | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    **constraints,
) -> TaskSpec:
    """A task from any CSV: kinds are inferred from the column types and can be overridden.

    Without ``features``, every column but the target is a feature except identifier
    columns (see :func:`identifier_columns`), which are left out with a note unless
    named in ``use_identifiers``. What reading the file guessed (delimiter,
    encoding) is in the task's ``notes``.
    ``constraints`` are :func:`make_task`'s ``monotone``, ``bounds``, ``allowed`` and ``ordinal_orders``.
    """
    frame = read_csv(source, max_bytes=max_bytes)
    target = str(target).strip()
    notes = read_notes(frame)
    use_identifiers = [str(c).strip() for c in use_identifiers]
    unknown = [c for c in use_identifiers if c not in frame.columns]
    if unknown:
        raise ConfigError(f"Identifier column(s) to use not found: {', '.join(unknown)}.")
    if features is None and target in frame.columns:
        left_out = [c for c in identifier_columns(frame, target=target) if c not in use_identifiers]
        if left_out:
            features = [c for c in frame.columns if c != target and c not in left_out]
            notes.append(
                f"Left out {', '.join(left_out)}: every value is unique, so it names a row rather than describes it. "
                "To use it as a feature anyway: --use-identifier NAME on the command line, or pick it under "
                "'Identifier columns to use' when loading in the app."
            )
    label = name or (Path(source).stem if isinstance(source, (str, os.PathLike)) else "uploaded CSV")
    return make_task(
        frame,
        target=target,
        undesirable=undesirable,
        features=features,
        kinds=kinds,
        immutable=immutable,
        **constraints,
        missing=missing,
        name=label,
        notes=notes,
        source=_source_label("csv", source),
    )


def load_loan(source, *, max_bytes: int = MAX_FILE_BYTES) -> TaskSpec:
    """The Kaggle loan-approval file: strip padded names and values, drop ``loan_id``, undesirable = Rejected."""
    frame = read_csv(source, max_bytes=max_bytes, skipinitialspace=True)
    frame = frame.apply(lambda c: c.str.strip() if c.dtype == object else c)
    if "loan_status" not in frame.columns:
        raise DataError("This does not look like the loan-approval file: it has no 'loan_status' column.")
    if "loan_id" in frame.columns:
        frame = frame.drop(columns="loan_id")
    return make_task(
        frame,
        target="loan_status",
        undesirable=("Rejected",),
        kinds={c: "categorical" for c in ("education", "self_employed") if c in frame.columns},
        name="loan approval",
        description="Kaggle loan-approval data: 2 categorical and 9 numeric applicant features; undesirable = Rejected.",
        notes=[*read_notes(frame), "Stripped padded column names and values; dropped the identifier loan_id."],
        source=_source_label("loan", source),
    )


def load_accidents(source, *, missing: Literal["drop", "impute"] = "drop", max_bytes: int = MAX_FILE_BYTES) -> TaskSpec:
    """The Addis Ababa road-traffic-accident file with the paper's 11 categorical features.

    Undesirable = Serious or Fatal injury; driver age band and sex are immutable.
    Rows with a missing value (empty cell or ``na``) are dropped by default,
    or imputed with ``missing="impute"``; the count is recorded in ``notes``.
    """
    frame = read_csv(source, max_bytes=max_bytes)
    needed = [c for c in (*ACCIDENT_FEATURES, "Accident_severity") if c not in frame.columns]
    if needed:
        raise DataError(f"This does not look like the RTA accidents file: missing column(s) {', '.join(needed)}.")
    return make_task(
        frame,
        target="Accident_severity",
        undesirable=ACCIDENT_UNDESIRABLE,
        features=ACCIDENT_FEATURES,
        kinds={c: "categorical" for c in ACCIDENT_FEATURES if c not in ACCIDENT_ORDERS},
        ordinal_orders={c: order for c, order in ACCIDENT_ORDERS.items() if c in ACCIDENT_FEATURES},
        immutable=ACCIDENT_IMMUTABLE,
        missing=missing,
        name="road traffic accidents",
        notes=read_notes(frame),
        description="Addis Ababa road traffic accidents 2017-2020; undesirable = Serious or Fatal injury.",
        source=_source_label("accidents", source),
    )


# -- built-ins ---------------------------------------------------------------------------
def _toy2d(seed: int) -> TaskSpec:
    """The paper's Fig. 2 toy: severity from speed and visibility, a curved boundary."""
    rng = np.random.default_rng(seed)
    n = 600
    speed = rng.uniform(20, 120, n)
    visibility = rng.uniform(0, 1, n)
    # Severe when fast for the visibility: the boundary bends, so both features matter.
    score = (speed - 40) / 80 - 0.8 * visibility ** 2 + rng.normal(0, 0.08, n)
    frame = pd.DataFrame(
        {
            "vehicle_speed": speed.round(1),
            "visibility": visibility.round(3),
            "Accident_severity": np.where(score > 0.25, "Severe", "Slight"),
        }
    )
    return make_task(
        frame,
        target="Accident_severity",
        undesirable="Severe",
        display_names={"vehicle_speed": "Vehicle speed (km/h)", "visibility": "Visibility (0-1)"},
        name="toy2d",
        description="The paper's Fig. 2 toy: 600 accidents, severity from vehicle speed and visibility.",
        source="builtin:toy2d",
    )


def _synthetic_regional(seed: int) -> TaskSpec:
    """Mixed data with planted drivers (see ``SYNTHETIC_GROUND_TRUTH``)."""
    rng = np.random.default_rng(seed)
    n = 2000
    speed = rng.uniform(20, 120, n).round(0)
    road = rng.choice(["urban", "rural", "motorway"], n)
    lighting = rng.choice(["daylight", "dark"], n)
    noise_cont = rng.normal(50, 15, n).round(2)
    noise_cat = rng.choice(["A", "B", "C", "D"], n)
    age_band = rng.choice(["18-30", "31-50", "over 50"], n)
    severe = (speed > 80) | ((road == "rural") & (lighting == "dark"))
    flip = rng.random(n) < 0.03  # a little label noise, as in real data
    severe = severe ^ flip
    frame = pd.DataFrame(
        {
            "speed": speed,
            "road_type": road,
            "lighting": lighting,
            "noise_continuous": noise_cont,
            "noise_categorical": noise_cat,
            "driver_age_band": age_band,
            "severity": np.where(severe, "Severe", "Slight"),
        }
    )
    return make_task(
        frame,
        target="severity",
        undesirable="Severe",
        immutable=("road_type", "driver_age_band"),
        name="synthetic-regional",
        description=SYNTHETIC_GROUND_TRUTH,
        source="builtin:synthetic-regional",
    )


SYNTHETIC_GROUND_TRUTH = (
    "Generated: severe when speed > 80 (the global driver) or when the road is rural and it is dark "
    "(lighting: a driver only inside the region road_type = rural). road_type and driver_age_band are "
    "immutable; noise_continuous and noise_categorical are pure noise; 3% label noise."
)


def _breast_cancer(seed: int) -> TaskSpec:
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    frame = bunch.data.copy()
    frame.columns = [c.replace(" ", "_") for c in frame.columns]
    frame["diagnosis"] = np.where(bunch.target == 0, "malignant", "benign")
    return make_task(
        frame,
        target="diagnosis",
        undesirable="malignant",
        name="breast-cancer",
        description="scikit-learn's bundled Wisconsin breast-cancer data: 30 continuous features; undesirable = malignant.",
        source="builtin:breast-cancer",
    )


BUILTIN_DATASETS = {
    "toy2d": _toy2d,
    "synthetic-regional": _synthetic_regional,
    "breast-cancer": _breast_cancer,
}


def load_builtin(name: str, *, seed: int = 0) -> TaskSpec:
    """One of the built-in datasets (``toy2d``, ``synthetic-regional``, ``breast-cancer``)."""
    try:
        build = BUILTIN_DATASETS[name]
    except KeyError:
        raise ConfigError(f"Unknown built-in dataset {name!r}; choose one of {', '.join(BUILTIN_DATASETS)}.") from None
    return build(seed)


def load_dataset(
    spec: str,
    *,
    target: str | None = None,
    undesirable=None,
    immutable: Iterable[str] = (),
    kinds: Mapping[str, str] | None = None,
    missing: Literal["drop", "impute"] = "drop",
    use_identifiers: Iterable[str] = (),
    monotone: Mapping[str, str] | None = None,
    bounds: Mapping[str, Sequence] | None = None,
    allowed: Mapping[str, Iterable] | None = None,
    ordinal_orders: Mapping[str, Sequence] | None = None,
) -> TaskSpec:
    """Resolve a ``--data`` string: ``builtin:NAME``, ``loan:PATH``, ``accidents:PATH`` or a CSV path.

    Constraints (``monotone``, ``bounds``, ``allowed``, ``ordinal_orders``) apply to any
    data; an order given here replaces an adapter's order of that feature.
    """
    given: dict[str, Mapping | None] = {"monotone": monotone, "bounds": bounds, "allowed": allowed}
    constraints: dict[str, Any] = {k: dict(v) for k, v in given.items() if v}
    kind, _, rest = spec.partition(":")
    if kind in ("builtin", "loan", "accidents") and rest and (target is not None or undesirable is not None):
        raise ConfigError(f"--target and --undesired apply to a plain CSV; {kind}: data defines its own target.")
    if kind in ("builtin", "loan", "accidents") and rest and list(use_identifiers):
        raise ConfigError(f"--use-identifier applies to a plain CSV; {kind}: data defines its own features.")
    adapters = {
        "builtin": lambda: load_builtin(rest),
        "loan": lambda: load_loan(rest),
        "accidents": lambda: load_accidents(rest, missing=missing),
    }
    if kind in adapters and rest:
        task = adapters[kind]()
        immutable, kinds = list(immutable), dict(kinds or {})
        if not immutable and not kinds and not constraints and not ordinal_orders:
            return task
        orders: dict[str, Sequence] | None = None
        if ordinal_orders:
            orders = {
                f.name: list(f.levels) for f in task.features if f.is_ordinal and kinds.get(f.name, "ordinal") == "ordinal"
            }
            orders.update(ordinal_orders)
        # Extra immutable features add to the adapter's own (the paper's age band and sex stay fixed).
        return task.with_overrides(
            kinds=kinds,
            immutable=list(dict.fromkeys([*task.immutable_names, *immutable])),
            ordinal_orders=orders,
            **constraints,
        )
    if target is None or undesirable is None:
        raise ConfigError(
            f"For a CSV file ({spec}) name the target and the undesirable class (--target COL --undesired VALUE)."
        )
    return load_csv(
        spec,
        target=target,
        undesirable=undesirable,
        immutable=immutable,
        kinds=kinds,
        missing=missing,
        use_identifiers=use_identifiers,
        ordinal_orders=ordinal_orders,
        **constraints,
    )

