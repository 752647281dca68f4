"""The native batched generators ("batch", "batch-plausible"): constraints, validity, determinism, parallel paths.

Real scikit-learn random forests on the built-in data; workloads of tens of queries.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.counterfactuals._quality import sparsity
from flex_core.counterfactuals._registry import generator_key

GENERATORS = ["batch", "batch-plausible"]


@pytest.fixture(scope="module")
def queries(synthetic_task, synthetic_model):
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(synthetic_task, synthetic_model), 30, seed=0)
    return synthetic_task.frame.loc[rows, synthetic_task.feature_names]


@pytest.fixture(scope="module", params=GENERATORS)
def result(request, synthetic_task, synthetic_model, queries):
    gen = fc.counterfactuals.make_generator(request.param)
    return gen.generate(synthetic_model, synthetic_task, queries, n_cf=5, seed=0)


def _column(task, name):
    return task.feature_names.index(name)


def test_registered_by_short_name():
    assert isinstance(fc.counterfactuals.make_generator("batch"), fc.counterfactuals.BatchGenerator)
    assert fc.counterfactuals.make_generator("batch-plausible").plausible
    assert {"dice-random", "dice-genetic", "dice-kdtree"} <= set(fc.counterfactuals.GENERATORS)


def test_every_returned_counterfactual_is_valid_and_almost_every_query_has_one(result):
    assert (result.valid == result.found).all()
    # Distinct minimal counterfactuals are as many as exist (often fewer than n_cf): never padded with copies.
    assert (result.counts >= 1).mean() >= 0.9
    assert result.coverage()["queries_with_copies"] == 0
    assert result.model_rows > 0


def test_immutable_features_never_change(synthetic_task, result):
    for name in synthetic_task.immutable_names:
        j = _column(synthetic_task, name)
        assert (result.counterfactuals[..., j][result.found] == np.broadcast_to(result.factuals[:, None, j], result.found.shape)[result.found]).all()


def test_counterfactuals_are_distinct_and_differ_from_their_factual(result):
    for q in range(result.n_queries):
        rows = result.counterfactuals[q][result.found[q]]
        assert len(np.unique(rows, axis=0)) == len(rows)
        assert (rows != result.factuals[q]).any(axis=1).all()


def test_integer_features_stay_integer(synthetic_task, result):
    j = _column(synthetic_task, "speed")
    assert synthetic_task.feature("speed").integer
    values = result.counterfactuals[..., j][result.found]
    np.testing.assert_array_equal(values, np.round(values))


@pytest.mark.parametrize("name", GENERATORS)
def test_permitted_ranges_and_features_to_vary_are_respected(synthetic_task, synthetic_model, queries, name):
    allowed = {"speed": [25, 70], "noise_categorical": ["A", "B"]}
    vary = ["speed", "lighting", "noise_categorical"]
    cfset = fc.counterfactuals.make_generator(name).generate(
        synthetic_model, synthetic_task, queries, n_cf=4, seed=1, features_to_vary=vary, permitted_range=allowed
    )
    assert cfset.valid.any()
    frame = cfset.to_frame(synthetic_task)
    cfs = frame[frame["cf"] >= 0].set_index("row")
    facts = frame[frame["cf"] == -1].set_index("row").loc[cfs.index]
    speed_changed = cfs["speed"].to_numpy() != facts["speed"].to_numpy()
    assert cfs["speed"].to_numpy()[speed_changed].min() >= 25 and cfs["speed"].to_numpy()[speed_changed].max() <= 70
    cat_changed = cfs["noise_categorical"].to_numpy() != facts["noise_categorical"].to_numpy()
    assert set(cfs["noise_categorical"].to_numpy()[cat_changed]) <= {"A", "B"}
    for fixed in set(synthetic_task.feature_names) - set(vary):
        np.testing.assert_array_equal(cfs[fixed].to_numpy(), facts[fixed].to_numpy())


@pytest.mark.parametrize("name", GENERATORS)
def test_same_seed_same_result_and_independent_of_batch_order_and_composition(synthetic_task, synthetic_model, queries, name):
    gen = fc.counterfactuals.make_generator(name)
    first = gen.generate(synthetic_model, synthetic_task, queries.iloc[:20], n_cf=5, seed=3)
    again = gen.generate(synthetic_model, synthetic_task, queries.iloc[:20], n_cf=5, seed=3)
    np.testing.assert_array_equal(first.counterfactuals, again.counterfactuals)
    # Rows 10..19 in another batch (with other companions, in reverse order) get the same counterfactuals.
    shifted = gen.generate(synthetic_model, synthetic_task, queries.iloc[10:30].iloc[::-1], n_cf=5, seed=3)
    common = queries.index[10:20]
    np.testing.assert_array_equal(first.subset(common).counterfactuals, shifted.subset(common).counterfactuals)
    if name == "batch":  # batch-plausible's neighbours, single changes and probes do not depend on the seed
        # Under the default robust validity every one of these factuals has one way out (found without
        # random rounds), so the seed shows only under the paper's validity, where knife-edge trade-offs exist.
        paper = fc.counterfactuals.make_generator(name, margin=0.0, radius=0.0)
        first = paper.generate(synthetic_model, synthetic_task, queries.iloc[:20], n_cf=5, seed=3)
        other = paper.generate(synthetic_model, synthetic_task, queries.iloc[:20], n_cf=5, seed=4)
        assert not np.array_equal(np.nan_to_num(first.counterfactuals), np.nan_to_num(other.counterfactuals))


@pytest.fixture(scope="module")
def immutable_driven():
    """Outcome decided by an immutable feature alone; the mutable one is noise."""
    rng = np.random.default_rng(0)
    n = 400
    group = rng.choice(["a", "b"], n)
    frame = pd.DataFrame({"group": group, "noise": rng.normal(0, 1, n).round(3), "y": np.where(group == "a", "bad", "good")})
    task = fc.make_task(frame, target="y", undesirable="bad", immutable=["group"], name="immutable-driven")
    return task, fc.fit_model(task, model="rf", seed=0, cv_folds=2)


@pytest.mark.parametrize("name", GENERATORS)
def test_no_counterfactual_exists_returns_none_and_says_so(immutable_driven, name):
    task, model = immutable_driven
    rows = fc.counterfactuals.factual_rows(task, model)[:8]
    cfset = fc.counterfactuals.make_generator(name, max_rounds=4).generate(model, task, task.frame.loc[rows], n_cf=3, seed=0)
    assert cfset.n_queries == 8
    assert not cfset.found.any() and cfset.counts.sum() == 0
    assert any("no valid way out" in note for note in cfset.coverage_notes)


def test_bad_settings_are_config_errors(synthetic_task, synthetic_model, queries):
    with pytest.raises(fc.ConfigError, match="The immutable feature .* cannot vary"):
        fc.counterfactuals.BatchGenerator().generate(synthetic_model, synthetic_task, queries, n_cf=2, features_to_vary=["road_type"])
    with pytest.raises(fc.ConfigError, match="backend"):
        fc.counterfactuals.BatchGenerator(backend="spark")
    with pytest.raises(fc.ConfigError, match="n_cf"):
        fc.counterfactuals.BatchGenerator().generate(synthetic_model, synthetic_task, queries, n_cf=0)


@pytest.mark.parametrize("plausible", [False, True])
def test_two_processes_give_the_same_counterfactuals_as_one(synthetic_task, synthetic_model, queries, plausible, monkeypatch):
    from flex_core.counterfactuals import _batch

    monkeypatch.setattr(_batch, "PROCESS_QUERIES", 1)  # a handful of queries per core is enough to use processes
    one = fc.counterfactuals.BatchGenerator(n_jobs=1, plausible=plausible).generate(synthetic_model, synthetic_task, queries, n_cf=5, seed=2)
    two = fc.counterfactuals.BatchGenerator(n_jobs=2, plausible=plausible).generate(synthetic_model, synthetic_task, queries, n_cf=5, seed=2)
    assert (one.config["processes"], one.config["tree_threads"]) == (1, 1)
    assert (two.config["processes"], two.config["tree_threads"]) == (2, 1)
    np.testing.assert_array_equal(one.counterfactuals, two.counterfactuals)
    np.testing.assert_array_equal(one.valid, two.valid)
    assert generator_key(fc.counterfactuals.BatchGenerator(n_jobs=2)) == generator_key(fc.counterfactuals.BatchGenerator())


def test_few_queries_share_the_cores_in_threads_with_the_same_result(synthetic_task, synthetic_model, queries):
    one = fc.counterfactuals.BatchGenerator(n_jobs=1).generate(synthetic_model, synthetic_task, queries, n_cf=5, seed=2)
    two = fc.counterfactuals.BatchGenerator(n_jobs=2).generate(synthetic_model, synthetic_task, queries, n_cf=5, seed=2)
    assert (two.config["processes"], two.config["tree_threads"]) == (1, 2)
    np.testing.assert_array_equal(one.counterfactuals, two.counterfactuals)
    np.testing.assert_array_equal(one.valid, two.valid)
    refined = [fc.counterfactuals.refine_counterfactuals(one, synthetic_task, synthetic_model, n_jobs=n) for n in (1, 2)]
    np.testing.assert_array_equal(refined[0].counterfactuals, refined[1].counterfactuals)


def test_the_space_sent_to_workers_leaves_the_rows_behind_and_the_original_intact(synthetic_task, synthetic_model):
    from flex_core.counterfactuals._batchspace import SearchSpace, model_tables
    from flex_core.counterfactuals._validity import Validity

    tables, _ = model_tables(synthetic_model, synthetic_task, need_index=False, validity=Validity())
    space = SearchSpace.build(synthetic_task, synthetic_model, tables, synthetic_task.mutable_names, {}, minimal=True,
                               validity=Validity())
    shipped = space.for_workers()
    assert len(shipped.task.frame) == 0 and len(shipped.tables.train_codes) == 0
    assert shipped.tables.scorer.task is shipped.task and shipped.tables.scorer.threads == 1
    assert len(space.task.frame) == len(synthetic_task.frame) and space.tables.scorer.task is synthetic_task
    codes = tables.train_codes[:50]
    np.testing.assert_array_equal(shipped.p_undesirable(codes), space.p_undesirable(codes))


def test_dask_backend_on_a_local_cluster(synthetic_task, synthetic_model, queries):
    from dask.distributed import Client, LocalCluster

    serial = fc.counterfactuals.BatchGenerator().generate(synthetic_model, synthetic_task, queries, n_cf=5, seed=2)
    with LocalCluster(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster):
        on_dask = fc.counterfactuals.BatchGenerator(backend="dask", n_jobs=-1).generate(
            synthetic_model, synthetic_task, queries, n_cf=5, seed=2
        )
    np.testing.assert_array_equal(serial.counterfactuals, on_dask.counterfactuals)
    assert on_dask.config["backend"] == "dask"


def test_dask_backend_without_a_client_says_what_to_do(synthetic_task, synthetic_model, queries):
    from dask.distributed import default_client

    try:
        default_client()
        pytest.skip("a Dask client is already running in this process")
    except ValueError:
        pass
    with pytest.raises(fc.ConfigError, match="Client"):
        fc.counterfactuals.BatchGenerator(backend="dask", n_jobs=2).generate(synthetic_model, synthetic_task, queries, n_cf=2)


def test_sparser_than_dice_random_on_the_same_queries(synthetic_task, synthetic_model, queries):
    """The sparsification keeps only what the flip needs: noise features are almost never changed."""
    few = queries.iloc[:10]
    batch = fc.counterfactuals.BatchGenerator().generate(synthetic_model, synthetic_task, few, n_cf=5, seed=0)
    dice = fc.counterfactuals.DiceGenerator("random").generate(synthetic_model, synthetic_task, few, n_cf=5, seed=0)
    assert sparsity(batch, synthetic_task) <= sparsity(dice, synthetic_task)
    noise = [_column(synthetic_task, "noise_continuous"), _column(synthetic_task, "noise_categorical")]
    changed = (batch.counterfactuals[..., noise] != batch.factuals[:, None, noise])[batch.valid]
    assert changed.mean() < 0.2


def test_progress_is_reported_up_to_the_total(synthetic_task, synthetic_model, queries):
    calls = []
    fc.counterfactuals.BatchGenerator().generate(synthetic_model, synthetic_task, queries.iloc[:6], n_cf=2, progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1] == (6, 6)


def test_works_on_all_categorical_and_all_continuous_data(toy_task, toy_model):
    rows = fc.counterfactuals.factual_rows(toy_task, toy_model)[:10]
    cfset = fc.counterfactuals.BatchGenerator().generate(toy_model, toy_task, toy_task.frame.loc[rows], n_cf=4, seed=0)
    assert cfset.coverage()["validity"] == 1.0 and cfset.counts.min() >= 1


@pytest.mark.parametrize("model_name, encoding", [("rf", "onehot"), ("rf", "label"), ("lr", "onehot")])
def test_scoring_from_codes_equals_the_pipeline_exactly(synthetic_task, model_name, encoding):
    from flex_core.counterfactuals._scoring import CodeScorer

    model = fc.fit_model(synthetic_task, model=model_name, encoding=encoding, seed=0, cv_folds=2)
    codes = fc.counterfactuals.encode_rows(synthetic_task, synthetic_task.X.iloc[:300])
    codes[::7, 1] = 2.0  # some rows with another level, as candidates have
    scorer = CodeScorer(model, synthetic_task, check_codes=codes)
    assert scorer.fast
    expected = model.predict_proba(fc.counterfactuals.decode_rows(synthetic_task, codes))[:, 1]
    if model_name == "rf":
        np.testing.assert_array_equal(scorer(codes), expected)  # the forest's own arithmetic, to the bit
    else:
        np.testing.assert_allclose(scorer(codes), expected, rtol=1e-12)


def test_a_forest_scored_in_threads_gives_the_same_bits_as_in_one(synthetic_task, synthetic_model):
    from flex_core.counterfactuals._scoring import THREADED_ROWS, CodeScorer

    rows = np.arange(THREADED_ROWS + 500) % len(synthetic_task.frame)
    codes = fc.counterfactuals.encode_rows(synthetic_task, synthetic_task.X.iloc[rows])
    one = CodeScorer(synthetic_model, synthetic_task, check_codes=codes, threads=1)
    three = CodeScorer(synthetic_model, synthetic_task, check_codes=codes, threads=3)
    expected = synthetic_model.predict_proba(fc.counterfactuals.decode_rows(synthetic_task, codes))[:, 1]
    np.testing.assert_array_equal(three(codes), one(codes))
    np.testing.assert_array_equal(three(codes), expected)


def test_scoring_falls_back_to_the_pipeline_for_an_encoder_it_does_not_mirror(synthetic_task, synthetic_model):
    import dataclasses

    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler

    from flex_core.counterfactuals._scoring import CodeScorer

    encode = synthetic_model.pipeline.steps[0][1]
    other = ColumnTransformer([*((n, t, c) for n, t, c in encode.transformers if n != "continuous"),
                               ("continuous", MinMaxScaler(), synthetic_task.continuous_names)])
    X, y = synthetic_task.X, synthetic_task.y
    pipeline = Pipeline([("encode", other), ("classify", synthetic_model.pipeline.steps[1][1].__class__(n_estimators=5, random_state=0))]).fit(X, y)
    model = dataclasses.replace(synthetic_model, pipeline=pipeline)
    codes = fc.counterfactuals.encode_rows(synthetic_task, X.iloc[:50])
    scorer = CodeScorer(model, synthetic_task, check_codes=codes)
    assert not scorer.fast
    np.testing.assert_array_equal(scorer(codes), pipeline.predict_proba(X.iloc[:50])[:, 1])


def test_small_chunks_give_the_same_counterfactuals(synthetic_task, synthetic_model, queries, monkeypatch):
    from flex_core.counterfactuals import _batch, _scoring

    whole = fc.counterfactuals.BatchGenerator().generate(synthetic_model, synthetic_task, queries, n_cf=5, seed=3)
    monkeypatch.setattr(_batch, "CHUNK_QUERIES", 7)  # 30 queries in 5 chunks, each scored in blocks of 50 rows
    monkeypatch.setattr(_scoring, "BLOCK_ROWS", 50)
    seen = []
    chunked = fc.counterfactuals.BatchGenerator().generate(
        synthetic_model, synthetic_task, queries, n_cf=5, seed=3, progress=lambda done, total: seen.append(done)
    )
    np.testing.assert_array_equal(whole.counterfactuals, chunked.counterfactuals)
    np.testing.assert_array_equal(whole.valid, chunked.valid)
    assert seen == [6, 12, 18, 24, 30]


def test_a_scorer_does_not_keep_its_model_alive(synthetic_task):
    """The registry of scorers is keyed by the model (weakly): a scorer holding its model strongly kept every model
    and task a scorer was built for in memory for the life of the server (issue 31, lasting memory)."""
    import copy
    import gc
    import weakref

    from flex_core.counterfactuals._scoring import scorer_for

    model = fc.fit_model(synthetic_task, model="rf", seed=0, cv_folds=0)
    scorer = scorer_for(model, synthetic_task)
    # A copy sent elsewhere scores on its own copy of the model (deepcopy goes through the same __reduce__ and
    # state as the pickle a worker receives).
    copied = copy.deepcopy(scorer)
    codes = fc.counterfactuals.encode_rows(synthetic_task, synthetic_task.X.iloc[:20])
    assert np.array_equal(copied(codes), scorer(codes))
    gone = weakref.ref(model)
    del model, scorer, copied
    gc.collect()
    assert gone() is None
