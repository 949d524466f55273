"""Every command that writes files, on a full disk and into a read-only folder.

Each answers with one line naming the file the user gave (or one inside the folder they
gave), never a temporary's name, exit status 2, never an internal error, and leaves no
temporary behind (``make-align-data``, which keeps its work to resume, is tested with
its journal in ``aligners/test_make_data.py``). The faults come from ``faults.Disk``; the
run folder the report and the judge export read is made by the scripted decoder and aligner.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from doubles import write_examples

from spanaug_core.cli import main

NER = "".join(f"{w} {t}\n" for w, t in [("the", "O"), ("man", "B-PER"), ("saw", "O"), ("a", "O"), ("dog", "B-ANI"), (".", "O")]) + "\n"
ITEMS = [
    {"id": "a", "source_tokens": ["the", "red", "car"], "source_span": [1, 3], "target_tokens": ["a", "red", "car", "left"],
     "gold_span": [1, 3], "kind": "identical"},
    {"id": "b", "source_tokens": ["he", "bought", "it"], "source_span": [1, 2], "target_tokens": ["he", "purchased", "it"],
     "gold_span": [1, 2], "kind": "paraphrased"},
]


@pytest.fixture
def spanaug(doubles_cli) -> Callable[..., int]:
    """``spanaug(ARGS...)``: the CLI with the installed plugins and the scripted decoder and aligner."""
    return lambda *args: main([str(a) for a in args])


def a_run(tmp_path: Path, spanaug: Callable[..., int]) -> Path:
    data = write_examples(tmp_path / "in.jsonl", 4)
    run = tmp_path / "run"
    assert spanaug("run", "--dataset", "jsonl", "--input", data, "--decoder", "synonym", "--aligner", "diff",
                   "--output", run, "--no-progress") == 0
    return run


def items(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ITEMS))
    return path


def ner_file(tmp_path: Path) -> Path:
    path = tmp_path / "ner.conll"
    path.write_text(NER)
    return path


# Each command: (the arguments, the file its error names), given tmp_path, the CLI and the tiny encoder.
COMMANDS: dict[str, Callable[..., tuple[list[object], Path]]] = {
    "convert": lambda t, s, e: (["convert", "--dataset", "conll-ner", "--input", ner_file(t), "--to", "jsonl", "--output",
                                 t / "o" / "x.jsonl"], t / "o" / "x.jsonl"),
    "align": lambda t, s, e: (["align", "--aligner", "string-match", "--input", items(t), "--output", t / "o" / "a.jsonl"],
                              t / "o" / "a.jsonl"),
    "eval align --output": lambda t, s, e: (["eval", "align", "--aligner", "string-match", "--gold", items(t), "--output",
                                             t / "o" / "p.jsonl"], t / "o" / "p.jsonl"),
    "eval align --metrics": lambda t, s, e: (["eval", "align", "--aligner", "string-match", "--gold", items(t), "--metrics",
                                              t / "o" / "m.json"], t / "o" / "m.json"),
    "decode": lambda t, s, e: (["decode", "--decoder", "synonym", "--no-expand", "they buy a car", "--output", t / "o" / "d.jsonl"],
                               t / "o" / "d.jsonl"),
    "convert framenet-seed": lambda t, s, e: (["convert", "framenet-seed", "--output", t / "o", "--frames", "2", "--lus", "1",
                                               "--annotations", "1"], t / "o" / "seed.jsonl"),
    "judge export": lambda t, s, e: (["judge", "export", a_run(t, s), "--output", t / "o"], t / "o" / "tasks.json"),
    "report": lambda t, s, e: (["report", a_run(t, s), "--output", t / "o" / "r.html"], t / "o" / "r.html"),
    "train": lambda t, s, e: (["train", "--trainer", "ner", "--dataset", "conll-ner", "--train", ner_file(t), "--out", t / "o",
                               "--set", f"trainer.encoder={e}", "--set", "trainer.epochs=1", "--set", "trainer.hidden=4",
                               "--no-progress"], t / "o" / "config.json"),
}


def leftovers(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if ".partial-" in p.name or p.name.endswith(".tmp"))


@pytest.mark.parametrize(
    ("op", "err", "cause"),
    [("write", errno.ENOSPC, "No space left on device"), ("open", errno.EROFS, "Read-only file system")],
    ids=["full", "read-only"],
)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_command_that_cannot_write_says_which_file_and_why(tmp_path, spanaug, tiny_encoder, disk, capsys, command, op, err, cause) -> None:
    args, named = COMMANDS[command](tmp_path, spanaug, tiny_encoder)
    capsys.readouterr()
    disk.fail(op, "*", err, times=None)  # from the first write on, every one: the disk stays full
    assert spanaug(*args) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"error: cannot write {named}: {cause}"
    assert leftovers(tmp_path) == []


def test_the_aligners_encoding_cache_is_written_whole_or_not_at_all(tmp_path, disk) -> None:
    import torch
    from spanaug_aligners.train import encode_cached

    from spanaug_core.errors import FileSystemError

    class Encoder:
        path, max_length = "tiny", 8

        def encode(self, pairs, joint):  # type: ignore[no-untyped-def]
            return [(torch.ones(len(s), 2), torch.ones(len(t), 2)) for s, t in pairs]

    pairs = [(("a", "b"), ("c",)), (("d",), ("e", "f"))]
    disk.fail("write", ".encoded-*.pt.partial-*", errno.ENOSPC, at=2)  # torch writes its archive in pieces
    with pytest.raises(FileSystemError, match=rf"^cannot write {tmp_path}/encoded-\w+\.pt: No space left on device$"):
        encode_cached(Encoder(), pairs, tmp_path, lambda event: None)
    assert list(tmp_path.iterdir()) == []  # no cache cut short for the next run to fail on
    disk.heal()
    vectors = encode_cached(Encoder(), pairs, tmp_path, lambda event: None)
    assert len(list(tmp_path.iterdir())) == 1 and encode_cached(Encoder(), pairs, tmp_path, lambda event: None).keys() == vectors.keys()
