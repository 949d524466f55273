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
