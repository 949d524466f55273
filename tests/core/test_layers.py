"""The layers hold: the core imports only itself, the shared layer only the core and itself,
and a plugin only the core, the shared layer and its own package (docs/architecture.md).

Packages and their folders are read from pyproject.toml, so a new plugin is checked the
day it is added. Every import counts, those inside functions included.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORE, SHARED = "spanaug_core", "spanaug_shared"


def package_dirs(pyproject: Path) -> dict[str, Path]:
    """Each package of the distribution and its folder."""
    table = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    return {package: pyproject.parent / folder for package, folder in table.items()}


def allowed(package: str) -> set[str]:
    """The packages of ours that ``package`` may import."""
    if package == CORE:
        return {CORE}
    if package == SHARED:
        return {CORE, SHARED}
    return {CORE, SHARED, package}


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in a source file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def violations(pyproject: Path) -> list[str]:
    """``file:line: A imports B`` for every import that crosses the layers."""
    dirs = package_dirs(pyproject)
    ours = set(dirs)
    problems = []
    for package, folder in sorted(dirs.items()):
        for path in sorted(folder.rglob("*.py")):
            for line, name in imported(path):
                if name in ours and name not in allowed(package):
                    problems.append(f"{path.relative_to(pyproject.parent)}:{line}: {package} imports {name}")
    return problems


def test_no_import_crosses_the_layers() -> None:
    problems = violations(REPO / "pyproject.toml")
    assert not problems, "move what two plugins share into spanaug_shared:\n" + "\n".join(problems)


def test_the_check_finds_a_plugin_importing_another(tmp_path: Path) -> None:
    for folder, source in {
        "core": "from spanaug_core.types import Span\n",
        "shared": "import spanaug_core\n",
        "plugins/a": "def f():\n    from spanaug_b.x import y\n",
        "plugins/b": "from spanaug_shared import encoder\n",
    }.items():
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "m.py").write_text(source)
    (tmp_path / "core" / "up.py").write_text("import spanaug_shared.records\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\nspanaug_core = "core"\nspanaug_shared = "shared"\n'
        'spanaug_a = "plugins/a"\nspanaug_b = "plugins/b"\n'
    )
    found = violations(tmp_path / "pyproject.toml")
    assert found == ["plugins/a/m.py:2: spanaug_a imports spanaug_b", "core/up.py:1: spanaug_core imports spanaug_shared"]


def core_imports(folder: Path, package: str = CORE) -> dict[str, set[str]]:
    """Which of the package's modules each of its modules imports, wherever the import stands.

    Type-only imports (under ``TYPE_CHECKING``), imports inside functions and
    ``importlib.import_module("<package>.x")`` all count: each is a module that knows another.
    ``from <package> import x`` is the module ``x`` when there is one, else the package itself.
    """
    modules = {package if path.stem == "__init__" else f"{package}.{path.stem}": path for path in sorted(folder.glob("*.py"))}

    def target(name: str) -> str | None:
        return name if name in modules else None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        found: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found |= {target(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package itself
                    base = f"{package}.{base}".rstrip(".")
                if base == package:
                    found |= {target(f"{package}.{alias.name}") or package for alias in node.names}
                else:
                    found.add(target(base))
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module":
                if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    found.add(target(node.args[0].value))
        graph[module] = {name for name in found if name is not None and name != module}
    return graph


def a_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of the graph as ``[a, b, ..., a]``; empty when there is none."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str]:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return []
        path.append(module)
        for other in sorted(graph.get(module, ())):
            if cycle := visit(other):
                return cycle
        path.pop()
        done.add(module)
        return []

    for module in sorted(graph):
        if cycle := visit(module):
            return cycle
    return []


def test_the_core_import_graph_has_no_cycle() -> None:
    cycle = a_cycle(core_imports(REPO / CORE))
    assert not cycle, "the core's modules import each other in a circle: " + " -> ".join(cycle)


def test_the_graph_counts_type_only_deferred_and_package_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pkg.a import A\n")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n")
    (pkg / "b.py").write_text("def f():\n    from pkg import c\n")
    (pkg / "c.py").write_text("import importlib\nimportlib.import_module('pkg.d')\n")
    (pkg / "d.py").write_text("from pkg import version\n")
    graph = core_imports(pkg, "pkg")
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.c"}, "pkg.c": {"pkg.d"}, "pkg.d": {"pkg"}}
    assert a_cycle(graph) == ["pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d", "pkg"]
    (pkg / "d.py").write_text("VERSION = 1\n")
    assert a_cycle(core_imports(pkg, "pkg")) == []
