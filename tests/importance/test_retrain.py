"""Survives retraining (issue 32 item 3): the stable rule by hand, and refits of a rule coded as a model and of a
learned forest (tests/planted_learned.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

import flex_core as fc
from flex_core.importance._retrain import MAX_REFITS, STABLE_FLOOR, refit_models, stable_verdicts
from tests.contract import assert_valid
from tests.planted_learned import NOISE_FEATURES, planted_forest, planted_task


def test_the_stable_rule_by_hand():
    """Original F 0.5 with interval [0.4, 0.6]; F 0.0 with interval [0, 0] (widened to ± 0.02)."""
    frequency = np.array([0.5, 0.5, 0.0, 0.0, 0.3])
    interval = np.array([[0.4, 0.6], [0.4, 0.6], [0.0, 0.0], [0.0, 0.0], [0.2, 0.4]])
    refits = np.array([
        [0.45, 0.61, 0.02, 0.021, np.nan],
        [0.60, 0.50, 0.01, 0.0, np.nan],
    ])
    # 0.61 is outside [0.4, 0.6]; 0.021 outside the widened [-0.02, 0.02]; a feature no refit scored is not stable
    np.testing.assert_array_equal(stable_verdicts(frequency, interval, refits), [True, False, True, False, False])
    assert STABLE_FLOOR == 0.02 and MAX_REFITS == 20


def test_refits_are_bounded_and_a_users_model_without_labels_is_refused(synthetic_task, synthetic_model):
    for bad in (0, MAX_REFITS + 1, 1.5, True):
        with pytest.raises(fc.ConfigError, match="number of refits"):
            refit_models(synthetic_task, synthetic_model, bad)
    user = fc.FittedModel("own", "none", 0, synthetic_model.pipeline, synthetic_task.frame.index.to_numpy(),
                          np.empty(0, int), identity="abc")
    with pytest.raises(fc.ConfigError, match="no outcomes"):
        refit_models(synthetic_task, user, 2, labelled=False)


class RuleEstimator(ClassifierMixin, BaseEstimator):
    """A rule coded as a scikit-learn model: undesirable exactly when x > 50; fitting learns nothing."""

    def fit(self, X, y):
        self.classes_ = np.array(["bad", "good"])
        return self

    def predict_proba(self, X):
        bad = (np.asarray(X["x"], dtype=float) > 50).astype(float)
        return np.column_stack([bad, 1 - bad])

    def predict(self, X):
        return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]


def test_a_rule_coded_as_a_model_is_stable_and_valid_under_every_refit():
    """clone() refits of a rule are the rule: F is the same under every refit, every verdict stable, validity 1."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(0, 100, 300).round(1), "z": rng.uniform(0, 1, 300).round(2)})
    y = np.where(X["x"] > 50, "bad", "good")
    model = RuleEstimator().fit(X, y)
    explainer = fc.FlexExplainer(model, X, y=y, undesired="bad", seed=0, n_cf=3)
    result = explainer.explain_global(n_factuals=30, retrain=2)
    block = result.retrain
    assert block["refits"] == 2 and block["validity"] == [1.0, 1.0] and block["factuals"] == [30, 30]
    assert block["how"].startswith("sklearn.base.clone")
    for feature in block["features"]:
        assert feature["refits"] == [feature["frequency"]] * 2 and feature["stable"]
    assert_valid(result.to_dict())
    assert fc.FlexResult.from_dict(result.to_dict()).retrain == block
    no_labels = fc.FlexExplainer(model, X, undesired="bad", seed=0, n_cf=3)
    with pytest.raises(fc.ConfigError, match="pass y to refit it"):
        no_labels.explain_global(n_factuals=10, retrain=1)


@pytest.mark.slow
def test_the_learned_forest_survives_three_refits():
    """The planted forest (seed 0): every refit keeps >= 95% of the counterfactuals valid; the rule's features move
    little and the noise features stay near 0 and stable (measured validity 1.0, 1.0, 1.0; noise F <= 0.004)."""
    task = planted_task(seed=0)
    store = fc.counterfactuals.CounterfactualStore(task, planted_forest(task, 0), fc.counterfactuals.make_generator("batch"),
                                   n_cf=10, seed=0)
    result = fc.importance.with_extras(fc.importance.run_global(store, n_factuals=100), store, retrain=3)
    block = result.retrain
    assert block["seeds"] == [1, 2, 3] and min(block["validity"]) >= 0.95
    assert all(n >= 90 for n in block["factuals"])
    by_name = {f["name"]: f for f in block["features"]}
    for name in NOISE_FEATURES:
        assert by_name[name]["stable"] and by_name[name]["range"][1] <= 0.02
    assert_valid(result.to_dict())


def test_the_explainers_limit_is_the_modules():
    assert fc.FlexExplainer.max_refits == MAX_REFITS


@pytest.mark.slow  # starts a LocalCluster of two worker processes
def test_refits_on_a_dask_cluster_are_the_refits_of_one_process(toy_task, toy_model):
    """Issue 39: with the generator on a cluster, the retraining check fits its refits there too; they are the same
    models (same predictions to the bit) and the check's block is the same."""
    distributed = pytest.importorskip("distributed")
    here = refit_models(toy_task, toy_model, 3)
    local_store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.make_generator("tree"), n_cf=3)
    result = fc.importance.run_global(local_store, n_factuals=20)
    expected = fc.importance.with_extras(result, local_store, retrain=2).retrain
    # Threads, not processes: a worker process is spawned from __main__, which an AppTest earlier in the same pytest
    # process leaves pointing at app.py (tests/importance/test_retrain_cluster.py runs real worker processes).
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        there = refit_models(toy_task, toy_model, 3, cluster=True)
        tree = fc.counterfactuals.make_generator("tree", backend="dask")
        store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, tree, n_cf=3)
        with distributed.get_task_stream(client) as stream:
            block = fc.importance.with_extras(result, store, retrain=2).retrain
    assert sum(str(t["key"]).startswith("_refit") for t in stream.data) == 2  # the check's refits ran there
    X = toy_task.frame[toy_task.feature_names]
    for a, b in zip(here, there, strict=True):
        assert a.seed == b.seed and np.array_equal(a.train_index, b.train_index)
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert block == expected
