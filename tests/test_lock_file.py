"""requirements-server.txt, the hosted server's lock file: every package pinned with == and its hashes, no test or lint
tool, and the same versions as requirements.txt wherever both name a package."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: What CI and developers need but a server must not install (issue 31, finding 11).
TEST_TOOLS = {"pytest", "pytest-xdist", "execnet", "playwright", "kaleido", "choreographer", "hypothesis", "ruff", "mypy", "pip-tools", "pip-audit"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
HASH = re.compile(r"--hash=sha256:[0-9a-f]{64}")


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _entries(path: Path) -> list[str]:
    """The file's requirements, each with its continuation lines joined; comments and blank lines left out."""
    joined = re.sub(r"\\\n", " ", path.read_text(encoding="utf-8"))
    return [line.split(" #")[0].strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _pins(path: Path) -> dict[str, str]:
    return {_name(m[1]): m[2] for entry in _entries(path) if (m := PIN.match(entry))}


def test_every_package_of_the_lock_file_is_pinned_with_its_hashes():
    entries = _entries(REPO / "requirements-server.txt")
    assert len(entries) > 30  # the whole tree, not only the packages named in requirements-server.in
    for entry in entries:
        assert PIN.match(entry), f"not pinned with ==: {entry[:80]}"
        assert HASH.search(entry), f"no sha256 hash: {entry[:80]}"
        assert not entry.startswith(("-e", "--", "git+", "http")), entry[:80]


def test_the_lock_file_holds_no_test_or_lint_tool():
    for path in (REPO / "requirements-server.txt", REPO / "requirements-server.in"):
        assert not TEST_TOOLS & set(_pins(path)), path.name


def test_the_lock_file_agrees_with_requirements_txt_and_its_source():
    locked, wanted, developer = (_pins(REPO / name) for name in
                                 ("requirements-server.txt", "requirements-server.in", "requirements.txt"))
    assert wanted and all(locked.get(name) == version for name, version in wanted.items()), "regenerate the lock file"
    assert all(developer.get(name) == version for name, version in wanted.items()), "requirements-server.in differs"
    differing = {name: (version, developer[name]) for name, version in locked.items()
                 if name in developer and developer[name] != version}
    assert differing == {}
