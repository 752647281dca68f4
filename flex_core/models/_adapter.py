"""The schema a model was trained on, and the frame every model call gets.

A model trained elsewhere records its columns in its own way: scikit-learn and XGBoost
keep the names as given (``feature_names_in_``); LightGBM keeps them sanitised, spaces
turned to underscores (``feature_name_``). Native-categorical boosters want pandas
``category`` columns with the categories they were trained on (XGBoost's
``feature_types`` and ``get_categories()``, LightGBM's ``booster_.pandas_categorical``),
where FLEX holds categorical values as text. :class:`ModelSchema` records all of that
once, and :meth:`ModelSchema.adapt` turns rows in the task's format into exactly what
the model was trained on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from .._errors import DataError

__all__ = ["ModelSchema", "model_schema", "stored_names", "match_columns"]


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
    """

    names: tuple[str, ...]
    columns: tuple[str, ...]
    categories: Mapping[str, tuple] = field(default_factory=dict)
    library: str = "sklearn"

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


def as_category(column: pd.Series, categories: Sequence) -> pd.Series:
    """``column`` as pandas category with ``categories`` in their order, values matched as text (unseen ones missing)."""
    if isinstance(column.dtype, pd.CategoricalDtype) and list(column.cat.categories) == list(categories):
        return column
    if not categories:
        values = column.astype(object)
        return values.astype(pd.CategoricalDtype(sorted(values.dropna().unique(), key=str)))
    by_text = {str(c): c for c in categories}
    mapped = column.map(lambda v: by_text.get(str(v)) if not pd.isna(v) else None)
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
            f"The data lacks column(s) the model needs: {', '.join(missing)}. Give the data the columns the model "
            f"was trained on, with the same names.{hint}"
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
        by_name = {}
    to_column = dict(zip(names, columns))
    return ModelSchema(
        names=tuple(names), columns=tuple(columns), categories={to_column[n]: c for n, c in by_name.items()}, library=library
    )
