"""The counterfactual-set container: encoding, selection, combination, export and safe storage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.counterfactuals._assemble import assemble_counterfactual_set
from flex_core.counterfactuals._registry import generator_key
from flex_core.counterfactuals._set import check_request, query_seed


@pytest.fixture(scope="module")
def small_set(synthetic_task, synthetic_model):
    rows = fc.counterfactuals.factual_rows(synthetic_task, synthetic_model)[:4]
    return fc.counterfactuals.DiceGenerator("random").generate(synthetic_model, synthetic_task, synthetic_task.frame.loc[rows], n_cf=3, seed=1)


def test_encode_decode_round_trip(synthetic_task):
    rows = synthetic_task.X.iloc[:20]
    back = fc.counterfactuals.decode_rows(synthetic_task, fc.counterfactuals.encode_rows(synthetic_task, rows))
    pd.testing.assert_frame_equal(back, rows.reset_index(drop=True), check_dtype=False)


def test_a_few_rows_are_encoded_as_many_are(synthetic_task, monkeypatch):
    """The one-by-one lookup for a few rows (a What-if case) gives the vectorised path's codes: missing values,
    None, numbers among the levels' text, unknown levels, numbers as text and pandas' nullable numbers."""
    from flex_core.counterfactuals import _set

    task = synthetic_task
    rows = task.X.iloc[:12].copy()
    categorical = [f for f in task.features if not f.is_continuous]
    continuous = [f for f in task.features if f.is_continuous]
    c, n = categorical[0].name, continuous[0].name
    rows[c] = rows[c].astype(object)
    rows.iloc[0, rows.columns.get_loc(c)] = None
    rows.iloc[1, rows.columns.get_loc(c)] = np.nan
    rows.iloc[2, rows.columns.get_loc(c)] = "no such level"
    rows.iloc[3, rows.columns.get_loc(c)] = 7.0
    variants = [rows, rows.assign(**{n: rows[n].astype(str)}), rows.assign(**{n: pd.array([1, None] * 6, dtype="Int64")})]
    for frame in variants:
        few = fc.counterfactuals.encode_rows(task, frame)
        monkeypatch.setattr(_set, "FEW_ROWS", 0)
        many = fc.counterfactuals.encode_rows(task, frame)
        monkeypatch.undo()
        np.testing.assert_array_equal(few, many)
    assert np.isnan(few[:4, task.feature_names.index(c)]).all() and not np.isnan(few[4:, task.feature_names.index(c)]).any()


def test_shapes_and_coverage(small_set):
    assert small_set.counterfactuals.shape == (4, 3, 6)
    cov = small_set.coverage()
    assert cov["queries"] == 4 and cov["counterfactuals_requested"] == 12
    assert cov["counterfactuals_valid"] == int(small_set.valid.sum())
    assert not small_set.counterfactuals.flags.writeable  # shared via caches: read-only


def test_subset_concat_and_order(small_set):
    rows = list(small_set.query_index)
    reordered = small_set.subset(rows[::-1])
    np.testing.assert_array_equal(reordered.query_index, rows[::-1])
    np.testing.assert_array_equal(reordered.counterfactuals[0], small_set.counterfactuals[-1])
    joined = fc.counterfactuals.CounterfactualSet.concat([small_set.subset(rows[:2]), small_set.subset(rows[1:])])
    np.testing.assert_array_equal(joined.query_index, rows)  # the overlapping row appears once
    with pytest.raises(fc.ConfigError, match="No counterfactuals are stored for row"):
        small_set.subset([10**9])


def test_save_and_load_without_pickle(tmp_path, small_set):
    path = tmp_path / "set.npz"
    small_set.save(path)
    loaded = fc.counterfactuals.CounterfactualSet.load(path)
    np.testing.assert_array_equal(loaded.counterfactuals, small_set.counterfactuals)
    np.testing.assert_array_equal(loaded.valid, small_set.valid)
    assert loaded.generator == small_set.generator and loaded.config["seed"] == 1
    with np.load(path, allow_pickle=False) as data:  # nothing in it needs unpickling
        assert data["meta"].dtype.kind == "U"


def test_to_frame_long_format(synthetic_task, small_set):
    frame = small_set.to_frame(synthetic_task)
    assert list(frame.columns[:3]) == ["row", "cf", "valid"]
    assert (frame["cf"] == -1).sum() == 4
    assert len(frame) == 4 + int(small_set.found.sum())


def test_assemble_records_short_and_empty_queries(synthetic_task, synthetic_model):
    rows = fc.counterfactuals.factual_rows(synthetic_task, synthetic_model)[:3]
    queries = synthetic_task.frame.loc[rows, synthetic_task.feature_names]
    first = queries.iloc[[0]].assign(speed=20.0, lighting="daylight")
    cfset = assemble_counterfactual_set(
        synthetic_task, synthetic_model, queries, [first, None, queries.iloc[[2]]], n_cf=2, generator="hand", seconds=0.0
    )
    np.testing.assert_array_equal(cfset.found.sum(axis=1), [1, 0, 1])
    assert not cfset.valid[2, 0]  # the factual itself does not flip the prediction
    assert any("fewer than 2" in n for n in cfset.coverage_notes) and any("got no valid way out" in n for n in cfset.coverage_notes)


def test_query_seed_is_stable_and_row_specific():
    assert query_seed(0, 5) == query_seed(0, 5)
    assert len({query_seed(0, r) for r in range(100)}) == 100
    assert query_seed(1, 5) != query_seed(0, 5)


def test_store_generates_only_missing_rows_and_persists(tmp_path, toy_task, toy_model):
    calls = []

    class CountingDice(fc.counterfactuals.DiceGenerator):
        def generate(self, model, task, queries, **kwargs):
            calls.append(list(queries.index))
            return super().generate(model, task, queries, **kwargs)

    rows = fc.counterfactuals.factual_rows(toy_task, toy_model)[:6]
    store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, CountingDice("random"), n_cf=2, directory=tmp_path)
    store.ensure(rows[:4])
    store.ensure(rows[2:6])
    assert calls == [list(rows[:4]), list(rows[4:6])]  # overlap not regenerated
    reopened = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, CountingDice("random"), n_cf=2, directory=tmp_path)
    again = reopened.ensure(rows)
    assert len(calls) == 2  # a restart reads the chunks from disk
    np.testing.assert_array_equal(again.query_index, rows)
    other_seed = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, CountingDice("random"), n_cf=2, seed=9, directory=tmp_path)
    other_seed.ensure(rows[:1])
    assert len(calls) == 3  # a different seed is a different key


def test_the_time_a_store_reports_counts_each_generation_once(toy_task, toy_model):
    runs = []

    class TimedBatch(fc.counterfactuals.BatchGenerator):
        def generate(self, model, task, queries, **kwargs):
            cfset = super().generate(model, task, queries, **kwargs)
            runs.append(cfset.seconds)
            return cfset

    rows = fc.counterfactuals.factual_rows(toy_task, toy_model)[:8]
    store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, TimedBatch(), n_cf=2, refine="none")
    first = store.ensure(rows[:4])
    assert first.seconds == pytest.approx(runs[0])  # was twice the generation: the new rows were counted again
    second = store.ensure(rows[2:8])  # two stored rows, four new ones
    # Each call counted once and whole (_tally): these rows came from both calls, so it is both calls' time (a share
    # of the first, 2/4 of it, until per-call tallies).
    assert second.seconds == pytest.approx(runs[0] + runs[1])
    assert store.ensure(rows[4:8]).seconds == pytest.approx(runs[1])  # the second call's rows only
    np.testing.assert_array_equal(second.query_index, rows[2:8])


def test_store_survives_a_damaged_chunk_and_writes_atomically(tmp_path, toy_task, toy_model):
    rows = fc.counterfactuals.factual_rows(toy_task, toy_model)[:3]
    store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.DiceGenerator("random"), n_cf=2, directory=tmp_path)
    store.ensure(rows)
    (chunk,) = list(store.directory.glob("chunk-*.npz"))
    chunk.write_bytes(chunk.read_bytes()[: chunk.stat().st_size // 2])  # as a killed app or a full disk leaves it
    reopened = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.DiceGenerator("random"), n_cf=2, directory=tmp_path)
    again = reopened.ensure(rows)  # regenerates instead of failing
    assert again.valid.sum() > 0
    assert not list(store.directory.glob(".partial-*"))
    # ... and says so, in every result built on it.
    assert reopened.notes == ["1 stored file of ways out was damaged (truncated or corrupted) and set aside; "
                              "the ways out it held are found again."]
    assert list(store.directory.glob(".damaged-chunk-*.npz"))
    assert reopened.notes[0] in fc.importance.run_global(reopened, n_factuals=3).notes
    assert fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.DiceGenerator("random"), n_cf=2,
                                  directory=tmp_path).notes == []  # set aside once, not reported forever
    assert store.key["flex_core"] == fc.__version__  # a new release never reads an old release's counterfactuals


def test_time_limited_queries_are_not_stored(tmp_path, toy_task, toy_model):
    rows = fc.counterfactuals.factual_rows(toy_task, toy_model)[:2]
    store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.DiceGenerator("random", time_limit=0.0), n_cf=2)
    first = store.ensure(rows)
    assert first.found.sum() == 0 and first.n_queries == 2
    assert store.missing(rows) == [int(r) for r in rows]  # to be tried again, not remembered as "none exist"


# -- generator settings and the shared request check ------------------------------------------------
@pytest.mark.parametrize("name", sorted(fc.counterfactuals.GENERATORS))
def test_generators_declare_their_settings_from_init(name):
    import inspect

    generator = fc.counterfactuals.make_generator(name)
    params = generator.get_params()
    signature = [p for p in inspect.signature(type(generator).__init__).parameters if p != "self"]
    assert list(params) == signature
    assert type(generator)(**params).get_params() == params  # a generator rebuilds from its settings


def test_the_store_key_holds_the_settings_that_change_results_only():
    key = generator_key
    batch = fc.counterfactuals.BatchGenerator
    assert key(batch(n_jobs=2, backend="dask")) == key(batch())
    assert key(batch(samples=7)) != key(batch()) and key(batch(plausible=True)) != key(batch())
    assert "n_jobs" not in key(batch()) and "backend" not in key(batch())


def test_one_request_check_for_every_generator(toy_task):
    queries = toy_task.X.iloc[:2]
    check = check_request
    assert check(toy_task, queries, n_cf=3) == (toy_task.mutable_names, {})
    for kwargs, message in [
        ({"n_cf": 0}, "n_cf"),
        ({"n_cf": 3, "features_to_vary": ["speed"]}, "Unknown feature"),
        ({"n_cf": 3, "features_to_vary": []}, "No feature may vary"),
    ]:
        with pytest.raises(fc.ConfigError, match=message):
            check(toy_task, queries, **kwargs)
    with pytest.raises(fc.ConfigError, match="No query rows"):
        check(toy_task, queries.iloc[:0], n_cf=3)
    # DiCE now refuses an unknown feature to vary up front too (it used to pass it on to dice-ml).
    with pytest.raises(fc.ConfigError, match="Unknown feature"):
        fc.counterfactuals.DiceGenerator().generate(None, toy_task, queries, n_cf=2, features_to_vary=["speed"])


def test_two_sessions_asking_for_the_same_rows_at_once_generate_them_once(tmp_path, toy_task, toy_model):
    import threading

    calls = []

    class CountingBatch(fc.counterfactuals.BatchGenerator):
        def generate(self, model, task, queries, **kwargs):
            calls.append(list(queries.index))
            return super().generate(model, task, queries, **kwargs)

    store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, CountingBatch(), n_cf=2, directory=tmp_path)
    rows = [int(r) for r in fc.counterfactuals.factual_rows(toy_task, toy_model)[:6]]
    results = []
    sessions = [threading.Thread(target=lambda: results.append(store.ensure(rows))) for _ in range(2)]
    for session in sessions:
        session.start()
    for session in sessions:
        session.join()
    assert len(calls) == 1 and sorted(calls[0]) == sorted(rows)  # the second waited and read the stored rows
    np.testing.assert_array_equal(results[0].counterfactuals, results[1].counterfactuals)


def test_two_processes_sharing_a_cache_folder_keep_both_chunks(tmp_path, toy_task, toy_model):
    rows = [int(r) for r in fc.counterfactuals.factual_rows(toy_task, toy_model)[:6]]
    # Two stores on one folder, as two app processes would open it: each writes its own chunk.
    first, second = (fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.BatchGenerator(), n_cf=2,
                                            directory=tmp_path) for _ in range(2))
    first.ensure(rows[:3])
    second.ensure(rows[3:])
    assert len(list(first.directory.glob("chunk-*.npz"))) == 2
    reopened = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.BatchGenerator(), n_cf=2, directory=tmp_path)
    assert reopened.missing(rows) == [] and reopened.notes == []


# -- the disk cache: foreign chunks, a folder that cannot be written, leftovers --------------------------------
def _store(task, model, folder, **kwargs) -> fc.counterfactuals.CounterfactualStore:
    return fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.BatchGenerator(), n_cf=2, directory=folder, **kwargs)


def test_a_foreign_chunk_is_set_aside_with_a_note_and_never_mixed_in(tmp_path, toy_task, toy_model, synthetic_task,
                                                                     synthetic_model):
    rows = [int(r) for r in fc.counterfactuals.factual_rows(toy_task, toy_model)[:4]]
    own = _store(toy_task, toy_model, tmp_path)
    before = own.ensure(rows)
    # Chunks of other settings copied into this store's folder: another dataset (other features), and the same
    # data under another seed (the same features and rows: only the chunk's owner tells them apart).
    other_data = _store(synthetic_task, synthetic_model, tmp_path)
    other_data.ensure([int(r) for r in fc.counterfactuals.factual_rows(synthetic_task, synthetic_model)[:3]])
    other_seed = _store(toy_task, toy_model, tmp_path, seed=5)
    other_seed.ensure(rows)
    for other in (other_data, other_seed):
        (chunk,) = other.directory.glob("chunk-*.npz")
        (own.directory / f"chunk-0{chunk.name[len('chunk-'):]}").write_bytes(chunk.read_bytes())
    reopened = _store(toy_task, toy_model, tmp_path)  # used to fail: "Counterfactual sets differ in features or n_cf"
    assert reopened.notes == [
        "2 stored files of ways out in this cache folder belonged to other settings (another dataset, model, "
        "generator, number of ways out per case or seed) and were set aside unused; the ways out for these settings "
        "are found again."
    ]
    assert reopened.missing(rows) == []  # its own chunk still answers
    again = reopened.ensure(rows)
    np.testing.assert_array_equal(again.counterfactuals, before.counterfactuals)  # the other seed's were not mixed in
    assert len(list(own.directory.glob(".foreign-chunk-*.npz"))) == 2 and len(list(own.directory.glob("chunk-*"))) == 1
    assert reopened.notes[0] in fc.importance.run_global(reopened, n_factuals=4).notes  # every result built on it says so
    assert _store(toy_task, toy_model, tmp_path).notes == []  # set aside once, not reported forever


def test_a_chunk_written_before_chunks_named_their_store_is_read_when_its_rows_match(tmp_path, toy_task, toy_model):
    rows = [int(r) for r in fc.counterfactuals.factual_rows(toy_task, toy_model)[:4]]
    own = _store(toy_task, toy_model, tmp_path)
    before = own.ensure(rows)
    (chunk,) = own.directory.glob("chunk-*.npz")
    before.save(chunk)  # as an earlier release wrote it: no owner
    reopened = _store(toy_task, toy_model, tmp_path)
    assert reopened.notes == [] and reopened.missing(rows) == []
    # The same, but its factuals are not this data's rows (another file with the same columns): foreign.
    moved = fc.counterfactuals.CounterfactualSet(before.feature_names, before.query_index, before.factuals + 1.0,
                                                 before.counterfactuals, before.found, before.valid, before.generator,
                                                 before.seconds)
    moved.save(chunk)
    assert "set aside unused" in _store(toy_task, toy_model, tmp_path).notes[0]


def test_a_cache_folder_that_cannot_be_written_falls_back_to_memory_before_generating(tmp_path, toy_task, toy_model):
    notes_when_generating = []

    class Watching(fc.counterfactuals.BatchGenerator):
        def generate(self, model, task, queries, **kwargs):
            notes_when_generating.append(list(store.notes))
            return super().generate(model, task, queries, **kwargs)

    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder should be")  # mkdir fails, also for root (the tests' user)
    store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, Watching(), n_cf=2, directory=blocked)
    rows = [int(r) for r in fc.counterfactuals.factual_rows(toy_task, toy_model)[:3]]
    result = store.ensure(rows)  # used to generate, then fail writing the chunk: all the work lost
    note = ("The cache folder for ways out cannot be written (NotADirectoryError), so they are kept in memory only: a "
            "restart finds them again.")
    assert notes_when_generating == [[note]]  # said before the work, not after
    assert store.notes == [note] and store.directory is None and result.n_queries == 3
    assert store.missing(rows) == [] and len(notes_when_generating) == 1  # kept in memory
    assert note in fc.importance.run_global(store, n_factuals=3).notes


def test_a_chunk_that_fails_to_write_keeps_the_work_in_memory(tmp_path, toy_task, toy_model, monkeypatch):
    store = _store(toy_task, toy_model, tmp_path)
    rows = [int(r) for r in fc.counterfactuals.factual_rows(toy_task, toy_model)[:3]]

    def disk_full(self, path, *, owner=None):
        with open(path, "wb") as file:
            file.write(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fc.counterfactuals.CounterfactualSet, "save", disk_full)
    result = store.ensure(rows)
    assert result.n_queries == 3 and store.missing(rows) == []
    assert store.notes == ["The cache folder for ways out could not be written (OSError), so they are kept in memory "
                           "only: a restart finds them again."]
    assert not list(tmp_path.glob("*/.partial-*"))  # the half-written file is gone


def test_stale_leftovers_are_cleaned_when_a_store_opens_its_folder(tmp_path, toy_task, toy_model):
    import os
    import time

    from flex_core.counterfactuals._store import STALE_PARTIAL_SECONDS, STALE_SET_ASIDE_SECONDS

    store = _store(toy_task, toy_model, tmp_path)
    store.ensure([int(r) for r in fc.counterfactuals.factual_rows(toy_task, toy_model)[:2]])
    now = time.time()
    ages = {".partial-old.npz": STALE_PARTIAL_SECONDS + 60, ".partial-new.npz": STALE_PARTIAL_SECONDS - 60,
            ".damaged-chunk-old.npz": STALE_SET_ASIDE_SECONDS + 60, ".damaged-chunk-new.npz": STALE_SET_ASIDE_SECONDS - 60,
            ".foreign-chunk-old.npz": STALE_SET_ASIDE_SECONDS + 60, ".foreign-chunk-new.npz": 3600}
    for name, age in ages.items():
        (store.directory / name).write_bytes(b"x")
        os.utime(store.directory / name, (now - age, now - age))
    reopened = _store(toy_task, toy_model, tmp_path)
    left = sorted(p.name for p in store.directory.iterdir() if p.name.startswith("."))
    assert left == [".damaged-chunk-new.npz", ".foreign-chunk-new.npz", ".partial-new.npz"]
    assert reopened.notes == [] and len(list(store.directory.glob("chunk-*.npz"))) == 1


def test_changed_cells_by_hand():
    """A number counts as changed past float noise (1e-6), whatever τ; a level when it is another level; empty slots
    never. Worked out by hand for one factual and three slots."""
    import pandas as pd

    from tests.factories import make_set

    frame = pd.DataFrame({"speed": [50.25, 90.75], "zone": ["urban", "rural"], "bad": ["yes", "no"]})
    task = fc.make_task(frame, target="bad", undesirable="yes", kinds={"speed": "continuous", "zone": "categorical"})
    cfset = make_set(task, [0], [[{"speed": 50.25 + 5e-7, "zone": "rural"}, {"speed": 50.5, "zone": "urban"}]], n_cf=3)
    assert cfset.changed(task).tolist() == [[[False, True], [True, False], [False, False]]]
