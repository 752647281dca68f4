"""DiCE behind the generator protocol: each method, its traps, constraints and determinism (real dice-ml)."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

import flex_core as fc


@pytest.fixture(scope="module")
def queries(synthetic_task, synthetic_model):
    rows = fc.counterfactuals.factual_rows(synthetic_task, synthetic_model)[:3]
    return synthetic_task.frame.loc[rows]


def immutable_unchanged(task, cfset) -> bool:
    cols = [task.feature_names.index(n) for n in task.immutable_names]
    cfs = cfset.counterfactuals[..., cols]
    same = cfs == cfset.factuals[:, None, cols]
    return bool(same[cfset.found].all())


@pytest.mark.parametrize("method", ["random", "genetic", "kdtree"])
def test_each_dice_method_returns_valid_counterfactuals(synthetic_task, synthetic_model, queries, method):
    cfset = fc.counterfactuals.DiceGenerator(method).generate(synthetic_model, synthetic_task, queries, n_cf=3, seed=0)
    assert cfset.generator == f"dice-{method}"
    assert cfset.counterfactuals.shape == (3, 3, len(synthetic_task.features))
    assert cfset.valid.sum() > 0 and cfset.coverage()["validity"] > 0.5
    assert immutable_unchanged(synthetic_task, cfset)
    assert cfset.seconds > 0


def test_random_is_seeded_and_independent_of_batch_order(synthetic_task, synthetic_model, queries):
    gen = fc.counterfactuals.DiceGenerator("random")
    first = gen.generate(synthetic_model, synthetic_task, queries, n_cf=4, seed=5)
    again = gen.generate(synthetic_model, synthetic_task, queries.iloc[::-1], n_cf=4, seed=5)
    np.testing.assert_array_equal(first.counterfactuals, again.subset(first.query_index).counterfactuals)
    other = gen.generate(synthetic_model, synthetic_task, queries, n_cf=4, seed=6)
    assert not np.array_equal(first.counterfactuals, other.counterfactuals, equal_nan=True)


def test_posthoc_sparsity_returns_dices_sparse_set_and_rechecks_it():
    # The outcome depends on x only; z is bimodal (0-10 or 90-100), so DiCE's post-hoc threshold for z
    # (min of the 10% quantile of |unique - median| and the MAD) is 10 and small moves of z get undone.
    rng = np.random.default_rng(0)
    x = rng.integers(0, 101, 400)
    z = np.where(rng.random(400) < 0.5, rng.integers(0, 11, 400), rng.integers(90, 101, 400))
    task = fc.make_task(pd.DataFrame({"x": x, "z": z, "y": np.where(x < 50, "bad", "good")}),
                        target="y", undesirable="bad", name="posthoc")
    # Logistic regression predicts fast, so DiCE's row-at-a-time post-hoc search stays cheap here.
    model = fc.fit_model(task, model="lr", cv_folds=2)
    rows = [r for r in fc.counterfactuals.factual_rows(task, model) if task.frame.at[r, "z"] >= 90][:3]
    queries = task.frame.loc[rows]
    off = fc.counterfactuals.DiceGenerator("random").generate(model, task, queries, n_cf=4, seed=0)
    on = fc.counterfactuals.DiceGenerator("random", posthoc_sparsity=True).generate(model, task, queries, n_cf=4, seed=0)
    assert off.config["posthoc_sparsity"] is False and on.config["posthoc_sparsity"] is True
    # The sparse set, not DiCE's pre-sparsity final_cfs_df: some z move back to the factual, none move away.
    moved = lambda s: np.abs(s.counterfactuals[..., 1] - s.factuals[:, None, 1])  # noqa: E731
    assert (moved(on) <= moved(off)).all() and (moved(on) < moved(off)).any()
    np.testing.assert_array_equal(on.counterfactuals[..., 0], off.counterfactuals[..., 0])
    # DiCE does not re-check its sparse rows; the set's validity comes from our own batched model call.
    rows_on = fc.counterfactuals.decode_rows(task, on.counterfactuals[on.found])
    np.testing.assert_array_equal(on.valid[on.found], model.predict_undesirable(rows_on) == 0)


def test_time_limit_skips_queries_and_says_so(synthetic_task, synthetic_model, queries):
    cfset = fc.counterfactuals.DiceGenerator("random", time_limit=0.0).generate(synthetic_model, synthetic_task, queries, n_cf=2)
    assert cfset.found.sum() == 0
    assert cfset.config["queries_skipped"] == 3
    assert any("time limit" in n for n in cfset.coverage_notes)


def test_no_counterfactual_exists_is_recorded_not_raised():
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame(
        {
            "group": rng.choice(["g1", "g2"], n),  # immutable, and the only thing that matters
            "noise": rng.uniform(0, 1, n).round(3),
        }
    )
    frame["y"] = np.where(frame["group"] == "g1", "bad", "good")
    task = fc.make_task(frame, target="y", undesirable="bad", immutable=["group"])
    model = fc.fit_model(task, model="lr", cv_folds=2)
    rows = fc.counterfactuals.factual_rows(task, model)[:2]
    cfset = fc.counterfactuals.DiceGenerator("random").generate(model, task, task.frame.loc[rows], n_cf=3, seed=0)
    assert cfset.valid.sum() == 0
    assert any("no valid way out" in n for n in cfset.coverage_notes)
    result = fc.importance.flex_importance(cfset, task)
    assert result.n_factuals_used == 0


def test_bad_settings_are_refused(synthetic_task, synthetic_model, queries):
    with pytest.raises(fc.ConfigError, match="choose one of"):
        fc.counterfactuals.DiceGenerator("gradient")
    with pytest.raises(fc.ConfigError, match="Unknown backend 'loky' for DiCE; choose one of process, dask"):
        fc.counterfactuals.DiceGenerator("random", backend="loky")
    gen = fc.counterfactuals.DiceGenerator("random")
    with pytest.raises(fc.ConfigError, match="The immutable feature .* cannot vary"):
        gen.generate(synthetic_model, synthetic_task, queries, n_cf=2, features_to_vary=["road_type"])
    with pytest.raises(fc.ConfigError, match="low <= high"):
        gen.generate(synthetic_model, synthetic_task, queries, n_cf=2, permitted_range={"speed": [90, 10]})
    with pytest.raises(fc.ConfigError, match="n_cf"):
        gen.generate(synthetic_model, synthetic_task, queries, n_cf=0)


def test_permitted_range_is_respected(synthetic_task, synthetic_model, queries):
    cfset = fc.counterfactuals.DiceGenerator("random").generate(
        synthetic_model, synthetic_task, queries, n_cf=3, seed=0, permitted_range={"speed": [20, 50]}
    )
    speed = cfset.counterfactuals[..., synthetic_task.feature_names.index("speed")][cfset.found]
    assert ((speed >= 20) & (speed <= 50)).all()


def test_pandas_is_pinned_below_3():
    # dice-ml 0.12's random method crashes under pandas 3 ("Invalid value '1' for dtype 'int64'").
    assert int(pd.__version__.split(".")[0]) < 3


def test_random_is_reproducible_on_all_categorical_data():
    # dice-ml's random method picks the features to vary from numpy's global generator, which it
    # seeds only when some feature is continuous: on categorical data the wrapper must seed it.
    rng = np.random.default_rng(1)
    n = 400
    frame = pd.DataFrame({c: rng.choice(list("abcd"), n) for c in ("p", "q", "r", "s")})
    frame["y"] = np.where((frame.p == "a") | (frame.q == "b"), "bad", "good")
    task = fc.make_task(frame, target="y", undesirable="bad")
    model = fc.fit_model(task, model="rf", cv_folds=2)
    rows = task.frame.loc[fc.counterfactuals.factual_rows(task, model)[:3]]
    gen = fc.counterfactuals.DiceGenerator("random")
    first = gen.generate(model, task, rows, n_cf=4, seed=2)
    np.random.seed(123)  # whatever state the caller left behind must not matter
    second = gen.generate(model, task, rows, n_cf=4, seed=2)
    np.testing.assert_array_equal(first.counterfactuals, second.counterfactuals)


def test_genetic_on_all_categorical_data_is_refused_up_front():
    frame = pd.DataFrame({"a": list("xyxyxyxy"), "b": list("ppqqppqq"), "y": ["bad", "ok"] * 4})
    task = fc.make_task(frame, target="y", undesirable="bad")
    model = fc.fit_model(task, model="lr", cv_folds=2)
    with pytest.raises(fc.GenerationError, match="without a continuous feature"):
        fc.counterfactuals.DiceGenerator("genetic").generate(model, task, task.frame.iloc[:2], n_cf=2)


# dice-genetic twice takes over 2 s: it is in the full suite, not the fast run.
@pytest.mark.parametrize("method", ["random", pytest.param("genetic", marks=pytest.mark.slow), "kdtree"])
def test_two_seeded_runs_give_identical_counterfactuals(synthetic_task, synthetic_model, queries, method):
    # dice-genetic draws parents and crossover genes from Python's random module, which dice-ml never
    # seeds: before the wrapper seeded it too, two runs differed on about half the rows.
    gen = fc.counterfactuals.DiceGenerator(method)
    first = gen.generate(synthetic_model, synthetic_task, queries, n_cf=4, seed=3)
    np.random.seed(99)  # whatever states the caller left behind must not matter
    random.seed(99)
    second = gen.generate(synthetic_model, synthetic_task, queries, n_cf=4, seed=3)
    assert first.found.any()
    assert np.array_equal(first.counterfactuals, second.counterfactuals, equal_nan=True)


@pytest.mark.parametrize("method", ["random", "genetic"])
def test_callers_global_random_states_are_given_back(synthetic_task, synthetic_model, queries, method):
    # dice-random reseeds both global generators itself; the caller's streams must continue untouched.
    np.random.seed(7)
    random.seed(7)
    expected = (np.random.random(3), [random.random() for _ in range(3)])
    np.random.seed(7)
    random.seed(7)
    fc.counterfactuals.DiceGenerator(method).generate(synthetic_model, synthetic_task, queries.iloc[:1], n_cf=2, seed=0)
    np.testing.assert_array_equal(np.random.random(3), expected[0])
    assert [random.random() for _ in range(3)] == expected[1]


def test_posthoc_sparsity_with_genetic_is_refused():
    # dice-ml 0.12's DiceGenetic never calls do_posthoc_sparsity_enhancement: the flag would do nothing.
    with pytest.raises(fc.ConfigError, match="dice-genetic ignores post-hoc sparsity") as info:
        fc.counterfactuals.DiceGenerator("genetic", posthoc_sparsity=True)
    assert "\n" not in str(info.value) and 'refine="minimal"' in str(info.value)
    with pytest.raises(fc.ConfigError, match="dice-genetic ignores post-hoc sparsity"):
        fc.counterfactuals.make_generator("dice-genetic", posthoc_sparsity=True)
    for method in ("random", "kdtree"):  # these do run it
        assert fc.counterfactuals.DiceGenerator(method, posthoc_sparsity=True).posthoc_sparsity is True


def test_the_app_does_not_offer_post_hoc_sparsity_for_dice_genetic():
    assert "posthoc_sparsity" not in fc.counterfactuals.generator_defaults("dice-genetic")
    assert "posthoc_sparsity" in fc.counterfactuals.generator_defaults("dice-random")


def test_two_threads_running_dice_at_once_each_get_their_seeded_counterfactuals(synthetic_task, synthetic_model):
    """numpy's and Python's global generators are one per process: two app sessions (threads) running DiCE at once
    must not draw from each other's streams (a lock holds them for one query at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    rows = fc.counterfactuals.factual_rows(synthetic_task, synthetic_model)[:8]
    queries = synthetic_task.frame.loc[rows]
    gen = fc.counterfactuals.DiceGenerator("random")
    alone = gen.generate(synthetic_model, synthetic_task, queries, n_cf=4, seed=2)
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(lambda q: gen.generate(synthetic_model, synthetic_task, q, n_cf=4, seed=2),
                                 [queries, queries.iloc[::-1]]))
    for cfset in together:
        np.testing.assert_array_equal(cfset.subset(alone.query_index).counterfactuals, alone.counterfactuals)


@pytest.mark.slow  # a threaded LocalCluster
def test_dice_on_a_dask_cluster_is_dice_in_one_process(synthetic_task, synthetic_model):
    """Issue 39: ``backend="dask"`` sends chunks of queries to the workers (the model once); each query is seeded by
    its row id, so the set is the one-process set. Threads, not processes (see tests/importance/test_retrain.py);
    real worker processes: tests/counterfactuals/test_dask_cluster.py."""
    distributed = pytest.importorskip("distributed")
    rows = fc.counterfactuals.factual_rows(synthetic_task, synthetic_model)[:40]
    queries = synthetic_task.frame.loc[rows]
    here = fc.counterfactuals.DiceGenerator("random").generate(synthetic_model, synthetic_task, queries, n_cf=3, seed=1)
    dice = fc.counterfactuals.DiceGenerator("random", backend="dask")
    assert dice.result_params() == fc.counterfactuals.DiceGenerator("random").result_params()  # same cache entries
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client, distributed.get_task_stream(client) as stream:
        there = dice.generate(synthetic_model, synthetic_task, queries, n_cf=3, seed=1)
    assert sum(str(t["key"]).startswith("_dice_part") for t in stream.data) == 3  # chunks of 16, 16 and 8
    np.testing.assert_array_equal(there.query_index, here.query_index)
    np.testing.assert_array_equal(there.counterfactuals, here.counterfactuals)
    np.testing.assert_array_equal(there.valid, here.valid)
