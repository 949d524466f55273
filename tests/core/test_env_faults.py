"""A full disk, a read-only folder, no permission, as a user meets them through the CLI.

Each fault is one line naming the user's file (never a temporary's name) and the cause,
exit status 2, never an internal error; a failed write leaves no temporary; a run that
stops keeps its last commit, says how to go on, and ``--resume`` then writes exactly what
an uninterrupted run writes. No root is needed: ``Disk`` patches the file operations
spanaug uses so that they raise the ``OSError`` the machine would, at a chosen moment.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from doubles import write_examples
from faults import Disk

from spanaug_core.cli import main
from spanaug_core.errors import FileSystemError
from spanaug_core.files import atomic_output, replace_json, user_error, user_path, writing


def run_args(data: Path, out: Path) -> list[str]:
    return ["run", "--dataset", "jsonl", "--input", str(data), "--decoder", "synonym", "--aligner", "diff",
            "--iterations", "3", "--set", "commit_every_s=0", "--set", "decoder.batch_size=3", "--output", str(out),
            "--no-progress"]


@pytest.fixture
def reference(tmp_path, doubles_cli) -> tuple[Path, dict[str, bytes]]:
    """An input of 12 examples and the files an uninterrupted run writes from it."""
    data = write_examples(tmp_path / "in.jsonl", 12)
    assert main(run_args(data, tmp_path / "ref")) == 0
    return data, {name: (tmp_path / "ref" / name).read_bytes() for name in ("augmented.jsonl", "rejected.jsonl")}


def err_lines(capsys) -> list[str]:
    return capsys.readouterr().err.strip().splitlines()


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".partial-" in p.name or p.name.endswith(".tmp"))


def manifest(out: Path) -> dict[str, Any]:
    return json.loads((out / "manifest.json").read_text())


def examples_done(n: int) -> str:
    return f"{n} example done" if n == 1 else f"{n} examples done"


def resume_exactly(data: Path, out: Path, expected: dict[str, bytes], disk: Disk, capsys) -> None:
    """With the fault gone, ``--resume`` finishes the run with the records of an uninterrupted one."""
    disk.heal()
    assert main([*run_args(data, out), "--resume"]) == 0, capsys.readouterr().err
    assert {name: (out / name).read_bytes() for name in expected} == expected
    assert manifest(out)["status"] == "completed" and "error" not in manifest(out)
    assert temporaries(out) == []


# -- a run --------------------------------------------------------------------------------


def test_a_full_disk_at_the_first_record_is_one_line_and_the_run_resumes(tmp_path, reference, disk, capsys) -> None:
    data, expected = reference
    out = tmp_path / "out"
    disk.fail("write", "augmented.jsonl", errno.ENOSPC)
    assert main(run_args(data, out)) == 2
    assert err_lines(capsys) == [
        f"error: cannot write {out}/augmented.jsonl: No space left on device",
        f"the run stopped; {out} keeps what it committed (0 examples done): free some space, then continue with --resume",
    ]
    found = manifest(out)
    assert found["status"] == "failed"
    assert found["error"] == f"FileSystemError: cannot write {out}/augmented.jsonl: No space left on device"
    assert temporaries(out) == []
    resume_exactly(data, out, expected, disk, capsys)


def test_a_full_disk_at_a_commit_keeps_the_last_commit_and_records_the_failure(tmp_path, reference, disk, capsys) -> None:
    data, expected = reference
    out = tmp_path / "out"
    committed: list[dict[str, Any]] = []
    disk.on_fault = lambda: committed.append(manifest(out))
    disk.fail("fsync", "augmented.jsonl", errno.ENOSPC, at=4)
    assert main(run_args(data, out)) == 2
    last = committed[0]["progress"]
    assert 0 < last["examples_done"] < 12
    assert err_lines(capsys) == [
        f"error: cannot write {out}/augmented.jsonl: No space left on device",
        f"the run stopped; {out} keeps what it committed ({examples_done(last['examples_done'])}): "
        "free some space, then continue with --resume",
    ]
    found = manifest(out)
    assert found["status"] == "failed" and found["progress"] == last and "No space left on device" in found["error"]
    assert temporaries(out) == []
    resume_exactly(data, out, expected, disk, capsys)


@pytest.mark.parametrize(
    ("err", "cause", "remedy"),
    [
        (errno.EROFS, "Read-only file system", "make the file system writable"),
        (errno.EACCES, "Permission denied", "allow writing there"),
    ],
)
@pytest.mark.parametrize("lasts", [True, False], ids=["stays", "passes"])
def test_a_manifest_that_cannot_be_renamed_stays_at_the_last_commit(tmp_path, reference, disk, capsys, err, cause, remedy, lasts) -> None:
    data, expected = reference
    out = tmp_path / "out"
    committed: list[bytes] = []
    disk.on_fault = lambda: committed.append((out / "manifest.json").read_bytes())
    disk.fail("replace", "manifest.json", err, at=3, times=None if lasts else 1)
    assert main(run_args(data, out)) == 2
    last = json.loads(committed[0])
    assert err_lines(capsys) == [
        f"error: cannot write {out}/manifest.json: {cause}",
        f"the run stopped; {out} keeps what it committed ({examples_done(last['progress']['examples_done'])}): "
        f"{remedy}, then continue with --resume",
    ]
    if lasts:  # finish cannot write either: the last commit stays, byte for byte, saying "running"
        assert (out / "manifest.json").read_bytes() == committed[0] and last["status"] == "running"
    else:  # the failure is recorded over the last commit, not over the commit that failed
        found = manifest(out)
        assert found["status"] == "failed" and found["progress"] == last["progress"] and cause in found["error"]
    assert temporaries(out) == []
    resume_exactly(data, out, expected, disk, capsys)


def test_a_disk_that_fills_mid_manifest_and_stays_full_leaves_no_temporary(tmp_path, reference, disk, capsys) -> None:
    data, expected = reference
    out = tmp_path / "out"
    committed: list[bytes] = []

    def full_from_now_on() -> None:
        if not committed:
            committed.append((out / "manifest.json").read_bytes())
            disk.fail("write", "*", errno.ENOSPC, times=None)

    disk.on_fault = full_from_now_on
    disk.fail("write", ".manifest.json.partial-*", errno.ENOSPC, at=6)
    assert main(run_args(data, out)) == 2
    assert err_lines(capsys)[0] == f"error: cannot write {out}/manifest.json: No space left on device"
    assert (out / "manifest.json").read_bytes() == committed[0]
    assert temporaries(out) == []  # the half-written temporary went with the failed write
    resume_exactly(data, out, expected, disk, capsys)


def test_a_resume_into_a_file_it_may_not_open_names_the_file(tmp_path, reference, disk, capsys) -> None:
    data, expected = reference
    out = tmp_path / "out"
    disk.fail("fsync", "augmented.jsonl", errno.ENOSPC, at=3)
    assert main(run_args(data, out)) == 2
    capsys.readouterr()
    disk.fail("open", "augmented.jsonl", errno.EACCES)
    assert main([*run_args(data, out), "--resume"]) == 2
    assert err_lines(capsys) == [f"error: cannot write {out}/augmented.jsonl: Permission denied"]
    resume_exactly(data, out, expected, disk, capsys)


def dead_pid() -> int:
    """The id of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_resume_removes_the_temporaries_a_killed_run_left_and_keeps_a_live_writers(tmp_path, reference, disk, capsys) -> None:
    data, expected = reference
    out = tmp_path / "out"
    disk.fail("fsync", "augmented.jsonl", errno.ENOSPC, at=3)
    assert main(run_args(data, out)) == 2
    dead, live = dead_pid(), os.getppid()
    left = [f".manifest.json.partial-{dead}", f".manifest.json.partial-{live}", "manifest.json.18353.tmp", f".report.html.partial-{dead}"]
    for name in left:
        (out / name).write_text("half")
    (out / f".report.html.partial-{live}").write_text("a report being written")
    assert main([*run_args(data, out), "--resume"]) == 0
    # The lock says no run writes the manifest, whatever the id; a report's partial goes only with its writer.
    assert temporaries(out) == [f".report.html.partial-{live}"]
    assert {name: (out / name).read_bytes() for name in expected} == expected


# -- files written whole ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "err", "cause"),
    [("write", errno.ENOSPC, "No space left on device"), ("open", errno.EROFS, "Read-only file system"),
     ("replace", errno.EACCES, "Permission denied")],
)
def test_convert_names_its_output_not_the_temporary(tmp_path, doubles_cli, disk, capsys, op, err, cause) -> None:
    data = write_examples(tmp_path / "in.jsonl", 5)
    out = tmp_path / "o" / "x.jsonl"
    disk.fail(op, ".x.jsonl.partial-*" if op != "replace" else "x.jsonl", err)
    assert main(["convert", "--dataset", "jsonl", "--input", str(data), "--to", "jsonl", "--output", str(out)]) == 2
    assert err_lines(capsys) == [f"error: cannot write {out}: {cause}"]
    assert os.listdir(out.parent) == []


def test_replace_json_keeps_the_old_file_and_no_temporary(tmp_path, disk) -> None:
    path = tmp_path / "state.json"
    replace_json(path, {"n": 1})
    disk.fail("write", ".state.json.partial-*", errno.EDQUOT)
    with pytest.raises(FileSystemError, match=f"^cannot write {path}: Disk quota exceeded$"):
        replace_json(path, {"n": 2})
    assert json.loads(path.read_text()) == {"n": 1} and os.listdir(tmp_path) == ["state.json"]


def test_atomic_output_removes_the_partial_a_killed_writer_left(tmp_path) -> None:
    dead, live = dead_pid(), os.getppid()
    for pid in (dead, live):
        (tmp_path / f".x.jsonl.partial-{pid}").write_text("half")
    (tmp_path / f".y.jsonl.partial-{dead}").write_text("another output's")
    with atomic_output(tmp_path / "x.jsonl") as partial:
        partial.write_text("whole\n")
    assert sorted(os.listdir(tmp_path)) == sorted([f".x.jsonl.partial-{live}", f".y.jsonl.partial-{dead}", "x.jsonl"])


def test_an_environment_fault_names_the_users_path_and_others_pass() -> None:
    assert user_path("/o/.run.partial-12/.manifest.json.partial-3") == Path("/o/run/manifest.json")
    assert user_path("/o/.x.partial/a.partial-b") == Path("/o/.x.partial/a.partial-b")  # not a temporary's name
    vanished = OSError(errno.ENOENT, "No such file or directory", "/data/in.jsonl")
    assert str(user_error(vanished, Path("/o/x.jsonl"))) == "/data/in.jsonl: No such file or directory"
    assert str(user_error(OSError(errno.ENOSPC, "x"), None)) == "cannot write the output: No space left on device"
    assert user_error(OSError(errno.EIO, "Input/output error")) is None
    with pytest.raises(OSError, match="Input/output error"), writing(Path("/o/x")):
        raise OSError(errno.EIO, "Input/output error")


def test_a_library_that_hides_the_fault_in_its_own_error_still_names_the_file() -> None:
    target = Path("/o/model.safetensors")
    with pytest.raises(FileSystemError, match=f"^cannot write {target}: No space left on device$"), writing(target):
        raise RuntimeError("Error while serializing: I/O error: No space left on device (os error 28)")  # safetensors
    with pytest.raises(FileSystemError, match=f"^cannot write {target}: Read-only file system$"), writing(target):
        try:
            raise OSError(errno.EROFS, "Read-only file system")
        except OSError:
            raise RuntimeError("[enforce fail at inline_container.cc] unexpected pos") from None  # torch.save
    with pytest.raises(KeyError), writing(target):
        raise KeyError("a bug is no fault of the disk")


def test_the_cli_answers_a_fault_no_command_caught_as_a_user_error(tmp_path, doubles_cli, capsys, monkeypatch) -> None:
    import click

    from spanaug_core.cli import cli

    @click.command("faulty")
    @click.argument("err", type=int)
    def faulty(err: int) -> None:
        raise OSError(err, os.strerror(err), str(tmp_path / ".out.json.partial-77"))

    monkeypatch.setitem(cli.commands, "faulty", faulty)
    assert main(["faulty", str(errno.EROFS)]) == 2
    assert err_lines(capsys) == [f"error: cannot write {tmp_path}/out.json: Read-only file system"]
    assert main(["faulty", str(errno.EACCES)]) == 2
    assert err_lines(capsys) == [f"error: {tmp_path}/out.json: Permission denied"]
    assert main(["faulty", str(errno.EIO)]) == 1
    assert err_lines(capsys)[0].startswith("error: internal error: OSError: [Errno 5]")
