"""How the app spreads its counterfactual work, set by the operator where the server starts, never by a user.

``FLEX_THREADS``: without a cluster, the ``tree`` generator reads its chunks of factuals in this many threads of
the server (default: every core, at most :data:`MAX_DEFAULT_THREADS`; 1 keeps each run on one core). The
counterfactuals are the same whatever the number.

``FLEX_DASK_SCHEDULER``: when it is set, every explainer the app builds with the ``tree``, a ``batch`` or a DiCE generator sends its chunks of
factuals to that scheduler (the same counterfactuals as on this machine: how the work is spread is no part of
any key). One client serves every session; a scheduler that does not answer is one error on the page, which
says how to go back to this machine, and nothing is generated until it answers or the setting is removed.
"""

from __future__ import annotations

import os
import threading
import time

import flex_core as fc
from flex_core.limits import LIMITS

#: The environment variable that names the scheduler (e.g. ``tcp://10.0.0.5:8786``).
SETTING = "FLEX_DASK_SCHEDULER"
#: The environment variable that sets the tree generator's threads on the server itself.
THREADS = "FLEX_THREADS"
#: Threads used without ``FLEX_THREADS`` on a machine with more cores (its other sessions need some too).
MAX_DEFAULT_THREADS = 8
_LOCK = threading.Lock()
_CLIENTS: dict[str, object] = {}
#: Seconds a scheduler that did not answer is not tried again (a page builds its analysis twice a run).
RETRY_AFTER = 30.0
_FAILED: dict[str, tuple[float, fc.ConfigError]] = {}


def address() -> str | None:
    """The scheduler the operator set, or None (generate on this machine)."""
    return os.environ.get(SETTING) or None


def threads() -> int:
    """The tree generator's threads on the server: ``FLEX_THREADS``, or every core up to :data:`MAX_DEFAULT_THREADS`."""
    text = os.environ.get(THREADS, "").strip()
    if not text:
        return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_THREADS))
    most = int(LIMITS["n_jobs"].high)
    if not text.isdigit() or not 1 <= int(text) <= most:
        raise fc.ConfigError(f"{THREADS} must be a whole number from 1 to {most} (threads for the tree generator; 1 "
                             f"keeps each run on one core); got {text!r}.")
    return int(text)


def execution(generator: str) -> dict:
    """The generator settings that spread ``generator``'s work: to the operator's cluster, connecting first (a
    :class:`flex_core.ConfigError` when the scheduler does not answer); else the tree generator's threads
    (:func:`threads`); {} for a generator registered elsewhere."""
    where = address()
    dice = generator.startswith("dice-")
    if where is None:
        return {"n_jobs": threads()} if generator == "tree" else {}
    if not (generator == "tree" or generator.startswith("batch") or dice):
        return {}
    with _LOCK:
        client = _CLIENTS.get(where)
        if client is None or getattr(client, "status", "closed") != "running":
            failed = _FAILED.get(where)
            if failed is not None and time.monotonic() - failed[0] < RETRY_AFTER:
                raise failed[1]
            try:
                _CLIENTS[where] = fc.counterfactuals.connect_cluster(where, what=f"{SETTING}; unset it to generate here")
            except fc.ConfigError as exc:
                _FAILED[where] = (time.monotonic(), exc)
                raise
            _FAILED.pop(where, None)
    return {"backend": "dask"} if dice else {"backend": "dask", "n_jobs": -1}


def close_all() -> None:
    """Close every client made here (tests; a server's clients close with its process)."""
    with _LOCK:
        for client in _CLIENTS.values():
            client.close()  # type: ignore[attr-defined]
        _CLIENTS.clear()
        _FAILED.clear()
