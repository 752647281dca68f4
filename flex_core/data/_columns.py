"""One column at a time: inferring a feature's kind and reading its cells as numbers or as text.

Used by :func:`flex_core.data.make_task` (every feature) and by
:func:`flex_core.data.identifier_columns` (is a column numbers with a few stray words?).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from .._errors import ConfigError, DataError
from .._format import format_number, plural

Kind = Literal["categorical", "continuous", "ordinal"]
KINDS = ("categorical", "continuous", "ordinal")
#: A column counts as numeric with a few stray text cells when at least this share of its filled cells are numbers.
NUMERIC_SHARE = 0.8
#: An outcome column holds 2 to this many distinct values (more looks like a measurement, e.g. a speed).
MAX_OUTCOME_LEVELS = 20


def infer_kind(col: pd.Series) -> Kind:
    """Text, booleans and numbers with at most two values are categorical; other numbers continuous."""
    if pd.api.types.is_bool_dtype(col) or not pd.api.types.is_numeric_dtype(col):
        return "categorical"
    return "categorical" if col.dropna().nunique() <= 2 else "continuous"


def mostly_numeric(col: pd.Series) -> bool:
    """A text column whose cells are numbers but for a few stray words (at least 3 distinct numbers)."""
    if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        return False
    filled = col.dropna()
    numbers = pd.to_numeric(filled, errors="coerce")
    return numbers.notna().mean() >= NUMERIC_SHARE and numbers.nunique() >= 3 if len(filled) else False


def rows_text(index: pd.Index) -> str:
    """'row 3', 'rows 3, 7, 9': at most five rows named, then how many more."""
    shown = ", ".join(str(r) for r in index[:5])
    return f"{'row' if len(index) == 1 else 'rows'} {shown}" + (f" and {len(index) - 5:,} more" if len(index) > 5 else "")


def as_numbers(col: pd.Series, name: str, *, declared: bool) -> tuple[pd.Series, list[str]]:
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
            f"Column {name!r} holds numbers but {plural(int(text.sum()), 'cell')} {'holds' if text.sum() == 1 else 'hold'} "
            f"text ({values}; "
            f"{rows_text(col.index[text])}): those cells are read as missing values. "
            "Fix them in the file, or declare the column categorical to keep the text as values."
        )
    numbers = numbers.astype(float)
    infinite = np.isinf(numbers)
    if infinite.any():
        notes.append(
            f"Column {name!r} holds {plural(int(infinite.sum()), 'infinite value')} ({rows_text(col.index[infinite])}): "
            "those cells are read as missing values."
        )
        numbers = numbers.mask(infinite)
    return numbers, notes


def category_text(value) -> str:
    """A categorical value as text; integral floats print without '.0' (a CSV's 1/2/3 stay '1')."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def as_category_text(col: pd.Series) -> pd.Series:
    """Every filled cell of a categorical column as text (see :func:`category_text`); missing cells stay missing."""
    return col.map(category_text, na_action="ignore")


def is_number_target(col: pd.Series) -> bool:
    """Whether a target column holds a measured number rather than classes.

    The rule: every present value reads as a number (booleans do not count) and there are more than
    :data:`MAX_OUTCOME_LEVELS` distinct values. A 0/1 label, or small integer codes of a few classes, stays classes.
    """
    filled = col.dropna()
    if pd.api.types.is_bool_dtype(filled) or filled.empty:
        return False
    numbers = pd.to_numeric(filled, errors="coerce") if not pd.api.types.is_numeric_dtype(filled) else filled
    return bool(numbers.notna().all() and numbers.nunique() > MAX_OUTCOME_LEVELS)


def check_class_target(col: pd.Series, name: str, undesirable: tuple) -> None:
    """Refuse a target that holds a measured number (:func:`is_number_target`): naming one of its values as the
    undesirable outcome would explain that value against all the others, which is never what a number means."""
    if not is_number_target(col):
        return
    numbers = pd.to_numeric(col.dropna(), errors="coerce")
    given = ", ".join(map(str, undesirable))
    raise ConfigError(
        f"The target {name!r} holds numbers ({numbers.nunique():,} different values, from "
        f"{format_number(numbers.min())} to {format_number(numbers.max())}), not classes: the undesirable value "
        f"{given} would be read as that one number against all the others. Explain it as a regression: give the "
        f"undesirable band of the number instead, --above T (undesirable above T), --below T (below T) or --band LO:HI (outside LO to HI); in Python "
        f"undesirable={{'above': T}}, {{'below': T}} or {{'below': LO, 'above': HI}}; or give a column of classes as the target "
        f"(2 to {MAX_OUTCOME_LEVELS} different values)."
    )
