"""SHAP importances per original feature on the same factuals as FLEX (the paper's Tables 1 and 3).

A model that is a 2-step Pipeline starting with a ColumnTransformer is explained on its
encoded columns, whose values are summed back to the features (:mod:`._columns`); a bare
XGBoost or LightGBM classifier (binary, or multi-class with one undesired class) with TreeSHAP
on the frame it was trained on (raw or category columns); any other model with KernelSHAP on
the original features.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._contract import json_floats, json_number
from .._errors import ConfigError
from .._extras import require
from .._typing import Rows
from ..counterfactuals._set import Progress, decode_rows, encode_rows, query_seed
from ..data import TaskSpec
from ..limits import check, check_memory
from ..models import FittedModel
from ._columns import encoded_column_owners, sum_columns_to_features
from ._scores import MethodScores, checked_rows

__all__ = ["SHAP_EXPLAINERS", "SHAP_PATHS", "ShapImportance", "shap_importance"]

#: Explainers :func:`shap_importance` can use; "auto" picks TreeExplainer for tree models.
SHAP_EXPLAINERS = ("auto", "tree", "kernel")
#: Rows per TreeExplainer call: small enough to report progress often, large enough to stay batched.
TREE_SHAP_CHUNK = 10


@dataclass(frozen=True, eq=False)
class ShapImportance(MethodScores):
    """Global SHAP importance per original feature: mean |SHAP| over the explained factuals.

    Attributes
    ----------
    values : ndarray of shape (n_rows, n_features)
        Signed SHAP value of each feature (its encoded columns summed) for the
        probability of the undesirable class.
    mean_abs, std_abs : ndarray of shape (n_features,)
        Mean and std over rows of |values|.
    column_names : tuple of str, length n_columns
    column_mean_abs : ndarray of shape (n_columns,)
        Mean |SHAP| of each encoded column (before summing).
    base_value : float
        The explainer's expected probability; base_value + values.sum(1) is the prediction.
    query_index : ndarray of shape (n_rows,)
        Row ids explained (the FLEX factuals).
    """

    feature_names: tuple[str, ...]
    display_names: tuple[str, ...]
    immutable: tuple[bool, ...]
    values: np.ndarray
    mean_abs: np.ndarray
    std_abs: np.ndarray
    column_names: tuple[str, ...]
    column_mean_abs: np.ndarray
    base_value: float
    query_index: np.ndarray
    explainer: str
    seconds: float
    config: dict = field(default_factory=dict)
    versions: dict | None = field(default=None, repr=False)

    method: ClassVar[str] = "shap"
    kind = "shap"
    libraries = ("shap",)

    def _scores(self) -> dict[str, np.ndarray]:
        return {"shap_mean_abs": self.mean_abs, "shap_std_abs": self.std_abs}

    def _extra(self) -> dict:
        return {"explainer": self.explainer, "base_value": json_number(self.base_value),
                "columns": [{"name": n, "shap_mean_abs": json_number(v)} for n, v in zip(self.column_names, self.column_mean_abs)]}

    def _per_row(self) -> np.ndarray:
        return self.values

    @classmethod
    def _from_body(cls, data: Mapping) -> ShapImportance:
        """The result :meth:`to_dict` describes (signed SHAP values per row included)."""
        common = cls._common_from_dict(data)
        values = common.pop("per_row")
        columns = data.get("columns") or []
        return cls(
            **common,
            values=values,
            mean_abs=np.abs(values).mean(axis=0),
            std_abs=np.abs(values).std(axis=0),
            column_names=tuple(c["name"] for c in columns),
            column_mean_abs=json_floats(c["shap_mean_abs"] for c in columns),
            base_value=float(data["base_value"]) if data.get("base_value") is not None else float("nan"),
            explainer=str(data["explainer"]),
        )


def _is_tree_model(estimator) -> bool:
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

    return isinstance(estimator, (RandomForestClassifier, HistGradientBoostingClassifier))


#: Bare scikit-learn tree models TreeExplainer takes on numeric columns (no encoder step in front).
_SKLEARN_TREES = ("RandomForestClassifier", "ExtraTreesClassifier", "DecisionTreeClassifier",
                  "GradientBoostingClassifier", "HistGradientBoostingClassifier")


#: Bare scikit-learn tree models whose raw output TreeExplainer explains is the class probability.
_SKLEARN_FORESTS = ("RandomForestClassifier", "ExtraTreesClassifier", "DecisionTreeClassifier")


def _explains_probability(estimator) -> bool:
    """A forest's (or tree's) raw output is its class probabilities; a booster's is a margin (log-odds, softmax score)."""
    return type(estimator).__module__.startswith("sklearn.") and type(estimator).__name__ in _SKLEARN_FORESTS


def _bare_booster(model: FittedModel):
    """The tree model a model is, taken on the original features with no encoder step: XGBoost or LightGBM
    (raw or category columns), or a scikit-learn forest / boosting on numeric columns; else None.

    A multi-class model qualifies when TreeSHAP's per-class values add up to what FLEX explains: a forest's
    probabilities for any undesired classes (they sum), a booster's score for one undesired class (margins
    of several classes do not add up to the margin of their union: KernelSHAP explains that).
    """
    schema = model.schema
    if schema is None:
        return None
    estimator = model.pipeline
    if len(model.classes) > 2 and len(model.undesired) > 1 and not _explains_probability(estimator):
        return None
    if schema.library in ("xgboost", "lightgbm"):
        return estimator
    if type(estimator).__module__.startswith("sklearn.") and type(estimator).__name__ in _SKLEARN_TREES:
        numeric = all(not dtype.startswith(("object", "str", "category")) for dtype in model.input_dtypes.values())
        return estimator if numeric and not schema.categories else None
    return None


#: What TreeSHAP explains for a booster: with categorical splits shap explains only its raw output.
BOOSTER_OUTPUT = "log-odds of the undesirable outcome (the model's raw margin)"
#: ... and for a multi-class booster, the undesirable class's own raw score.
MULTICLASS_BOOSTER_OUTPUT = ("raw score of the undesirable class (the model's softmax margin: log P(class) up to a "
                             "term shared by every class; higher means more undesirable)")


#: How SHAP met the model, recorded in ``ShapImportance.config["path"]``.
SHAP_PATHS = {
    "encoded": "the pipeline's encoded columns, summed back to features",
    "original": "the original features (the model has no separate encoder step)",
}


def shap_importance(
    model: FittedModel,
    task: TaskSpec,
    rows: Rows,
    *,
    explainer: str = "auto",
    background_size: int = 20,
    nsamples: int | str = "auto",
    seed: int = 0,
    progress: Progress | None = None,
) -> ShapImportance:
    """Mean |SHAP| per original feature on the given rows (pass the FLEX factuals).

    Two paths, recorded in ``config["path"]``. A binary model that is a 2-step
    Pipeline starting with a ColumnTransformer (every model trained here) is explained
    on its encoded columns, whose values are summed back to the features. A bare binary
    XGBoost or LightGBM classifier is explained on the original features with TreeSHAP,
    on the frame it was trained on (category columns included) and for its raw output,
    the log-odds of the undesirable class (``config["output"]`` says so); a multi-class one
    (one against the rest) for its one undesirable class's raw score. A bare scikit-learn
    forest explains P(undesirable), multi-class included. Any other model (a multi-class
    booster with several undesired classes, a longer pipeline), or ``explainer="kernel"``, is explained
    with KernelSHAP on the original features: categorical features as level codes,
    the background a seeded sample of rows, and P(undesirable) computed through the
    model's own ``predict_proba`` on decoded rows.

    Parameters
    ----------
    model : FittedModel
    task : TaskSpec the model was fitted on
    rows : sequence of int, length n_rows
        Row ids to explain.
    explainer : {"auto", "tree", "kernel"}
        "auto" uses TreeExplainer for random forests and histogram gradient boosting
        behind an encoder and for bare binary XGBoost / LightGBM classifiers, and
        KernelExplainer otherwise (named in ``explainer``).
    background_size : int
        Size of the background: k-means centres of the encoded training rows for
        KernelExplainer on the encoded path (``shap.kmeans``), a seeded sample of rows on
        the original features (k-means centres would be fractional category codes), and
        sampled training rows for TreeExplainer on gradient boosting (needed to explain a
        probability, not a log-odds).
    nsamples : int or "auto"
        KernelExplainer's model evaluations per explained row.
    seed : int
        Seeds the background sample and KernelExplainer's coalition sampling.
    progress : callable(done, total), optional

    Returns
    -------
    ShapImportance explaining P(undesirable).
    """
    require("shap", "SHAP")  # loaded here, before anything else: a missing shap is one error naming its extra
    if explainer not in SHAP_EXPLAINERS:
        raise ConfigError(f"Unknown SHAP explainer {explainer!r}; choose one of {', '.join(SHAP_EXPLAINERS)}.")
    background_size = check("background_size", background_size)
    nsamples = nsamples if nsamples == "auto" else check("nsamples", nsamples)
    rows = checked_rows(task, rows, "SHAP")
    inputs = _shap_inputs(model, task, rows)
    kind = _explainer_kind(explainer, inputs, model)
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    if progress is not None:
        progress(0, len(rows))
    values, base, output = _values(kind, model, task, inputs, rows, background_size=background_size, nsamples=nsamples,
                                   seed=seed, rng=rng, progress=progress)
    seconds = time.perf_counter() - started
    config = {
        "background_size": background_size,
        "nsamples": nsamples,
        "seed": seed,
        "output": output,
        "path": inputs.path,
        "path_meaning": SHAP_PATHS[inputs.path],
    }
    return _shap_result(task, inputs, rows, values, base, kind=kind, seconds=seconds, config=config)


# -- the steps of shap_importance ------------------------------------------------------------
def _values(kind, model, task, inputs, rows, *, background_size, nsamples, seed, rng, progress):
    """(SHAP values, base value, what they explain) by the explainer ``kind`` chose, on the inputs' path."""
    booster = _bare_booster(model) if inputs.path == "original" else None
    output = "P(undesirable)"
    if kind == "tree" and booster is not None:
        values, base, output = _booster_tree_values(model, task, rows, progress=progress)
    elif kind == "tree":
        values, base = _tree_values(inputs, background_size=background_size, rng=rng, progress=progress)
    else:
        values, base = _kernel_values(
            inputs, rows, background_size=background_size, nsamples=nsamples, seed=seed, rng=rng, progress=progress
        )
    return values, base, output


@dataclass(frozen=True, eq=False)
class _ShapInputs:
    """What SHAP explains on one path: the explained and training matrices and the function of them.

    Attributes
    ----------
    path : {"encoded", "original"}
    column_names : list of str, length n_columns
    owners : ndarray of int, shape (n_columns,)
        The feature behind each column.
    explained : ndarray of shape (n_rows, n_columns)
    training : ndarray of shape (n_train, n_columns)
        The model's training rows, for the background.
    p_undesirable : callable
        P(undesirable) of an (n, n_columns) matrix.
    classifier : the classifier behind the encoder (encoded path), else None
    undesired_column : int or None
        Its ``predict_proba`` column of the undesirable class (encoded path).
    """

    path: str
    column_names: list[str]
    owners: np.ndarray
    explained: np.ndarray
    training: np.ndarray
    p_undesirable: Callable[[np.ndarray], np.ndarray]
    classifier: object = None
    undesired_column: int | None = None


def _shap_inputs(model: FittedModel, task: TaskSpec, rows: list[int]) -> _ShapInputs:
    """The encoded path for a 2-step encoder + classifier pipeline, the original features for any other model."""
    try:
        column_names, owners = encoded_column_owners(task, model)
        encoder, classifier = model.encoder_and_classifier()
    except ConfigError:
        return _original_inputs(model, task, rows)
    col = model.undesired_column
    training_rows = task.frame.loc[model.train_index, task.feature_names]
    explained = np.asarray(encoder.transform(model.estimator_input(task.frame.loc[rows, task.feature_names])), dtype=float)
    training = np.asarray(encoder.transform(model.estimator_input(training_rows)), dtype=float)

    def p_undesirable(z):
        return classifier.predict_proba(z)[:, col]

    return _ShapInputs("encoded", column_names, owners, explained, training, p_undesirable, classifier, col)


def _original_inputs(model: FittedModel, task: TaskSpec, rows: list[int]) -> _ShapInputs:
    """Level codes of the original features; P(undesirable) through the model's own predict_proba on decoded rows."""
    training_rows = task.frame.loc[model.train_index, task.feature_names]

    def p_undesirable(z):
        return model.predict_proba(decode_rows(task, np.asarray(z, dtype=float)))[:, 1]

    return _ShapInputs(
        "original",
        list(task.feature_names),
        np.arange(len(task.features)),
        encode_rows(task, task.frame.loc[rows, task.feature_names]),
        encode_rows(task, training_rows),
        p_undesirable,
    )


def _explainer_kind(explainer: str, inputs: _ShapInputs, model: FittedModel) -> str:
    """"tree" or "kernel": what "auto" picks, and a clear refusal of TreeExplainer for a model it cannot explain."""
    tree_model = (inputs.classifier is not None and _is_tree_model(inputs.classifier)) or (
        inputs.path == "original" and _bare_booster(model) is not None)
    kind = explainer if explainer != "auto" else ("tree" if tree_model else "kernel")
    if kind == "tree" and not tree_model:
        raise ConfigError(
            f"TreeExplainer needs a random forest or gradient boosting behind an encoder step, or a bare XGBoost, "
            f"LightGBM or scikit-learn tree model (a multi-class booster with one undesired class); {model.name!r} "
            "is not one. "
            "Use explainer='kernel'."
        )
    return kind


def _tree_values(
    inputs: _ShapInputs, *, background_size: int, rng: np.random.Generator, progress: Progress | None
) -> tuple[np.ndarray, float]:
    """TreeSHAP values of the explained rows (n_rows, n_columns) and the base value, in chunks that report progress."""
    import shap
    from sklearn.ensemble import RandomForestClassifier

    classifier, training, explained = inputs.classifier, inputs.training, inputs.explained
    if isinstance(classifier, RandomForestClassifier):
        # A forest's raw output is already the averaged class probability.
        tree = shap.TreeExplainer(classifier)
    else:
        sample = training[rng.choice(len(training), size=min(background_size * 5, len(training)), replace=False)]
        tree = shap.TreeExplainer(
            classifier, data=sample, model_output="probability", feature_perturbation="interventional"
        )
    # In chunks, so a long run (minutes on wide one-hot data) can report rows done of total.
    n_rows, chunks = len(explained), []
    for start in range(0, n_rows, TREE_SHAP_CHUNK):
        chunks.append(np.asarray(tree.shap_values(explained[start : start + TREE_SHAP_CHUNK], check_additivity=False)))
        if progress is not None:
            progress(min(start + TREE_SHAP_CHUNK, n_rows), n_rows)
    values = np.concatenate(chunks, axis=0)
    expected = np.atleast_1d(np.asarray(tree.expected_value, dtype=float))
    if values.ndim == 3:  # (rows, columns, classes)
        col = inputs.undesired_column
        return values[..., col], float(expected[col])
    return values, float(expected[-1])


def _booster_tree_values(
    model: FittedModel, task: TaskSpec, rows: list[int], *, progress: Progress | None
) -> tuple[np.ndarray, float, str]:
    """TreeSHAP values of a bare tree model (n_rows, n_features) on the frame it takes (category columns
    included), the base value, and what they explain: a forest's P(undesirable), a binary booster's
    log-odds, a multi-class booster's raw score of the undesirable class."""
    import shap

    frame = model.estimator_input(task.frame.loc[rows, task.feature_names])
    tree = shap.TreeExplainer(model.pipeline)
    n_rows, chunks = len(frame), []
    for start in range(0, n_rows, TREE_SHAP_CHUNK):
        with warnings.catch_warnings():  # shap's notice that LightGBM's binary output changed shape: handled below
            warnings.filterwarnings("ignore", message="LightGBM binary classifier", category=UserWarning)
            part = np.asarray(tree.shap_values(frame.iloc[start : start + TREE_SHAP_CHUNK]), dtype=float)
        chunks.append(part)
        if progress is not None:
            progress(min(start + TREE_SHAP_CHUNK, n_rows), n_rows)
    values = np.concatenate(chunks, axis=0) if chunks else np.empty((0, frame.shape[1]))
    expected = np.atleast_1d(np.asarray(tree.expected_value, dtype=float))
    undesired = [model.classes.index(c) for c in model.undesired]
    if values.ndim == 3 and _explains_probability(model.pipeline):  # (rows, columns, classes): probabilities add up
        values, base, output = values[..., undesired].sum(axis=-1), float(expected[undesired].sum()), "P(undesirable)"
    elif values.ndim == 3:  # a multi-class booster's per-class scores: the one undesirable class's
        values, base, output = values[..., undesired[0]], float(expected[undesired[0]]), MULTICLASS_BOOSTER_OUTPUT
    else:  # the raw margin, the log-odds of classes_[1]: flipped when classes_[0] is the undesirable one
        sign = 1.0 if undesired[0] == 1 else -1.0
        values, base, output = sign * values, sign * float(expected[-1]), BOOSTER_OUTPUT
    return values[:, [list(frame.columns).index(f) for f in task.feature_names]], base, output  # the task's order


def _kernel_values(
    inputs: _ShapInputs,
    rows: list[int],
    *,
    background_size: int,
    nsamples: int | str,
    seed: int,
    rng: np.random.Generator,
    progress: Progress | None,
) -> tuple[np.ndarray, float]:
    """KernelSHAP values (n_rows, n_columns), each row seeded from (seed, row), and the base value."""
    import shap

    training, explained = inputs.training, inputs.explained
    size = min(background_size, len(training))
    # KernelSHAP scores nsamples coalitions x the background rows at once (measured: about 210 bytes a row
    # with 14 columns); "auto" is 2 x columns + 2048 evaluations.
    width = explained.shape[1]
    evaluations = 2 * width + 2048 if nsamples == "auto" else int(nsamples)
    check_memory(evaluations * size * 8 * (2 * width + 12),
                 what=f"KernelSHAP with {evaluations:,} evaluations of {size:,} background rows",
                 reduce="nsamples or background_size")
    if inputs.path == "encoded":
        background = shap.kmeans(training, size)
    else:
        background = training[rng.choice(len(training), size=size, replace=False)]
    kernel = shap.KernelExplainer(inputs.p_undesirable, background)
    values = np.empty_like(explained)
    # KernelExplainer samples coalitions from numpy's global RNG: seed it per row (so a
    # row's values do not depend on the batch) and restore the caller's state after.
    state = np.random.get_state()
    try:
        for i, row in enumerate(rows):
            np.random.seed(query_seed(seed, row))
            values[i] = kernel.shap_values(explained[i : i + 1], nsamples=nsamples, silent=True)[0]
            if progress is not None:
                progress(i + 1, len(rows))
    finally:
        np.random.set_state(state)
    return values, float(np.atleast_1d(kernel.expected_value)[0])


def _shap_result(
    task: TaskSpec, inputs: _ShapInputs, rows: list[int], values: np.ndarray, base: float, *, kind: str, seconds: float,
    config: dict,
) -> ShapImportance:
    """Per-column SHAP values summed back to the features, as a ShapImportance."""
    per_feature = sum_columns_to_features(values, inputs.owners, len(task.features))
    magnitude = np.abs(per_feature)
    return ShapImportance(
        feature_names=tuple(task.feature_names),
        display_names=tuple(f.label for f in task.features),
        immutable=tuple(f.immutable for f in task.features),
        values=per_feature,
        mean_abs=magnitude.mean(axis=0),
        std_abs=magnitude.std(axis=0),
        column_names=tuple(inputs.column_names),
        column_mean_abs=np.abs(values).mean(axis=0),
        base_value=base,
        query_index=np.asarray(rows, dtype=int),
        explainer=f"{kind} ({'TreeExplainer' if kind == 'tree' else 'KernelExplainer'})",
        seconds=seconds,
        config=config,
    )
