"""One-hot columns back to features: which feature each encoded column comes from, and sums over them.

The models here are pipelines whose encoder one-hot encodes categorical features, so SHAP
values are computed per encoded column and summed back to the feature that produced the
column: SHAP values are additive, so a feature's attribution is the sum of its columns'.
"""

from __future__ import annotations

import numpy as np

from .._errors import ConfigError
from ..data import TaskSpec
from ..models import FittedModel

__all__ = ["encoded_column_owners", "sum_columns_to_features"]


def encoded_column_owners(task: TaskSpec, model: FittedModel) -> tuple[list[str], np.ndarray]:
    """Which original feature each column of the pipeline's encoded matrix comes from.

    Returns
    -------
    column_names : list of str, length n_columns
        ``get_feature_names_out()`` of the pipeline's encoder (its first step).
    owners : ndarray of int, shape (n_columns,)
        Index into ``task.feature_names`` of the feature behind each column.

    Raises
    ------
    ConfigError
        The model has no separate encoder step, or its columns cannot be traced back.
    """
    from sklearn.preprocessing import OneHotEncoder

    split = model.encoder_and_classifier()
    if split is None:
        raise ConfigError("The model has no separate encoder step (a 2-step Pipeline starting with a ColumnTransformer).")
    encoder = split[0]
    column_names = [str(c) for c in encoder.get_feature_names_out()]
    owners = np.full(len(column_names), -1)
    position = {name: j for j, name in enumerate(task.feature_names)}
    for name, transformer, columns in encoder.transformers_:
        out = encoder.output_indices_[name]
        if out.stop == out.start:
            continue  # an empty remainder
        if isinstance(columns, str):
            columns = [columns]
        elif not all(isinstance(c, str) for c in columns):  # positions, a mask or a slice of the input columns
            columns = [str(c) for c in np.asarray(encoder.feature_names_in_)[columns]]
        # A one-hot encoder emits one column per level (no level is dropped here);
        # every other step (ordinal, scaler, passthrough) emits one per input.
        widths = [len(c) for c in transformer.categories_] if isinstance(transformer, OneHotEncoder) else [1] * len(columns)
        start = out.start
        for column, width in zip(columns, widths):
            if column not in position:
                raise ConfigError(f"The encoder's column {column!r} is not a feature of the data.")
            owners[start : start + width] = position[column]
            start += width
        if start != out.stop:
            raise ConfigError(f"Cannot map the encoder step {name!r}'s output columns back to features.")
    if (owners < 0).any():
        raise ConfigError("Some encoded columns do not come from a task feature; cannot sum SHAP values per feature.")
    return column_names, owners


def sum_columns_to_features(column_values: np.ndarray, owners: np.ndarray, n_features: int) -> np.ndarray:
    """Sum per-column values into per-feature values.

    Parameters
    ----------
    column_values : ndarray of shape (n_rows, n_columns)
    owners : ndarray of int, shape (n_columns,)
        Feature index of each column.
    n_features : int

    Returns
    -------
    ndarray of shape (n_rows, n_features)
        Each row's per-feature values; row sums equal the per-column row sums.
    """
    column_values = np.asarray(column_values, dtype=float)
    owners = np.asarray(owners, dtype=int)
    if column_values.shape[1] != len(owners):
        raise ConfigError(f"{column_values.shape[1]} columns but {len(owners)} column owners.")
    membership = np.zeros((len(owners), n_features))
    membership[np.arange(len(owners)), owners] = 1.0
    return column_values @ membership
