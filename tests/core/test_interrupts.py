"""Interrupted runs, deterministically: what a kill leaves after the last commit is cut off by
``--resume``, and a second signal while the run makes its last commit is ignored.

The fast twins of the SIGKILL and signal tests in ``test_kill.py``: a run is stopped at a
known decoder call (Ctrl-C, or a SIGTERM the process sends itself), so nothing depends on
when a process is scheduled. ``spanaug run --resume`` must then give the uninterrupted
run's files byte for byte.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import spanaug_expanders
import spanaug_jsonl
from doubles import DoublesPlugin, before_decode_call, ctrl_c, write_examples

import spanaug_core.plugins
import spanaug_core.run
from spanaug_core.cli import main
from spanaug_core.output import RunStore
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

    before_decode_call(monkeypatch, 6, ctrl_c)
    out = tmp_path / "out"
    assert cli_run(data, out) == 130
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


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_second_signal_during_the_last_commit_is_ignored(tmp_path, cli_run, monkeypatch, capsys, signum, status) -> None:
    data = write_examples(tmp_path / "in.jsonl", 12)
    assert cli_run(data, tmp_path / "ref") == 0

    finish = RunStore.finish
    # docker stop, Slurm's time limit, a closed terminal
    before_decode_call(monkeypatch, 6, lambda: os.kill(os.getpid(), signum))

    def finish_under_fire(self, *args, **kwargs):
        # The impatient second signal (and the other kind), while the run commits and says "interrupted".
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGHUP)
        return finish(self, *args, **kwargs)

    monkeypatch.setattr(RunStore, "finish", finish_under_fire)
    out = tmp_path / "out"
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    assert cli_run(data, out) == status
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
    assert "continue with --resume" in capsys.readouterr().err
    assert {sig: signal.getsignal(sig) for sig in handlers} == handlers  # the run's handlers went with it
    monkeypatch.setattr(RunStore, "finish", finish)
    assert cli_run(data, out, "--resume") == 0
    for name in FILES:
        assert (out / name).read_bytes() == (tmp_path / "ref" / name).read_bytes(), name
