"""flex_core's parts import each other in one direction: no cycle, not even through an import inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import flex_core

PACKAGE = Path(flex_core.__file__).resolve().parent


def _unit(module: list[str]) -> str | None:
    """The top-level module or subpackage ``flex_core.<unit>`` a dotted module lies in (None outside or at the root)."""
    if len(module) < 2 or module[0] != "flex_core":
        return None
    unit = module[1]
    return unit if (PACKAGE / unit).is_dir() or (PACKAGE / f"{unit}.py").is_file() else None


def import_graph() -> dict[str, set[str]]:
    """Unit -> the other units its files import anywhere (at module level or inside functions)."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["flex_core", *path.relative_to(PACKAGE).with_suffix("").parts]
        module = parts[:-1] if parts[-1] == "__init__" else parts
        package = module if path.name == "__init__.py" else module[:-1]
        own = _unit(module)
        if own is None:
            continue  # flex_core/__init__.py: the lazy loader of the public names
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                target = base + (node.module.split(".") if node.module else [])
                targets = [target + [alias.name] for alias in node.names] if target == ["flex_core"] else [target]
            elif isinstance(node, ast.Import):
                targets = [alias.name.split(".") for alias in node.names]
            else:
                continue
            for target in targets:
                unit = _unit(target)
                if unit is not None and unit != own:
                    graph.setdefault(own, set()).add(unit)
    return graph


def test_no_import_cycle_between_the_parts_of_flex_core():
    graph = import_graph()
    assert "importance" in graph["compare"]  # the graph sees imports at all
    assert "importance" not in graph.get("_results", set()), "results must not import importance (importance builds on them)"
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(unit: str) -> None:
        state[unit] = "open"
        path.append(unit)
        for other in sorted(graph.get(unit, ())):
            assert state.get(other) != "open", f"import cycle: {' -> '.join(path[path.index(other):] + [other])}"
            if other not in state:
                visit(other)
        path.pop()
        state[unit] = "done"

    for unit in sorted(graph):
        if unit not in state:
            visit(unit)
