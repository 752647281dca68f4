"""The current analysis (the pipeline: task, model, generator, store), rebuilt from Session State through the cache.

Pages call :func:`current_analysis` at the top: every object comes from
the shared cache (``ui/cache.py``), so this is cheap on a rerun and trains or loads only when a
setting changed. Nothing here is kept in Session State.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

import flex_core as fc
from ui import cache
from ui import state as S
from ui.text import plain


@dataclass(frozen=True)
class Analysis:
    """The session's pipeline (a :class:`flex_core.FlexExplainer`, shared through the cache) and N_F."""

    explainer: fc.FlexExplainer
    n_factuals: int

    @property
    def task(self) -> fc.TaskSpec:
        return self.explainer.task

    @property
    def model(self) -> fc.FittedModel:
        return self.explainer.model

    @property
    def store_id(self) -> str:
        return cache.store_id(self.explainer)

    @property
    def model_id(self) -> str:
        return cache.model_id(self.task, self.model)

    @property
    def tau(self) -> cache.Tau:
        """The session's τ as flex_core takes it: one number, or per feature with ``"*"`` as the default.

        Read from Session State on each use, not kept: a fragment (the Thresholds page's) reruns with the
        analysis of the last full run."""
        per_feature = st.session_state[S.TAU_FEATURES]
        tau = float(st.session_state[S.TAU])
        return {**per_feature, "*": tau} if per_feature else tau

    @property
    def pool(self):
        """Row ids the model predicts undesirable (the factuals)."""
        return self.explainer.factual_rows

    def ensure(self, rows, *, what: str = "case") -> None:
        """Generate the counterfactuals of ``rows`` not generated yet, with a progress bar."""
        cache.ensure_rows(self.explainer, rows, what=what)

    def global_result(self, tau: cache.Tau | None = None) -> fc.FlexResult:
        """Global FLEX at τ (default: the session's τ), generating missing rows with a progress bar first."""
        self.ensure(self.explainer.sample_factuals(self.n_factuals))
        tau = self.tau if tau is None else tau
        return cache.global_result(self.explainer, self.store_id, self.n_factuals, tau)

    def regional_result(self, query: int, k: int, where: fc.importance.Condition | None) -> fc.RegionalResult:
        self.global_result()
        self.ensure(self.explainer.region_members(query, k=k, where=where), what="region member")
        return cache.regional_result(
            self.explainer, self.store_id, self.n_factuals, self.tau, int(query), int(k), where
        )

    def tau_sweep(self):
        """F of each continuous feature against τ over the global sample (generated first, with a progress bar)."""
        self.ensure(self.explainer.sample_factuals(self.n_factuals))
        return cache.tau_sweep(self.explainer, self.store_id, self.n_factuals)

    def tau_sweep_chart(self, current: float, *, terms: bool = False):
        """The τ sweep's chart with a marker at ``current`` (its lines kept per sweep, so a τ change redraws little;
        ``terms``: the paper's symbols named)."""
        self.tau_sweep()
        return cache.tau_sweep_chart(self.explainer, self.store_id, self.n_factuals, current, terms=terms)

    def factual_map(self, with_rows=()):
        """The 2-D map of the factuals, with ``with_rows`` (a query and its region) added where a sample left them out."""
        if len(with_rows):
            return cache.factual_map_with(self.explainer, self.model_id, tuple(int(r) for r in with_rows))
        return cache.factual_map(self.explainer, self.model_id)

    def factual_probabilities(self):
        """P(undesirable) of every factual, by row id (a regressor's predicted number)."""
        return cache.factual_probabilities(self.explainer, self.model_id)

    def necessity_sufficiency(self, rows):
        return cache.necessity_sufficiency(self.explainer, self.store_id, tuple(int(r) for r in rows))

    def generator_sensitivity(self, rows, others, tau):
        return cache.generator_sensitivity(self.explainer, self.store_id, tuple(int(r) for r in rows), tuple(others), tau)

    def rule_region(self, rule) -> fc.RegionalResult:
        """The region of the global result's factuals that meet ``rule`` (checked first: a ConfigError says what to fix)."""
        rule = tuple(fc.importance.Condition.of(c) for c in fc.importance.check_rule(self.task, rule))
        self.global_result()
        return cache.rule_region(self.explainer, self.store_id, self.n_factuals, self.tau, rule)

    def saved_region(self, region) -> fc.RegionalResult:
        """A saved region (a dict of the session's list): by its rule, or by its query, k and criterion."""
        if region.get("rule"):
            return self.rule_region(region["rule"])
        return self.regional_result(region["query"], region["k"], region["where"])

    def found_regions(self, options: dict):
        """Region discovery over the global result's factuals (generated first, with a progress bar)."""
        self.global_result()
        return cache.found_regions(self.explainer, self.store_id, self.n_factuals, self.tau, options)

    def compared_groups(self, by: str):
        """The group comparison by ``by``, its differences checked under the session's refits (:data:`S.GROUPS_RETRAIN`)."""
        self.global_result()
        return cache.compared_groups(self.explainer, self.store_id, self.n_factuals, self.tau, by,
                                     int(st.session_state[S.GROUPS_RETRAIN]))


def active_model(task: fc.TaskSpec, dataset: dict, model_file: dict | None) -> tuple[fc.TaskSpec, fc.FittedModel]:
    """The model to explain: an uploaded file, a project folder's model, or one trained here (in that order)."""
    s = st.session_state
    if model_file is not None:
        digest = cache.file_digest(model_file["data"])
        estimator = cache.model_file(digest, model_file["data"])
        return cache.external_model(task, task.fingerprint, estimator, digest, model_file["name"])
    if dataset["kind"] == "project":
        project = cache.project(dataset["path"])
        return cache.external_model(task, task.fingerprint, project.model.pipeline, dataset["path"], "project model",
                                    labelled=project.y_given)
    return task, cache.fitted_model(task, task.fingerprint, s[S.MODEL], s[S.ENCODING], int(s[S.SEED]), int(s[S.CV_FOLDS]),
                                    int(s[S.CV_ROWS]))


def build_analysis() -> Analysis:
    """Raises :class:`flex_core.FlexError` when a setting is wrong."""
    s = st.session_state
    base = cache.load_base_task(s[S.DATASET])
    try:
        task = cache.task_with_overrides(base, base.fingerprint, s[S.OVERRIDES])
    except fc.FlexError as exc:  # e.g. a link made for other data: drop them rather than lock every page
        st.warning(plain(f"The feature settings (kinds, immutable features) were dropped: {exc}"))
        s[S.OVERRIDES] = {"kinds": {}, "immutable": None}
        task = base
    task, model = active_model(task, s[S.DATASET], s[S.MODEL_FILE])
    name = s[S.GENERATOR]
    settings = json.dumps(s[S.GENERATOR_SETTINGS].get(name, {}), sort_keys=True)
    refine = None if s[S.REFINE] == "auto" else s[S.REFINE]
    identity = json.dumps(
        # model_id, not only model.key: the same forest cross-validated otherwise carries other metrics.
        [cache.model_id(task, model), name, settings, int(s[S.N_CF]), int(s[S.SEED]), refine], sort_keys=True, default=str
    )
    explainer = cache.explainer(task, model, identity, name, settings, int(s[S.N_CF]), int(s[S.SEED]), refine)
    # The global sample's counterfactuals must fit the memory budget: refused here, before any page generates them.
    explainer.check_memory(int(s[S.N_FACTUALS]))
    return Analysis(explainer=explainer, n_factuals=int(s[S.N_FACTUALS]))


def current_analysis() -> Analysis | None:
    """The analysis, or None after showing what to fix."""
    try:
        return build_analysis()
    except fc.FlexError as exc:
        st.error(plain(exc))
        return None


def quiet_analysis() -> Analysis | None:
    """The analysis, or None without a word: for the sidebar, where the page's own :func:`current_analysis` says
    what to fix (both saying it showed the same error twice)."""
    try:
        return build_analysis()
    except fc.FlexError:
        return None


def require_analysis() -> Analysis:
    analysis = current_analysis()
    if analysis is None:
        st.info("Fix the setting named above in the sidebar to continue.")
        st.stop()
    adequacy = fc.models.adequacy_note(analysis.model.metrics)
    if adequacy:  # every page draws or reports importances of this model, so every page says it
        st.warning(plain(adequacy))
    dropped = S.forget_stale_rows(analysis.pool)
    if dropped:
        st.warning(plain(
            f"{'Saved region' if len(dropped) == 1 else 'Saved regions'} {', '.join(dropped)} "
            f"{'was' if len(dropped) == 1 else 'were'} removed: their query is no longer predicted "
            f"{analysis.task.undesirable_words} under the current model and settings."
        ))
    return analysis


def show_notes(analysis: Analysis, *notes: str) -> None:
    """Notes in one info box, a paragraph each (a box per note stacked three or four on a page), less the
    model-adequacy note that :func:`require_analysis` already shows as a warning."""
    adequacy = fc.models.adequacy_note(analysis.model.metrics)
    kept = [note for note in dict.fromkeys(notes) if note != adequacy]
    if kept:
        st.info(plain("\n\n".join(kept)))


def run_or_stop(fn, *args, **kwargs):
    """Call ``fn``; on a FlexError show what to fix and stop this page (the rest of the app stays usable)."""
    try:
        return fn(*args, **kwargs)
    except fc.FlexError as exc:
        st.error(plain(exc))
        st.stop()


def apply_overrides(make: Callable[[fc.TaskSpec], dict], what: str) -> None:
    """Apply the task settings ``make(base task)`` builds (kinds, immutable features, constraints): checked by
    building the task once; a refusal is one ``st.error`` naming ``what`` and the session keeps its settings, else
    the analysis restarts on them."""
    try:
        base = cache.load_base_task(st.session_state[S.DATASET])
        overrides = make(base)
        cache.task_with_overrides(base, base.fingerprint, overrides)
    except fc.FlexError as exc:
        st.error(plain(f"Those {what} were not applied: {exc}"))
    else:
        S.reset_analysis()
        st.session_state[S.OVERRIDES] = overrides
        st.rerun()
