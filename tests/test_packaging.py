"""What ``pip install .`` ships: every flex_core package, and the app for ``flex dashboard`` from any folder."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _app_packages() -> set[str]:
    """The app's packages as installed: app_pages/ (a folder of scripts), ui/ and every package inside it."""
    inside_ui = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "ui").rglob("__init__.py")}
    return {"flex_studio_app", "flex_studio_app.app_pages", *(f"flex_studio_app.{name}" for name in inside_ui)}


def test_pyproject_lists_every_flex_core_package_and_every_app_package():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "flex_core").rglob("__init__.py")} | _app_packages()
    listed = set(config["packages"])
    assert listed == on_disk, (
        f"[tool.setuptools] packages in pyproject.toml: add {sorted(on_disk - listed)}, remove {sorted(listed - on_disk)}"
    )
    assert config["package-dir"] == {"flex_studio_app": "."}
    assert not list((REPO / "app_pages").rglob("__init__.py")) and not [p for p in (REPO / "app_pages").iterdir() if p.is_dir()
                                                                     and p.name != "__pycache__"], "app_pages/ holds scripts only"
    assert (REPO / "app.py").is_file() and (REPO / ".streamlit" / "config.toml").is_file()


def _wait_healthy(url: str, process: subprocess.Popen, seconds: float = 120) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, "flex dashboard exited"
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return True
        except OSError:
            time.sleep(0.5)
    return False


@pytest.mark.slow
def test_flex_dashboard_runs_from_another_folder_after_a_plain_install(tmp_path):
    """A non-editable install into a new venv (this environment's packages reused, nothing downloaded), started elsewhere."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # This environment's packages (pip, setuptools, streamlit, numpy, ...) after the new venv's own: a line in a
    # .pth file only extends sys.path, so an editable flex_core installed here is not picked up there.
    Path(purelib, "_reuse_test_environment.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Built from a copy: an in-tree build leaves build/ behind, whose stale modules would go into later wheels.
    source = tmp_path / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "venv", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", ".flex_cache",
        "tests", "benchmarks", "reports", "assets",
    ))
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", str(source)],
        check=True, cwd=elsewhere, env=env, timeout=600,
    )
    shutil.rmtree(source)  # the installed copy must not need the source
    where = subprocess.run(
        [python, "-c", "import flex_core, flex_core.dashboard as d; print(flex_core.__file__); print(d.app_script())"],
        check=True, capture_output=True, text=True, cwd=elsewhere, env=env,
    ).stdout.split()
    assert all(Path(p).is_relative_to(venv) for p in where), f"not the installed copy: {where}"
    licence = subprocess.run(
        [python, "-c", "import importlib.metadata as m; d = m.distribution('flex-studio');"
         "print(d.metadata['License-Expression']); print(any(f.name == 'LICENSE' for f in d.files))"],
        check=True, capture_output=True, text=True, cwd=elsewhere, env=env,
    ).stdout.split()
    assert licence == ["BSD-3-Clause", "True"], f"the wheel's licence metadata or file is missing: {licence}"
    installed = Path(where[1]).parent
    assert installed.name == "flex_studio_app"
    assert (Path(where[0]).parent / "schema" / "result.schema.json").is_file(), "the results' JSON Schema is not shipped"
    app_files = {p.relative_to(REPO) for pattern in ("app.py", "app_pages/*.py", "ui/**/*.py", ".streamlit/config.toml",
                                                     ".streamlit/hosted.toml")
                 for p in REPO.glob(pattern)}
    assert app_files == {p.relative_to(installed) for p in installed.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    # The installed app runs its first page (the global chart on the built-in data) without an exception.
    run_app = (
        "import sys\nfrom streamlit.testing.v1 import AppTest\n"
        "at = AppTest.from_file(sys.argv[1], default_timeout=240).run()\n"
        "assert not at.exception, [e.value for e in at.exception]\n"
        "print(at.title[0].value if at.title else '', len(at.get('plotly_chart')))\n"
    )
    shown = subprocess.run([python, "-c", run_app, where[1]], check=True, capture_output=True, text=True,
                           cwd=elsewhere, env={**env, "FLEX_CACHE_DIR": str(tmp_path / "cache")}, timeout=600).stdout
    assert shown.split()[-1] != "0", f"no chart on the first page: {shown}"

    port = subprocess.run([python, "-c", "import flex_core.dashboard as d; print(d.free_port())"],
                          check=True, capture_output=True, text=True, env=env).stdout.strip()
    process = subprocess.Popen([venv / "bin" / "flex", "dashboard", "--port", port], cwd=elsewhere, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert _wait_healthy(f"http://localhost:{port}", process), "the app did not answer its health check within two minutes"
    finally:
        process.terminate()  # flex dashboard became Streamlit (exec), so this stops the app itself
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
    assert not (Path(where[1]).parent / ".flex_cache").exists(), "the app wrote its cache inside site-packages"


def test_the_licence_and_the_changelog_follow_the_version():
    """A permissive licence is declared and shipped, and the newest released changelog entry is the package's version."""
    import re

    import flex_core

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "BSD-3-Clause" and project["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text().startswith("BSD 3-Clause License")
    released = re.findall(r"^## (\d+\.\d+\.\d+) \(", (REPO / "CHANGELOG.md").read_text(), flags=re.M)
    assert released and released[0] == flex_core.__version__, (
        f"CHANGELOG.md's newest release is {released[:1]}, flex_core is {flex_core.__version__}: add its entry"
    )
