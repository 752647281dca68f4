"""A notebook's fitted classifier and data frame as a task and a FittedModel (what FlexExplainer's constructor takes in)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._errors import DataError
from ._format import plural

__all__ = ["adopt_model"]


def adopt_model(model, X, *, undesired, immutable, kinds, y, monotone, bounds, allowed, ordinal_orders, name,
                constraints=(), dictionary=None, desired=()):
    """The task and FittedModel of a notebook's fitted classifier and data frame (validated here, once); a fitted
    regressor's when ``undesired`` is a band of its number (``{"above": T}``, see :func:`flex_core.make_task`)."""
    from .data import make_task
    from .data._band import band_of
    from .data._columns import check_class_target
    from .models._adapter import model_schema
    from .models._fit import FittedModel

    if not isinstance(X, pd.DataFrame) or X.empty:
        raise DataError("X must be a non-empty pandas DataFrame with the model's feature columns.")
    band = band_of(undesired) if not isinstance(undesired, (str, int, float, list, tuple)) else None
    chosen, goal = _outcome(model, band or undesired, desired)
    schema = model_schema(model, [str(c) for c in X.columns])
    features = [str(c) for c in X.columns] if schema is None else list(schema.columns)
    X = X.copy()
    X.columns = [str(c) for c in X.columns]
    index_is_id = pd.api.types.is_integer_dtype(X.index) and X.index.is_unique and (X.index >= 0).all()
    if not index_is_id:
        X.index = pd.RangeIndex(len(X))
    target = "outcome" if "outcome" not in X.columns else "__outcome__"
    notes = []
    frame = X[features].copy()
    if y is not None:
        if len(y) != len(X):
            raise DataError(f"y has {len(y)} values for {len(X)} rows of X.")
        frame[target] = np.asarray(y, dtype=object)
        if band is None:
            check_class_target(frame[target], "y", chosen)  # named as the caller knows it, before make_task's own check
    else:
        frame[target] = _predicted_outcome(model, frame, schema, features)
        notes.append("No y was given: the outcome column holds the model's predictions.")
    # A pandas category column is categorical whatever its values: categories 1, 2, 3 are levels, not a number
    # a counterfactual may move along (a kind the caller gives still wins).
    kinds = {**{c: "categorical" for c in features if isinstance(X[c].dtype, pd.CategoricalDtype)}, **(kinds or {})}
    left_out = [c for c in X.columns if c not in set(features)]
    if left_out:
        notes.append(f"Left out {'a column' if len(left_out) == 1 else 'columns'} the model does not take: "
                     f"{', '.join(left_out)}.")
    task = make_task(
        frame,
        target=target,
        undesirable=chosen,
        desired=goal,
        features=features,
        kinds=kinds,
        immutable=immutable or (),
        monotone=monotone,
        bounds=bounds,
        allowed=allowed,
        ordinal_orders=ordinal_orders,
        constraints=constraints or (),
        dictionary=dictionary,
        name=name,
        notes=notes,
        source="python",
    )
    given = task.frame
    fitted = FittedModel.from_estimator(
        model,
        task,
        undesired=None if band else chosen,
        X_test=None if y is None else task.X,
        y_test=None if y is None else given[target].to_numpy(),
        name=type(model).__name__,
        evaluated_on="the rows of X (training rows give optimistic scores)",
    )
    if y is None:  # the outcome column holds the model's own predictions: scoring against them would read 100%
        from .models._fit import NO_LABELS_NOTE

        fitted.metrics["note"] = NO_LABELS_NOTE
    return task, fitted


def _outcome(model, undesired, desired) -> tuple:
    """(the undesirable outcome, the desired classes) checked against the model: its classes, or a regressor's band."""
    from .data._band import Band
    from .models._fit import resolve_desired, resolve_undesired
    from .models._regression import check_classifier, check_regressor

    if isinstance(undesired, Band):
        check_regressor(model, None, desired or None)
        return undesired, ()
    check_classifier(model)
    chosen = resolve_undesired(tuple(model.classes_), undesired)
    return chosen, resolve_desired(tuple(model.classes_), desired, chosen)


def _predicted_outcome(model, frame: pd.DataFrame, schema, features: list[str]) -> np.ndarray:
    """The model's own predictions as the outcome column, when no y was given (complete rows only)."""
    incomplete = frame.isna().any(axis=1)
    if incomplete.any():
        raise DataError(
            f"{plural(int(incomplete.sum()), 'row')} of X {'has' if incomplete.sum() == 1 else 'have'} missing values; "
            "drop or impute them first "
            "(or pass y, and they are dropped and counted)."
        )
    if schema is not None:  # the model labels the rows itself: refuse text it would misread before it reads it
        schema.check_text_columns({c: frame[c].dropna().unique() for c in features
                                   if not pd.api.types.is_numeric_dtype(frame[c])})
    # Through the adapter: a frame read back from a project's CSV has lost its category columns.
    labelled = frame if schema is None else schema.adapt(frame)
    return np.asarray(model.predict(labelled), dtype=object)
