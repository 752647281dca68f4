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


# -- the boundary between flex_core and everything built on it (issue 34, item 5) ----------------------------------
ROOT = PACKAGE.parent
#: What is built on flex_core and may use only its public modules and names.
OUTSIDE = ("ui", "app_pages", "app.py", "tools", "benchmarks", "examples")


def _python_files(*names: str) -> list[Path]:
    files: list[Path] = []
    for name in names:
        path = ROOT / name
        files.extend([path] if path.suffix == ".py" else sorted(path.rglob("*.py")))
    return files


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None) for every import in ``path``, inside functions too; relative imports resolved."""
    module = _module_name(path).split(".")
    package = module if path.name == "__init__.py" else module[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + (node.module.split(".") if node.module else []))
            found.extend((node.lineno, target, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, None) for alias in node.names)
    return found


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def test_nothing_outside_flex_core_imports_a_private_flex_core_module_or_name():
    offences = []
    files = _python_files(*OUTSIDE)
    assert any(f.name == "cache.py" for f in files) and any(f.parent.name == "app_pages" for f in files)
    for path in files:
        for line, target, name in imports_of(path):
            if target != "flex_core" and not target.startswith("flex_core."):
                continue
            dotted = target if name is None else f"{target}.{name}"
            if _private(dotted):
                offences.append(f"{path.relative_to(ROOT)}:{line} imports {dotted}")
    assert not offences, "private flex_core imports outside flex_core:\n" + "\n".join(offences)


def module_graph() -> dict[str, set[str]]:
    """Module -> the flex_core and ui modules it imports anywhere (a package's ``__init__`` is its own node).

    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module, else ``pkg``; importing
    ``a.b.c`` imports ``a`` and ``a.b`` too (Python runs their ``__init__`` first), except that a package's own
    submodules do not count its ``__init__`` (that would make every package a cycle with its parts).
    """
    files = {_module_name(p): p for p in _python_files("flex_core", "ui")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        edges = graph.setdefault(name, set())
        for _, target, imported in imports_of(path):
            candidates = [f"{target}.{imported}", target] if imported else [target]
            module = next((c for c in candidates if c in files), None)
            if module is None:
                continue
            parts = module.split(".")
            for i in range(1, len(parts) + 1):
                ancestor = ".".join(parts[:i])
                if ancestor in files and ancestor != name and not name.startswith(ancestor + "."):
                    edges.add(ancestor)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for other in sorted(graph.get(node, ())):
            if state.get(other) == "open":
                return path[path.index(other):] + [other]
            if other not in state:
                found = visit(other)
                if found:
                    return found
        path.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_cycle_finder_sees_a_cycle_through_a_function_level_import():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    graph = module_graph()
    assert "flex_core.importance._runs" in graph["flex_core.importance"]  # the graph sees relative imports
    assert "flex_core.counterfactuals._whatif" in graph["flex_core._explainer"]  # and imports inside functions


def test_no_import_cycle_among_the_modules_of_flex_core_and_ui():
    cycle = _cycle(module_graph())
    assert cycle is None, f"import cycle: {' -> '.join(cycle)}"


#: What a page script may import: Streamlit, the app's own ui package, and flex_core's public names.
REPO = PACKAGE.parent
PAGE_IMPORTS = ("streamlit", "ui", "flex_core", "__future__")


def test_page_scripts_hold_widgets_and_layout_only():
    """A page imports Streamlit, ui and flex_core's public modules only (no numpy, pandas or json: what it computes
    lives in ui or flex_core), and defines no function longer than a widget callback (15 lines) but a fragment (a
    part of the page Streamlit reruns alone: layout too)."""
    import ast

    problems = []
    for path in sorted((REPO / "app_pages").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for name in names:
                    if name.split(".")[0] not in PAGE_IMPORTS or any(part.startswith("_") and part != "__future__"
                                                                      for part in name.split(".")):
                        problems.append(f"{path.name}:{node.lineno} imports {name}")
            fragment = isinstance(node, ast.FunctionDef) and any(
                ast.unparse(d).endswith("fragment") for d in node.decorator_list)
            if isinstance(node, ast.FunctionDef) and not fragment and node.end_lineno - node.lineno + 1 > 15:
                problems.append(f"{path.name}:{node.lineno} defines {node.name} "
                                f"({node.end_lineno - node.lineno + 1} lines): move it to ui/")
    assert not problems, "page scripts hold widgets and layout only:\n" + "\n".join(problems)
