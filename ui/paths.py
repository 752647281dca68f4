"""Which server paths the app may read, and hosted mode.

On a shared server a link or a typed path must not make the app read another user's
files or probe the file system, so every server path the app opens (a typed path, a
link's ``loan:PATH`` / ``accidents:PATH`` / ``project:DIR``) passes :func:`confine`
first. The CLI is a local tool and reads any path its user gives; this module is the
app's only.

- ``FLEX_DATA_ROOTS``: the folders the app may read below (separated by ``os.pathsep``).
  Default: ``FLEX_DATA_DIR`` when set, and the folder the app was started in. The
  folder given with ``--project DIR`` at start-up (by the operator, or by
  ``explainer.dashboard()``) is always allowed.
- ``FLEX_HOSTED=1``: uploads only. No path inputs, no project folders from the server,
  and a link that names a path is refused.

Paths are resolved (``..``, symlinks) before the check, and a refusal names neither the
path nor anything read from it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import flex_core as fc

OUTSIDE = (
    "That location is outside the folders this server may read. Upload the file instead, or ask the "
    "administrator to add its folder to FLEX_DATA_ROOTS."
)
HOSTED = "This server reads uploaded files only: upload the file instead of naming a path."


def hosted() -> bool:
    """Hosted mode (``FLEX_HOSTED=1``): uploads only."""
    return os.environ.get("FLEX_HOSTED", "").strip().lower() in ("1", "true", "yes")


def startup_project() -> Path | None:
    """The folder of ``streamlit run app.py -- --project DIR``, if any (the operator chose it)."""
    from ui.state import project_argument

    project = project_argument(sys.argv[1:])
    return Path(project).expanduser().resolve() if project else None


def allowed_roots() -> list[Path]:
    """The folders below which the app may read a server path."""
    configured = os.environ.get("FLEX_DATA_ROOTS", "")
    if configured.strip():
        roots = [Path(p).expanduser() for p in configured.split(os.pathsep) if p.strip()]
    else:
        roots = [Path.cwd()]
        if os.environ.get("FLEX_DATA_DIR"):
            roots.append(Path(os.environ["FLEX_DATA_DIR"]).expanduser())
    project = startup_project()
    if project is not None:
        roots.append(project)
    return [root.resolve() for root in roots]


def confine(path: str | os.PathLike) -> Path:
    """``path`` resolved, when the app may read it; else a ConfigError that does not echo it."""
    project = startup_project()
    resolved = Path(path).expanduser().resolve()
    if hosted() and resolved != project:
        raise fc.ConfigError(HOSTED)
    if not any(resolved == root or resolved.is_relative_to(root) for root in allowed_roots()):
        raise fc.ConfigError(OUTSIDE)
    return resolved
