"""SHAP and LIME importances on the same factuals as FLEX, and how two rankings agree.

The paper's comparisons (Tables 1 and 3: FLEX next to SHAP; Fig. 3: regional FLEX
next to LIME) need attributions per *original* feature. The models here are
pipelines whose encoder one-hot encodes categorical features, so SHAP values are
computed per encoded column and summed back to the feature that produced the
column: SHAP values are additive, so a feature's attribution is the sum of its
columns' attributions. LIME is run on the original features directly.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, rankdata, spearmanr

from .._errors import ConfigError
from .._extras import require
from .._results import FeatureScores, FlexResult, importance_rank, json_floats, json_matrix, json_number
from .._typing import Rows
from ..counterfactuals._set import Progress, decode_rows, encode_rows, query_seed
from ..data import TaskSpec
from ..importance import bootstrap_counts, bootstrap_means
from ..models import FittedModel

__all__ = [
    "ShapImportance",
    "LimeImportance",
    "RankAgreement",
    "encoded_column_owners",
    "sum_columns_to_features",
    "shap_importance",
    "lime_importance",
    "normalise_to_max",
    "importance_rank",
    "rank_agreement",
    "flex_shap_agreement",
    "rank_correlations",
    "format_rank_cell",
    "ranking_table",
    "add_shap_to_json",
    "add_lime_to_json",
]

#: Explainers :func:`shap_importance` can use; "auto" picks TreeExplainer for tree models.
SHAP_EXPLAINERS = ("auto", "tree", "kernel")
#: Rows per TreeExplainer call: small enough to report progress often, large enough to stay batched.
TREE_SHAP_CHUNK = 10


# -- one-hot columns back to features ----------------------------------------------------
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


class _MethodScores(FeatureScores):
    """The export SHAP and LIME share (``method`` prefixes the columns); both rank by mean |weight|."""

    method: ClassVar[str]
    # Fields of the dataclasses built on this (ShapImportance, LimeImportance), declared for the type checker.
    display_names: tuple[str, ...]
    immutable: tuple[bool, ...]
    mean_abs: np.ndarray
    query_index: np.ndarray
    seconds: float
    config: dict

    @property
    def scores(self) -> np.ndarray:
        return self.mean_abs

    def _scores(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def _extra(self) -> dict:
        return {}

    def to_frame(self) -> pd.DataFrame:
        rank = f"{self.method}_rank"
        frame = pd.DataFrame(
            {
                "feature": self.feature_names,
                "label": self.display_names,
                "immutable": self.immutable,
                **self._scores(),
                rank: self.rank,
            }
        )
        return frame.sort_values([rank, "feature"], kind="stable").reset_index(drop=True)

    def _per_row(self) -> np.ndarray:
        raise NotImplementedError

    def to_dict(self) -> dict:
        """Plain data; with ``per_row`` (one list per explained row) :meth:`from_dict` rebuilds the result exactly."""
        ranks, scores = self.rank, self._scores()
        return {
            "method": self.method,
            **self._extra(),
            "features": [
                {"name": name, "label": self.display_names[j], "immutable": bool(self.immutable[j]),
                 **{k: json_number(v[j]) for k, v in scores.items()}, f"{self.method}_rank": int(ranks[j])}
                for j, name in enumerate(self.feature_names)
            ],
            "rows": [int(r) for r in self.query_index],
            "per_row": json_matrix(self._per_row()),
            "seconds": self.seconds,
            "config": self.config,
        }

    @classmethod
    def _common_from_dict(cls, data: dict) -> dict:
        records = data["features"]
        if data.get("method") != cls.method or "per_row" not in data:
            raise ConfigError(f"Not a {cls.method.upper()} result written by to_dict (method {data.get('method')!r}).")
        return {
            "feature_names": tuple(r["name"] for r in records),
            "display_names": tuple(r.get("label", r["name"]) for r in records),
            "immutable": tuple(bool(r.get("immutable", False)) for r in records),
            "query_index": np.asarray(data["rows"], dtype=int),
            "seconds": float(data["seconds"]),
            "config": dict(data.get("config") or {}),
            "per_row": np.array([json_floats(row) for row in data["per_row"]], dtype=float).reshape(len(data["rows"]), len(records)),
        }


# -- SHAP ------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ShapImportance(_MethodScores):
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

    method: ClassVar[str] = "shap"

    def _scores(self) -> dict[str, np.ndarray]:
        return {"shap_mean_abs": self.mean_abs, "shap_std_abs": self.std_abs}

    def _extra(self) -> dict:
        return {"explainer": self.explainer, "base_value": json_number(self.base_value),
                "columns": [{"name": n, "shap_mean_abs": json_number(v)} for n, v in zip(self.column_names, self.column_mean_abs)]}

    def _per_row(self) -> np.ndarray:
        return self.values

    @classmethod
    def from_dict(cls, data: dict) -> ShapImportance:
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
    on its encoded columns, whose values are summed back to the features. Any other
    model (an XGBoost classifier, a multi-class model, a longer pipeline) is explained
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
        behind an encoder, and KernelExplainer otherwise.
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
    shap = require("shap", "SHAP")

    if explainer not in SHAP_EXPLAINERS:
        raise ConfigError(f"Unknown SHAP explainer {explainer!r}; choose one of {', '.join(SHAP_EXPLAINERS)}.")
    rows = [int(r) for r in rows]
    if not rows:
        raise ConfigError("No rows to explain with SHAP.")
    missing = [r for r in rows if r not in task.frame.index]
    if missing:
        raise ConfigError(f"Row(s) {missing[:5]} are not in the data (they may have been dropped).")
    try:
        column_names, owners = encoded_column_owners(task, model)
        encoder, classifier = model.encoder_and_classifier()
        path = "encoded"
    except ConfigError:
        path, classifier = "original", None
    rng = np.random.default_rng(seed)
    training_rows = task.frame.loc[model.train_index, task.feature_names]
    if path == "encoded":
        col = model.undesired_column
        explained = np.asarray(encoder.transform(model.estimator_input(task.frame.loc[rows, task.feature_names])), dtype=float)
        training = np.asarray(encoder.transform(model.estimator_input(training_rows)), dtype=float)

        def p_undesirable(z):
            return classifier.predict_proba(z)[:, col]
    else:
        column_names, owners = list(task.feature_names), np.arange(len(task.features))
        explained = encode_rows(task, task.frame.loc[rows, task.feature_names])
        training = encode_rows(task, training_rows)

        def p_undesirable(z):
            return model.predict_proba(decode_rows(task, np.asarray(z, dtype=float)))[:, 1]

    tree_model = classifier is not None and _is_tree_model(classifier)
    kind = explainer if explainer != "auto" else ("tree" if tree_model else "kernel")
    if kind == "tree" and not tree_model:
        raise ConfigError(
            f"TreeExplainer needs a random forest or gradient boosting behind an encoder step; {model.name!r} is not one. "
            "Use explainer='kernel'."
        )
    started = time.perf_counter()
    if progress is not None:
        progress(0, len(rows))
    if kind == "tree":
        from sklearn.ensemble import RandomForestClassifier

        if isinstance(classifier, RandomForestClassifier):
            # A forest's raw output is already the averaged class probability.
            tree = shap.TreeExplainer(classifier)
        else:
            sample = training[rng.choice(len(training), size=min(background_size * 5, len(training)), replace=False)]
            tree = shap.TreeExplainer(
                classifier, data=sample, model_output="probability", feature_perturbation="interventional"
            )
        # In chunks, so a long run (minutes on wide one-hot data) can report rows done of total.
        chunks = []
        for start in range(0, len(rows), TREE_SHAP_CHUNK):
            chunks.append(np.asarray(tree.shap_values(explained[start : start + TREE_SHAP_CHUNK], check_additivity=False)))
            if progress is not None:
                progress(min(start + TREE_SHAP_CHUNK, len(rows)), len(rows))
        values = np.concatenate(chunks, axis=0)
        expected = np.atleast_1d(np.asarray(tree.expected_value, dtype=float))
        if values.ndim == 3:  # (rows, columns, classes)
            values, base = values[..., col], float(expected[col])
        else:
            base = float(expected[-1])
    else:
        size = min(background_size, len(training))
        if path == "encoded":
            background = shap.kmeans(training, size)
        else:
            background = training[rng.choice(len(training), size=size, replace=False)]
        kernel = shap.KernelExplainer(p_undesirable, background)
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
        base = float(np.atleast_1d(kernel.expected_value)[0])
    seconds = time.perf_counter() - started
    per_feature = sum_columns_to_features(values, owners, len(task.features))
    magnitude = np.abs(per_feature)
    return ShapImportance(
        feature_names=tuple(task.feature_names),
        display_names=tuple(f.label for f in task.features),
        immutable=tuple(f.immutable for f in task.features),
        values=per_feature,
        mean_abs=magnitude.mean(axis=0),
        std_abs=magnitude.std(axis=0),
        column_names=tuple(column_names),
        column_mean_abs=np.abs(values).mean(axis=0),
        base_value=base,
        query_index=np.asarray(rows, dtype=int),
        explainer=f"{kind} ({'TreeExplainer' if kind == 'tree' else 'KernelExplainer'})",
        seconds=seconds,
        config={
            "background_size": background_size,
            "nsamples": nsamples,
            "seed": seed,
            "output": "P(undesirable)",
            "path": path,
            "path_meaning": SHAP_PATHS[path],
        },
    )


# -- LIME ------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class LimeImportance(_MethodScores):
    """LIME importances of a set of factuals (a region), averaged and normalised as in the paper's Fig. 3.

    Attributes
    ----------
    local_weights : ndarray of shape (n_rows, n_features)
        |LIME weight| of each feature for each factual (explaining P(undesirable)).
    mean_abs : ndarray of shape (n_features,)
        Mean over rows of ``local_weights``.
    normalised : ndarray of shape (n_features,)
        ``mean_abs / max(mean_abs)``: in [0, 1] with the top feature at 1.
    """

    feature_names: tuple[str, ...]
    display_names: tuple[str, ...]
    immutable: tuple[bool, ...]
    local_weights: np.ndarray
    mean_abs: np.ndarray
    normalised: np.ndarray
    query_index: np.ndarray
    seconds: float
    config: dict = field(default_factory=dict)

    method: ClassVar[str] = "lime"

    def _scores(self) -> dict[str, np.ndarray]:
        return {"lime_mean_abs": self.mean_abs, "lime_importance": self.normalised}

    def _per_row(self) -> np.ndarray:
        return self.local_weights

    @classmethod
    def from_dict(cls, data: dict) -> LimeImportance:
        """The result :meth:`to_dict` describes (|LIME weight| per row included)."""
        common = cls._common_from_dict(data)
        weights = common.pop("per_row")
        mean_abs = weights.mean(axis=0)
        return cls(**common, local_weights=weights, mean_abs=mean_abs, normalised=normalise_to_max(mean_abs))


def normalise_to_max(values: np.ndarray) -> np.ndarray:
    """values / max(values), so the largest is 1 (all zeros stay zeros); shape kept."""
    values = np.asarray(values, dtype=float)
    top = np.nanmax(values) if values.size else 0.0
    return values / top if top > 0 else np.zeros_like(values)


def lime_importance(
    model: FittedModel,
    task: TaskSpec,
    rows: Rows,
    *,
    num_samples: int = 5000,
    seed: int = 0,
    progress: Progress | None = None,
) -> LimeImportance:
    """LIME per factual on the original features, |weight| averaged over the rows and normalised to [0, 1].

    Categorical features are given to LIME as level indices (``categorical_features``
    and ``categorical_names``); its samples are decoded back to the original frame and
    scored by the pipeline in one call per factual. Each factual's explainer is seeded
    from (seed, row), so a factual's weights do not depend on which others are explained.

    Parameters
    ----------
    rows : sequence of int, length n_rows
        Factual row ids (a region's members).
    num_samples : int
        LIME's perturbation samples per factual.

    Returns
    -------
    LimeImportance
    """
    LimeTabularExplainer = require("lime.lime_tabular", "LIME").LimeTabularExplainer

    rows = [int(r) for r in rows]
    if not rows:
        raise ConfigError("No rows to explain with LIME.")
    missing = [r for r in rows if r not in task.frame.index]
    if missing:
        raise ConfigError(f"Row(s) {missing[:5]} are not in the data (they may have been dropped).")
    if num_samples < 10:
        raise ConfigError("LIME needs at least 10 samples per factual.")
    training = encode_rows(task, task.frame.loc[model.train_index, task.feature_names])
    explained = encode_rows(task, task.frame.loc[rows, task.feature_names])
    categorical = [j for j, f in enumerate(task.features) if not f.is_continuous]
    names = {j: [str(level) for level in task.features[j].levels] for j in categorical}
    labels = [f.label for f in task.features]

    def predict(codes: np.ndarray) -> np.ndarray:
        return model.predict_proba(decode_rows(task, np.asarray(codes, dtype=float)))

    weights = np.zeros((len(rows), len(task.features)))
    started = time.perf_counter()
    for i, row in enumerate(rows):
        explainer = LimeTabularExplainer(
            training,
            mode="classification",
            feature_names=labels,
            categorical_features=categorical,
            categorical_names=names,
            class_names=["desirable", "undesirable"],
            discretize_continuous=True,
            random_state=query_seed(seed, row),
        )
        explanation = explainer.explain_instance(
            explained[i], predict, labels=(1,), num_features=len(task.features), num_samples=num_samples
        )
        for j, weight in explanation.as_map()[1]:
            weights[i, j] = abs(weight)
        if progress is not None:
            progress(i + 1, len(rows))
    mean_abs = weights.mean(axis=0)
    return LimeImportance(
        feature_names=tuple(task.feature_names),
        display_names=tuple(labels),
        immutable=tuple(f.immutable for f in task.features),
        local_weights=weights,
        mean_abs=mean_abs,
        normalised=normalise_to_max(mean_abs),
        query_index=np.asarray(rows, dtype=int),
        seconds=time.perf_counter() - started,
        config={"num_samples": num_samples, "seed": seed, "output": "P(undesirable)", "path": "original",
                "path_meaning": "the original features, through the model's predict_proba (model-agnostic)"},
    )


# -- rankings --------------------------------------------------------------------------
@dataclass(frozen=True)
class RankAgreement:
    """How two importance vectors agree over the same features.

    ``spearman`` and ``kendall`` (tau-b) handle ties; ``top_k_overlap`` is
    |A ∩ B| / max(|A|, |B|) where A and B are the features ranked <= k by each
    method (ties at the boundary included, so a set can hold more than k features).
    """

    spearman: float
    kendall: float
    top_k_overlap: float
    k: int
    features: tuple[str, ...]
    spearman_interval: tuple[float, float] | None = None
    kendall_interval: tuple[float, float] | None = None

    def to_dict(self) -> dict:
        out = {
            "spearman": json_number(self.spearman),
            "kendall": json_number(self.kendall),
            f"top{self.k}_overlap": json_number(self.top_k_overlap),
            "features": list(self.features),
        }
        if self.spearman_interval is not None and self.kendall_interval is not None:  # set together
            out["spearman_interval"] = [json_number(v) for v in self.spearman_interval]
            out["kendall_interval"] = [json_number(v) for v in self.kendall_interval]
        return out


def rank_agreement(
    a: np.ndarray,
    b: np.ndarray,
    *,
    k: int = 3,
    names: Sequence[str] | None = None,
    include: np.ndarray | None = None,
) -> RankAgreement:
    """Spearman, Kendall and top-k overlap between two importance vectors of shape (n,).

    ``include`` (bool, shape (n,)) restricts the comparison, e.g. to mutable features:
    FLEX gives an immutable feature 0 by construction, which says nothing about agreement.
    Features where either value is NaN are left out.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ConfigError(f"Importance vectors must have the same length; got {a.shape} and {b.shape}.")
    if k < 1:
        raise ConfigError("k for the top-k overlap must be at least 1.")
    names = [str(i) for i in range(len(a))] if names is None else list(names)
    keep = ~np.isnan(a) & ~np.isnan(b)
    if include is not None:
        keep &= np.asarray(include, dtype=bool)
    a, b = a[keep], b[keep]
    kept_names = tuple(n for n, ok in zip(names, keep) if ok)
    if len(a) < 2:
        raise ConfigError("Rank agreement needs at least two features to compare.")
    constant = np.ptp(a) == 0 or np.ptp(b) == 0
    spearman = float("nan") if constant else float(spearmanr(a, b).statistic)
    kendall = float("nan") if constant else float(kendalltau(a, b).statistic)
    top_a = set(np.flatnonzero(importance_rank(a) <= k))
    top_b = set(np.flatnonzero(importance_rank(b) <= k))
    overlap = len(top_a & top_b) / max(len(top_a), len(top_b))
    return RankAgreement(spearman=spearman, kendall=kendall, top_k_overlap=overlap, k=k, features=kept_names)


def rank_correlations(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman's rho and Kendall's tau-b of each row pair of (n_rows, n) arrays, vectorised; NaN where a row is constant.

    Both as scipy's ``spearmanr`` and ``kendalltau`` (ties included); shapes (n_rows,).
    """
    return _rowwise_spearman(a, b), _rowwise_kendall(a, b)


def _rowwise_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson r of average ranks, row by row."""
    ra, rb = rankdata(a, axis=1), rankdata(b, axis=1)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    denom = np.sqrt((ra**2).sum(axis=1) * (rb**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (ra * rb).sum(axis=1) / denom, np.nan)


def _rowwise_kendall(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Tau-b row by row, from the signs of all pairwise differences."""
    sa = np.sign(a[:, :, None] - a[:, None, :])
    sb = np.sign(b[:, :, None] - b[:, None, :])
    denom = np.sqrt(np.abs(sa).sum(axis=(1, 2)) * np.abs(sb).sum(axis=(1, 2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (sa * sb).sum(axis=(1, 2)) / denom, np.nan)


def flex_shap_agreement(
    flex: FlexResult, shap_result: ShapImportance, *, k: int = 3, n_boot: int = 1000, level: float = 0.95, seed: int = 0
) -> RankAgreement:
    """FLEX-SHAP rank agreement over the mutable features, with percentile-bootstrap intervals.

    Each resample draws the factuals both methods explained (with replacement) and
    recomputes F_j and mean |SHAP| from the same draw, so the interval says how much
    the agreement depends on which factuals were sampled. A resample in which either
    side is constant has no rank correlation and is left out; with fewer than half
    the resamples left, the interval is NaN.
    """
    mutable = ~np.asarray(flex.immutable, dtype=bool)
    point = rank_agreement(flex.frequency_mean, shap_result.mean_abs, k=k, names=flex.feature_names, include=mutable)
    shap_rows = {int(r): i for i, r in enumerate(shap_result.query_index)}
    has_cf = ~np.isnan(flex.local_frequencies).all(axis=1)
    pairs = [(i, shap_rows[int(r)]) for i, r in enumerate(flex.query_index) if has_cf[i] and int(r) in shap_rows]
    keep = mutable & ~np.isnan(flex.frequency_mean) & ~np.isnan(shap_result.mean_abs)
    if len(pairs) < 2 or keep.sum() < 2:
        nan = (float("nan"), float("nan"))
        return replace(point, spearman_interval=nan, kendall_interval=nan)
    flex_pos, shap_pos = (np.array(p) for p in zip(*pairs))
    counts = bootstrap_counts(len(pairs), n_boot=n_boot, seed=seed)
    flex_means = bootstrap_means(flex.local_frequencies[flex_pos][:, keep], counts)
    shap_means = bootstrap_means(np.abs(shap_result.values[shap_pos][:, keep]), counts)
    tail = (1 - level) / 2 * 100
    intervals = []
    for values in rank_correlations(flex_means, shap_means):
        values = values[~np.isnan(values)]
        if len(values) < n_boot / 2:
            intervals.append((float("nan"), float("nan")))
        else:
            low, high = np.percentile(values, [tail, 100 - tail])
            intervals.append((float(low), float(high)))
    return replace(point, spearman_interval=intervals[0], kendall_interval=intervals[1])


def format_rank_cell(rank: int | str, mean: float, std: float | None = None, *, decimals: int = 2) -> str:
    """The paper's table cell: ``"1 (0.34 ± 0.24)"``, or ``"3 (0.0224)"`` without a std.

    ``rank`` may be a text such as ``"4–7"`` (a rank interval).
    """
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "–"
    if std is None or (isinstance(std, float) and math.isnan(std)):
        return f"{rank} ({mean:.{decimals}f})"
    return f"{rank} ({mean:.{decimals}f} ± {std:.{decimals}f})"


def ranking_table(
    labels: Sequence[str],
    scores: Mapping[str, np.ndarray],
    *,
    stds: Mapping[str, np.ndarray] | None = None,
    decimals: Mapping[str, int] | None = None,
    include: np.ndarray | None = None,
    rank_intervals: Mapping[str, np.ndarray] | None = None,
) -> pd.DataFrame:
    """Side-by-side rankings in the paper's format (Tables 1 and 3).

    Parameters
    ----------
    labels : sequence of str, length n_features
    scores : mapping method -> ndarray of shape (n_features,)
        Importances; each method is ranked on its own (1 = most important, ties share
        the best rank).
    stds : mapping method -> ndarray of shape (n_features,), optional
        Shown as "± std" for the methods that have one (FLEX).
    decimals : mapping method -> int, optional (default 2)
    include : bool ndarray of shape (n_features,), optional
        Features to rank and show (e.g. the mutable ones, as in the paper's tables).
    rank_intervals : mapping method -> ndarray of shape (n_features, 2), optional
        [best, worst] rank of each feature (``FlexResult.rank_interval``); where
        they differ the cell shows the range, e.g. ``"4–7 (0.05 ± 0.03)"``. Ranks of the
        features left out by ``include`` must not affect them (true for FLEX's mutable features,
        since an immutable feature that never changes has the interval [0, 0]).

    Returns
    -------
    DataFrame indexed by feature label, one text column per method, rows ordered by
    the first method's rank.
    """
    labels = list(labels)
    keep = np.ones(len(labels), bool) if include is None else np.asarray(include, dtype=bool)
    if not scores:
        raise ConfigError("A ranking table needs at least one method.")
    stds, decimals = dict(stds or {}), dict(decimals or {})
    columns, first_rank = {}, None
    for method, values in scores.items():
        values = np.asarray(values, dtype=float)
        if len(values) != len(labels):
            raise ConfigError(f"{method}: {len(values)} scores for {len(labels)} features.")
        ranks = importance_rank(values[keep])
        spread = None if method not in stds else np.asarray(stds[method], dtype=float)[keep]
        intervals = (rank_intervals or {}).get(method)
        rank_texts = [str(int(r)) for r in ranks]
        if intervals is not None:
            intervals = np.asarray(intervals, dtype=float)[keep]
            rank_texts = [
                text if np.isnan(lo) or lo == hi else f"{int(lo)}–{int(hi)}"
                for text, (lo, hi) in zip(rank_texts, intervals)
            ]
        columns[method] = [
            format_rank_cell(
                rank_texts[i], float(v), None if spread is None else float(spread[i]), decimals=decimals.get(method, 2)
            )
            for i, v in enumerate(values[keep])
        ]
        if first_rank is None:
            first_rank = ranks
    kept_labels = [label for label, ok in zip(labels, keep) if ok]
    frame = pd.DataFrame(columns, index=pd.Index(kept_labels, name="feature"))
    assert first_rank is not None  # scores is not empty
    order = np.lexsort((np.arange(len(kept_labels)), first_rank))
    return frame.iloc[order]


# -- JSON additions for the CLI ----------------------------------------------------------
def add_shap_to_json(out: dict, flex: FlexResult, shap_result: ShapImportance, *, k: int = 3) -> dict:
    """Add ``shap_mean_abs``/``shap_rank`` to each feature of a FLEX JSON and a top-level ``agreement``.

    The agreement is computed over the mutable features only: FLEX gives an immutable
    feature 0 by construction, while SHAP still credits it, so including them would
    measure the constraint rather than the methods. ``shap_rank`` ranks all features.
    """
    by_name = {name: j for j, name in enumerate(shap_result.feature_names)}
    ranks = shap_result.rank
    for record in out["features"]:
        j = by_name[record["name"]]
        record["shap_mean_abs"] = json_number(shap_result.mean_abs[j])
        record["shap_rank"] = int(ranks[j])
    # The resamples are seeded as the run's factual sample was.
    seed = int(flex.config.get("sample_seed", flex.config.get("seed", 0)))
    agreement = flex_shap_agreement(flex, shap_result, k=k, seed=seed)
    out["agreement"] = {
        **agreement.to_dict(),
        "between": ["flex frequency_mean", "shap mean |SHAP|"],
        "over": "mutable features (FLEX gives immutable features 0 by construction)",
    }
    out["shap"] = {key: value for key, value in shap_result.to_dict().items() if key not in ("features", "rows")}
    return out


def add_lime_to_json(out: dict, lime_result: LimeImportance) -> dict:
    """Add ``lime_importance`` (mean |weight| over the region / its max) to each feature of a regional JSON."""
    by_name = {name: j for j, name in enumerate(lime_result.feature_names)}
    for record in out["features"]:
        j = by_name[record["name"]]
        record["lime_importance"] = json_number(lime_result.normalised[j])
        record["lime_mean_abs"] = json_number(lime_result.mean_abs[j])
    out["lime"] = {key: value for key, value in lime_result.to_dict().items() if key != "features"}
    return out
