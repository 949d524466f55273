"""``--resume`` cuts the run's files back to the last commit: bytes a killed run wrote after
it (records of examples that will be redone, a line torn by the kill) are dropped.

The fast, deterministic twin of the SIGKILL test in ``test_kill.py``: a run is interrupted
at a known decoder call, the bytes a kill would have left are appended by hand, and
``spanaug run --resume`` must give the uninterrupted run's files byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import spanaug_expanders
import spanaug_jsonl
from doubles import DoublesPlugin, SynonymDecoder, write_examples

import spanaug_core.plugins
import spanaug_core.run
from spanaug_core.cli import main
from spanaug_core.plugins import Registry

FILES = ("augmented.jsonl", "rejected.jsonl")


@pytest.fixture
def cli_run(monkeypatch):
    """``cli_run(data, out, *more)``: ``spanaug run`` over the doubles, committing at every checkpoint."""
    registry = Registry(entry_points=False)
    for plugin, name in ((spanaug_jsonl, "jsonl"), (spanaug_expanders, "expanders"), (DoublesPlugin(), "doubles")):
        registry.add_plugin(plugin, name)
    monkeypatch.setattr(spanaug_core.plugins, "default_registry", lambda: registry)
    monkeypatch.setattr(spanaug_core.run, "default_registry", lambda: registry)

    def run(data: Path, out: Path, *more: str) -> int:
        return main(["run", "--dataset", "jsonl", "--input", str(data), "--output", str(out), "--decoder", "synonym",
                     "--aligner", "diff", "--iterations", "3", "--batch-size", "3", "--set", "commit_every_s=0",
                     "--no-progress", *more])

    return run


def test_resume_drops_the_bytes_written_after_the_last_commit(tmp_path, cli_run, monkeypatch) -> None:
    data = write_examples(tmp_path / "in.jsonl", 12)
    assert cli_run(data, tmp_path / "ref") == 0

    original, calls = SynonymDecoder.decode, []

    def interrupted(self, requests, nbest):
        calls.append(len(requests))
        if len(calls) == 6:
            raise KeyboardInterrupt
        return original(self, requests, nbest)

    monkeypatch.setattr(SynonymDecoder, "decode", interrupted)
    out = tmp_path / "out"
    assert cli_run(data, out) == 130
    monkeypatch.setattr(SynonymDecoder, "decode", original)
    progress = json.loads((out / "manifest.json").read_text())["progress"]
    assert 0 < progress["augmented_bytes"] and progress["examples_done"] < 12
    # What a kill leaves after the commit: a whole record of an example that will be redone,
    # and a line cut off mid-way.
    reference = {name: (tmp_path / "ref" / name).read_bytes() for name in FILES}
    for name in FILES:
        with (out / name).open("ab") as fh:
            fh.write(reference[name].splitlines(keepends=True)[-1] + b'{"id": "torn", "tok')
        assert (out / name).stat().st_size > progress[name.replace(".jsonl", "_bytes")]

    assert cli_run(data, out, "--resume") == 0
    for name in FILES:
        assert (out / name).read_bytes() == reference[name], name
