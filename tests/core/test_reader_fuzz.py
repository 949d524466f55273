"""Every reader against mutated inputs: one clear error naming the file, or valid output; never
an internal error and never a partial output file.

Each reader gets ``MUTANTS`` inputs made from a valid seed by seeded mutations (flipped and
invalid bytes, NUL inside tokens, lines deleted, repeated, swapped or cut, fields replaced
by slips seen in real files: ``B-``, ``X-PER``, ``(ARG0*``, ``abc``, ``0``, ``999``, ``"3"``),
converted to JSONL through ``spanaug convert`` as a user would.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import shutil
from pathlib import Path

import pytest

from spanaug_core.cli import main

TESTS = Path(__file__).resolve().parents[1]
SAMPLE = Path(__file__).resolve().parents[2] / "plugins" / "framenet" / "sample"
MUTANTS = 200
SLIPS = ["", "B-", "X-PER", "(ARG0*", "*)", "abc", "0", "999", "-1", '"3"', "_", "1.5", "(V*", "I-"]


def _seed(module: str, name: str) -> str:
    """A valid fixture text of another test module (their readers' own seeds)."""
    spec = importlib.util.spec_from_file_location(f"seed_{module.replace('/', '_')}", TESTS / module)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return getattr(loaded, name)


JSONL = "\n".join(
    json.dumps(obj)
    for obj in (
        {"id": "a", "tokens": ["The", "panel", "will", "corroborate", "it", "."], "spans": [{"start": 3, "end": 4, "label": "Evidence"}]},
        {"id": "b", "text": "They buy bread.", "spans": [{"start": 1, "end": 2, "label": "Buy", "role": "target", "group": "g"}]},
        {"id": "c", "tokens": ["Rain", "."], "spans": [], "meta": {"doc": "d"}},
    )
) + "\n"


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three random slips in ``data``."""
    for _ in range(rng.randint(1, 3)):
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        kind = rng.randrange(9)
        if kind == 0 and data:
            at = rng.randrange(len(data))
            data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]
            continue
        if kind == 1 and data:
            at = rng.randrange(len(data))
            data = data[:at] + rng.choice([b"\x00", b"\xc3\x28", b"\xff", b"\x07"]) + data[at:]
            continue
        if kind == 2:
            del lines[i]
        elif kind == 3:
            lines.insert(i, lines[i])
        elif kind == 4:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == 5:
            data = data[: rng.randrange(len(data) + 1)]
            continue
        else:
            fields = lines[i].split(b"\t" if b"\t" in lines[i] else b" ")
            f = rng.randrange(len(fields))
            if kind == 6:
                del fields[f]
            else:
                fields[f] = rng.choice(SLIPS).encode()
            lines[i] = (b"\t" if b"\t" in lines[i] else b" ").join(fields)
        data = b"\n".join(lines)
    return data


def _check(dataset: str, source: Path, out: Path, capsys, options: tuple[str, ...] = ()) -> str:
    code = main(["convert", "--dataset", dataset, "--input", str(source), "--to", "jsonl", "--output", str(out), *options])
    err = capsys.readouterr().err.strip()
    assert code in (0, 2), f"{dataset}: exit {code} on {source}: {err}"
    if code == 2:
        assert err.startswith("error:") and "internal error" not in err and len(err.splitlines()) == 1, err
        assert source.name in err, f"the error does not name the input: {err}"
        assert not out.exists(), "a failed conversion left its output"
        return "error"
    assert out.is_file()
    for line in out.read_text(encoding="utf-8").splitlines():
        json.loads(line)
    out.unlink()
    return "ok"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("dataset", "seed", "options"),
    [
        ("jsonl", lambda: JSONL, ()),
        ("conll-ner", lambda: _seed("plugins/ner/test_conll_ner.py", "IOB1"), ()),
        ("conll-ner", lambda: _seed("plugins/ner/test_conll_ner.py", "IOB1"), ("--set", "strict=true")),
        ("conll-srl", lambda: _seed("plugins/conll_srl/test_conll_srl.py", "CONLLU"), ()),
        ("conll-srl", lambda: _seed("plugins/conll_srl/test_conll_srl.py", "CONLL05"), ()),
        ("conll-srl", lambda: _seed("plugins/conll_srl/test_conll_srl.py", "CONLL12"), ()),
    ],
    ids=["jsonl", "conll-ner", "conll-ner-strict", "conllu-plus", "conll-2005", "conll-2012"],
)
def test_mutated_column_and_line_files(tmp_path: Path, capsys, dataset, seed, options) -> None:
    rng = random.Random(f"{dataset}{options}")
    data = seed().encode()
    outcomes = []
    for n in range(MUTANTS):
        source = tmp_path / f"in{n}.txt"
        source.write_bytes(mutate(data, rng))
        outcomes.append(_check(dataset, source, tmp_path / f"out{n}.jsonl", capsys, options))
    assert "error" in outcomes and len(outcomes) == MUTANTS  # the mutations do reach the checks


@pytest.mark.slow
def test_mutated_framenet_releases(tmp_path: Path, capsys) -> None:
    rng = random.Random("framenet")
    original = (SAMPLE / "fulltext" / "spanaug_sample.xml").read_bytes()
    outcomes = []
    for n in range(MUTANTS):
        release = tmp_path / f"fn{n}"
        shutil.copytree(SAMPLE, release)
        (release / "fulltext" / "spanaug_sample.xml").write_bytes(mutate(original, rng))
        outcomes.append(_check("framenet", release, tmp_path / f"out{n}.jsonl", capsys))
        shutil.rmtree(release)
    assert "error" in outcomes


@pytest.mark.parametrize(
    ("dataset", "text", "message"),
    [  # bad data that was once read without a word (exit 0)
        ("conll-ner", "E\x00U B-ORG\nrejects O\n\n", r":1: invalid sentence: tokens: token 0 \('E\\x00U'\) contains the control character U\+0000"),
        ("conll-ner", "EU B-\nrejects O\n\n", ":1: expected a chunk tag"),
        ("conll-ner", "EU X-PER\nrejects O\n\n", ":1: expected a chunk tag"),
        ("conll-srl", "The\t-\t(A0*\ncat\t-\t*\nsat\tsit\t(V*)\n\n", ":1: .*bracket '\\(A0' is never closed"),
        ("conll-srl", "The\t-\t(*)\ncat\t-\t*\nsat\tsit\t(V*)\n\n", r":1: expected a bracket cell .* got '\(\*\)'"),
        ("jsonl", '{"id": "a", "tokens": ["x", "y"], "spans": [{"start": "0", "end": 1, "label": "L"}]}\n', ":1: .*expected an integer token offset, got '0'"),
        ("jsonl", '{"id": "a", "tokens": ["x", "y"], "spans": [{"start": 0, "end": 1, "label": ""}]}\n', ":1: .*label: String should have at least 1 character"),
        ("jsonl", '{"id": "a", "tokens": ["x"]}\n{"id": "a", "tokens": ["y"]}\n', ": example 2 has the id 'a' of example 1"),
    ],
)
def test_bad_records_are_refused(tmp_path: Path, capsys, dataset: str, text: str, message: str) -> None:
    source = tmp_path / "in.txt"
    source.write_text(text)
    assert main(["convert", "--dataset", dataset, "--input", str(source), "--to", "jsonl", "--output", str(tmp_path / "o.jsonl")]) == 2
    assert re.search(f"in.txt{message}", capsys.readouterr().err)


def _conllu(ident: str, label: str = "ARG0") -> str:
    def row(i: str, form: str, sense: str, arg: str) -> str:
        return "\t".join([i, form, form.lower(), "X", "X", "_", "0", "root", "0:root", "_", sense, arg])

    return "\n".join([row("1", "Cats", "_", label), row(ident, "purr", "purr.01", "V"), ""]) + "\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_conllu("0"), ":2: expected word id 2"),
        (_conllu("999"), ":2: expected word id 2"),
        (_conllu("abc"), ":2: expected a word id .* got 'abc'"),
        (_conllu("2", label=""), ":1: expected an argument label or _ in argument column 1, found an empty cell"),
    ],
)
def test_bad_conllu_ids_and_labels_are_refused(tmp_path: Path, capsys, text: str, message: str) -> None:
    source = tmp_path / "in.conllu"
    source.write_text(text)
    assert main(["convert", "--dataset", "conll-srl", "--input", str(source), "--to", "jsonl", "--output", str(tmp_path / "o.jsonl")]) == 2
    assert re.search(f"in.conllu{message}", capsys.readouterr().err)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('name="Buyer"', ""), "layer FE, label 1: expected a name attribute"),
        (('end="4" start="0" name="Buyer"', 'start="0" name="Buyer"'), r"label 1 \(Buyer\): has start but no end"),
        (('start="0" name="Buyer"', 'start="abc" name="Buyer"'), r"label 1 \(Buyer\): expected integer character offsets, got start='abc'"),
    ],
)
def test_bad_framenet_labels_are_refused(tmp_path: Path, capsys, edit: tuple[str, str], message: str) -> None:
    release = tmp_path / "fn"
    shutil.copytree(SAMPLE, release)
    xml = release / "fulltext" / "spanaug_sample.xml"
    xml.write_text(xml.read_text().replace(*edit, 1))
    assert main(["convert", "--dataset", "framenet", "--input", str(release), "--to", "jsonl", "--output", str(tmp_path / "o.jsonl")]) == 2
    assert re.search(f"spanaug_sample.xml: sentence .*, annotationSet .*{message}", capsys.readouterr().err)
