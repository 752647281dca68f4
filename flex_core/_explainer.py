"""FlexExplainer: FLEX for any fitted classifier, in a few lines from a notebook."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from . import _project
from ._adopt import adopt_model
from ._errors import ConfigError
from ._project import PROJECT_FILES, ROW, ProjectParts, fit_record, plain_value, project_view, read_project, restore_fit
from ._results import FlexResult, RegionalResult
from ._typing import Rows
from .importance import DEFAULT_TAU
from .importance._runs import where_criterion
from .limits import LIMITS, check_each

__all__ = ["FlexExplainer"]

class FlexExplainer:
    """FLEX importances of a fitted classifier: the one place the pipeline is built and run.

    Data → model → generator → counterfactual store → runs. The notebook builds it from a
    model and a data frame (this constructor); the CLI, the app and the paper's reproduction
    build it from a task with :meth:`from_task`. Settings that decide the counterfactuals
    (generator, n_cf, seed, refine) are given once, here; settings that only read them (τ,
    the number of factuals, a region's query and k) are given to each call, so changing them
    regenerates nothing. No result depends on which call ran before.

    Parameters
    ----------
    model : fitted classifier
        Any object with ``predict_proba`` and ``classes_`` that takes a DataFrame with
        X's columns: a scikit-learn Pipeline, or an XGBoost / LightGBM classifier
        through its scikit-learn API.
    X : DataFrame of shape (n_rows, n_columns)
        The rows to explain and to draw counterfactual values from. Rows are
        identified by X's index when it holds unique integers (a RangeIndex: the
        0-based position), else by position. Columns the model does not take (when it
        records ``feature_names_in_``) are left out, and said so in ``task.notes``.
    undesired : value, sequence of values, or band
        The class(es) of ``model.classes_`` that are the undesirable outcome; for a fitted regressor, the band of its
        prediction that is (``{"above": T}``, ``{"below": T}``, ``{"below": LO, "above": HI}``; see
        :func:`~flex_core.make_task`), with ``y`` the true numbers.
    desired : value or sequence of values, optional
        The class(es) a counterfactual must reach (DiCE's ``desired_class``): it counts only when the model predicts
        one of them with the validity margin (P(desired) > 0.5 + margin). Default: any class not undesired.
    immutable : sequence of str, optional
        Features a counterfactual may not change.
    kinds : mapping feature -> "categorical" | "continuous" | "ordinal", optional
        Overrides of the kinds inferred from X (text, booleans and numbers with at most
        two values are categorical, other numbers continuous).
    y : array-like of shape (n_rows,), optional
        True outcomes (class values): gives accuracy and F1 on X. Without it the
        task's outcome column holds the model's predictions.
    seed : int
        Seeds the factual sample and the generator; every result is reproducible.
    generator : str
        A name from ``flex_core.counterfactuals.GENERATORS`` (default: the CLI's).
    generator_settings : mapping, optional
        Settings of that generator (e.g. ``{"n_jobs": 2}``).
    n_cf : int
        Counterfactuals per factual (the CLI's default, 10).
    cache_dir : str or Path, optional
        Keep generated counterfactuals here between sessions.
    refine : {"minimal", "none"}, optional
        Shrink each change toward the factual while the outcome stays desirable
        (default: "minimal" for the batch generators, "none" for DiCE, as the CLI).
    monotone, bounds, allowed, ordinal_orders : mapping, optional
        Actionability constraints, as :func:`flex_core.make_task` takes them: a direction
        per feature ("increase" / "decrease"), a permitted (low, high) range, the levels
        a categorical feature may change to, and an order of levels (making it ordinal).
    constraints : sequence of str, optional
        Constraints between features, one expression each (``"cf.loan_amount <= 4 * cf.income_annum"``;
        the language is in docs/constraints.md), held by every counterfactual.
    name : str
        The data's name in reports.
    dictionary : path, TOML text or mapping, optional
        The expert's words for the features and the outcome (display names, units, number
        formats, currencies, level words; the file format is in docs/data-dictionary.md): every
        label and reading uses them.

    Attributes
    ----------
    task : TaskSpec
    model : FittedModel
    generator : the counterfactual generator
    store : CounterfactualStore
        Every counterfactual generated so far, reused by every call.

    Notes
    -----
    The explainer holds nothing beyond what construction fixes (the store only adds the
    counterfactuals those settings determine): the app shares one between all its sessions,
    so no call remembers its arguments. The view a saved project reopens on (τ, N_F, a
    region's query, k and criterion) is passed to :meth:`save` and read back with
    :meth:`read_settings`. The one exception is ``dashboard_process``, which
    :meth:`dashboard` sets in a notebook (the app never calls it).
    """

    def __init__(
        self,
        model,
        X: pd.DataFrame,
        *,
        undesired,
        desired=(),
        immutable: Iterable[str] | None = None,
        kinds: Mapping[str, str] | None = None,
        y=None,
        seed: int = 0,
        generator: str | None = None,
        generator_settings: Mapping | None = None,
        n_cf: int = 10,
        cache_dir: str | Path | None = None,
        refine: str | None = None,
        monotone: Mapping[str, str] | None = None,
        bounds: Mapping[str, Sequence] | None = None,
        allowed: Mapping[str, Iterable] | None = None,
        ordinal_orders: Mapping[str, Sequence] | None = None,
        constraints: Sequence[str] | None = None,
        name: str = "notebook data",
        dictionary=None,
    ):
        made = _generator(generator, generator_settings, seed=seed, n_cf=n_cf)  # settings checked before anything runs
        task, fitted = adopt_model(
            model, X, undesired=undesired, desired=desired, immutable=immutable, kinds=kinds, y=y, monotone=monotone, bounds=bounds,
            allowed=allowed, ordinal_orders=ordinal_orders, name=name, constraints=constraints or (),
            dictionary=dictionary,
        )
        self._assemble(task, fitted, seed=seed, generator=made, n_cf=n_cf, refine=refine, cache_dir=cache_dir,
                       y_given=y is not None)

    @classmethod
    def from_task(
        cls,
        task,
        model,
        *,
        seed: int = 0,
        generator: str | None = None,
        generator_settings: Mapping | None = None,
        n_cf: int = 10,
        refine: str | None = None,
        cache_dir: str | Path | None = None,
        fit_options: Mapping | None = None,
        model_name: str | None = None,
        dictionary=None,
    ) -> FlexExplainer:
        """The pipeline on a :class:`~flex_core.TaskSpec` (what the CLI, the app and the reproduction build).

        ``model`` is a :class:`~flex_core.FittedModel`; a name from ``flex_core.models.MODELS``,
        trained here with ``seed`` and ``fit_options`` (``encoding``, ``cv_folds``, ``cv_rows``,
        ``progress``); or a classifier fitted elsewhere (named ``model_name``), explained on the
        task's columns it takes. ``dictionary`` (a TOML path, TOML text or a mapping) replaces the task's words.
        """
        from .models import FittedModel, fit_model, from_file_estimator

        made = _generator(generator, generator_settings, seed=seed, n_cf=n_cf)  # settings checked before training
        if dictionary is not None:
            task = task.with_dictionary(dictionary)
        if isinstance(model, str):
            model = fit_model(task, model=model, seed=seed, **dict(fit_options or {}))
        elif not isinstance(model, FittedModel):
            if fit_options:
                raise ConfigError("fit_options apply to a model trained here, not to one fitted elsewhere.")
            task, model = from_file_estimator(task, model, name=model_name or type(model).__name__)
        explainer = cls.__new__(cls)
        explainer._assemble(task, model, seed=seed, generator=made, n_cf=n_cf, refine=refine, cache_dir=cache_dir,
                            y_given=True)
        return explainer

    def _assemble(self, task, model, *, seed, generator, n_cf, refine, cache_dir, y_given) -> None:
        """The store for this task, model and generator (from :func:`_generator`): the only place it is made."""
        from .counterfactuals import CounterfactualStore

        self.task, self.model, self.y_given = task, model, bool(y_given)
        self.seed, self.n_cf, self.refine, self.cache_dir = int(seed), int(n_cf), refine, cache_dir
        self.generator_name, self.generator_settings, self.generator = generator
        self.store = CounterfactualStore(task, model, self.generator, n_cf=self.n_cf, seed=self.seed, directory=cache_dir,
                                         refine=refine)

    # -- what construction fixed, as the runs read it --------------------------------------------------
    @property
    def key(self) -> dict:
        """What decides the counterfactuals (the data's fingerprint, the model, the generator and its settings, N_cf,
        the seed, the refinement, the constraints and the library's version): two explainers with equal keys
        generate the same ones (a copy)."""
        return dict(self.store.key)

    @property
    def generator_used(self) -> str:
        """The generator that serves this model: ``generator_name``, or the one it hands the model to (``tree`` gives
        a model its tree form does not read to ``batch``). A generator of the protocol alone serves every model."""
        fallback_for = getattr(self.generator, "fallback_for", None)
        return (fallback_for(self.model, self.task) if fallback_for is not None else None) or self.generator_name

    @property
    def refine_mode(self) -> str:
        """The refinement the counterfactuals get: ``refine`` as given, or the generator's default when it was None."""
        return self.store.refine

    @property
    def varying_features(self) -> list[str]:
        """The features a counterfactual may change (the task's mutable ones)."""
        return self.store.varying_features

    @property
    def factual_selection(self) -> dict:
        """How the factuals were chosen (the validity rule's margin, out of bag) and how many candidate cases were left
        out as borderline or memorised (``"candidates"``: the cases predicted undesirable before that), a copy."""
        return self.store.factual_selection

    def check_memory(self, n_factuals: int) -> None:
        """A ConfigError saying what to reduce when generating for ``n_factuals`` factuals would not fit the memory
        budget (:func:`flex_core.limits.memory_budget`); nothing is generated."""
        self.store.check_memory(n_factuals)

    # -- the three levels -----------------------------------------------------------------------
    def explain_local(self, rows: Rows, *, tau=DEFAULT_TAU, progress=None) -> list[FlexResult]:
        """Local FLEX per row: one factual and its n_cf counterfactuals each, in the order given.

        Every row must be a factual (predicted undesirable). Their counterfactuals are
        generated together in one batch.
        """
        from .importance import run_local

        rows = [int(r) for r in rows]
        self.store.ensure(rows, progress=progress)
        return [run_local(self.store, row, tau=tau) for row in rows]

    def explain_global(
        self,
        *,
        n_factuals: int = 200,
        tau=DEFAULT_TAU,
        sufficiency: bool = False,
        repeats: int = 1,
        generators: Sequence[str] = (),
        retrain: int = 0,
        progress=None,
    ) -> FlexResult:
        """Global FLEX over a seeded random sample of ``n_factuals`` rows the model predicts undesired.

        ``sufficiency=True`` adds flip_alone and needed shares with intervals, and the necessity and
        sufficiency ratios, per feature (two generator runs per feature); ``repeats=N`` regenerates
        with N seeds and adds ``frequency_seed_sd``; ``generators=["dice-random"]`` reruns the
        factuals with those generators and adds ``generator_sensitivity`` (does a finding depend on
        the generator?); ``retrain=K`` (at most 20) refits the model K times and adds ``retrain``: F's range
        across the refits, a ``stable`` verdict per feature and the counterfactuals' validity under each refit
        (a model given here is refitted with ``sklearn.base.clone`` only when y was given).
        """
        from .importance import run_global, with_extras

        check_each(n_factuals=n_factuals, repeats=repeats)  # before anything is generated
        result = run_global(self.store, n_factuals=n_factuals, tau=tau, progress=progress)  # F at τ
        return with_extras(result, self.store, tau=tau, sufficiency=sufficiency, repeats=repeats, generators=generators,
                           retrain=retrain, labelled=self.y_given)

    def explain_all(self, rows=None, *, tau=DEFAULT_TAU, local: bool = False, necessary: bool = True,
                    progress=None) -> FlexResult:
        """Global FLEX over ``rows`` (default: every factual), however many, generated and read ``FLEX_CHUNK_ROWS``
        factuals at a time: :meth:`explain_global`'s numbers for the same rows (``local=True`` keeps f_j(i) per
        factual, ``necessary=False`` skips the necessary-change search)."""
        from .importance._stream import streamed_importance
        rows = self.store.factual_rows if rows is None else rows
        return streamed_importance(self.store, rows, tau=tau, local=local, necessary=necessary, progress=progress)

    #: The most refits :meth:`survives_retraining` and ``retrain=K`` take.
    max_refits = int(LIMITS["retrain"].high)

    def survives_retraining(self, result: FlexResult, k: int, *, tau=DEFAULT_TAU, progress=None) -> dict:
        """F, a ``stable`` verdict per feature and the counterfactuals' validity under ``k`` refits of the model,
        over ``result``'s factuals (the ``retrain`` block :meth:`explain_global` adds; ``progress(done, total)``)."""
        from .importance._retrain import retrain_stability

        return retrain_stability(self.store, result, k, labelled=self.y_given, tau=tau, progress=progress)

    def explain_region(
        self,
        *,
        global_result: FlexResult | None = None,
        where: str | Mapping | None = None,
        k: int = 4,
        query: int | None = None,
        rule: Sequence | None = None,
        n_factuals: int = 200,
        tau=DEFAULT_TAU,
        sufficiency: bool = False,
        repeats: int = 1,
        generators: Sequence[str] = (),
        progress=None,
    ) -> RegionalResult:
        """Regional FLEX: a query factual (default a seeded random one meeting ``where``) and its k Hamming neighbours.

        ``where`` is ``{"feature": value}``, ``Condition.criterion(feature, value)`` or ``"feature=value"``. The region is compared with
        ``global_result``; without one, global FLEX at ``n_factuals`` and the same τ is computed
        from the stored counterfactuals (pass one to compare with a global result of your own).

        ``rule`` defines the region instead (no query, no k): the global result's factuals that meet
        every condition, e.g. ``[{"feature": "age", "op": ">=", "value": 70}, "road_type=rural"]`` or
        :class:`~flex_core.importance.Condition` values (see :mod:`flex_core.regions`). A region from :meth:`find_regions` opens with the same members
        when ``n_factuals`` is the same.
        """
        from .importance import run_global, run_regional
        from .importance._runs import check_region_arguments, check_rule_region, random_query, run_rule_region

        check_region_arguments(rule=rule, query=query, where=where)
        check_each(n_factuals=n_factuals, k=k, repeats=repeats)  # before anything is generated
        if rule is not None:
            rule = check_rule_region(self.store, rule)  # before anything is generated
        criterion = where_criterion(where)
        if global_result is None:
            global_result = run_global(self.store, n_factuals=n_factuals, tau=tau, progress=progress)
        if rule is not None:
            return run_rule_region(self.store, global_result, rule=rule, tau=tau, sufficiency=sufficiency, repeats=repeats,
                                   generators=generators, progress=progress)
        if query is None:
            query = random_query(self.store, where=criterion, seed=self.seed)
        return run_regional(self.store, global_result, query=int(query), k=k, where=criterion, tau=tau,
                            sufficiency=sufficiency, repeats=repeats, generators=generators, progress=progress)

    # -- the rows the runs take, so a front end can generate them first with its own progress ------------
    @property
    def factual_rows(self) -> np.ndarray:
        """Row ids of the factuals: the rows the model predicts undesirable (with the validity rule's margin)."""
        return self.store.factual_rows

    @property
    def ranges(self) -> np.ndarray:
        """range(X_j) of each feature over the training rows (read-only): τ is a share of it, and a counterfactual's
        relative change |Δ| / range is what τ is compared with."""
        return self.store.ranges

    def sample_factuals(self, n_factuals: int = 200) -> np.ndarray:
        """The factuals :meth:`explain_global` explains at ``n_factuals``: a seeded random sample, sorted by row id."""
        from .importance import sample_factuals

        return sample_factuals(self.store.factual_rows, n_factuals, seed=self.seed)

    def not_generated(self, rows: Rows) -> list[int]:
        """The rows among ``rows`` whose counterfactuals are not generated yet (:meth:`counterfactuals` makes them)."""
        return self.store.missing(rows)

    def region_members(self, query: int, *, k: int = 4, where: str | Mapping | None = None) -> list[int]:
        """The members :meth:`explain_region` takes for this query, k and criterion: the query first."""
        from .importance._region_runs import select_members

        check_each(k=k)
        return select_members(self.store, int(query), k=k, where=where_criterion(where))[0]

    def random_query(self, *, where: str | Mapping | None = None, seed: int | None = None) -> int:
        """A seeded random factual meeting ``where`` (``seed`` default: the explainer's, :meth:`explain_region`'s pick)."""
        from .importance._runs import random_query

        return random_query(self.store, where=where_criterion(where), seed=self.seed if seed is None else int(seed))

    def factuals_meeting(self, where: str | Mapping | None, rows: Rows | None = None) -> np.ndarray:
        """The factuals (or ``rows``, in their order) that meet ``where``; a ConfigError naming a wrong criterion."""
        from .importance import rows_meeting

        return rows_meeting(self.task, self.store.factual_rows if rows is None else rows, where_criterion(where))

    def factual_probabilities(self) -> pd.Series:
        """P(undesirable) of every factual, indexed by row id (one batched call)."""
        rows = self.store.factual_rows
        return pd.Series(self.model.predict_proba(self.task.frame.loc[rows, self.task.feature_names])[:, 1], index=rows)

    # -- readings of the same counterfactuals --------------------------------------------------------
    def explain_factuals(self, rows: Rows, *, tau=DEFAULT_TAU, progress=None) -> FlexResult:
        """FLEX over exactly these factuals together (a result's ``query_index``, a region's members): what
        :meth:`explain_global` computes, without the sampling."""
        from .importance._flex import importance_of

        rows = [int(r) for r in rows]
        return importance_of(self.store, self.store.ensure(rows, progress=progress), tau=tau, level="global",
                             n_factuals=len(rows))

    def explain_counterfactuals(self, cfset, *, tau=DEFAULT_TAU) -> FlexResult:
        """FLEX over a counterfactual set of this task (say, :meth:`minimal_counterfactuals`'), with the training
        ranges every run uses: F, μ, DiCE's importance and F's intervals; no necessary changes and no run settings
        in ``config`` (the set alone decides the numbers)."""
        from .importance import flex_importance

        return flex_importance(cfset, self.task, tau=tau, ranges=self.ranges)

    def minimal_counterfactuals(self, rows: Rows, *, progress=None):
        """The counterfactuals of these rows (:meth:`counterfactuals`) with every change shrunk toward the factual
        while the prediction stays desirable, copies merged (a CounterfactualSet, not stored).

        What ``refine="minimal"`` does while generating, applied to what this explainer generated: the paper's
        τ panels set the two side by side. A refined counterfactual must meet the library's default validity rule
        (:func:`~flex_core.counterfactuals.refine_counterfactuals`), whatever rule the generator was given.
        """
        from .counterfactuals import refine_counterfactuals

        generated = self.store.ensure(rows, progress=progress)
        return refine_counterfactuals(generated, self.task, self.model, permitted_range=self.store.permitted_range,
                                      ranges=self.ranges)

    def tau_sweep(self, *, n_factuals: int = 200, taus: Sequence[float] | None = None, progress=None) -> pd.DataFrame:
        """F of every continuous feature against τ (0 to 1 by 0.05, or ``taus``) over :meth:`explain_global`'s factuals."""
        from .importance import tau_sweep

        cfset = self.store.ensure(self.sample_factuals(n_factuals), progress=progress)
        return tau_sweep(cfset, self.task, ranges=self.store.ranges, taus=taus)

    def necessity_sufficiency(self, rows: Rows, *, progress=None):
        """Flip-alone and needed shares and the necessity and sufficiency ratios over these factuals (two generator
        runs per feature; independent of τ)."""
        from .importance import necessity_sufficiency

        return necessity_sufficiency(self.store, list(rows), progress=progress)

    def generator_sensitivity(self, result: FlexResult, generators: Sequence[str], *, tau=DEFAULT_TAU) -> dict:
        """Each generator's F and its interval over ``result``'s factuals (does a finding depend on the generator?)."""
        from .importance import generator_sensitivity

        return generator_sensitivity(self.store, result, list(generators), tau=tau)

    # -- regions that matter ------------------------------------------------------------------------
    def find_regions(
        self,
        *,
        tau=DEFAULT_TAU,
        n_factuals: int = 1000,
        max_conditions: int = 2,
        min_support: int = 20,
        fdr: float = 0.1,
        n_permutations: int = 1000,
        bins: int = 4,
        top: int = 20,
        retrain: int = 0,
        progress=None,
    ):
        """The rule-defined regions whose F differs from global, tested with FDR control (a RegionsResult).

        Candidates are one or two conditions (a level, an ordinal level range, a range of quantile
        bins of a number) with at least ``min_support`` factuals; the divergence is 1 - Pearson r over
        the mutable features, tested against a permutation null with Benjamini–Hochberg at ``fdr``.
        One pool of ``n_factuals`` (the sample ``explain_global`` takes) is generated once; a τ change
        regenerates nothing. A region is significant only when its divergence interval lies above 0.
        ``retrain=K`` refits the model K times and marks per region whether it replicates under each refit
        (``region.replicated``). See :mod:`flex_core.regions._discovery`.
        """
        from .regions import find_regions

        return find_regions(self.store, tau=tau, n_factuals=n_factuals, max_conditions=max_conditions,
                            min_support=min_support, fdr=fdr, n_permutations=n_permutations, bins=bins, top=top,
                            replicate=retrain, labelled=self.y_given, progress=progress)

    def compare_groups(self, by: str, *, bins: int = 4, n_factuals: int = 1000, tau=DEFAULT_TAU, min_size: int = 10,
                       retrain: int = 0, progress=None):
        """What the model asks of each group of ``by`` (a GroupsResult): flip share, cost of the minimal change, F.

        One group per level, or per quantile bin (``bins``) of a number; intervals on every number and
        a verdict that names a difference only when intervals separate; ``retrain=K`` marks each difference
        with whether it is named under each of K refits too. See :mod:`flex_core.regions._groups`.
        """
        from .regions import compare_groups

        return compare_groups(self.store, by, bins=bins, n_factuals=n_factuals, tau=tau, min_size=min_size,
                              replicate=retrain, labelled=self.y_given, progress=progress)

    def counterfactuals(self, rows: Rows, *, progress=None):
        """The counterfactuals of these rows (a CounterfactualSet; ``.to_frame(explainer.task)`` shows them)."""
        return self.store.ensure(rows, progress=progress)

    def what_if(self, values: Mapping, *, row: int | None = None):
        """What if a case had these values? Its P(undesirable) and minimal counterfactuals (a
        :class:`~flex_core.counterfactuals.WhatIf`).

        ``values`` maps features to values in the data's format; with ``row``, the case starts from that row
        of the data and features left out keep its values. Each value is checked once: a number outside the
        data's range, an unknown level or an edited immutable feature is a ConfigError naming it. The
        counterfactuals come from this explainer's generator and settings; an edited case's are not stored.
        """
        from .counterfactuals._whatif import what_if

        return what_if(self.store, values, row=row)

    def check_case(self, values: Mapping, *, row: int | None = None) -> tuple[str, ...]:
        """The features ``values`` edits from ``row``'s values, checked as :meth:`what_if` checks them (a ConfigError
        naming a number outside the data's range, an unknown level or an edited immutable feature); nothing is run."""
        from .counterfactuals._whatif import check_case

        return check_case(self.task, values, row=row)[1]

    def feature_range(self, name: str) -> tuple[float, float]:
        """(min, max) of a continuous feature over the data: the range :meth:`what_if` lets a value take."""
        from .counterfactuals._whatif import data_limits

        return data_limits(self.task, self.task.feature(name).name)

    # -- an interactive report --------------------------------------------------------------------
    def report(
        self,
        path,
        *,
        n_factuals: int = 200,
        tau=DEFAULT_TAU,
        regions: Mapping[str, RegionalResult | Mapping] | None = None,
        discover=0,
        title: str | None = None,
        settings: Mapping | None = None,
        progress=None,
    ):
        """Write an interactive report: one HTML file that opens offline, with no server and no network.

        In it a reader moves τ (global and per continuous feature) and sees the global chart, each region's
        chart, scatter, r with its interval and reading redrawn; picks a region; finds a case by row id or
        value and browses its counterfactuals with the changed cells marked; and reads the settings, the
        model's quality and every note. The file carries the counterfactuals and recomputes FLEX from them
        in the browser exactly as :func:`~flex_core.importance.flex_importance` does (:mod:`flex_core.snapshot`).

        ``path`` is a file name (its folder must exist) or an open text stream. ``regions`` maps a name to a
        :class:`RegionalResult` or to :meth:`explain_region`'s keywords (``{"query": 12, "k": 4}``,
        ``{"rule": ["age>=70"]}``). ``discover=N`` adds the first N regions :meth:`find_regions` finds over
        the same factuals at ``tau``; a :class:`~flex_core.RegionsResult` adds the regions it holds.
        ``settings`` adds lines to the file's settings table. Returns ``path``.
        """
        from .regions import RegionsResult
        from .snapshot._page import snapshot_html
        from .snapshot._payload import snapshot_payload

        stream = hasattr(path, "write")
        target = Path(path).expanduser() if not stream else None
        if target is not None and (target.is_dir() or not target.parent.is_dir()):
            raise ConfigError(f"Cannot write the report to {str(path)!r}: give a file name in a folder that exists.")
        found = discover if isinstance(discover, RegionsResult) else None
        check_each(n_factuals=n_factuals, **({"top": discover} if found is None and discover else {}))
        global_result = self.explain_global(n_factuals=n_factuals, tau=tau, progress=progress)
        opened = {str(name): region if isinstance(region, RegionalResult) else
                  self.explain_region(global_result=global_result, n_factuals=n_factuals, tau=tau, **dict(region))
                  for name, region in (regions or {}).items()}
        if found is None and discover:
            found = self.find_regions(tau=tau, n_factuals=n_factuals, top=int(discover), progress=progress)
        found_opened = [self.explain_region(global_result=global_result, rule=region.rule, n_factuals=n_factuals, tau=tau)
                        for region in (found.regions if found is not None else ())]
        page = snapshot_html(snapshot_payload(self, global_result, opened, discovered=found, discovered_regions=found_opened,
                                              title=title, settings=settings))
        if target is None:
            path.write(page)
            return path
        target.write_text(page, encoding="utf-8")
        return target

    # -- other methods on the same rows -------------------------------------------------------------
    def shap(self, rows: Rows, **options):
        """SHAP on these rows (e.g. ``result.query_index``); options as :func:`~flex_core.compare.shap_importance`."""
        from .compare import shap_importance

        return shap_importance(self.model, self.task, list(rows), **{"seed": self.seed, **options})

    def lime(self, rows: Rows, **options):
        """LIME on these rows (e.g. ``region.members``); options as :func:`~flex_core.compare.lime_importance`."""
        from .compare import lime_importance

        return lime_importance(self.model, self.task, list(rows), **{"seed": self.seed, **options})

    # -- a project folder the app opens -----------------------------------------------------------
    def settings(self, *, view: Mapping | None = None) -> dict:
        """What :meth:`save` writes to settings.json (everything but the data and the model), with ``view``."""
        task = self.task
        return {
            "format": "flex-project/1",
            "name": task.name,
            "target": task.target,
            "y_given": self.y_given,
            # a regressor's band as make_task takes it ({"above": T, ...}), else the undesired classes
            "undesired": ({k: task.band.as_dict()[k] for k in ("above", "below", "inclusive")} if task.band else
                          [plain_value(c) for c in self.model.undesired]),
            **({"desired": [plain_value(c) for c in self.model.desired]} if self.model.desired else {}),
            "features": task.feature_names,
            "kinds": {f.name: f.kind for f in task.features},
            "ordinal_orders": {f.name: list(f.levels) for f in task.features if f.kind == "ordinal"},
            "immutable": task.immutable_names,
            "raw_dtypes": dict(task.raw_dtypes),
            "seed": self.seed,
            "generator": self.generator_name,
            "generator_settings": self.generator_settings,
            "n_cf": self.n_cf,
            "refine": self.refine,
            "view": project_view(view),
            "monotone": {f.name: f.direction for f in task.features if f.direction},
            "bounds": {f.name: list(f.bounds) for f in task.features if f.bounds is not None},
            "allowed": {f.name: list(f.allowed) for f in task.features if f.allowed is not None},
            "constraints": task.rule_texts,
            "dictionary": task.dictionary.to_dict() if task.dictionary is not None else None,
            "model": fit_record(self.model),
        }

    def save(self, directory: str | Path, *, view: Mapping | None = None) -> Path:
        """Write data.csv, model.skops and settings.json to ``directory``; :meth:`load` and the app open it.

        ``view``: what the app opens on, any of ``n_factuals``, ``tau`` (one number), ``query``, ``k`` and
        ``where`` (``"feature=value"`` or ``{feature: value}``), e.g. the settings of the runs a notebook shows;
        :meth:`read_settings` gives it back. Without it the app opens on its defaults. data.csv holds the rows in the model's own column types with their ids, written
        formula-safe (a text cell such as ``=1+1`` gets a leading quote, which
        :meth:`load` takes off again).
        """
        from .data import to_safe_csv
        from .models import save_model

        settings = self.settings(view=view)  # the view checked before anything is written
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        frame = self.model.estimator_input(self.task.X)
        # The outcome as the model's classes: a model trained here learned the task's model_labels (1 = undesirable,
        # 2 = desired), which "undesired" and "desired" name; one fitted elsewhere was given its own classes (the
        # task's outcome column).
        trained_here = not self.model.identity and self.task.band is None  # a regressor learned the numbers themselves
        frame[self.task.target] = self.task.model_labels if trained_here else self.task.frame[self.task.target].to_numpy()
        frame.index.name = ROW
        to_safe_csv(frame, directory / PROJECT_FILES["data"], index=True)
        save_model(self.model.pipeline, directory / PROJECT_FILES["model"])
        (directory / PROJECT_FILES["settings"]).write_text(json.dumps(settings, indent=2, default=str) + "\n")
        return directory

    @staticmethod
    def read_settings(directory: str | Path) -> dict:
        """The settings.json :meth:`save` wrote to ``directory``, its ``"view"`` included (what the app opens on).

        A DataError when the folder lacks a project's files or settings.json is not a JSON object.
        """
        return _project.read_project_settings(directory)

    @classmethod
    def load(cls, directory: str | Path, *, cache_dir: str | Path | None = None) -> FlexExplainer:
        """The explainer :meth:`save` wrote to ``directory`` (the model through the trusted-types check).

        The view saved with it is not part of the explainer: :meth:`read_settings` gives it (``["view"]``).
        """
        directory = Path(directory)
        settings = cls.read_settings(directory)
        task, model, y_given = cls.load_parts(directory)
        made = _generator(settings.get("generator"), settings.get("generator_settings"), seed=settings.get("seed", 0),
                          n_cf=settings.get("n_cf", 10))
        explainer = cls.__new__(cls)
        explainer._assemble(task, model, seed=settings.get("seed", 0), generator=made, n_cf=settings.get("n_cf", 10),
                            refine=settings.get("refine"), cache_dir=cache_dir, y_given=y_given)
        return explainer

    @classmethod
    def load_parts(cls, directory: str | Path) -> ProjectParts:
        """The task, the model and ``y_given`` of a project folder, read as :meth:`load` reads them, without the
        generator and the counterfactual store (for a front end that builds its own explainer on them)."""
        from ._adopt import adopt_model

        directory = Path(directory)
        settings = cls.read_settings(directory)
        estimator, X, adopted = read_project(directory, settings)
        task, model = adopt_model(estimator, X, **adopted)
        return ProjectParts(task, restore_fit(model, settings.get("model"), task.frame.index, task), adopted["y"] is not None)

    def dashboard(self, *, view: Mapping | None = None, directory: str | Path | None = None, port: int | None = None,
                  open_browser: bool = False, inline: bool = False, height: int = 800) -> str:
        """Start the FLEX Studio app on this explainer in a subprocess; prints and returns its URL.

        ``inline``: wait until the app answers, then show it in the notebook's output (an IFrame ``height`` pixels
        high, through IPython.display); without a notebook, one printed line says to open the URL instead.

        ``view`` is what the app opens on, as :meth:`save` takes it. The explainer is saved to ``directory`` (default a new temporary folder) and the
        app opens it, started as ``flex dashboard DIR`` starts it (from a checkout or an
        installed package alike; Streamlit comes with ``pip install "flex-studio[app]"``).
        The app runs until the Python session ends or ``explainer.dashboard_process.terminate()``
        is called.
        """
        from .dashboard import app_script, free_port, require_streamlit, show_inline, start_dashboard, wait_until_ready

        require_streamlit()
        app_script()  # the app's files are there, before anything is written
        folder = self.save(directory or tempfile.mkdtemp(prefix="flex-project-"), view=view)
        port = port or free_port()
        self.dashboard_process = start_dashboard(folder, port=port, open_browser=open_browser)
        url = f"http://localhost:{port}"
        print(f"FLEX Studio is starting at {url} (project folder {folder})")
        if inline:
            if not wait_until_ready(url, self.dashboard_process):
                print(f"The app has not answered within two minutes; the frame below stays empty until it does (or open {url}).")
            show_inline(url, height=height)
        return url


def _generator(name: str | None, settings: Mapping | None, *, seed, n_cf) -> tuple[str, dict, object]:
    """(name, settings, generator), with the seed, n_cf and every setting checked against flex_core.limits."""
    from .counterfactuals import DEFAULT_GENERATOR, make_generator

    check_each(seed=seed, n_cf=n_cf)
    name, settings = name or DEFAULT_GENERATOR, dict(settings or {})
    return name, settings, make_generator(name, **settings)
