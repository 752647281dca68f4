"""A shelf of objects shared by every session, bounded by memory and by time, each made once per key.

Everything the app keeps for all sessions lives on one :class:`Shelf` (see ``ui/cache.py``): datasets, fitted
models, counterfactual stores, results, SHAP and LIME runs. Three things it guarantees:

- **made once**: sessions that ask for the same key in the same second wait for the one making it (ten sessions
  opening one link used to train the same forest ten times);
- **bounded by memory, not by count**: each object's approximate size is measured (:func:`approx_size`) and the
  least recently used go when the total passes the byte budget. A count does not bound memory: eight datasets
  of 5,000 columns held gigabytes;
- **released when unused**: an object nobody asked for during ``ttl`` seconds goes, even on an idle server (a
  sweeper thread), so a session's upload does not stay in memory after it left.

Kept out of Streamlit's caches on purpose: Streamlit's ``clear_cache`` websocket message empties those for every
user, and any client can send it (see ``ui/hardening.py``).
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
import threading
import time
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
import pandas as pd

T = TypeVar("T")

#: Objects a size walk never enters: code and modules are shared by the whole process, not owned by a value.
_NOT_OWNED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
              types.CodeType, types.FrameType, threading.Thread)
#: A walk stops after this many objects: sizes are estimates for a budget, not an audit.
MAX_WALK = 200_000


def approx_size(value, *, skip: Iterable[int] = ()) -> int:
    """About how many bytes ``value`` holds: arrays by ``nbytes``, pandas objects by ``memory_usage(deep=True)``,
    containers and object attributes walked, each object counted once.

    ``skip``: ids of objects not to count (other shelf entries a value refers to, counted once where they are kept).
    Extension objects without attributes (a tree's nodes, a booster) are measured through ``__getstate__``.
    """
    seen = set(skip)
    visited: list[object] = []  # kept alive: an id is unique only while its object lives (``__getstate__`` makes new ones)
    stack = [value]
    total = 0
    while stack and len(visited) < MAX_WALK:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _NOT_OWNED):
            continue
        seen.add(id(obj))
        visited.append(obj)
        total += _own_size(obj, stack)
    return total


def _own_size(obj, stack: list) -> int:
    """The bytes ``obj`` holds itself; what it refers to is pushed on ``stack`` to be measured in turn."""
    if isinstance(obj, pd.DataFrame | pd.Series):
        return int(obj.memory_usage(deep=True).sum()) if isinstance(obj, pd.DataFrame) else int(obj.memory_usage(deep=True))
    if isinstance(obj, pd.Index):
        return int(obj.memory_usage(deep=True))
    if isinstance(obj, np.ndarray):
        if isinstance(obj.base, np.ndarray):  # a view: its memory is its base array's
            stack.append(obj.base)
            return sys.getsizeof(obj)
        if obj.dtype == object:
            stack.extend(obj.ravel().tolist())
        return int(obj.nbytes)
    if isinstance(obj, str | bytes | bytearray | int | float | complex | bool | memoryview) or obj is None:
        return sys.getsizeof(obj)
    if isinstance(obj, dict):
        stack.extend(obj.keys())
        stack.extend(obj.values())
        return sys.getsizeof(obj)
    if isinstance(obj, list | tuple | set | frozenset):
        stack.extend(obj)
        return sys.getsizeof(obj)
    attributes = getattr(obj, "__dict__", None)
    if attributes is not None:
        stack.append(attributes)
    stack.extend(getattr(obj, name) for name in _slots(type(obj)) if hasattr(obj, name))
    if attributes is None and not _slots(type(obj)):
        try:  # an extension object (a tree's node arrays, a booster's model): what it would pickle
            state = obj.__getstate__()
        except Exception:  # nothing to measure beyond the object itself
            state = None
        if state is not None:
            stack.append(state)
    return sys.getsizeof(obj)


def _slots(cls: type) -> tuple[str, ...]:
    return tuple(name for klass in cls.__mro__ for name in klass.__dict__.get("__slots__", ()) if isinstance(name, str))


def release_freed_memory() -> None:
    """Give freed heap pages back to the system (glibc ``malloc_trim``), so a released dataset lowers the server's
    resident memory, not only the heap's free lists. Nothing on other C libraries."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@dataclass
class _Entry(Generic[T]):
    value: T
    size: int
    used_at: float
    measured_at: float
    fixed: bool  # its size cannot grow (a pickled result): never measured again


class Shelf(Generic[T]):
    """Objects by key within ``budget`` bytes, least recently used first out; unused ones go after ``ttl`` seconds.

    :meth:`get_or_make` makes each key once at a time. A caller that finds another one making its key waits for
    it (``waiting()`` is called first, once, so the page can say so) and takes the result. If the making fails,
    the failure is the maker's: each waiter then tries once itself, so an error is shown to every session that
    asked, not swallowed.

    An object's size is measured when it is put (``sizer``, default :func:`approx_size`, not counting other
    entries it refers to) and again, at most every ``remeasure_after`` seconds, when it is used: a
    counterfactual store grows as rows are generated. The newest object stays even when it alone passes the
    budget (its session is using it); the next one made pushes it out.
    """

    def __init__(self, budget: int, *, ttl: float | None = None, sizer: Callable[..., int] = approx_size,
                 clock: Callable[[], float] = time.monotonic, remeasure_after: float = 30.0,
                 trim_after: int = 64 * 2**20):
        self.budget = int(budget)
        self.ttl = ttl
        self._sizer = sizer
        self._clock = clock
        self._remeasure_after = remeasure_after
        self._trim_after = trim_after
        self._entries: OrderedDict[Hashable, _Entry[T]] = OrderedDict()
        self._in_flight: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()
        self._sweeper: threading.Thread | None = None

    # -- reading ------------------------------------------------------------------------------------
    @property
    def total_bytes(self) -> int:
        with self._lock:
            return sum(e.size for e in self._entries.values())

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def sizes(self) -> dict[Hashable, int]:
        """Each kept key's measured size in bytes, least recently used first."""
        with self._lock:
            return {k: e.size for k, e in self._entries.items()}

    # -- the one way in -------------------------------------------------------------------------------
    def get_or_make(self, key: Hashable, make: Callable[[], T], *, waiting: Callable[[], None] | None = None,
                    size: Callable[[T], int] | None = None) -> T:
        """The object kept for ``key``, or ``make()``'s, kept. ``size``: its exact size (then never measured again)."""
        while True:
            with self._lock:
                self._drop_expired()
                entry = self._take(key)
                done = None if entry is not None else self._in_flight.get(key)
                maker = entry is None and done is None
                if maker:
                    done = self._in_flight[key] = threading.Event()
            if entry is not None:
                break
            assert done is not None
            if maker:
                return self._make(key, make, done, size)
            if waiting is not None:
                waiting()
                waiting = None
            done.wait()
            # Made (then found above) or failed (then this caller makes it): the loop decides.
        if not entry.fixed and self._clock() - entry.measured_at > self._remeasure_after:
            self._remeasure(key, entry)
        return entry.value

    def _take(self, key: Hashable) -> _Entry[T] | None:
        entry = self._entries.get(key)
        if entry is not None:
            entry.used_at = self._clock()
            self._entries.move_to_end(key)
        return entry

    def _make(self, key: Hashable, make: Callable[[], T], done: threading.Event, size: Callable[[T], int] | None) -> T:
        try:
            made = make()
            measured = size(made) if size is not None else self._measure(made)
            now = self._clock()
            with self._lock:
                self._entries[key] = _Entry(made, measured, now, now, fixed=size is not None)
                freed = self._evict_over_budget(keep=key)
            self._after_release(freed)
            return made
        finally:
            with self._lock:
                self._in_flight.pop(key, None)
            done.set()

    def _measure(self, value: T, fallback: int = 0) -> int:
        """``value``'s size without the other entries it refers to; ``fallback`` if the walk fails (an object
        changing while it is walked): a size is an estimate, never a reason to fail the session that asked."""
        with self._lock:
            others = [id(e.value) for e in self._entries.values() if e.value is not value]
        try:
            return int(self._sizer(value, skip=others))
        except Exception:
            return fallback

    def _remeasure(self, key: Hashable, entry: _Entry[T]) -> None:
        measured = self._measure(entry.value, fallback=entry.size)
        with self._lock:
            if self._entries.get(key) is entry:
                entry.size, entry.measured_at = measured, self._clock()
                freed = self._evict_over_budget(keep=key)
            else:
                freed = 0
        self._after_release(freed)

    # -- letting go -----------------------------------------------------------------------------------
    def _evict_over_budget(self, keep: Hashable) -> int:
        """Drop the least recently used entries (never ``keep``) until the total is within the budget; bytes freed."""
        total = sum(e.size for e in self._entries.values())
        freed = 0
        for old in list(self._entries):
            if total <= self.budget:
                break
            if old != keep:
                size = self._entries.pop(old).size
                total -= size
                freed += size
        return freed

    def _drop_expired(self) -> int:
        """Drop entries unused for ``ttl`` seconds (the least recently used come first); bytes freed."""
        if self.ttl is None:
            return 0
        cutoff = self._clock() - self.ttl
        freed = 0
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if entry.used_at > cutoff:
                break
            freed += self._entries.pop(key).size
        return freed

    def _after_release(self, freed: int) -> None:
        if freed >= self._trim_after:
            release_freed_memory()

    def clear_expired(self) -> int:
        """Drop what nobody used for ``ttl`` seconds; returns the bytes released."""
        with self._lock:
            freed = self._drop_expired()
        self._after_release(freed)
        return freed

    def discard(self, key: Hashable) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def start_sweeper(self, every: float) -> None:
        """Drop expired entries every ``every`` seconds in a daemon thread, so an idle server lets go too (once)."""
        with self._lock:
            if self._sweeper is not None:
                return

            def sweep() -> None:
                while True:
                    time.sleep(every)
                    self.clear_expired()

            self._sweeper = threading.Thread(target=sweep, name="flex-shelf-sweeper", daemon=True)
            self._sweeper.start()
