"""The shared shelf: each key made once however many sessions ask at once, bounded by memory and by time, failures
not swallowed, sizes measured."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from ui.shelf import Shelf


def test_ten_sessions_asking_for_one_model_at_once_train_it_once_and_share_it():
    shelf: Shelf[object] = Shelf(2**30)
    made, waited = [], []
    start = threading.Barrier(10)

    def make():
        made.append(1)
        time.sleep(0.3)  # long enough that every other caller arrives while it is being made
        return object()

    def ask(_):
        start.wait()
        return shelf.get_or_make("forest", make, waiting=lambda: waited.append(1))

    with ThreadPoolExecutor(10) as pool:
        results = list(pool.map(ask, range(10)))
    assert len(made) == 1
    assert len(waited) == 9
    assert all(r is results[0] for r in results)


def test_different_models_are_made_side_by_side():
    shelf: Shelf[str] = Shelf(2**30)
    both = threading.Barrier(2, timeout=5)  # broken (an error) if one key had to wait for the other

    def make(key):
        both.wait()
        return key

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda k: shelf.get_or_make(k, lambda: make(k)), ["a", "b"]))
    assert results == ["a", "b"]


def test_when_the_maker_fails_it_gets_the_error_and_a_waiting_session_tries_itself():
    shelf: Shelf[str] = Shelf(2**30)
    calls = []
    first_started = threading.Event()

    def make():
        calls.append(1)
        if len(calls) == 1:
            first_started.set()
            time.sleep(0.2)
            raise ValueError("the training data has one class")
        return "fitted"

    def first():
        return shelf.get_or_make("m", make)

    def second():
        first_started.wait()
        return shelf.get_or_make("m", make)

    with ThreadPoolExecutor(2) as pool:
        failing, waiting = pool.submit(first), pool.submit(second)
        with pytest.raises(ValueError, match="one class"):
            failing.result()
        assert waiting.result() == "fitted"
    assert len(calls) == 2
    assert shelf.get_or_make("m", make) == "fitted" and len(calls) == 2  # kept


class Clock:
    """A clock the test moves."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _planted(value, skip=()) -> int:
    """The size a test plants: the value's ``size`` item."""
    return value["size"]


def test_past_the_byte_budget_the_least_recently_used_go_whatever_their_count():
    shelf: Shelf[dict] = Shelf(100, sizer=_planted)
    shelf.get_or_make("a", lambda: {"size": 40})
    shelf.get_or_make("b", lambda: {"size": 40})
    shelf.get_or_make("a", lambda: {"size": -1})  # a is now the most recent
    shelf.get_or_make("c", lambda: {"size": 30})  # 110 bytes: b goes, though three entries are few
    assert shelf.sizes() == {"a": 40, "c": 30}
    assert shelf.total_bytes == 70
    for key in "defgh":  # many small ones fit where two large ones did not
        shelf.get_or_make(key, lambda: {"size": 5})
    assert len(shelf) == 7 and shelf.total_bytes == 95


def test_one_object_larger_than_the_budget_stays_for_its_session_and_goes_with_the_next():
    shelf: Shelf[dict] = Shelf(100, sizer=_planted)
    shelf.get_or_make("small", lambda: {"size": 10})
    big = shelf.get_or_make("big", lambda: {"size": 500})
    assert big == {"size": 500} and list(shelf.sizes()) == ["big"]
    shelf.get_or_make("next", lambda: {"size": 10})
    assert list(shelf.sizes()) == ["next"]


def test_an_exact_size_given_by_the_caller_is_used_and_never_measured_again():
    clock = Clock()
    shelf: Shelf[bytes] = Shelf(100, sizer=lambda v, skip=(): 1 / 0, clock=clock, remeasure_after=1)
    shelf.get_or_make("pickled", lambda: b"x" * 60, size=len)
    clock.now += 10
    assert shelf.get_or_make("pickled", lambda: b"", size=len) == b"x" * 60
    assert shelf.sizes() == {"pickled": 60}


def test_what_nobody_used_for_the_ttl_goes_and_what_was_used_stays():
    clock = Clock()
    shelf: Shelf[dict] = Shelf(10**6, ttl=60, sizer=_planted, clock=clock)
    shelf.get_or_make("left", lambda: {"size": 1})
    shelf.get_or_make("used", lambda: {"size": 1})
    clock.now += 50
    shelf.get_or_make("used", lambda: {"size": -1})
    clock.now += 20  # "left" unused for 70 s, "used" for 20 s
    assert shelf.clear_expired() == 1
    assert list(shelf.sizes()) == ["used"]


def test_an_idle_server_lets_go_too():
    """No session asks for anything: the sweeper thread drops what expired."""
    shelf: Shelf[dict] = Shelf(10**6, ttl=0.05, sizer=_planted)
    shelf.get_or_make("upload", lambda: {"size": 1})
    shelf.start_sweeper(every=0.02)
    deadline = time.monotonic() + 5
    while "upload" in shelf and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "upload" not in shelf


def test_a_growing_object_is_measured_again_when_used_and_then_counted_against_the_budget():
    clock = Clock()
    shelf: Shelf[dict] = Shelf(100, sizer=_planted, clock=clock, remeasure_after=30)
    shelf.get_or_make("other", lambda: {"size": 40})
    store = shelf.get_or_make("store", lambda: {"size": 10})
    store["size"] = 80  # rows generated since
    clock.now += 5
    shelf.get_or_make("store", lambda: {})
    assert shelf.sizes()["store"] == 10  # measured at most every 30 s
    clock.now += 30
    shelf.get_or_make("store", lambda: {})
    assert shelf.sizes() == {"store": 80}  # 120 bytes: the other one went


def test_sizes_follow_arrays_frames_and_objects_and_count_a_shared_part_once():
    from ui.shelf import approx_size

    array = np.zeros(10_000)
    assert 80_000 <= approx_size(array) < 81_000
    assert approx_size(array[:10]) >= 80_000  # a view holds its whole base
    frame = pd.DataFrame({"text": ["x" * 1000] * 1000, "n": np.arange(1000)})
    assert approx_size(frame) >= 1_000_000
    holder = {"a": array, "b": array, "frame": frame}
    assert approx_size(holder) < approx_size(array) + approx_size(frame) + 5_000
    assert approx_size(holder, skip=[id(frame)]) < 90_000  # another entry's frame is counted there, not here


def test_a_forest_is_measured_near_its_serialised_size():
    import pickle

    from sklearn.ensemble import RandomForestClassifier

    from ui.shelf import approx_size

    rng = np.random.default_rng(0)
    forest = RandomForestClassifier(n_estimators=30, random_state=0).fit(rng.normal(size=(500, 4)), rng.integers(0, 2, 500))
    pickled = len(pickle.dumps(forest))
    assert pickled / 2 < approx_size(forest) < pickled * 2


def test_a_size_that_cannot_be_measured_does_not_fail_the_session():
    clock = Clock()

    def sizer(value, skip=()):
        if value.get("changing"):
            raise RuntimeError("dictionary changed size during iteration")
        return value["size"]

    shelf: Shelf[dict] = Shelf(100, sizer=sizer, clock=clock, remeasure_after=1)
    store = shelf.get_or_make("store", lambda: {"size": 10})
    store["changing"] = True
    clock.now += 5
    assert shelf.get_or_make("store", lambda: {}) is store
    assert shelf.sizes() == {"store": 10}  # the last size it had
