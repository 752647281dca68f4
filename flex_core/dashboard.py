"""Starting FLEX Studio, the Streamlit app, from the library (``explainer.dashboard()``) and from ``flex dashboard``.

The app's files (``app.py``, ``app_pages/``, ``ui/`` and ``.streamlit/config.toml``) sit at the top of a
source checkout, where ``streamlit run app.py`` runs them. ``pip install`` ships the same files as the
package ``flex_studio_app`` (see ``[tool.setuptools]`` in pyproject.toml), so the app starts from any
folder once installed. This module finds them either way and builds the ``streamlit run`` command; it
never imports Streamlit itself (the app runs in a child process).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from ._errors import ConfigError
from ._extras import MissingDependencyError, install_hint

__all__ = ["app_script", "config_flags", "dashboard_command", "dashboard_env", "hosted_from_environment", "start_dashboard",
           "run_dashboard", "free_port", "wait_until_ready", "show_inline"]

#: The installed copy of the app's files (the checkout's top level, mapped by pyproject.toml).
APP_PACKAGE = "flex_studio_app"


def _is_app_folder(folder: Path) -> bool:
    return (folder / "app.py").is_file() and (folder / "app_pages").is_dir() and (folder / "ui" / "__init__.py").is_file()


def app_script() -> Path:
    """The app's ``app.py``: the checkout this flex_core runs from, else the installed ``flex_studio_app``.

    The checkout comes first so that a source tree always runs its own app, whatever else is installed.
    """
    checkout = Path(__file__).resolve().parents[1]
    if _is_app_folder(checkout):
        return checkout / "app.py"
    spec = importlib.util.find_spec(APP_PACKAGE)
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        if _is_app_folder(Path(location)):
            return Path(location) / "app.py"
    raise ConfigError(
        "FLEX Studio's app files (app.py, app_pages/, ui/) are not installed beside flex_core; "
        f"reinstall the package ({install_hint('app')}) or run from a source checkout."
    )


def _flag_value(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def hosted_from_environment(environ: Mapping[str, str] | None = None) -> bool:
    """Hosted mode as the app reads it (``FLEX_HOSTED`` 1, true or yes)."""
    value = (os.environ if environ is None else environ).get("FLEX_HOSTED", "")
    return value.strip().lower() in ("1", "true", "yes")


def _settings(path: Path) -> dict[str, dict]:
    if not path.is_file():
        return {}
    return {section: dict(options) for section, options in tomllib.loads(path.read_text(encoding="utf-8")).items()
            if isinstance(options, Mapping)}


def config_flags(app: Path, *, hosted: bool = False) -> list[str]:
    """The app's ``.streamlit/config.toml`` (and, ``hosted``, ``.streamlit/hosted.toml`` over it) as
    ``--section.option=value`` flags, each option once.

    Streamlit reads config.toml from the folder it starts in; the flags carry the same settings (the upload
    limit, XSRF protection, no usage statistics) when it starts anywhere else. hosted.toml is the production
    configuration (loopback address, no error details, the viewer's toolbar, small messages): Streamlit never
    reads it by itself.
    """
    settings = _settings(app.parent / ".streamlit" / "config.toml")
    if hosted:
        for section, options in _settings(app.parent / ".streamlit" / "hosted.toml").items():
            settings.setdefault(section, {}).update(options)
    return [f"--{section}.{option}={_flag_value(value)}" for section, options in settings.items()
            for option, value in options.items()]


def dashboard_command(
    project: str | Path | None = None,
    *,
    port: int | None = None,
    open_browser: bool = False,
    app: Path | None = None,
    python: str | None = None,
    hosted: bool | None = None,
) -> list[str]:
    """The ``python -m streamlit run app.py ...`` command that starts the app (on ``project``, when given).

    ``port`` None lets Streamlit choose (8501, or the next free one). ``open_browser`` False runs headless.
    The project folder is passed as an absolute path, so the app opens it whatever folder it starts in.
    ``hosted`` (default: ``FLEX_HOSTED`` in the environment) adds the production settings of
    ``.streamlit/hosted.toml``.
    """
    app = Path(app) if app is not None else app_script()
    if port is not None and not 1 <= int(port) <= 65535:
        raise ConfigError(f"The port must be between 1 and 65535, not {port}.")
    hosted = hosted_from_environment() if hosted is None else hosted
    command = [python or sys.executable, "-m", "streamlit", "run", str(app), *config_flags(app, hosted=hosted)]
    if not hosted:  # hosted.toml says headless
        command.append(f"--server.headless={_flag_value(not open_browser)}")
    if port is not None:
        command.append(f"--server.port={int(port)}")
    if project is not None:
        command += ["--", "--project", str(Path(project).expanduser().resolve())]
    return command


def dashboard_env(environ: Mapping[str, str] | None = None, *, cwd: Path | None = None,
                  hosted: bool = False) -> dict[str, str]:
    """The app's environment: ``FLEX_CACHE_DIR`` (default ``.flex_cache``) made absolute against ``cwd``;
    ``hosted``: ``FLEX_HOSTED=1`` (uploads only).

    The app would otherwise resolve a relative cache folder against its own folder, which after
    ``pip install`` is inside site-packages.
    """
    env = dict(os.environ if environ is None else environ)
    if hosted:
        env["FLEX_HOSTED"] = "1"
    cache = Path(env.get("FLEX_CACHE_DIR") or ".flex_cache").expanduser()
    env["FLEX_CACHE_DIR"] = str(cache if cache.is_absolute() else (cwd or Path.cwd()) / cache)
    return env


def require_streamlit() -> None:
    """A one-line error naming the extra when Streamlit is not installed (checked without importing it)."""
    if importlib.util.find_spec("streamlit") is None:
        raise MissingDependencyError(f"The dashboard needs Streamlit, which is not installed: {install_hint('app')}.")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_dashboard(project: str | Path | None = None, *, port: int | None = None, open_browser: bool = False,
                    quiet: bool = True) -> subprocess.Popen:
    """Start the app in a child process and return it (it runs until it is terminated)."""
    require_streamlit()
    command = dashboard_command(project, port=port, open_browser=open_browser)
    output = subprocess.DEVNULL if quiet else None
    return subprocess.Popen(command, env=dashboard_env(), stdout=output, stderr=output)


def run_dashboard(project: str | Path | None = None, *, port: int | None = None, open_browser: bool = False,
                  hosted: bool = False) -> int:
    """Run the app in the foreground until it stops (``flex dashboard``); returns Streamlit's exit status.

    ``hosted``: hosted mode and its production settings (also when ``FLEX_HOSTED`` is set).
    On POSIX this process becomes Streamlit (``exec``), so Ctrl-C and a terminate reach the app itself.
    """
    require_streamlit()
    hosted = hosted or hosted_from_environment()
    command = dashboard_command(project, port=port, open_browser=open_browser, hosted=hosted)
    env = dashboard_env(hosted=hosted)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execve(command[0], command, env)
    return subprocess.call(command, env=env)  # pragma: no cover - not POSIX


def wait_until_ready(url: str, process: subprocess.Popen, *, timeout: float = 120.0) -> bool:
    """Wait until the app at ``url`` answers Streamlit's health check (True), or ``timeout`` seconds pass (False).

    A ConfigError when the app's process ends first (a busy port, a broken installation).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ConfigError(f"The app stopped before it answered at {url} (exit status {process.returncode}); "
                              "run `flex dashboard` in a terminal to see why.")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.read() == b"ok":
                    return True
        except OSError:
            time.sleep(0.3)
    return False


def show_inline(url: str, *, height: int = 800) -> bool:
    """Show the running app at ``url`` in a notebook's output (an IFrame through IPython.display); True if shown.

    Without IPython, or outside a notebook's kernel, prints one line saying so and where to open the app instead.
    """
    try:
        from IPython import get_ipython
        from IPython.display import IFrame, display
    except ImportError:
        print(f"inline=True shows the app inside a notebook, and IPython is not installed here: open {url} in a browser.")
        return False
    if get_ipython() is None:
        print(f"inline=True shows the app inside a notebook's output, and this is not a notebook: open {url} in a browser.")
        return False
    display(IFrame(url, width="100%", height=height))
    return True
