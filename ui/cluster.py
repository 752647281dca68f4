"""The operator's Dask cluster: ``FLEX_DASK_SCHEDULER`` set where the server starts, never chosen by a user.

When it is set, every explainer the app builds with the ``tree``, a ``batch`` or a DiCE generator sends its chunks of
factuals to that scheduler (the same counterfactuals as on this machine: how the work is spread is no part of
any key). One client serves every session; a scheduler that does not answer is one error on the page, which
says how to go back to this machine, and nothing is generated until it answers or the setting is removed.
"""

from __future__ import annotations

import os
import threading
import time

import flex_core as fc

#: The environment variable that names the scheduler (e.g. ``tcp://10.0.0.5:8786``).
SETTING = "FLEX_DASK_SCHEDULER"
_LOCK = threading.Lock()
_CLIENTS: dict[str, object] = {}
#: Seconds a scheduler that did not answer is not tried again (a page builds its analysis twice a run).
RETRY_AFTER = 30.0
_FAILED: dict[str, tuple[float, fc.ConfigError]] = {}


def address() -> str | None:
    """The scheduler the operator set, or None (generate on this machine)."""
    return os.environ.get(SETTING) or None


def execution(generator: str) -> dict:
    """The generator settings that send ``generator``'s work to the operator's cluster ({} without one, or for a
    generator registered elsewhere), connecting first: a :class:`flex_core.ConfigError` when the scheduler does not
    answer."""
    where = address()
    dice = generator.startswith("dice-")
    if where is None or not (generator == "tree" or generator.startswith("batch") or dice):
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
