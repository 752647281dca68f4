"""Seeded scikit-learn pipelines that take the task's original feature frame.

Encoding lives inside the pipeline, so explainers (DiCE, SHAP, LIME, the batch
generator) all talk to the model in the original feature space.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

import joblib
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

from .._errors import ConfigError, DataError
from .._format import listing
from .._typing import Rows
from ..data import TaskSpec
from ..data._band import Band
from ..limits import check
from ._adapter import ModelSchema, model_schema, stored_names
from ._crossval import F1_AVERAGE, cv_metrics, smallest_class, undesirable_scores
from ._regression import (
    REGRESSORS,
    band_scale,
    check_classifier,
    check_regressor,
    regression_scores,
    regression_summary,
    regressor,
)

__all__ = ["FittedModel", "fit_model", "MODELS", "build_pipeline", "model_summary", "adequacy_note", "model_feature_names", "check_columns", "align_task", "resolve_undesired", "BinaryClassifierView"]

MODELS = {
    "rf": "Random forest (100 trees; the paper's model)",
    "gb": "Histogram gradient boosting",
    "lr": "Logistic regression",
}
Encoding = Literal["onehot", "label"]
#: ``metrics["note"]`` of a model given without true outcomes: nothing scores it against its own predictions.
NO_LABELS_NOTE = "No labels given: quality not measured."


def _estimator(model: str, seed: int, *, regression: bool = False):
    if regression:
        return regressor(model, seed)
    if model == "rf":
        return RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1)
    if model == "gb":
        return HistGradientBoostingClassifier(random_state=seed)
    if model == "lr":
        return LogisticRegression(max_iter=2000)
    raise ConfigError(f"Unknown model {model!r}; choose one of {', '.join(MODELS)}.")


def build_pipeline(task: TaskSpec, *, model: str = "rf", encoding: Encoding = "onehot", seed: int = 0) -> Pipeline:
    """Encoder + classifier (a regressor for a task with a band). ``encoding="label"`` reproduces the paper's label
    encoding."""
    categorical = task.categorical_names
    continuous = task.continuous_names
    categories = [list(task.feature(c).levels) for c in categorical]
    if encoding == "onehot":
        # One-hot columns in sorted level order whatever a feature's declared order: declaring an
        # order (ordinal) then leaves the fitted forest, and every run on it, exactly as before.
        sorted_levels = [sorted(levels, key=str) for levels in categories]
        cat_encoder = OneHotEncoder(categories=sorted_levels, handle_unknown="ignore", sparse_output=False)
    elif encoding == "label":
        cat_encoder = OrdinalEncoder(categories=categories, handle_unknown="use_encoded_value", unknown_value=-1)
    else:
        raise ConfigError(f"Unknown encoding {encoding!r}; use 'onehot' or 'label'.")
    # Logistic regression needs comparable scales; trees do not care.
    numeric = StandardScaler() if model == "lr" else "passthrough"
    transformers = []
    if categorical:
        transformers.append(("categorical", cat_encoder, categorical))
    if continuous:
        transformers.append(("continuous", numeric, continuous))
    pre = ColumnTransformer(transformers, verbose_feature_names_out=False)
    return Pipeline([("encode", pre), ("classify", _estimator(model, seed, regression=task.band is not None))])


@dataclass(frozen=True, eq=False)
class FittedModel:
    """A fitted classifier FLEX explains, with its evaluation.

    Every model, trained here (:func:`fit_model`) or elsewhere, is built by
    :meth:`from_estimator`. FLEX sees a binary task: P(undesirable) is the summed
    probability of the classes in ``undesired``, and a row is predicted undesirable
    when that is above 0.5. :meth:`predict_proba` and :meth:`predict_undesirable`
    are the entry points every explainer uses; they take rows in the task's format
    (categorical values as text) and hand the estimator its own column order and types.

    Attributes
    ----------
    pipeline : estimator
        The fitted classifier (any object with ``predict_proba`` and ``classes_``).
    classes : tuple
        ``pipeline.classes_``; ``undesired`` holds the ones that count as undesirable.
    train_index, test_index : ndarray of int
        Row ids the model was trained / evaluated on. For a model trained elsewhere
        the training rows are unknown: every row of the data stands in as the
        reference sample (value frequencies, ranges, SHAP and LIME backgrounds).
    input_columns : tuple of str
        The columns the estimator takes, in its order.
    input_dtypes : mapping column -> dtype name
        Types to restore before the estimator sees a frame (empty: the task's own).
    identity : str
        A content hash of a model trained elsewhere ("" for one trained here, which
        its name, encoding and seed identify); part of every cache key.
    schema : ModelSchema or None
        What the estimator was trained on (stored names, category columns and their
        categories); :meth:`estimator_input` hands it exactly that.
    band : Band or None
        A regressor's undesirable band (None for a classifier). Its "P(undesirable)" is then the off-band score
        ``band.score(prediction, band_scale)`` (:meth:`flex_core.data.Band.score`): below 0.5 exactly when the
        prediction is in the desired band, so every generator, level and check runs on it unchanged.
        ``classes`` and ``undesired`` are then ().
    band_scale : float
        ``s`` of that score, in the target's units: :data:`BAND_SCALE_SHARE` x the target's standard deviation over
        the training rows. A validity margin ``m`` asks a prediction ``s m / (0.5 - m)`` inside the band
        (:meth:`margin_in_units`).
    """

    name: str
    encoding: str
    seed: int
    pipeline: Any
    train_index: np.ndarray
    test_index: np.ndarray
    metrics: dict = field(default_factory=dict)
    classes: tuple = (0, 1)
    undesired: tuple = (1,)
    #: Classes a counterfactual must reach (DiCE's ``desired_class``); () : any class not undesired.
    desired: tuple = ()
    input_columns: tuple[str, ...] = ()
    input_dtypes: Mapping[str, str] = field(default_factory=dict)
    identity: str = ""
    schema: ModelSchema | None = None
    #: read back from a project folder with the record of how FLEX trained it (``flex_core._project.restore_fit``)
    restored: bool = False
    band: Band | None = None
    band_scale: float = 0.0

    @classmethod
    def from_estimator(
        cls,
        estimator,
        task: TaskSpec,
        *,
        undesired=None,
        desired=None,
        X_test: pd.DataFrame | None = None,
        y_test=None,
        name: str = "own model",
        train_index: Rows | None = None,
        fitted_on: Literal["raw", "task"] = "raw",
        identity: str | None = None,
        evaluated_on: str = "",
    ) -> FittedModel:
        """Wrap a fitted classifier (a regressor, for a task with a band) that takes a DataFrame with the task's
        feature columns.

        Parameters
        ----------
        estimator : fitted classifier or regressor
            Has ``predict_proba`` and ``classes_``: a scikit-learn Pipeline, or an
            XGBoost / LightGBM classifier through its scikit-learn API. For a task with a band
            (``task.band``), a fitted regressor with ``predict`` (scikit-learn's, XGBoost's or LightGBM's, or a
            Pipeline ending in one); its ``undesired``/``desired`` are not given.
        task : TaskSpec
            Its features must be exactly the columns the estimator takes (see
            :func:`align_task` to leave out the others).
        undesired : value or sequence of values, optional
            Classes of ``estimator.classes_`` that are the undesirable outcome;
            default the task's undesirable target values.
        desired : value or sequence of values, optional
            Classes a counterfactual must reach; default the task's desired values (none: any class not undesired).
        X_test, y_test : DataFrame of shape (n_rows, n_features) and array-like of shape (n_rows,), optional
            Rows in the task's format and their true classes (a regression's true numbers), to measure quality on.
        name : str
            A label for the model in results and the app.
        train_index : sequence of int, optional
            Row ids the model was trained on (default: every row of the task).
        fitted_on : {"raw", "task"}
            The frame the estimator was fitted on: the data's own column types
            (``"raw"``, a model trained elsewhere: categorical numbers get their type
            back) or the task's normalised frame (``"task"``, as :func:`fit_model` does).
        identity : str, optional
            A stable id for cache keys; default a content hash of the estimator.
        evaluated_on : str
            What ``X_test`` is, shown next to the metrics.

        Raises
        ------
        ConfigError
            Not a fitted classifier, or ``undesired`` is not among its classes.
        DataError
            The task lacks columns the estimator needs, holds text where the estimator was trained on
            numbers (integer codes), or the estimator cannot score its rows.
        UnseenCategoryError
            A categorical value the estimator never saw in training (it would take it as missing).
        """
        classes, chosen, goal = _outcome_classes(estimator, task, undesired, desired)
        schema, columns = _input_columns(estimator, task)
        input_dtypes = _restorable_dtypes(task) if fitted_on == "raw" else {}
        if schema is not None:
            schema.check_text_columns(_text_values(task, columns, input_dtypes))
        index = task.frame.index.to_numpy()
        model = cls(
            name=name, encoding="", seed=0, pipeline=estimator,
            train_index=index if train_index is None else np.asarray(train_index),
            test_index=np.empty(0, dtype=index.dtype) if X_test is None else X_test.index.to_numpy(),
            classes=classes, undesired=chosen, desired=goal, input_columns=tuple(columns), input_dtypes=input_dtypes,
            identity=joblib.hash(estimator) if identity is None else identity, schema=schema,
            band=task.band, band_scale=0.0 if task.band is None else band_scale(task, train_index),
        )
        _check_scores(model, task)
        if X_test is not None:
            if y_test is None or len(y_test) != len(X_test):
                raise ConfigError("X_test needs y_test with one outcome per row.")
            model.metrics.update(model.evaluate(X_test, y_test), evaluated_on=evaluated_on)
        return model

    def estimator_input(self, X: pd.DataFrame) -> pd.DataFrame:
        """Rows in the task's format as the estimator takes them: its column order and types."""
        columns = list(self.input_columns) or list(X.columns)
        frame = X if list(X.columns) == columns else X[columns]
        if self.input_dtypes:
            frame = frame.copy()
            for column, dtype in self.input_dtypes.items():
                if self.schema is None or column not in self.schema.categories:
                    frame[column] = _as_dtype(frame[column], dtype)
        return frame if self.schema is None else self.schema.adapt(frame)

    def predict_value(self, X: pd.DataFrame) -> np.ndarray:
        """A regressor's predictions of rows X (task format), in the target's units, shape (n_rows,)."""
        if self.band is None:
            raise ConfigError("Only a regression model (a task with a band) predicts a number; this one is a classifier.")
        return np.asarray(self.pipeline.predict(self.estimator_input(X)), dtype=float).reshape(-1)

    def margin_in_units(self, margin: float) -> float:
        """How far inside the desired band (target units) a regressor's prediction lies when its off-band score is
        below 0.5 - ``margin`` (the validity rule's margin); 0 for margin 0."""
        if self.band is None:
            raise ConfigError("Only a regression model (a task with a band) has a margin in the target's units.")
        return Band.margin_width(margin, self.band_scale)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Probabilities of (desirable, undesirable), shape (n_rows, 2); a regressor's (1 - score, off-band score)."""
        if self.band is not None:
            score = self.band.score(self.predict_value(X), self.band_scale)
            return np.column_stack([1.0 - score, score])
        proba = np.asarray(self.pipeline.predict_proba(self.estimator_input(X)), dtype=float)
        undesirable = proba[:, [self.classes.index(c) for c in self.undesired]].sum(axis=1)
        return np.column_stack([1.0 - undesirable, undesirable])

    @property
    def off_goal(self) -> tuple:
        """The classes a counterfactual must leave: the undesired ones, or with desired classes every other class.

        Their summed probability is what every generator brings below 0.5 - margin (:meth:`p_off_goal`), so a
        counterfactual of a model with a desired class is predicted that class with the margin (P(desired) > 0.5 +
        margin), not merely out of the undesired ones.
        """
        if not self.desired:
            return self.undesired
        return tuple(c for c in self.classes if c not in set(self.desired))

    def p_off_goal(self, X: pd.DataFrame) -> np.ndarray:
        """P(off the goal) of rows X (task format), shape (n_rows,): the summed probability of :attr:`off_goal`;
        P(undesirable) when no desired class is named."""
        if not self.desired:
            return self.predict_proba(X)[:, 1]
        proba = np.asarray(self.pipeline.predict_proba(self.estimator_input(X)), dtype=float)
        return proba[:, [self.classes.index(c) for c in self.off_goal]].sum(axis=1)

    def predict_undesirable(self, X: pd.DataFrame) -> np.ndarray:
        """1 where the predicted outcome is undesirable, shape (n_rows,)."""
        return (self.predict_proba(X)[:, 1] > 0.5).astype(int)

    def evaluate(self, X: pd.DataFrame, y) -> dict:
        """Scores of undesirable-vs-not on rows X (task format) with true classes y: accuracy, balanced accuracy,
        the undesirable outcome's precision, recall and F1 (``test_*_undesirable``, None where undefined) and the
        support-weighted F1 over both outcomes (``test_f1``, the paper's; ``f1_average`` says so)."""
        if self.band is not None:
            return self._evaluate_regression(X, y)
        wanted = {str(c) for c in self.undesired}
        actual = np.array([str(_plain(v)) in wanted for v in y], dtype=int)
        return self._evaluate_outcomes(actual, self.predict_undesirable(X))

    def _evaluate_outcomes(self, actual: np.ndarray, predicted: np.ndarray) -> dict:
        """Scores of undesirable (1) vs not from true and predicted 0/1 outcomes (see :meth:`evaluate`)."""
        return {
            "test_accuracy": float(accuracy_score(actual, predicted)),
            **{f"test_{k}_undesirable": v for k, v in undesirable_scores(actual, predicted).items()},
            "test_f1": float(f1_score(actual, predicted, average="weighted")),
            "f1_average": F1_AVERAGE,
            # Always predicting these rows' most common outcome: what a model must beat to have learned anything.
            "majority_baseline": float(max(actual.mean(), 1 - actual.mean())),
            "balanced_accuracy": float(balanced_accuracy_score(actual, predicted)),
            "test_rows": int(len(predicted)),
        }

    def _evaluate_regression(self, X: pd.DataFrame, y) -> dict:
        """A regressor's scores: the band's outcome scored as :meth:`evaluate` does, and R², MAE and RMSE of the
        numbers with the MAE and RMSE of predicting these rows' mean (``baseline_*``; :func:`fit_model` puts the
        training rows' mean there)."""
        actual = np.asarray(y, dtype=float)
        predicted = self.predict_value(X)
        band = cast(Band, self.band)
        out = self._evaluate_outcomes(band.undesirable(actual).astype(int),
                                      (band.score(predicted, self.band_scale) > 0.5).astype(int))
        return {**out, **regression_scores(actual, predicted, float(np.mean(actual)))}

    def as_binary_classifier(self) -> BinaryClassifierView:
        """A scikit-learn-like view with classes 0 (desirable) and 1 (undesirable), for libraries such as DiCE."""
        return BinaryClassifierView(self)

    def encoder_and_classifier(self):
        """(encoder, classifier) when the estimator is a 2-step binary Pipeline whose first step is a
        fitted ColumnTransformer; else None (explainers then work on the original features)."""
        estimator = self.pipeline
        if not isinstance(estimator, Pipeline) or len(estimator.steps) != 2 or len(self.classes) != 2:
            return None
        encoder, classifier = estimator.steps[0][1], estimator.steps[1][1]
        if not isinstance(encoder, ColumnTransformer) or not hasattr(encoder, "transformers_"):
            return None
        return encoder, classifier

    @property
    def undesired_column(self) -> int:
        """Column of ``pipeline.predict_proba`` holding P(undesirable) for a binary model."""
        return self.classes.index(self.undesired[0])

    @property
    def trained_here(self) -> bool:
        """Whether FLEX trained it, so its training rows, seed and bootstrap are known: a model it fitted in this
        process, or one read back from a project that recorded how it was fitted (``restored``). Cache keys still
        tell a read-back model by its content (``identity``)."""
        return not self.identity or self.restored

    @property
    def key(self) -> dict:
        """What identifies the model in cache keys."""
        key = {"name": self.name, "encoding": self.encoding, "seed": self.seed, "identity": self.identity}
        return {**key, "desired": [str(c) for c in self.desired]} if self.desired else key

    @property
    def label(self) -> str:
        return (MODELS if self.band is None else REGRESSORS).get(self.name, self.name)


def _outcome_classes(estimator, task: TaskSpec, undesired, desired) -> tuple[tuple, tuple, tuple]:
    """(classes, undesired ones, desired ones) of a classifier checked against the task; () x 3 for a regressor of a
    task with a band (refused with one message when the model's kind does not fit the task)."""
    if task.band is not None:
        check_regressor(estimator, undesired, desired)
        return (), (), ()
    check_classifier(estimator)
    classes = tuple(_plain(c) for c in estimator.classes_)
    chosen = resolve_undesired(classes, task.undesirable if undesired is None else undesired)
    return classes, chosen, resolve_desired(classes, task.desired if desired is None else desired, chosen)


def _input_columns(estimator, task: TaskSpec) -> tuple[ModelSchema | None, list[str]]:
    """The estimator's schema (None when it names no columns) and the columns it takes; refused when the task has
    a feature the estimator does not take."""
    schema = model_schema(estimator, task.feature_names)
    columns = task.feature_names if schema is None else list(schema.columns)
    extra = [c for c in task.feature_names if c not in set(columns)]
    if extra:
        raise ConfigError(f"The model does not take the {listing('feature', extra)}; leave {'it' if len(extra) == 1 else 'them'} "
                          "out of the data.")
    return schema, columns


def _check_scores(model: FittedModel, task: TaskSpec) -> None:
    """Refuse a wrapped estimator that cannot score the task's first rows, or scores them in the wrong shape."""
    sample = task.X.iloc[: min(len(task.frame), 5)]
    score = model.pipeline.predict if model.band is not None else model.pipeline.predict_proba
    try:
        proba = np.asarray(score(model.estimator_input(sample)))
    except Exception as exc:  # any estimator, any complaint: say it in one line
        raise DataError(f"The model could not score the data: {_first_line(exc)}") from None
    if model.band is not None:
        if proba.reshape(-1).shape != (len(sample),):
            raise ConfigError(f"The model's predict returned shape {proba.shape}; expected one number per row "
                              f"({len(sample)},): FLEX explains a single-output regressor.")
        return
    if proba.shape != (len(sample), len(model.classes)):
        raise ConfigError(f"The model's predict_proba returned shape {proba.shape}; expected ({len(sample)}, {len(model.classes)}).")


class BinaryClassifierView:
    """``predict`` / ``predict_proba`` over (the goal, off it): what DiCE's sklearn backend calls. The goal is the
    desired classes when named (DiCE's ``desired_class``), else every class not undesired."""

    def __init__(self, model: FittedModel):
        self.model = model
        self.classes_ = np.array([0, 1])

    def predict_proba(self, X):
        off = self.model.p_off_goal(X)  # column 0: the goal (a desired class, else any class not undesired)
        return np.column_stack([1.0 - off, off])

    def predict(self, X):
        return (self.model.p_off_goal(X) > 0.5).astype(int)


def _values_not_classes(unknown: list) -> str:
    """"value 'x' is not a class of the model; ", "values 'x' and 'y' are not classes of the model; "."""
    verb = "is not a class" if len(unknown) == 1 else "are not classes"
    return f"{listing('value', map(repr, unknown))} {verb} of the model; "


def resolve_undesired(classes: Sequence, undesired) -> tuple:
    """The model's classes named by ``undesired`` (matched as values, then as text); ConfigError otherwise."""
    wanted = (undesired,) if isinstance(undesired, (str, int, float, bool, np.generic)) else tuple(undesired)
    by_text = {str(c): c for c in classes}
    unknown = [u for u in wanted if _plain(u) not in classes and str(u) not in by_text]
    if unknown or not wanted:
        raise ConfigError(
            (f"The undesired {_values_not_classes(unknown)}" if unknown else "No undesired value was given; ")
            + f"its classes are: {', '.join(map(str, classes))}."
        )
    chosen = tuple(dict.fromkeys(_plain(u) if _plain(u) in classes else by_text[str(u)] for u in wanted))
    if len(chosen) == len(classes):
        raise ConfigError("Every class of the model is undesired; leave at least one desirable class.")
    return chosen


def resolve_desired(classes: Sequence, desired, undesired: tuple) -> tuple:
    """The model's classes named by ``desired`` (matched as values, then as text; () for none); ConfigError for one
    that is not a class or is undesired."""
    wanted = (desired,) if isinstance(desired, (str, int, float, bool, np.generic)) else tuple(desired or ())
    by_text = {str(c): c for c in classes}
    unknown = [d for d in wanted if _plain(d) not in classes and str(d) not in by_text]
    if unknown:
        raise ConfigError(f"The desired {_values_not_classes(unknown)}"
                          f"its classes are: {', '.join(map(str, classes))}.")
    chosen = tuple(dict.fromkeys(_plain(d) if _plain(d) in classes else by_text[str(d)] for d in wanted))
    both = [d for d in chosen if d in set(undesired)]
    if both:
        raise ConfigError(f"{', '.join(map(repr, both))} cannot be both undesired and desired.")
    return chosen


def model_feature_names(estimator, available: Sequence[str] | None = None) -> list[str] | None:
    """The columns a fitted estimator takes, or None when it records none.

    Without ``available``: the names as the estimator stores them (``feature_names_in_``, or
    LightGBM's sanitised ``feature_name_``). With the data's columns ``available``: those
    columns, matched to the stored names (see :func:`flex_core.models._adapter.match_columns`;
    DataError naming a column the data lacks).
    """
    if available is None:
        return stored_names(estimator)
    schema = model_schema(estimator, available)
    return None if schema is None else list(schema.columns)


def check_columns(needed: Sequence[str], available: Sequence[str]) -> None:
    """DataError naming the columns a model needs that the data lacks."""
    missing = [c for c in needed if c not in set(available)]
    if missing:
        raise DataError(f"The data lacks {'a column' if len(missing) == 1 else 'columns'} the model needs: "
                        f"{', '.join(missing)}.")


def align_task(task: TaskSpec, estimator) -> TaskSpec:
    """The task restricted to the columns ``estimator`` takes, in its order (the others named in ``notes``).

    Raises DataError when the data lacks a column the estimator needs. An estimator
    that does not record its columns gets the task unchanged.
    """
    columns = model_feature_names(estimator, task.feature_names)
    if columns is None or columns == task.feature_names:
        return task
    return task.with_overrides(features=columns)


def from_file_estimator(task: TaskSpec, estimator, *, name: str, labelled: bool = True) -> tuple[TaskSpec, FittedModel]:
    """(the task restricted to the estimator's columns, the estimator as a FittedModel) for a model trained elsewhere.

    Its metrics are taken on every row of the data, which may include the rows it was trained
    on: the note says so, since those score optimistically. ``labelled=False`` (the outcome
    column holds the model's own predictions, as a project saved without ``y``): no metrics,
    and ``metrics["note"]`` says quality was not measured.
    """
    task = align_task(task, estimator)
    if not labelled:
        model = FittedModel.from_estimator(estimator, task, name=name)
        model.metrics["note"] = NO_LABELS_NOTE
        return task, model
    return task, FittedModel.from_estimator(
        estimator,
        task,
        X_test=task.X,
        y_test=task.frame[task.target].to_numpy(),
        name=name,
        evaluated_on=f"all {len(task.frame):,} rows of the data (rows the model was trained on score optimistically)",
    )


def _plain(value):
    """numpy scalars as Python values, so classes compare and print cleanly."""
    return value.item() if isinstance(value, np.generic) else value


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]


def _restorable_dtypes(task: TaskSpec) -> dict[str, str]:
    """Raw types the task does not keep: numbers or booleans it holds as text, integers it holds as floats."""
    out = {}
    for f in task.features:
        raw = task.raw_dtypes.get(f.name, "object")
        if raw in ("object", "string", "str", "category") or (f.is_continuous and raw.startswith("float")):
            continue
        out[f.name] = raw
    return out


def _text_values(task: TaskSpec, columns: Sequence[str], restored: Mapping[str, str]) -> dict[str, list]:
    """The values of each column the model gets as text (a categorical feature whose raw type is not restored):
    its declared levels and the data's own, which counterfactuals and what-ifs draw from."""
    out = {}
    for name in columns:
        feature = task.feature(name)
        if feature.is_continuous or name in restored:
            continue
        out[name] = list(dict.fromkeys([*feature.levels, *task.frame[name].dropna().unique()]))
    return out


def _as_dtype(column: pd.Series, dtype: str) -> pd.Series:
    if dtype in ("bool", "boolean"):
        return column.map({"True": True, "False": False, True: True, False: False}).astype(bool)
    numbers = pd.to_numeric(column, errors="coerce")
    if dtype.startswith(("int", "uint", "Int", "UInt")):
        return numbers.round().astype(dtype)
    return numbers.astype(dtype)


def fit_model(
    task: TaskSpec,
    *,
    model: str = "rf",
    encoding: Encoding = "onehot",
    seed: int = 0,
    cv_folds: int = 10,
    cv_rows: int | None = None,
    test_size: float = 0.2,
    progress: Callable[[int, int, str], None] | None = None,
) -> FittedModel:
    """Fit on an 80/20 stratified split, with k-fold cross-validation on the training part.

    ``test_f1`` / ``cv_f1_mean`` are the support-weighted F1, which is what the paper's numbers (accuracy 83.4%,
    F1 78.6% on accidents) imply on such an imbalanced target; ``test_f1_undesirable`` (with its precision and
    recall) and ``cv_f1_undesirable_mean`` are the undesirable outcome's own, which a majority guess cannot inflate.

    Parameters
    ----------
    cv_folds : int
        Folds of the cross-validation; 0 skips it (large data), which ``metrics["note"]`` says.
    cv_rows : int, optional
        Cross-validate on a stratified, seeded sample of at most this many training
        rows (the final model still trains on all of them); ``metrics["cv_rows"]``
        and ``metrics["note"]`` say so when it applies.
    progress : callable(step, total, text), optional
        Called before each cross-validation fold and before the final fit.

    For a task with a band (``task.band``) the model is :data:`REGRESSORS`' regressor of the same key, fitted on the
    target's numbers; the split and the folds are stratified by the band's outcome, the folds score R²
    (``cv_r2_mean``/``cv_r2_std``) and the test part adds R², MAE and RMSE, with ``baseline_mae``/``baseline_rmse``
    those of predicting the training rows' mean.
    """
    if model not in MODELS:
        raise ConfigError(f"Unknown model {model!r}; choose one of {', '.join(MODELS)}.")
    seed, cv_folds = check("seed", seed), check("cv_folds", cv_folds)
    cv_rows = None if cv_rows is None else check("cv_rows", cv_rows)
    progress = progress or (lambda step, total, text: None)
    # The model learns undesirable (1) against the rest (0), and with desired values those apart (2).
    X, y, labels = task.X, task.y, task.model_labels
    # What the model learns: the labels, or a regression's numbers (the labels then only stratify the split).
    fit_on = labels if task.band is None else task.frame[task.target].to_numpy(dtype=float)
    if min(np.bincount(y, minlength=2)) < 2 or smallest_class(labels) < 2:
        raise ConfigError("Each outcome needs at least two rows to split into training and test data.")
    positions = np.arange(len(y))
    train_pos, test_pos = train_test_split(positions, test_size=test_size, random_state=seed, stratify=labels)
    pipeline = build_pipeline(task, model=model, encoding=encoding, seed=seed)
    metrics, steps = cv_metrics(pipeline, X, labels, train_pos, cv_folds=cv_folds, cv_rows=cv_rows, seed=seed,
                                 progress=progress, values=None if task.band is None else fit_on)
    progress(steps - 1, steps, f"Training the model on {len(train_pos):,} rows")
    pipeline.fit(X.iloc[train_pos], fit_on[train_pos])
    index = task.frame.index.to_numpy()
    fitted = FittedModel.from_estimator(
        pipeline,
        task,
        undesired=None if task.band else 1,
        desired=None if task.band else (2,) if task.desired else (),
        X_test=X.iloc[test_pos],
        y_test=fit_on[test_pos],
        name=model,
        train_index=index[train_pos],
        fitted_on="task",
        identity="",
        evaluated_on="the held-out 20% test split",
    )
    # The baseline always predicts the training part's most common class; a model that does not beat it
    # on the test part has learned little, however high its accuracy looks on imbalanced data.
    majority = np.bincount(y[train_pos], minlength=2).argmax()
    metrics.update(fitted.metrics, train_rows=int(len(train_pos)), majority_baseline=float(np.mean(y[test_pos] == majority)))
    if task.band is not None:  # the baseline predicts the training rows' mean, not the test rows' own
        baseline = regression_scores(fit_on[test_pos], fitted.predict_value(X.iloc[test_pos]), float(np.mean(fit_on[train_pos])))
        metrics.update(baseline_mae=baseline["baseline_mae"], baseline_rmse=baseline["baseline_rmse"])
    return replace(fitted, encoding=encoding, seed=seed, metrics=metrics)


def adequacy_note(metrics: dict) -> str | None:
    """A warning when test accuracy does not beat always predicting the majority class, else None."""
    accuracy, baseline = metrics.get("test_accuracy"), metrics.get("majority_baseline")
    if accuracy is None or baseline is None or accuracy > baseline:
        return None
    balanced = metrics.get("balanced_accuracy")
    return (
        f"The model's test accuracy ({accuracy:.1%}) does not beat always predicting the most common outcome "
        f"({baseline:.1%})"
        + (f"; its balanced accuracy is {balanced:.1%}" if balanced is not None else "")
        + ". The importances explain this model, which has learned little about the outcome."
    )


def model_summary(model: FittedModel) -> dict:
    """The model's identity and metrics as they go into a result's JSON."""
    return {
        "name": model.name,
        "encoding": model.encoding,
        "seed": model.seed,
        **({} if model.trained_here else {"identity": model.identity, "classes": [str(c) for c in model.classes],
                                          "undesired": [str(c) for c in model.undesired],
                                          **({"desired": [str(c) for c in model.desired]} if model.desired else {})}),
        "cv_accuracy_mean": model.metrics.get("cv_accuracy_mean"),
        "cv_accuracy_std": model.metrics.get("cv_accuracy_std"),
        "cv_f1_mean": model.metrics.get("cv_f1_mean"),
        "cv_f1_std": model.metrics.get("cv_f1_std"),
        "test_accuracy": model.metrics.get("test_accuracy"),
        "test_f1": model.metrics.get("test_f1"),
        "f1_average": model.metrics.get("f1_average"),
        "cv_f1_undesirable_mean": model.metrics.get("cv_f1_undesirable_mean"),
        "cv_f1_undesirable_std": model.metrics.get("cv_f1_undesirable_std"),
        "test_precision_undesirable": model.metrics.get("test_precision_undesirable"),
        "test_recall_undesirable": model.metrics.get("test_recall_undesirable"),
        "test_f1_undesirable": model.metrics.get("test_f1_undesirable"),
        "evaluated_on": model.metrics.get("evaluated_on"),
        "majority_baseline": model.metrics.get("majority_baseline"),
        "balanced_accuracy": model.metrics.get("balanced_accuracy"),
        "cv_folds": model.metrics.get("cv_folds"),
        "cv_rows": model.metrics.get("cv_rows"),  # None: cross-validated on every training row
        "note": model.metrics.get("note"),  # CV skipped, subsampled or cut to fewer folds
        **({} if model.band is None else regression_summary(model)),
    }

