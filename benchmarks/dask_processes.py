"""A Dask scheduler and worker processes started apart from the client, on localhost (issue 39's tests and benchmark).

Started with the ``dask`` command beside this Python, as an operator starts them (not a ``LocalCluster`` inside
the client), each in its own process group so that a test can kill a worker and its nanny together.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DASK = Path(sys.executable).with_name("dask")


def _start(args: list[str], log: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([str(DASK), *args], cwd=REPO, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def start_cluster(folder: Path, n_workers: int = 2, *, timeout: float = 120) -> tuple[str, list[subprocess.Popen]]:
    """(the scheduler's address, [scheduler, worker, ...]) once every worker has joined; logs go to ``folder``."""
    from distributed import Client

    file = folder / "scheduler.json"
    processes = [_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file",
                         str(file)], folder / "scheduler.log")]
    try:
        for i in range(n_workers):
            processes.append(_start(["worker", "--scheduler-file", str(file), "--nthreads", "1", "--nworkers", "1",
                                     "--no-dashboard", "--name", f"w{i + 1}", "--host", "127.0.0.1"],
                                    folder / f"w{i + 1}.log"))
        deadline = time.monotonic() + timeout
        while not file.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the scheduler wrote no {file.name} in {timeout:g} s (see {folder}/scheduler.log)")
            time.sleep(0.2)
        with Client(scheduler_file=str(file), timeout="30s") as client:
            client.wait_for_workers(n_workers, timeout=timeout)
            address = client.scheduler.address
    except BaseException:
        stop(processes)
        raise
    return address, processes


def kill(process: subprocess.Popen) -> None:
    """The process and everything it started (a worker's nanny and the worker), at once."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        kill(process)
