"""docs/reliability.md names the tests behind its promises: every test file, test function and
refusal case it names exists, so a renamed or deleted test cannot leave a promise unbacked."""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reliability.md"
# `tests/x/test_y.py`, `tests/x/test_y.py::test_z`, or a bare `test_z` of the file named last.
NAMED = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`|`(test_\w+)`")
CASE = re.compile(r"`([a-z0-9*]+(?:-[a-z0-9*]+)+)`")


def _functions(path: Path) -> set[str]:
    return {node.name for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.FunctionDef)}


def test_every_test_the_page_names_exists() -> None:
    current, named = None, 0
    for path, function, bare in NAMED.findall(DOC.read_text()):
        if path:
            current = ROOT / path
            assert current.is_file(), f"docs/reliability.md names {path}, which does not exist"
        function = function or bare
        if function:
            assert current is not None, f"docs/reliability.md names {function} before any test file"
            assert function in _functions(current), f"docs/reliability.md names {function}, not a test of {current.relative_to(ROOT)}"
        named += 1
    assert named >= 15


def test_every_refusal_case_the_page_names_is_a_case_of_the_refusal_test() -> None:
    spec = importlib.util.spec_from_file_location("refusals", ROOT / "tests" / "core" / "test_refusals.py")
    assert spec is not None and spec.loader is not None
    refusals = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(refusals)
    listed = DOC.read_text().split("**Bad records are refused", 1)[1].split("**Where a reader repairs", 1)[0]
    patterns = CASE.findall(listed)
    assert len(patterns) >= 20
    for pattern in patterns:
        assert fnmatch.filter(refusals.CASES, pattern), f"docs/reliability.md names the case {pattern}; tests/core/test_refusals.py has none"
