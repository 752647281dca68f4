"""Run ``streamlit run app.py`` on a free loopback port for the browser test and the screenshots."""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from flex_core.dashboard import config_flags, hosted_from_environment

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # one renderer for the app's tabs: a new tab beside another on the app cost 3.7-6.4 s of CPU against 6.7-8.3 s
    # (measured 2026-11-29, Glossary, Thresholds and Global on loan)
    "--process-per-site",
]
#: The tests' Chromium: :data:`CHROMIUM_ARGS` and less CPU per page, for drawing that a test only reads. No compositor
#: threads for animations and scrolling, no deferred image decoding, the GPU service inside the browser process, and
#: V8 without its optimizing compiler (a test's page lives seconds, too short to repay it). Two pages on the built-in
#: data cost 11.6-13.7 s of Chromium's CPU against 13.7-18.3 s (three alternating launches each, twice, 2026-11-29).
#: The benchmarks and screenshots keep :data:`CHROMIUM_ARGS`: they time or show what a person's browser does.
CHROMIUM_TEST_ARGS = [
    *CHROMIUM_ARGS,
    "--disable-threaded-animation", "--disable-threaded-scrolling", "--disable-checker-imaging", "--in-process-gpu",
    "--js-flags=--no-opt",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _memory_cap(limit: int):
    """A ``preexec_fn`` capping the child's address space at ``limit`` bytes (RLIMIT_AS): past it, allocations fail
    (Python raises MemoryError) instead of the machine swapping or the kernel killing something else."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return cap


@contextlib.contextmanager
def app_server(*, env: dict | None = None, port: int | None = None, timeout: float = 60.0, cpus: set[int] | None = None,
               memory_limit: int | None = None):
    """Yield ``(base URL, server process)`` while ``streamlit run app.py`` runs; always terminate it.

    ``port`` fixed: a restarted server answers the links the previous one wrote. The server's output
    goes to a temporary file, not a pipe: nobody reads a pipe while the server runs, and a long run
    (the session benchmark) would fill it and block the server. ``cpus``: the only cores the server
    may run on (Linux), for measuring it apart from browsers on the same machine. With ``FLEX_HOSTED=1`` in
    ``env`` the server runs with the production settings (``.streamlit/hosted.toml``), as ``flex dashboard
    --hosted`` does. ``memory_limit``: the server's address space in bytes (RLIMIT_AS).
    """
    port = port or free_port()
    environment = {**os.environ, **(env or {})}
    pinned = ["taskset", "--cpu-list", ",".join(map(str, sorted(cpus)))] if cpus else []
    hosted = config_flags(REPO / "app.py", hosted=True) if hosted_from_environment(environment) else []
    command = [
        *pinned,
        sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"), *hosted,
        "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false",
    ]
    preexec = _memory_cap(memory_limit) if memory_limit else None
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, cwd=REPO, env=environment, stdout=log, stderr=subprocess.STDOUT,
                                   preexec_fn=preexec)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"streamlit exited early: {log.read().decode(errors='replace')[-2000:]}")
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("streamlit did not answer on /_stcore/health in time")
                time.sleep(0.3)
            yield url, process
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextlib.contextmanager
def running_app(*, env: dict | None = None, timeout: float = 60.0):
    """Yield the app's base URL while a streamlit server runs (see :func:`app_server`)."""
    with app_server(env=env, timeout=timeout) as (url, _):
        yield url
