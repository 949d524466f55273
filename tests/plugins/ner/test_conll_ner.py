"""conll-ner: exact round trips, seqeval-equal entity counts, schemes, and errors that say where."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from seqeval.metrics.sequence_labeling import get_entities
from spanaug_shared.tagging import decode, detect_scheme, encode
from spanaug_ner.conll_ner import ConllNer

from spanaug_core.errors import DataError
from spanaug_core.types import Example, Span

# IOB1 as in CoNLL-2003: entities open with I-, B- only between two adjacent same-type
# entities; a -DOCSTART- block, a double blank line at the end.
IOB1 = """-DOCSTART- -X- O O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP I-MISC
call NN I-NP O
. . O O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER
Paris NNP I-NP B-PER
Hilton NNP I-NP I-PER

-DOCSTART- -X- O O

BRUSSELS NNP I-NP I-LOC


"""

# Two columns, tab-separated, sentences separated by an empty or a tab-only line (WNUT-17).
WNUT = "Stabilized\tO\nChannel\tB-corporation\nfour\tI-corporation\n!\tO\n\t\n@user\tO\nNew\tB-location\nYork\tI-location\n\n"


def read(tmp_path: Path, text: str, **options) -> tuple[ConllNer, list[Example], Path]:
    path = tmp_path / "data.conll"
    path.write_text(text, encoding="utf-8")
    reader = ConllNer(ConllNer.Config(**options))
    return reader, list(reader.read(path)), path


def seqeval_count(text: str) -> int:
    sentences, current = [], []
    for line in text.split("\n"):
        if not line.strip():
            sentences.append(current) if current else None
            current = []
        elif not line.startswith("-DOCSTART-"):
            current.append(line.split()[-1])
    return sum(len(get_entities(tags)) for tags in sentences + ([current] if current else []))


@pytest.mark.parametrize("text", [IOB1, WNUT, WNUT.rstrip("\n")], ids=["iob1-4col", "wnut-2col", "no-final-newline"])
def test_round_trip_is_exact(tmp_path: Path, text: str) -> None:
    reader, examples, _ = read(tmp_path, text)
    out = tmp_path / "out.conll"
    assert reader.write(examples, out) == len(examples)
    assert out.read_text(encoding="utf-8") == text


def test_entities_match_seqeval_and_file_layout(tmp_path: Path) -> None:
    _, examples, _ = read(tmp_path, IOB1)
    assert [e.tokens[0] for e in examples] == ["EU", "Peter", "BRUSSELS"]
    assert sum(len(e.spans) for e in examples) == seqeval_count(IOB1) == 5
    second = examples[1]
    assert [(s.text(second.tokens), s.label, s.role) for s in second.spans] == [
        ("Peter Blackburn", "PER", "entity"),
        ("Paris Hilton", "PER", "entity"),
    ]
    assert second.meta["columns"][0] == ["NNP", "I-NP"]
    assert examples[0].meta["scheme"] == "iob1"


def test_scheme_detection_and_conversion(tmp_path: Path) -> None:
    reader, examples, _ = read(tmp_path, WNUT)
    assert examples[0].meta["scheme"] == "iob2"
    converter = ConllNer(ConllNer.Config(write_scheme="bioes"))
    out = tmp_path / "bioes.conll"
    converter.write(examples, out)
    tags = [line.split("\t")[-1] for line in out.read_text().splitlines() if line.strip()]
    assert tags == ["O", "B-corporation", "E-corporation", "O", "O", "B-location", "E-location"]
    back = list(ConllNer(ConllNer.Config()).read(out))
    assert back[0].meta["scheme"] == "bioes"
    assert [s.model_dump() for e in back for s in e.spans] == [s.model_dump() for e in examples for s in e.spans]


def test_tag_codec_agrees_with_seqeval_on_invalid_sequences() -> None:
    tags = ["I-PER", "B-PER", "I-LOC", "E-LOC", "E-LOC", "O", "S-ORG", "I-ORG"]
    ours = [(kind, start, end - 1) for start, end, kind in decode(tags)]
    assert ours == get_entities(tags)
    assert detect_scheme([["I-PER", "O", "I-LOC", "B-LOC"]]) == "iob1"
    assert encode([(0, 1, "PER"), (1, 3, "PER")], 4, "iob1") == ["I-PER", "B-PER", "I-PER", "O"]


def test_slips_are_kept_and_counted(tmp_path: Path) -> None:
    # An IOB1 file whose second entity opens with B- after O: read as seqeval does,
    # counted, and written back unchanged while the entity is unchanged.
    text = "A x I-ORG\nb x O\nC x B-LOC\nd x I-LOC\n\ne x I-PER\n\n"
    reader, examples, _ = read(tmp_path, text)
    assert reader.warnings["invalid tag read as seqeval does"] == 1
    assert sum(len(e.spans) for e in examples) == seqeval_count(text)
    out = tmp_path / "out.conll"
    reader.write(examples, out)
    assert out.read_text() == text


def test_convert_says_what_the_reader_repaired(tmp_path: Path, cli, capsys) -> None:
    (tmp_path / "in.conll").write_text("A x I-ORG\nb x O\nC x B-LOC\nd x I-LOC\n\n")
    assert cli("ner,jsonl")("convert", "--dataset", "conll-ner", "--input", tmp_path / "in.conll", "--to", "jsonl", "--output", tmp_path / "out.jsonl") == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "the conll-ner dataset repaired or skipped in its input: 1 invalid tag read as seqeval does" in err


def test_strict_iob2_rejects_i_after_o_with_file_and_line(tmp_path: Path) -> None:
    text = "A B-ORG\nb O\nC I-LOC\n\n"
    with pytest.raises(DataError, match=r"data\.conll:3: I-LOC only after B-LOC or I-LOC in IOB2"):
        read(tmp_path, text, scheme="iob2", strict=True)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A x B-ORG\nb O\n\n", r"data\.conll:2: expected 3 non-empty columns"),
        ("A x X-ORG\n\n", r"data\.conll:1: expected a chunk tag"),
        ("A x O\nb x B-OR\x00G\n\n", r"data\.conll:1: invalid sentence: label: label 'OR\\x00G' contains the control character U\+0000"),
    ],
)
def test_malformed_lines_name_file_line_and_expectation(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(DataError, match=message):
        read(tmp_path, text)


def test_rewrite_makes_entities_targets_and_augmented_examples_write(tmp_path: Path) -> None:
    reader, examples, _ = read(tmp_path, IOB1, entities="rewrite")
    assert {s.role for e in examples for s in e.spans} == {"target"}
    augmented = Example(id="x/it1", tokens=("The", "EU", "said", "no"), spans=(Span(start=1, end=2, label="ORG", role="target"),))
    out = tmp_path / "aug.conll"
    reader.write([examples[0], augmented], out)
    assert out.read_text().endswith("The _ _ O\nEU _ _ B-ORG\nsaid _ _ O\nno _ _ O\n\n")


def test_examples_from_elsewhere_take_the_layout_of_like(tmp_path: Path) -> None:
    # Augmented records (from JSONL) written to be appended to a CoNLL-2003 file: 4 columns, IOB1.
    train = tmp_path / "eng.train"
    train.write_text(IOB1)
    augmented = Example(id="x/it1", tokens=("The", "EU", "said", "no"), spans=(Span(start=1, end=2, label="ORG", role="entity"),))
    out = tmp_path / "aug.conll"
    ConllNer(ConllNer.Config(like=train)).write([augmented], out)
    assert out.read_text() == "The _ _ O\nEU _ _ I-ORG\nsaid _ _ O\nno _ _ O\n\n"
    wnut = tmp_path / "wnut.conll"
    wnut.write_text(WNUT)
    ConllNer(ConllNer.Config(like=wnut)).write([augmented], out)
    assert out.read_text() == "The\tO\nEU\tB-ORG\nsaid\tO\nno\tO\n\n"
    empty = tmp_path / "empty.conll"
    empty.write_text("-DOCSTART- -X- O O\n\n")
    with pytest.raises(DataError, match="empty.conll: holds no sentence"):
        ConllNer(ConllNer.Config(like=empty)).write([augmented], out)


def test_overlapping_entities_cannot_be_written(tmp_path: Path) -> None:
    example = Example(id="o", tokens=("a", "b"), spans=(Span(start=0, end=2, label="X", role="entity"), Span(start=1, end=2, label="Y", role="entity")))
    with pytest.raises(
        DataError,
        match=r"^example o: entities overlap at token 1; .*, so it cannot be written in conll-ner; keep only one of the "
        r"overlapping entities in the input, or convert to a format that holds overlapping spans \(--to jsonl\)$",
    ):
        ConllNer(ConllNer.Config()).write([example], tmp_path / "o.conll")


@pytest.mark.parametrize(("label", "like"), [("L M", None), ("L\u00a0M", None), ("L\u2028M", None), ("L M", WNUT)])
def test_a_label_with_whitespace_is_refused_not_written(tmp_path: Path, label: str, like: str | None) -> None:
    """A type with whitespace in it would read back as other columns (or be refused by the reader)."""
    options = {}
    if like is not None:  # tab-separated output, whose reader still finds the tag as the last word
        (tmp_path / "like.conll").write_text(like)
        options["like"] = tmp_path / "like.conll"
    example = Example(id="a", tokens=("x", "y"), spans=(Span(start=1, end=2, label=label, role="entity"),))
    with pytest.raises(DataError, match=rf"^example a: label {re.escape(repr(label))} cannot be written in conll-ner: its cells cannot hold whitespace"):
        ConllNer(ConllNer.Config(**options)).write([example], tmp_path / "out.conll")


def test_convert_refuses_such_a_label_and_leaves_no_file(tmp_path: Path, cli, capsys) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "ok", "tokens": ["x"], "spans": []}\n{"id": "a", "tokens": ["x", "y"], "spans": [{"start": 1, "end": 2, "label": "L M"}]}\n')
    out = tmp_path / "out" / "o.conll"
    assert cli("ner,jsonl")("convert", "--dataset", "jsonl", "--input", source, "--to", "conll-ner", "--output", out) == 2
    assert "example a: label 'L M' cannot be written in conll-ner" in " ".join(capsys.readouterr().err.split())
    assert list(out.parent.iterdir()) == []  # neither the file nor its temporary


def test_registered_under_its_name(installed_registry) -> None:
    reader = installed_registry.create("dataset", "conll-ner", scheme="iob1")
    assert isinstance(reader, ConllNer) and reader.config.scheme == "iob1"


@pytest.mark.real_data
def test_conll2003_testa_round_trip_and_seqeval(shared_member, tmp_path: Path) -> None:
    path = shared_member("conll2003.tar.xz", "eng.testa")
    reader = ConllNer(ConllNer.Config())
    examples = list(reader.read(path))
    text = path.read_text(encoding="utf-8")
    assert len(examples) == 3250
    assert sum(len(e.spans) for e in examples) == seqeval_count(text) == 5942
    reader.write(examples, tmp_path / "out")
    assert (tmp_path / "out").read_bytes() == path.read_bytes()


def test_an_entity_type_seen_once_among_many_is_warned_of_with_its_line(tmp_path: Path, caplog) -> None:
    """I-MSIC is a valid tag of a new type: read as it is, with a warning that names the line."""
    sentence = "Peter B-PER\nsaw O\nGerman B-MISC\nfilms O\n\n"
    typo = "Lille B-PER\nliked O\nFrench B-MSIC\nwine O\n\n"
    text = sentence * 6 + typo
    with caplog.at_level("WARNING"):
        _, examples, path = read(tmp_path, text)
    assert examples[-1].spans[1].label == "MSIC"
    assert f"{path}:33: entity type 'MSIC' occurs once here, where the other types (MISC, PER) occur 13 times; a typo of 'MISC'?" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        read(tmp_path, sentence * 6, scheme="iob2")  # no suspect: no warning, whatever the scheme option
        read(tmp_path, sentence + typo)  # too few entities to tell a typo from a rare type
    assert "occurs once" not in caplog.text
