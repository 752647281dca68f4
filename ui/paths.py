"""Which server paths the app may read, and hosted mode.

On a shared server a link or a typed path must not make the app read another user's
files or probe the file system, so every server path the app opens (a typed path, a
link's ``loan:PATH`` / ``accidents:PATH`` / ``project:DIR``) passes :func:`confine`
first. The CLI is a local tool and reads any path its user gives; this module is the
app's only.

- ``FLEX_DATA_ROOTS``: the folders the app may read below (separated by ``os.pathsep``).
  Default: ``FLEX_DATA_DIR`` when set, else none. The folder the app was started in is
  not one (it holds ``.streamlit/secrets.toml``, ``.git`` and the counterfactual cache)
  unless it is named. The folder given with ``--project DIR`` at start-up (by the
  operator, or by ``explainer.dashboard()``) is always allowed.
- ``FLEX_HOSTED=1``: uploads only. No path inputs, no project folders from the server,
  and a link that names a path is refused.

Paths are resolved (``..``, symlinks) before the check. Every path that cannot be read
gets the one message :data:`OUTSIDE`, whatever the reason: outside the allowed folders,
missing, not a regular file (a folder, a FIFO, a device) or not a folder for a project,
unreadable, a symlink loop, a name too long or holding a NUL byte. One message for all,
so a refusal says nothing about what lies on the server, and it names neither the path
nor anything read from it.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path

import flex_core as fc

OUTSIDE = (
    "That location is outside the folders this server may read, or holds nothing this app can open there. "
    "Upload the file instead, or ask the administrator to add its folder to FLEX_DATA_ROOTS."
)
HOSTED = "This server reads uploaded files only: upload the file instead of naming a path."


def hosted() -> bool:
    """Hosted mode (``FLEX_HOSTED=1``): uploads only."""
    return os.environ.get("FLEX_HOSTED", "").strip().lower() in ("1", "true", "yes")


def project_argument(argv: list[str]) -> str | None:
    """DIR from ``streamlit run app.py -- --project DIR`` (other arguments are not the app's business)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--project")
    known, _ = parser.parse_known_args(argv)
    return known.project


def startup_project() -> Path | None:
    """The folder of ``streamlit run app.py -- --project DIR``, if any (the operator chose it)."""
    project = project_argument(sys.argv[1:])
    return Path(project).expanduser().resolve() if project else None


def allowed_roots() -> list[Path]:
    """The folders below which the app may read a server path."""
    configured = os.environ.get("FLEX_DATA_ROOTS", "")
    if configured.strip():
        roots = [Path(p).expanduser() for p in configured.split(os.pathsep) if p.strip()]
    elif os.environ.get("FLEX_DATA_DIR", "").strip():
        roots = [Path(os.environ["FLEX_DATA_DIR"]).expanduser()]
    else:
        roots = []
    project = startup_project()
    if project is not None:
        roots.append(project)
    return [root.resolve() for root in roots]


def _readable(path: Path, *, folder: bool) -> bool:
    """Whether ``path`` (resolved) is a folder / a regular file the app can open (a FIFO would block a read)."""
    mode = path.stat().st_mode
    if folder:
        return stat.S_ISDIR(mode) and os.access(path, os.R_OK | os.X_OK)
    return stat.S_ISREG(mode) and os.access(path, os.R_OK)


def confine(path: str | os.PathLike, *, folder: bool = False) -> Path:
    """``path`` resolved, when the app may read it; else a ConfigError that does not echo it.

    ``folder``: a project folder is asked for, else a file. In hosted mode only the start-up project
    is allowed (:data:`HOSTED`); otherwise whatever the app cannot open gets :data:`OUTSIDE`.
    """
    project = startup_project()
    try:
        text = os.fspath(path)
        if "\0" in text:
            raise ValueError("NUL")
        resolved = Path(text).expanduser().resolve(strict=True)
        if hosted() and resolved != project:
            raise fc.ConfigError(HOSTED)
        inside = any(resolved == root or resolved.is_relative_to(root) for root in allowed_roots())
        if not (inside and _readable(resolved, folder=folder)):
            raise fc.ConfigError(OUTSIDE)
    except (OSError, RuntimeError, ValueError, TypeError):  # missing, a loop, a name too long, a NUL byte
        raise fc.ConfigError(HOSTED if hosted() else OUTSIDE) from None
    return resolved
