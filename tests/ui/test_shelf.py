"""The shelf of fitted models: each key made once however many sessions ask at once, bounded, failures not swallowed."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from ui.shelf import Shelf


def test_ten_sessions_asking_for_one_model_at_once_train_it_once_and_share_it():
    shelf: Shelf[object] = Shelf(4)
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
    shelf: Shelf[str] = Shelf(4)
    both = threading.Barrier(2, timeout=5)  # broken (an error) if one key had to wait for the other

    def make(key):
        both.wait()
        return key

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda k: shelf.get_or_make(k, lambda: make(k)), ["a", "b"]))
    assert results == ["a", "b"]


def test_when_the_maker_fails_it_gets_the_error_and_a_waiting_session_tries_itself():
    shelf: Shelf[str] = Shelf(4)
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


def test_the_shelf_keeps_the_most_recently_used_models():
    shelf: Shelf[str] = Shelf(2)
    for key in ("a", "b"):
        shelf.get_or_make(key, lambda key=key: key)
    shelf.get_or_make("a", lambda: "unused")  # a is now the most recent
    shelf.get_or_make("c", lambda: "c")  # b goes
    assert shelf.get_or_make("a", lambda: "again") == "a"
    assert shelf.get_or_make("b", lambda: "again") == "again"
