"""The store in chunks (issue 39): a large generation is stored a chunk at a time as each finishes, a run cut short
keeps its chunks and the next one resumes, and a large store reads its chunk files instead of holding them."""

from __future__ import annotations

import numpy as np
import pytest

import flex_core as fc
from flex_core.counterfactuals import _store


class Cut(fc.counterfactuals.BatchGenerator):
    """The batch generator, cut short (as by a lost Dask scheduler) on call ``fail_on`` (1-based; 0: never).

    ``fail_on`` is set after construction: it is not a setting of the generator (its store's key stays the same).
    """

    fail_on = 0

    def __init__(self, **settings):
        super().__init__(**settings)
        self.calls = []

    def generate(self, model, task, queries, **kwargs):
        self.calls.append(list(queries.index))
        if len(self.calls) == self.fail_on:
            raise fc.GenerationError("The Dask scheduler was lost after 0 of 2 queries.")
        return super().generate(model, task, queries, **kwargs)


def _store_of(task, model, generator, folder, chunk_rows=2):
    return fc.counterfactuals.CounterfactualStore(task, model, generator, n_cf=2, refine="none", directory=folder,
                                                  chunk_rows=chunk_rows)


def test_a_run_cut_short_keeps_its_chunks_and_the_next_one_resumes(toy_task, toy_model, tmp_path):
    rows = [int(r) for r in fc.counterfactuals.factual_rows(toy_task, toy_model)[:6]]
    cut = Cut()
    cut.fail_on = 3
    with pytest.raises(fc.GenerationError, match="scheduler was lost"):
        list(_store_of(toy_task, toy_model, cut, tmp_path).chunks(rows))
    assert cut.calls == [rows[0:2], rows[2:4], rows[4:6]]
    assert len(list(tmp_path.glob("*/chunk-*.npz"))) == 2  # the two chunks that finished, written as they did
    again = Cut()
    resumed = _store_of(toy_task, toy_model, again, tmp_path).ensure(rows)
    assert again.calls == [rows[4:6]]  # only the chunk that was lost
    clean = _store_of(toy_task, toy_model, Cut(), None, chunk_rows=100).ensure(rows)  # one call, in memory
    np.testing.assert_array_equal(resumed.counterfactuals, clean.counterfactuals)
    np.testing.assert_array_equal(resumed.valid, clean.valid)


def test_a_large_store_reads_its_chunk_files_one_at_a_time(toy_task, toy_model, tmp_path, monkeypatch):
    rows = [int(r) for r in fc.counterfactuals.factual_rows(toy_task, toy_model)[:6]]
    made = _store_of(toy_task, toy_model, Cut(), tmp_path).ensure(rows)
    monkeypatch.setattr(_store, "MEMORY_ROWS", 3)  # the store holds 6 factuals: more than it keeps in memory
    reopened = _store_of(toy_task, toy_model, Cut(), tmp_path)
    chunks = list(reopened.chunks(rows[::-1]))
    assert [c.query_index.tolist() for c in chunks] == [rows[5:3:-1], rows[3:1:-1], rows[1::-1]]
    np.testing.assert_array_equal(reopened.ensure(rows).counterfactuals, made.counterfactuals)
    for path in tmp_path.glob("*/chunk-*.npz"):  # read from the files, not from memory: gone, it says so
        path.unlink()
    with pytest.raises(fc.GenerationError, match="could not be read again"):
        reopened.ensure(rows)


def test_the_chunk_size_setting_is_checked(monkeypatch, toy_task, toy_model):
    monkeypatch.setenv("FLEX_CHUNK_ROWS", "7")
    assert _store_of(toy_task, toy_model, Cut(), None, chunk_rows=None).chunk_rows == 7
    for bad in ("0", "ten", "2.5"):
        monkeypatch.setenv("FLEX_CHUNK_ROWS", bad)
        with pytest.raises(fc.ConfigError, match="FLEX_CHUNK_ROWS"):
            _store_of(toy_task, toy_model, Cut(), None, chunk_rows=None)
