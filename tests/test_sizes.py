"""No file over 700 lines and no function over 80 lines in flex_core and ui (issue 34, "Done when").

A function's length is its ``def`` line to its last line (decorators not counted, nested functions counted in the
function that holds them), as ``ast`` reports it. The test always prints the largest file and function, so a run
shows how close the code is to the limits.
"""

from __future__ import annotations

import ast
from pathlib import Path

import flex_core

ROOT = Path(flex_core.__file__).resolve().parent.parent
FOLDERS = ("flex_core", "ui")
MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 80


def measure(root: Path = ROOT, folders: tuple[str, ...] = FOLDERS) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(lines, file) for every Python file and (lines, ``file:line name``) for every function, largest first."""
    files: list[tuple[int, str]] = []
    functions: list[tuple[int, str]] = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            where = path.relative_to(root).as_posix()
            files.append((len(text.splitlines()), where))
            for node in ast.walk(ast.parse(text, filename=where)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    assert node.end_lineno is not None
                    functions.append((node.end_lineno - node.lineno + 1, f"{where}:{node.lineno} {node.name}"))
    files.sort(key=lambda row: (-row[0], row[1]))
    functions.sort(key=lambda row: (-row[0], row[1]))
    return files, functions


def test_measure_counts_a_function_from_def_to_its_last_line_nested_ones_included(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("@staticmethod\ndef outer():\n    def inner():\n        return 1\n\n    return inner\n")
    (package / "b.py").write_text("x = 1\n")
    files, functions = measure(tmp_path, ("pkg",))
    assert files == [(6, "pkg/a.py"), (1, "pkg/b.py")]
    assert functions == [(5, "pkg/a.py:2 outer"), (2, "pkg/a.py:3 inner")]


def test_no_file_over_700_lines_and_no_function_over_80_lines(capsys):
    files, functions = measure()
    assert files and functions
    with capsys.disabled():
        print(
            f"\nlargest file: {files[0][1]} ({files[0][0]} lines); "
            f"largest function: {functions[0][1]} ({functions[0][0]} lines)"
        )
    too_long = [f"file {where}: {n} lines (limit {MAX_FILE_LINES})" for n, where in files if n > MAX_FILE_LINES]
    too_long += [
        f"function {where}: {n} lines (limit {MAX_FUNCTION_LINES})" for n, where in functions if n > MAX_FUNCTION_LINES
    ]
    assert not too_long, "split these by concern:\n" + "\n".join(too_long)
