"""The Python code in docs/python-api.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

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

