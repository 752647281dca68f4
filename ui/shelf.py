"""A bounded shelf of objects that cost seconds to make, shared by every session, each made once per key.

Fitted models live here rather than in ``st.cache_resource`` because training draws a progress bar, which a
cached function may not do. Without the in-flight record, sessions that asked for the same model in the same
second each trained it: ten sessions opening one link trained the same forest ten times, and every first
view waited for all ten.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class Shelf(Generic[T]):
    """At most ``capacity`` objects, most recently used last; :meth:`get_or_make` makes each key once at a time.

    A caller that finds another one making its key waits for it (``waiting()`` is called first, once, so the
    page can say so) and takes the result. If the making fails, the failure is the maker's: each waiter then
    tries once itself, so an error is shown to every session that asked, not swallowed.
    """

    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self._objects: OrderedDict[Hashable, T] = OrderedDict()
        self._in_flight: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()

    def get_or_make(self, key: Hashable, make: Callable[[], T], *, waiting: Callable[[], None] | None = None) -> T:
        while True:
            with self._lock:
                if key in self._objects:
                    self._objects.move_to_end(key)
                    return self._objects[key]
                done = self._in_flight.get(key)
                if done is None:
                    done = self._in_flight[key] = threading.Event()
                    break  # this caller makes it
            if waiting is not None:
                waiting()
                waiting = None
            done.wait()
            with self._lock:
                if key in self._objects:
                    self._objects.move_to_end(key)
                    return self._objects[key]
            # The maker failed: try once ourselves (the loop registers this caller as the maker).
        try:
            made = make()
            with self._lock:
                self._objects[key] = made
                while len(self._objects) > self.capacity:
                    self._objects.popitem(last=False)
            return made
        finally:
            with self._lock:
                self._in_flight.pop(key, None)
            done.set()
