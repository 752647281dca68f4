"""Chunks of factuals spread over a Dask cluster (issue 39): what every chunk needs is sent to each worker once.

:func:`dask_client` finds the ``dask.distributed`` client the caller connected (the CLI's ``--dask``, or the
user's own ``Client``); :func:`on_cluster` runs one function per chunk there and returns the results in chunk
order, so a generator that merges them as it merges its own chunks in one process gives the same result.
A worker that dies mid-run loses its chunks to the scheduler, which runs them again elsewhere (``retries``
more on top of Dask's own ``allowed-failures``); a lost scheduler is one :class:`GenerationError`.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .._errors import ConfigError, GenerationError
from ._set import Progress

#: Further tries of a chunk whose task failed on a worker (a dying worker's chunks are rerun by Dask anyway).
RETRIES = 2
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
def dask_cluster(address: str | None) -> Iterator[object | None]:
    """Connected to the Dask scheduler at ``address`` for the block (:func:`connect_cluster`; None: no cluster)."""
    if address is None:
        yield None
        return
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


def uses_cluster(generator) -> bool:
    """Whether ``generator`` sends its work to the running Dask cluster (``backend="dask"``): the analyses around
    it (the retraining check's refits) then go there too."""
    return getattr(generator, "backend", None) == "dask"


def cluster_threads(client) -> int:
    """The worker threads the cluster has now (at least 1)."""
    return max(1, sum(client.nthreads().values()))


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
    list is the results of the first parts only.
    """
    from distributed import KilledWorker

    client = dask_client()
    try:
        sent = {name: client.scatter(value, broadcast=True, hash=False) for name, value in shared.items()}
        futures = [client.submit(fn, part, **sent, retries=RETRIES, pure=False) for part in parts]
    except (OSError, TimeoutError) as exc:
        raise GenerationError(f"The Dask scheduler could not be reached: {exc}") from None
    results, done, total = [], 0, int(sum(sizes))
    try:
        for future, size in zip(futures, sizes, strict=True):
            if deadline is not None:
                left = deadline - time.perf_counter()
                if left <= 0 and not future.done():
                    break
                try:
                    future.result(timeout=max(left, 0.001))
                except TimeoutError:
                    break
            results.append(future.result())
            done += int(size)
            if progress is not None:
                progress(done, total)
    except (OSError, TimeoutError) as exc:
        raise GenerationError(f"The Dask scheduler was lost after {done} of {total} queries: {exc}") from None
    except KilledWorker as exc:
        raise GenerationError(f"A chunk of factuals failed on every worker it was tried on: {exc}") from None
    finally:
        for future in futures:
            future.release()
    return results
