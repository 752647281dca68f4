"""DiCE (dice-ml) counterfactuals behind the generator protocol.

Traps handled here:
- DiCE's post-hoc sparsity step predicts one row at a time; it is off by default
  (``posthoc_sparsity=False``) and a ``time_limit`` stops starting new queries.
- DiCE may return fewer than n_cf counterfactuals, none, or raise for a query; each
  case is recorded per query and never reaches the caller as an exception.
- dice-ml 0.12's ``random`` method breaks under pandas 3; requirements pin pandas 2.3.
- dice-ml's methods draw from numpy's and Python's global generators and seed them unreliably
  (genetic: never); both are seeded per query here and the caller's states restored.
- dice-ml 0.12's ``genetic`` method never runs its post-hoc sparsity step (it returns the
  unsparsified set as ``final_cfs_df_sparse``), so ``posthoc_sparsity=True`` with it is refused.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import time
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._errors import ConfigError, GenerationError
from .._extras import require
from ..data import TaskSpec
from ..limits import check
from ..models import FittedModel
from ._assemble import assemble_counterfactual_set
from ._set import (
    CounterfactualSet,
    GeneratorParams,
    Progress,
    check_request,
    query_seed,
)
from ._validity import DEFAULT_MARGIN, DEFAULT_RADIUS, Validity, training_ranges

__all__ = ["DiceGenerator"]

_OUTCOME = "__outcome__"
DICE_METHODS = ("random", "genetic", "kdtree")


class DiceGenerator(GeneratorParams):
    """Counterfactuals from dice-ml's model-agnostic methods (``random``, ``genetic``, ``kdtree``).

    Parameters
    ----------
    method : {"random", "genetic", "kdtree"}
    posthoc_sparsity : bool, default False
        DiCE's own post-hoc sparsity search (slow: one model call per row and step). When on, the
        sparsified set (``final_cfs_df_sparse``) is returned, its validity re-checked here.
        ``random`` and ``kdtree`` only: dice-ml 0.12's ``genetic`` ignores it, so it is a
        :class:`ConfigError` there (``refine="minimal"`` removes passenger changes instead).
    time_limit : float or None
        Seconds after which no new query is started; the rest are recorded as skipped.
    margin, radius : float, default 0.15 and 0.01
        The validity rule DiCE's counterfactuals are checked against (:mod:`._validity`): DiCE searches
        for P(undesirable) <= 0.5, and those that miss the margin or the neighbourhood are counted
        invalid. ``margin=0, radius=0`` is the paper's setting.
    """

    named_params = ("method",)

    @property
    def unavailable_params(self) -> tuple[str, ...]:
        """Settings this method cannot honour, so the app does not offer them."""
        return ("posthoc_sparsity",) if self.method == "genetic" else ()

    def __init__(self, method: str = "random", *, posthoc_sparsity: bool = False, time_limit: float | None = None,
                 margin: float = DEFAULT_MARGIN, radius: float = DEFAULT_RADIUS):
        if method not in DICE_METHODS:
            raise ConfigError(f"Unknown DiCE method {method!r}; choose one of {', '.join(DICE_METHODS)}.")
        if method == "genetic" and posthoc_sparsity:
            # DiceGenetic._generate_counterfactuals accepts posthoc_sparsity_param but never calls
            # do_posthoc_sparsity_enhancement: final_cfs_df_sparse is a plain copy of final_cfs_df.
            raise ConfigError(
                "dice-genetic ignores post-hoc sparsity in dice-ml 0.12; turn it off, or use refine=\"minimal\", "
                "which removes passenger changes for every generator."
            )
        self.method = method
        rule = Validity(margin, radius)  # checked once, here
        self.margin, self.radius = rule.margin, rule.radius
        self.posthoc_sparsity = posthoc_sparsity
        self.time_limit = None if time_limit is None else check("time_limit", time_limit)
        self.name = f"dice-{method}"

    def _explainer(self, model: FittedModel, task: TaskSpec):
        import dice_ml

        train = _dice_frame(task, task.frame.loc[model.train_index, task.feature_names])
        train[_OUTCOME] = task.y[task.frame.index.get_indexer(model.train_index)]
        data = dice_ml.Data(dataframe=train, continuous_features=task.continuous_names, outcome_name=_OUTCOME)
        # DiCE's desired_class=0 is column 0 of predict_proba: the binary view puts "desirable" there
        # whatever the model's own classes are.
        wrapped = dice_ml.Model(model=model.as_binary_classifier(), backend="sklearn", model_type="classifier")
        return dice_ml.Dice(data, wrapped, method=self.method)

    def generate(
        self,
        model: FittedModel,
        task: TaskSpec,
        queries: pd.DataFrame,
        *,
        n_cf: int,
        features_to_vary: Sequence[str] | None = None,
        permitted_range: Mapping[str, Sequence] | None = None,
        seed: int = 0,
        progress: Progress | None = None,
    ) -> CounterfactualSet:
        require("dice_ml", "A DiCE generator")  # its own error, not "DiCE could not be set up for this data"
        vary, ranges = check_request(
            task, queries, n_cf=n_cf, features_to_vary=features_to_vary, permitted_range=permitted_range
        )
        if self.method == "genetic" and not task.continuous_names:
            # dice-ml 0.12's genetic search fails on every query of such data
            # ("cannot reshape array of size 0 into shape (0)"): say so once, up front.
            raise GenerationError(
                "DiCE's genetic method does not work on data without a continuous feature (a dice-ml 0.12 bug); "
                "choose batch, dice-random or dice-kdtree."
            )
        permitted = ranges or None
        start = time.perf_counter()
        try:
            explainer = self._explainer(model, task)
        except Exception as exc:  # dice-ml raises bare Exceptions for data it dislikes
            raise GenerationError(f"DiCE could not be set up for this data: {exc}") from None
        query_frame = _dice_frame(task, queries[task.feature_names])
        per_query: list[pd.DataFrame | None] = []
        failures: dict[str, int] = {}
        skipped: list[int] = []
        for i, row_id in enumerate(queries.index):
            if self.time_limit is not None and time.perf_counter() - start > self.time_limit:
                per_query.append(None)
                skipped.append(int(row_id))
            else:
                frame, failure = self._one_query(explainer, query_frame.iloc[[i]], n_cf, vary, permitted, seed, row_id)
                per_query.append(frame)
                if failure:
                    failures[failure] = failures.get(failure, 0) + 1
            if progress is not None:
                progress(i + 1, len(queries))
        notes = [f"DiCE failed on {n} query(ies): {msg}" for msg, n in failures.items()]
        if skipped:
            notes.append(f"{len(skipped)} query(ies) skipped: the time limit of {self.time_limit:g} s was reached.")
        return assemble_counterfactual_set(
            task,
            model,
            queries[task.feature_names],
            per_query,
            n_cf=n_cf,
            generator=self.name,
            seconds=time.perf_counter() - start,
            notes=notes,
            config={
                "method": self.method,
                "posthoc_sparsity": self.posthoc_sparsity,
                "time_limit": self.time_limit,
                "features_to_vary": vary,
                "permitted_range": permitted,
                "seed": seed,
                "queries_skipped": len(skipped),
                "skipped_rows": skipped,
            },
            validity=Validity(self.margin, self.radius).on(task, training_ranges(task, model)),
        )

    def _one_query(self, explainer, query: pd.DataFrame, n_cf, vary, ranges, seed, row_id):
        extra = {}
        qseed = query_seed(seed, int(row_id))
        if self.method == "random":
            extra["random_seed"] = qseed
        try:
            # DiCE prints progress bars and warnings per query; keep the caller's console readable.
            # Its methods draw from the two global generators, numpy's and Python's ``random`` module, and
            # seed neither reliably (random: which features to vary comes from numpy, seeded only when
            # some feature is continuous; genetic: initial population and mutations from numpy, parent
            # choice and crossover from ``random``, never seeded), so seed both per query.
            with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), _no_tqdm(), _global_seeds(qseed):
                warnings.simplefilter("ignore")
                result = explainer.generate_counterfactuals(
                    query,
                    total_CFs=n_cf,
                    desired_class=0,
                    features_to_vary=vary,
                    permitted_range=ranges,
                    posthoc_sparsity_param=0.1 if self.posthoc_sparsity else None,
                    verbose=False,
                    **extra,
                )
        except Exception as exc:  # "No counterfactuals found" and friends: recorded, never raised
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return None, first[:160]
        example = result.cf_examples_list[0]
        # DiCE keeps its post-hoc result apart: final_cfs_df is the set *before* sparsification. The
        # sparse set is not re-checked by DiCE (its binary search can cross the boundary);
        # assemble_counterfactual_set re-checks every row's validity in one batched call.
        frame = example.final_cfs_df_sparse if self.posthoc_sparsity else None
        if frame is None:
            frame = example.final_cfs_df
        if frame is None or len(frame) == 0:
            return None, None
        return frame.drop(columns=[_OUTCOME], errors="ignore"), None


def _dice_frame(task: TaskSpec, rows: pd.DataFrame) -> pd.DataFrame:
    """DiCE infers decimal precision from dtypes: integer-valued features must be int columns."""
    out = rows.copy()
    for f in task.features:
        if f.is_continuous and f.integer:
            out[f.name] = out[f.name].round().astype("int64")
    return out


@contextlib.contextmanager
def _global_seeds(seed: int):
    """Seed numpy's and Python's global generators for DiCE, then give the caller its own states back.

    dice-ml draws from both (and dice-random reseeds both itself), so the caller's streams are
    restored whatever DiCE did to them.
    """
    saved_np, saved_py = np.random.get_state(), random.getstate()
    np.random.seed(seed)
    random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(saved_np)
        random.setstate(saved_py)


@contextlib.contextmanager
def _no_tqdm():
    old = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = old
