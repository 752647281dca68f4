"""The schema a model was trained on, and the frame every model call gets.

A model trained elsewhere records its columns in its own way: scikit-learn and XGBoost
keep the names as given (``feature_names_in_``); LightGBM keeps them sanitised, spaces
turned to underscores (``feature_name_``). Native-categorical boosters want pandas
``category`` columns with the categories they were trained on (XGBoost's
``feature_types`` and ``get_categories()``, LightGBM's ``booster_.pandas_categorical``),
where FLEX holds categorical values as text; scikit-learn's histogram gradient boosting
keeps the text categories it was trained on in its own encoder. :class:`ModelSchema`
records all of that once, and :meth:`ModelSchema.adapt` turns rows in the task's format
into exactly what the model was trained on: the model's library then turns each category
into its code in the training order.

Two mismatches would otherwise pass silently, so they raise instead, naming the column
and the fix: a value the model never saw (:class:`~flex_core.UnseenCategoryError`; the
library would take it as missing), and text in a column the model was trained on as
numbers (integer codes: no model records which code stands for which text, so FLEX does
not guess).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._errors import DataError, UnseenCategoryError

__all__ = ["ModelSchema", "model_schema", "stored_names", "match_columns", "category_key"]


@dataclass(frozen=True, eq=False)
class ModelSchema:
    """What a fitted model was trained on, keyed by the data's column names.

    Attributes
    ----------
    names : tuple of str
        The feature names as the model stores them, in its order.
    columns : tuple of str
        The data's columns the model takes, in the same order (``names`` after sanitising may differ).
    categories : mapping column -> tuple
        Data columns the model takes as pandas ``category``, with the training categories in order
        (empty tuple: unknown, the data's own sorted values stand in).
    library : str
        "lightgbm", "xgboost" or "sklearn" (any other estimator).
    numbers_only : bool
        The model takes every column outside ``categories`` as numbers (a booster, or a bare
        scikit-learn estimator that takes a numeric matrix); False for a Pipeline or any
        other object, which may encode text itself.
    """

    names: tuple[str, ...]
    columns: tuple[str, ...]
    categories: Mapping[str, tuple] = field(default_factory=dict)
    library: str = "sklearn"
    numbers_only: bool = False

    @property
    def renames(self) -> dict[str, str]:
        """Data column -> the model's name, where they differ."""
        return {c: n for c, n in zip(self.columns, self.names) if c != n}

    def adapt(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` (the data's columns, categorical values as text) as the model takes it: category columns
        with the training categories. Names stay the data's: LightGBM and XGBoost both accept them."""
        if not self.categories:
            return frame
        frame = frame.copy()
        for column, categories in self.categories.items():
            if column in frame.columns:
                frame[column] = as_category(frame[column], categories)
        return frame

    def check_text_columns(self, levels: Mapping[str, Sequence]) -> None:
        """Refuse data the model would misread: ``levels`` maps each data column holding text to its values.

        Raises UnseenCategoryError for a value outside a column's training categories, and
        DataError for text in a column a numbers-only model was trained on as numbers.
        """
        for column, values in levels.items():
            if column not in self.columns:
                continue
            categories = self.categories.get(column)
            if categories:
                unseen = _unseen(values, categories)
                if unseen:
                    raise unseen_category_error(column, unseen, categories)
            elif categories is None and self.numbers_only:
                raise DataError(
                    f"Column {column!r} holds text ({_listed(sorted(values, key=str))}), but the model was trained on numbers there "
                    "(integer codes?) and does not record which code stands for which value, so FLEX will not guess. "
                    "Give the data the codes the model was trained on, or retrain it on pandas category columns "
                    "(XGBoost with enable_categorical=True, LightGBM, or HistGradientBoosting), which record their "
                    "categories."
                )


def _listed(values: Sequence, limit: int = 5) -> str:
    shown = ", ".join(str(v) for v in list(values)[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def category_key(value) -> str:
    """How a value is matched to a training category: as text, a whole number written without ".0".

    FLEX holds a number column as floats, where the model may have learnt the categories 1, 2, 3:
    2.0 is the category 2, not a value the model never saw.
    """
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _unseen(values, categories: Sequence) -> list:
    """The non-missing ``values`` that match none of ``categories`` (see :func:`category_key`), once each, in order."""
    known = {category_key(c) for c in categories}
    return list(dict.fromkeys(v for v in values if not pd.isna(v) and category_key(v) not in known))



def unseen_category_error(column: str, unseen: Sequence, categories: Sequence) -> UnseenCategoryError:
    """The error for values of ``column`` the model never saw: it names them, the training categories and the fix."""
    return UnseenCategoryError(
        f"Column {column!r} holds {'a value' if len(unseen) == 1 else 'values'} the model never saw in training: "
        f"{_listed(unseen)} (it knows {_listed(categories, limit=10)}); the model would take "
        f"{'it' if len(unseen) == 1 else 'them'} as missing. Drop or recode those rows, or retrain the model on data "
        "that has these values.",
        column=column,
        values=tuple(unseen),
    )


def as_category(column: pd.Series, categories: Sequence) -> pd.Series:
    """``column`` as pandas category with ``categories`` in their order, values matched as text.

    UnseenCategoryError for a value outside ``categories`` (empty: unknown, the data's own sorted values stand in).
    """
    if isinstance(column.dtype, pd.CategoricalDtype) and list(column.cat.categories) == list(categories):
        return column
    if not categories:
        values = column.astype(object)
        return values.astype(pd.CategoricalDtype(sorted(values.dropna().unique(), key=str)))
    unseen = _unseen(column.unique(), categories)
    if unseen:
        raise unseen_category_error(str(column.name), unseen, categories)
    by_key = {category_key(c): c for c in categories}
    mapped = column.map(lambda v: by_key.get(category_key(v)) if not pd.isna(v) else None)
    return pd.Series(pd.Categorical(mapped, categories=list(categories)), index=column.index, name=column.name)


def _library(estimator) -> str:
    module = type(estimator).__module__
    for name in ("lightgbm", "xgboost"):
        if module.startswith(name):
            return name
    return "sklearn"


def stored_names(estimator) -> list[str] | None:
    """The feature names as the estimator stores them (``feature_names_in_``, LightGBM's ``feature_name_``), or None."""
    if _library(estimator) == "lightgbm":
        names = getattr(estimator, "feature_name_", None)
    else:
        names = getattr(estimator, "feature_names_in_", None)
    return None if names is None else [str(n) for n in names]


def _sanitised(name: str) -> str:
    """LightGBM's form of a feature name: it turns spaces into underscores."""
    return name.replace(" ", "_")


def match_columns(estimator, names: Sequence[str], available: Sequence[str]) -> list[str]:
    """The data's columns for the model's stored ``names``: exact, else (LightGBM) the one whose sanitised name matches.

    DataError naming the missing columns and the fix.
    """
    available = [str(c) for c in available]
    exact = set(available)
    lightgbm = _library(estimator) == "lightgbm"
    sanitised: dict[str, list[str]] = {}
    for column in available:
        sanitised.setdefault(_sanitised(column), []).append(column)
    out, missing = [], []
    for name in names:
        if name in exact:
            out.append(name)
        elif lightgbm and len(sanitised.get(name, [])) == 1:
            out.append(sanitised[name][0])
        else:
            missing.append(name)
    if missing:
        hint = (" LightGBM stores names with spaces as underscores; a data column matches either form."
                if lightgbm else "")
        raise DataError(
            f"The data lacks {'a column' if len(missing) == 1 else 'columns'} the model needs: {', '.join(missing)}. "
            f"Give the data the columns the model was trained on, with the same names.{hint}"
        )
    if len(set(out)) != len(out):
        raise DataError(f"Two of the model's features match the same data column among: {', '.join(out)}; rename one.")
    return out


def _xgboost_categories(estimator, names: Sequence[str]) -> dict[str, tuple]:
    try:
        booster = estimator.get_booster()
    except Exception:  # not fitted through the sklearn API: no schema to read
        return {}
    types = list(booster.feature_types or [])
    categorical = {n for n, t in zip(names, types) if t == "c"}
    if not categorical:
        return {}
    known: dict[str, tuple] = {}
    try:  # XGBoost >= 3.1 keeps the training categories (needs pyarrow to read them)
        for name, values in booster.get_categories(export_to_arrow=True).to_arrow():
            if values is not None:
                known[str(name)] = tuple(values.to_pylist())
    except Exception:
        pass
    return {n: known.get(n, ()) for n in names if n in categorical}


def _lightgbm_categories(estimator, names: Sequence[str]) -> dict[str, tuple]:
    try:
        booster = estimator.booster_
    except Exception:  # not fitted: no schema to read
        return {}
    pandas_categorical = getattr(booster, "pandas_categorical", None) or []
    if not pandas_categorical:
        return {}
    params = getattr(booster, "params", {}) or {}
    indices = params.get("categorical_column") or params.get("categorical_feature")
    if isinstance(indices, str):
        indices = [int(i) for i in indices.split(",") if i.strip()]
    if not indices:
        infos = booster.dump_model(num_iteration=0).get("feature_infos", {})
        indices = [i for i, n in enumerate(names) if infos.get(n, {}).get("values")]
    indices = [int(i) for i in indices]
    if len(indices) != len(pandas_categorical):
        return {}
    return {names[i]: tuple(cats) for i, cats in zip(indices, pandas_categorical)}


def _histogram_boosting_categories(estimator, names: Sequence[str]) -> dict[str, tuple]:
    """The text categories scikit-learn's HistGradientBoosting learnt per categorical column (in its encoder).

    Numeric categories mean it was trained on codes: such a column is left to the numbers-only check.
    """
    mask = getattr(estimator, "is_categorical_", None)
    encoder = getattr(getattr(estimator, "_preprocessor", None), "named_transformers_", {}).get("encoder")
    if mask is None or encoder is None or not hasattr(encoder, "categories_"):
        return {}
    categorical = [n for n, is_categorical in zip(names, mask) if is_categorical]
    return {
        name: tuple(values)
        for name, values in zip(categorical, encoder.categories_)
        if not pd.api.types.is_numeric_dtype(pd.Series(list(values), dtype=object).infer_objects())
    }


#: scikit-learn modules whose classifiers take a numeric matrix and nothing else (no text, no wrapped pipeline).
_NUMERIC_SKLEARN = ("sklearn.ensemble._forest", "sklearn.ensemble._gb", "sklearn.ensemble._hist_gradient_boosting",
                    "sklearn.tree", "sklearn.linear_model", "sklearn.svm", "sklearn.neighbors", "sklearn.naive_bayes",
                    "sklearn.neural_network", "sklearn.discriminant_analysis")


def _numbers_only(estimator, library: str) -> bool:
    return library in ("xgboost", "lightgbm") or type(estimator).__module__.startswith(_NUMERIC_SKLEARN)


def model_schema(estimator, available: Sequence[str]) -> ModelSchema | None:
    """The schema of a fitted estimator against the data's columns ``available``; None if it records no names.

    Raises DataError (naming the columns and the fix) when the data lacks a column the model needs.
    """
    names = stored_names(estimator)
    if names is None:
        return None
    columns = match_columns(estimator, names, available)
    library = _library(estimator)
    if library == "xgboost":
        by_name = _xgboost_categories(estimator, names)
    elif library == "lightgbm":
        by_name = _lightgbm_categories(estimator, names)
    else:
        by_name = _histogram_boosting_categories(estimator, names)
    to_column = dict(zip(names, columns))
    return ModelSchema(
        names=tuple(names), columns=tuple(columns), categories={to_column[n]: c for n, c in by_name.items()},
        library=library, numbers_only=_numbers_only(estimator, library),
    )
