"""SIGKILL at random moments: a resumed run writes exactly what an uninterrupted one writes.

A child process runs a real ``execute`` (jsonl input, the scripted synonym decoder made
slow enough to be caught mid-run, commits every ``COMMIT_S``) and is killed with SIGKILL
at a random moment, 20 times in a row, each time resumed. The final folder must equal an
uninterrupted run's, byte for byte, and each kill may lose only the work since the last
commit: the manifest a kill leaves was updated at most ``COMMIT_S`` (plus one decoder
call and some scheduling slack, which grows with how slow the machine is) before the kill,
once the run has started. Waits for the child have deadlines of minutes, not seconds: they
catch a hang, not a slow machine.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from doubles import write_examples

TESTS = Path(__file__).resolve().parents[1]
COMMIT_S = 0.3

CHILD = """
import sys, time
sys.path.insert(0, {tests!r})
import spanaug_expanders, spanaug_jsonl
from doubles import DoublesPlugin, SynonymDecoder
from spanaug_core.config import load_run_config
from spanaug_core.plugins import Registry
from spanaug_core.run import execute

original = SynonymDecoder.decode

def slow(self, requests, nbest):
    time.sleep(0.01 * len(requests))  # about the time of a small model's decode, to be killed during
    return original(self, requests, nbest)

SynonymDecoder.decode = slow
registry = Registry(entry_points=False)
for plugin, name in ((spanaug_jsonl, "jsonl"), (spanaug_expanders, "expanders"), (DoublesPlugin(), "doubles")):
    registry.add_plugin(plugin, name)
flags = {{"dataset.name": "jsonl", "input": sys.argv[1], "output": sys.argv[2], "decoder.name": "synonym",
         "aligner.name": "diff", "iterations": 4, "decoder.batch_size": 3, "commit_every_s": {commit}}}
config = load_run_config(None, flags)
from spanaug_expanders.inflect import InflectExpander
InflectExpander(InflectExpander.Config()).expand("buy")  # lemminflect loads its tables (seconds) before the clock
print("ready", flush=True)
t0 = time.monotonic()
execute(config, resume=sys.argv[3] == "resume", registry=registry)
print("completed", time.monotonic() - t0, flush=True)
"""

def start(script: Path, data: Path, out: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(script), str(data), str(out), mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow
def test_twenty_random_sigkills_lose_at_most_a_commit_interval_and_resume_exactly(tmp_path) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(tests=str(TESTS), commit=COMMIT_S))
    data = write_examples(tmp_path / "in.jsonl", 120)

    ref = start(script, data, tmp_path / "ref", "fresh")
    lines = ref.communicate(timeout=300)[0].split()
    assert lines[:2] == ["ready", "completed"], ref.stderr
    whole = float(lines[2])

    rng = random.Random(7)
    out = tmp_path / "out"
    kills, progress_seen = 0, set()
    mode = "fresh"
    while kills < 20:
        child = start(script, data, out, mode)
        mode = "resume"
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        # A random moment, mostly after the first commit of this process: 20 kills cover the run.
        time.sleep(rng.uniform(COMMIT_S / 2, COMMIT_S + whole / 20))
        if child.poll() is not None:
            break  # finished before this kill: the loop below checks the output anyway
        child.send_signal(signal.SIGKILL)
        killed_at = time.time()
        child.wait()
        manifest = json.loads((out / "manifest.json").read_text())
        if manifest["status"] == "completed":
            break  # it finished just before the kill landed
        kills += 1
        assert manifest["status"] == "running"  # a kill gives no chance to say otherwise
        progress_seen.add(manifest["progress"].get("examples_read", 0))
        if manifest["progress"].get("examples_read"):
            updated = datetime.fromisoformat(manifest["timings"]["updated"]).timestamp()
            # One decoder call and scheduling: 0.5 s of slack, or a tenth of the whole run on a
            # machine so busy that the reference run was slow (a run that never commits leaves
            # gaps as long as the run, and fails this all the same).
            assert killed_at - updated <= COMMIT_S + max(0.5, whole / 10)
    assert kills >= 10, "the run was too fast to be killed often; make the child slower"
    assert len(progress_seen) >= 5, f"kills should fall at many points of the run: {sorted(progress_seen)} ({whole:.2f} s)"
    final = start(script, data, out, "resume")
    assert final.communicate(timeout=300)[0].split()[:2] == ["ready", "completed"], final.stderr

    for name in ("augmented.jsonl", "rejected.jsonl"):
        assert (out / name).read_bytes() == (tmp_path / "ref" / name).read_bytes(), name
    manifest = json.loads((out / "manifest.json").read_text())
    reference = json.loads((tmp_path / "ref" / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["progress"]["in_flight"] == []
    for key in ("examples", "jobs", "accepted", "rejected", "stopped"):
        assert manifest["counts"][key] == reference["counts"][key], key
    assert os.path.getsize(out / "augmented.jsonl") > 0


CLI_CHILD = """
import sys, time
sys.path.insert(0, {tests!r})
import spanaug_core.plugins, spanaug_core.run, spanaug_expanders, spanaug_jsonl
from doubles import DoublesPlugin, SynonymDecoder
from spanaug_core.plugins import Registry

original = SynonymDecoder.decode

def slow(self, requests, nbest):
    time.sleep(0.01 * len(requests))
    return original(self, requests, nbest)

SynonymDecoder.decode = slow
registry = Registry(entry_points=False)
for plugin, name in ((spanaug_jsonl, "jsonl"), (spanaug_expanders, "expanders"), (DoublesPlugin(), "doubles")):
    registry.add_plugin(plugin, name)
spanaug_core.plugins.default_registry = lambda: registry
spanaug_core.run.default_registry = lambda: registry
from spanaug_expanders.inflect import InflectExpander
InflectExpander(InflectExpander.Config()).expand("buy")
print("ready", flush=True)
from spanaug_core.cli import main
args = ["run", "--dataset", "jsonl", "--input", sys.argv[1], "--output", sys.argv[2], "--decoder", "synonym",
        "--aligner", "diff", "--iterations", "4", "--batch-size", "3", "--set", "commit_every_s={commit}", "--no-progress"]
sys.exit(main(args + (["--resume"] if sys.argv[3] == "resume" else [])))
"""


def _running(out: Path, timeout: float = 180.0) -> dict:
    """The manifest once the run has committed progress (it holds the folder's lock by then)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            manifest = json.loads((out / "manifest.json").read_text())
        except (OSError, ValueError):
            manifest = {}
        if manifest.get("status") == "running" and manifest.get("progress", {}).get("examples_read"):
            return manifest
        time.sleep(0.05)
    raise AssertionError("the child run never committed progress")


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_end_a_run_as_ctrl_c_does(tmp_path, signum, status) -> None:
    script = tmp_path / "cli_child.py"
    script.write_text(CLI_CHILD.format(tests=str(TESTS), commit=COMMIT_S))
    data = write_examples(tmp_path / "in.jsonl", 60)
    ref = start(script, data, tmp_path / "ref", "fresh")
    assert ref.wait(timeout=300) == 0, ref.stderr.read() if ref.stderr else ""

    child = start(script, data, tmp_path / "out", "fresh")
    _running(tmp_path / "out")
    child.send_signal(signum)
    assert child.wait(timeout=180) == status
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert "continue with --resume" in child.stderr.read()
    resumed = start(script, data, tmp_path / "out", "resume")
    assert resumed.wait(timeout=300) == 0
    for name in ("augmented.jsonl", "rejected.jsonl"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "ref" / name).read_bytes(), name


@pytest.mark.slow
def test_a_live_run_locks_its_folder_and_a_killed_one_does_not(tmp_path) -> None:
    import spanaug_expanders
    import spanaug_jsonl
    from doubles import DoublesPlugin

    from spanaug_core.config import load_run_config
    from spanaug_core.errors import RunStateError
    from spanaug_core.plugins import Registry
    from spanaug_core.run import execute

    script = tmp_path / "cli_child.py"
    script.write_text(CLI_CHILD.format(tests=str(TESTS), commit=COMMIT_S))
    data = write_examples(tmp_path / "in.jsonl", 60)
    out = tmp_path / "out"
    child = start(script, data, out, "fresh")
    _running(out)
    registry = Registry(entry_points=False)
    for plugin, name in ((spanaug_jsonl, "jsonl"), (spanaug_expanders, "expanders"), (DoublesPlugin(), "doubles")):
        registry.add_plugin(plugin, name)
    config = load_run_config(None, {"dataset.name": "jsonl", "input": str(data), "output": str(out), "decoder.name": "synonym",
                                    "aligner.name": "diff", "iterations": 4, "decoder.batch_size": 3, "commit_every_s": COMMIT_S})
    with pytest.raises(RunStateError, match=f"is being written by process {child.pid} "):
        execute(config, resume=True, registry=registry)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert execute(config, resume=True, registry=registry).status == "completed"  # the dead process's lock is gone
