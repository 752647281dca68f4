"""Chunks of factuals spread over a Dask cluster (issue 39): what every chunk needs is sent to each worker once.

:func:`dask_client` finds the ``dask.distributed`` client the caller connected (the CLI's ``--dask``, or the
user's own ``Client``); :func:`on_cluster` runs one function per chunk there and returns the results in chunk
order, so a generator that merges them as it merges its own chunks in one process gives the same result.
A worker that dies mid-run loses its chunks to the scheduler, which runs them again elsewhere (``retries``
more on top of Dask's own ``allowed-failures``), and what every chunk needs is sent again when the worker took it
with it; a lost scheduler is one :class:`GenerationError` (the store keeps the chunks it had written:
:meth:`~._store.CounterfactualStore.chunks`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError, ThreadPoolExecutor
from typing import Any

from .._errors import ConfigError, GenerationError
from ._set import Progress

#: Further tries of a chunk whose task failed on a worker (a dying worker's chunks are rerun by Dask anyway).
RETRIES = 2
#: Times :func:`on_cluster` sends its shared data again after a worker took it with it (dask/distributed#3149).
RESENDS = 2
#: The fewest queries in a chunk sent to a worker: smaller ones cost more in scheduling than they save.
MIN_CHUNK = 16
#: Chunks per worker thread: enough that a slow or lost worker's share is taken up by the others.
CHUNKS_PER_THREAD = 4


#: Seconds to wait for a scheduler to answer before saying it did not.
CONNECT_TIMEOUT = 10


def connect_cluster(address: str, *, timeout: float | None = None, what: str = "--dask"):
    """A ``dask.distributed`` client of the scheduler at ``address`` (``""``: ``DASK_SCHEDULER_ADDRESS``), made the
    default one, so the tree and batch generators with ``backend="dask"`` send their chunks there. A scheduler that
    does not answer within ``timeout`` seconds (default :data:`CONNECT_TIMEOUT`) is a :class:`ConfigError` naming
    ``what`` set the address."""
    address = address or os.environ.get("DASK_SCHEDULER_ADDRESS", "")
    if not address:
        raise ConfigError(f"{what} needs the scheduler's address, e.g. tcp://10.0.0.5:8786 (or DASK_SCHEDULER_ADDRESS).")
    from distributed import Client

    try:
        return Client(address, timeout=f"{CONNECT_TIMEOUT if timeout is None else timeout}s", set_as_default=True)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(f"No Dask scheduler answered at {address} ({what}): {exc}") from None


@contextlib.contextmanager
def dask_cluster(address: str | None, *, quiet: bool = False) -> Iterator[object | None]:
    """Connected to the Dask scheduler at ``address`` for the block (:func:`connect_cluster`; None: no cluster).

    ``quiet``: ``distributed``'s own log lines (a lost scheduler's tracebacks, which its client's thread may still
    write after the block) are not shown for the rest of the process, so a command line's one ``error:`` line says
    what happened.
    """
    if address is None:
        yield None
        return
    if quiet:
        import distributed  # noqa: F401 - its import sets its loggers' levels: silenced after it
        for name in ["distributed", *logging.root.manager.loggerDict]:
            if name == "distributed" or name.startswith("distributed."):
                logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    client = connect_cluster(address)
    try:
        yield client
    finally:
        client.close()


def dask_client():
    """The running ``dask.distributed`` client, or a :class:`ConfigError` saying how to start one."""
    try:
        from dask.distributed import get_client
    except ImportError:  # pragma: no cover - distributed is in requirements.txt
        raise ConfigError("backend='dask' needs the 'distributed' package (pip install distributed).") from None
    try:
        return get_client()
    except ValueError:
        raise ConfigError(
            "backend='dask' needs a running dask.distributed Client: create one first, "
            "e.g. Client(LocalCluster()) or Client('scheduler-address:8786')."
        ) from None


#: What a call to a scheduler that is gone raises (a closed connection, no answer, futures it cancelled).
LOST = (OSError, TimeoutError, CancelledError)


def uses_cluster(generator) -> bool:
    """Whether ``generator`` sends its work to the running Dask cluster (``backend="dask"``): the analyses around
    it (the retraining check's refits) then go there too."""
    return getattr(generator, "backend", None) == "dask"


def cluster_threads(client) -> int:
    """The worker threads the cluster has now (at least 1); a lost scheduler is a :class:`GenerationError`."""
    try:
        return max(1, sum(client.nthreads().values()))
    except LOST as exc:
        raise GenerationError(scheduler_lost(client, 0, 0, exc)) from None


def chunk_bounds(n_queries: int, threads: int, largest: int) -> list[tuple[int, int]]:
    """(start, stop) of each chunk: about :data:`CHUNKS_PER_THREAD` per thread, none under :data:`MIN_CHUNK`
    queries (unless there are fewer) or over ``largest``."""
    size = min(largest, max(MIN_CHUNK, math.ceil(n_queries / (CHUNKS_PER_THREAD * max(1, threads)))))
    return [(start, min(start + size, n_queries)) for start in range(0, n_queries, size)]


def on_cluster(fn: Callable[..., Any], parts: Sequence[Any], shared: Mapping[str, Any], *, sizes: Sequence[int],
               progress: Progress | None = None, deadline: float | None = None) -> list[Any]:
    """``[fn(part, **shared) for part in parts]`` on the cluster, in order; ``shared`` is sent to every worker once.

    ``sizes`` counts the queries of each part, for ``progress(done, total)`` as parts come back in order.
    ``deadline`` (a ``time.perf_counter()`` value): the parts not done by then are cancelled and left out, so the
    list is the results of the first parts only. A worker that dies can take ``shared`` with it although it was
    sent to every worker (dask/distributed#3149: the parts waiting on it are cancelled while the scheduler runs
    on); then ``shared`` is sent again and the parts not yet back are submitted again, up to :data:`RESENDS` times.
    """
    from distributed import KilledWorker

    client = dask_client()
    total = int(sum(sizes))
    results: list[Any] = []
    for attempt in range(RESENDS + 1):
        left = len(results)
        try:
            sent = {name: client.scatter(value, broadcast=True, hash=False) for name, value in shared.items()}
            futures = [client.submit(fn, part, **sent, retries=RETRIES, pure=False) for part in parts[left:]]
        except LOST as exc:
            raise GenerationError(scheduler_lost(client, int(sum(sizes[:left])), total, exc)) from None
        try:
            _collect(futures, sizes, results, total, progress, deadline)
            return results
        except LOST as exc:
            if attempt < RESENDS and _data_lost(client, exc):
                logging.getLogger(__name__).warning("Data sent to the workers was lost with a worker; sending it again.")
                continue
            raise GenerationError(scheduler_lost(client, int(sum(sizes[:len(results)])), total, exc)) from None
        except KilledWorker as exc:
            raise GenerationError(f"A chunk of factuals failed on every worker it was tried on: {exc}") from None
        finally:
            for future in futures:
                future.release()
    return results  # not reached: the last attempt returns or raises


def _collect(futures, sizes: Sequence[int], results: list, total: int, progress, deadline) -> None:
    """The futures' results appended to ``results`` in order (the parts before them are already there); stops at the
    first part not done by ``deadline``."""
    done = int(sum(sizes[:len(results)]))
    for future in futures:
        if deadline is not None:
            left = deadline - time.perf_counter()
            if left <= 0 and not future.done():
                return
            try:
                future.result(timeout=max(left, 0.001))
            except TimeoutError:
                return
        results.append(future.result())
        done += int(sizes[len(results) - 1])
        if progress is not None:
            progress(done, total)


def _data_lost(client, exc: BaseException) -> bool:
    """Whether ``exc`` cancelled a part while the client is still connected: data it needed went with a worker (the
    scheduler says so without a reason). A lost scheduler sets the client connecting before it cancels every future
    with ``scheduler-connection-lost``."""
    return (isinstance(exc, CancelledError) and getattr(exc, "reason", None) != "scheduler-connection-lost"
            and getattr(client, "status", None) == "running")


def in_threads(fn: Callable[[Any], Any], parts: Iterable[Any], workers: int, *,
               deadline: float | None = None) -> Iterator[Any]:
    """``fn(part)`` for each part in ``workers`` threads of this process, yielded in the parts' order.

    For compiled work that releases the GIL (the tree form's walks and searches): the parts share memory, nothing
    is copied. ``deadline`` (a ``time.perf_counter()`` value): the first part not started by then ends the run, and
    it and every later one are left out (a later one already started too), so what is yielded is the results of
    the first parts only, as with :func:`on_cluster`.
    """
    skipped = object()

    def run(part):
        if deadline is not None and time.perf_counter() >= deadline:
            return skipped
        return fn(part)

    with ThreadPoolExecutor(max_workers=max(1, int(workers)), thread_name_prefix="flex") as pool:
        futures = [pool.submit(run, part) for part in parts]
        try:
            for future in futures:
                out = future.result()
                if out is skipped:
                    break
                yield out
        finally:
            for future in futures:
                future.cancel()


def scheduler_lost(client, done: int, total: int, exc: BaseException) -> str:
    """The message for a scheduler lost after ``done`` of ``total`` queries of a call (the store adds what it kept)."""
    address = getattr(getattr(client, "scheduler", None), "address", None) or "its address"
    return (f"The Dask scheduler at {address} was lost after {done} of {total} queries of this call "
            f"({type(exc).__name__}).")
