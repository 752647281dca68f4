"""Global FLEX read from the store a chunk at a time (issue 39) equals FLEX of the whole set, to the bit.

By hand on a planted model with planted counterfactuals (three factuals, one per chunk), then on a forest learned
from noisy planted data with the tree generator, with and without the per-factual arrays kept.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core._uncertainty import wilson_interval
from flex_core.importance._flex import importance_of, store_notes, with_notes
from flex_core.importance._stream import streamed_importance
from tests.factories import make_set, planted

#: Per factual row: its planted counterfactuals as (x, colour); x's range over the rows is 10.
PLANTED = {0: [(6.0, "red"), (5.0, "blue")], 1: [(9.0, "red")], 2: [(2.6, "red"), (7.0, "blue")]}


class Planted:
    """A generator that returns :data:`PLANTED`'s counterfactuals for the rows it is asked about."""

    name = "planted"

    def __init__(self):
        self.calls: list[list[int]] = []

    def generate(self, model, task, queries, *, n_cf, progress=None, **_):
        rows = [int(r) for r in queries.index]
        self.calls.append(rows)
        return make_set(task, rows, [PLANTED[r] for r in rows], n_cf)


@pytest.fixture(scope="module")
def planted_task():
    frame = pd.DataFrame({"x": [0.0, 1.0, 2.0, 10.0], "colour": ["red", "red", "blue", "red"]})
    return planted(frame, lambda X: X["x"] < 2.5)


def _in_memory(store, rows, tau):
    """Global FLEX of the rows' whole set in memory, with the notes a global run adds."""
    return with_notes(importance_of(store, store.ensure(rows), tau=tau, level="global"), store_notes(store))


def _equal(streamed, whole, *, local=True, generator=True):
    for name in ("frequency_mean", "frequency_std", "magnitude_mean", "dice_frequency", "frequency_ci",
                 "rank_interval", "necessary_frequency", "necessary_std", "query_index", "counts", "tau"):
        np.testing.assert_array_equal(getattr(streamed, name), getattr(whole, name), err_msg=name)
    names = ("local_frequencies", "local_magnitudes", "local_necessary")
    for name in names if local else ():
        np.testing.assert_array_equal(getattr(streamed, name), getattr(whole, name), err_msg=name)
    assert streamed.counterfactual_set is None
    if generator:  # what the generator calls recorded (timings aside) and the notes
        timeless = {k: v for k, v in whole.generator.items() if k != "seconds"}
        assert {k: v for k, v in streamed.generator.items() if k != "seconds"} == timeless
        assert streamed.notes == whole.notes


def test_streamed_flex_by_hand_one_factual_a_chunk(planted_task, tmp_path):
    task, model = planted_task
    store = fc.counterfactuals.CounterfactualStore(task, model, Planted(), n_cf=2, refine="none", directory=tmp_path,
                                                   chunk_rows=1)
    result = streamed_importance(store, [0, 1, 2], tau=0.25)
    x, colour = task.feature_names.index("x"), task.feature_names.index("colour")
    # |Δx|/10: row 0: .6, .5 (both > .25); row 1: .8; row 2: .06, .5 -> f_x = 1, 1, 1/2.
    # colour: row 0 keeps red, then blue -> 1/2; row 1 keeps red -> 0; row 2 blue -> red, blue -> 1/2.
    np.testing.assert_allclose(result.frequency_mean[[x, colour]], [2.5 / 3, 1 / 3])
    np.testing.assert_allclose(result.frequency_std[x], np.std([1, 1, 0.5]))
    np.testing.assert_allclose(result.magnitude_mean[x], ((0.6 + 0.5) / 2 + 0.8 + (0.06 + 0.5) / 2) / 3)
    assert np.isnan(result.magnitude_mean[colour])
    # DiCE pools the 5 counterfactuals: x changes in all 5 (|Δ| > ε), colour in 2.
    np.testing.assert_allclose(result.dice_frequency[[x, colour]], [5 / 5, 2 / 5])
    # x < 2.5 is the rule: every change of x above τ is necessary (its revert is rejected again), no colour change is.
    np.testing.assert_allclose(result.necessary_frequency[[x, colour]], [2.5 / 3, 0])
    np.testing.assert_allclose(result.frequency_ci, wilson_interval(result.frequency_mean, 3))
    assert len(list(tmp_path.glob("*/chunk-*.npz"))) == 3  # one file per chunk of one factual
    _equal(result, _in_memory(store, [0, 1, 2], 0.25))


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """A forest fitted on noisy planted data (undesirable where x1 + x2 < 1, 10% of labels flipped)."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"x1": rng.random(n).round(3), "x2": rng.random(n).round(3),
                          "zone": rng.choice(["a", "b", "c"], n), "age": rng.integers(18, 70, n)})
    bad = (frame["x1"] + frame["x2"] < 1) ^ (rng.random(n) < 0.1)
    frame["y"] = np.where(bad, "bad", "good")
    task = fc.make_task(frame, target="y", undesirable="bad", immutable=["age"])
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
    rows = fc.counterfactuals.factual_rows(task, model)[:40]
    return task, model, rows


@pytest.mark.parametrize("local", [True, False])
def test_streamed_flex_equals_the_whole_set_on_a_learned_model(learned, tmp_path, local):
    task, model, rows = learned
    tree = fc.counterfactuals.make_generator("tree")
    chunked = fc.counterfactuals.CounterfactualStore(task, model, tree, n_cf=4, directory=tmp_path, chunk_rows=7)
    streamed = streamed_importance(chunked, rows, tau=0.1, local=local)
    assert len(list(tmp_path.glob("*/chunk-*.npz"))) == 6  # 40 factuals in chunks of 7
    _equal(streamed, _in_memory(chunked, rows, 0.1), local=local)
    # One generator call for all 40 gives the same counterfactuals, so the same numbers (each chunk's call records
    # its own tallies and notes: those are not compared).
    whole = fc.counterfactuals.CounterfactualStore(task, model, tree, n_cf=4)
    one_call = whole.ensure(rows)
    np.testing.assert_array_equal(chunked.ensure(rows).counterfactuals, one_call.counterfactuals)
    _equal(streamed, _in_memory(whole, rows, 0.1), local=local, generator=False)
    if not local:
        assert streamed.local_frequencies.shape == (0, len(task.features))


def test_explain_all_gives_explain_globals_numbers_for_its_rows(learned, tmp_path, monkeypatch):
    task, model, _ = learned
    monkeypatch.setenv("FLEX_CHUNK_ROWS", "9")
    explainer = fc.FlexExplainer.from_task(task, model, n_cf=4, seed=0, cache_dir=tmp_path)
    sampled = explainer.explain_global(n_factuals=30)
    everything = explainer.explain_all(sampled.query_index, local=True)
    _equal(everything, sampled)
    assert explainer.explain_all().n_factuals_used == len(explainer.store.factual_rows)  # default: every factual
