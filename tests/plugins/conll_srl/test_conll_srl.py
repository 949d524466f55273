"""conll-srl: CoNLL-U Plus, CoNLL-2005 and CoNLL-2012 read into spans and written back exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from spanaug_conll_srl.brackets import decode_column, encode_column
from spanaug_conll_srl.dataset import ConllSrl, detect_format

from spanaug_core.errors import DataError
from spanaug_core.types import Example, Span


def row(i: int, form: str, lemma: str, head: int, rel: str, sense: str, *args: str, misc: str = "_", upos: str = "X") -> str:
    return "\t".join([str(i), form, lemma, upos, "X", "_", str(head), rel, f"{head}:{rel}", misc, sense, *args])


# "The man who left bought bread ." — "man" heads ARG0 of both predicates; the relative
# clause "who left" hangs under "man", so for "left" the subtree expansion must stop at it.
CONLLU = "\n".join(
    [
        "# sent_id = s1",
        "# text = The man who left bought bread.",
        row(1, "The", "the", 2, "det", "_", "_", "_"),
        row(2, "man", "man", 5, "nsubj", "_", "ARG0", "ARG0"),
        row(3, "who", "who", 4, "nsubj", "_", "R-ARG0", "_"),
        row(4, "left", "leave", 2, "acl:relcl", "leave.11", "V", "_", upos="VERB"),
        row(5, "bought", "buy", 0, "root", "buy.01", "_", "V", upos="_"),
        row(6, "bread", "bread", 5, "obj", "_", "_", "ARG1", misc="SpaceAfter=No"),
        row(7, ".", ".", 5, "punct", "_", "_", "_"),
        "",
        "# sent_id = s2",
        "# text = Hi",
        "1\tHi\thi\tINTJ\tUH\t_\t0\troot\t0:root\t_\t_\t",
        "1.1\thas\thave\tVERB\tVBZ\t_\t_\t_\t1:parataxis\tCopyOf=-1\t\t",
        "",
        "",
    ]
)

CONLL05 = """The    -     (A0*   *
cat    -        *)  *
sat    sit   (V*)   *
and    -     *      *
purred purr  *      (V*V)

Rain   -
.      -

"""

CONLL12 = """#begin document (bc/x/00/x_0001); part 000
bc/x/00/x_0001   0   0      She   PRP   (TOP(S(NP*)      -      -   -   A   *   (ARG0*)   (12)
bc/x/00/x_0001   0   1    sold    VBD         (VP*     sell    01   1   A   *        (V*)   -
bc/x/00/x_0001   0   2     the     DT         (NP*        -     -   -   A   *     (ARG1*    -
bc/x/00/x_0001   0   3    farm     NN          *)))       -     -   -   A   *          *)   -

#end document
"""


def round_trip(tmp_path: Path, text: str, name: str, **options) -> tuple[list[Example], str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    dataset = ConllSrl(ConllSrl.Config(**options))
    examples = list(dataset.read(path))
    out = tmp_path / f"out-{name}"
    assert dataset.write(examples, out) == len(examples)
    return examples, out.read_text(encoding="utf-8")


def spans_of(example: Example, group: str) -> list[tuple[str, str, str]]:
    return [(s.role, s.label, s.text(example.tokens)) for s in example.spans if s.group == group]


def test_conllu_plus_subtree_stops_at_the_predicate_and_round_trips(tmp_path: Path) -> None:
    examples, written = round_trip(tmp_path, CONLLU, "a.conllu")
    assert written == CONLLU
    first = examples[0]
    assert spans_of(first, "0") == [("target", "leave.11", "left"), ("argument", "ARG0", "The man"), ("argument", "R-ARG0", "who")]
    assert spans_of(first, "1") == [("target", "buy.01", "bought"), ("argument", "ARG0", "The man who left"), ("argument", "ARG1", "bread")]
    assert examples[1].tokens == ("Hi",) and examples[1].spans == ()
    # A predicate keeps its lemma and UPOS (skip_pos reads it); "_" gives none.
    targets = [s.attrs for s in first.spans if s.role == "target"]
    assert targets == [{"lemma": "leave", "pos": "VERB"}, {"lemma": "buy"}]


def test_the_dataset_suggests_leaving_copulas_and_nominal_predicates_alone(tmp_path: Path) -> None:
    from spanaug_core.config import RunConfig
    from spanaug_core.run import with_suggested_settings

    config, applied = with_suggested_settings(RunConfig(dataset={"name": "conll-srl"}))
    assert applied == {"skip_labels": ["be", "be.*", "do.01"], "skip_pos": ["NOUN", "AUX"]} and config.skip_pos == ["NOUN", "AUX"]
    mine, applied = with_suggested_settings(RunConfig(dataset={"name": "conll-srl"}, skip_pos=[]))
    assert mine.skip_pos == [] and "skip_pos" not in applied


def test_conllu_plus_head_mode_keeps_head_words(tmp_path: Path) -> None:
    examples, written = round_trip(tmp_path, CONLLU, "a.conllu", arguments="head")
    assert written == CONLLU
    assert spans_of(examples[0], "1")[1] == ("argument", "ARG0", "man")


def test_conll2005_and_conll2012_round_trip(tmp_path: Path) -> None:
    examples, written = round_trip(tmp_path, CONLL05, "test.props")
    assert written == CONLL05
    assert spans_of(examples[0], "0") == [("target", "sit", "sat"), ("argument", "A0", "The cat")]
    assert spans_of(examples[0], "1") == [("target", "purr", "purred")]
    assert examples[1].spans == ()
    examples, written = round_trip(tmp_path, CONLL12, "x.gold_conll")
    assert written == CONLL12
    assert spans_of(examples[0], "0") == [("target", "sell.01", "sold"), ("argument", "ARG0", "She"), ("argument", "ARG1", "the farm")]


def test_format_detection(tmp_path: Path) -> None:
    for name, text, expected in [("a.txt", CONLLU, "conllu"), ("b.txt", CONLL12, "conll2012"), ("c.txt", CONLL05, "conll2005")]:
        (tmp_path / name).write_text(text)
        assert detect_format(tmp_path / name) == expected


def test_bracket_codec_nests_and_repeats_labels() -> None:
    cells = ["(A1*", "(A2*)", "*A1)"]
    spans, close_labels = decode_column(cells)
    assert spans == [(0, 3, "A1"), (1, 2, "A2")] and close_labels
    assert encode_column(spans, 3, close_labels) == ["(A1*", "(A2*A2)", "*A1)"]
    with pytest.raises(ValueError, match="never closed"):
        decode_column(["(A0*", "*"])


def test_augmented_example_reads_back_as_written_or_is_refused(tmp_path: Path) -> None:
    """A record has new words and no dependency tree: CoNLL-U Plus cannot mark the head of its
    multiword argument, so it is refused; the bracket formats keep every span whole."""
    example = Example(
        id="aug",
        tokens=("Kim", "M.", "purchased", "a", "farm", "up"),
        spans=(
            Span(start=2, end=3, label="purchase.01", role="target", group="0", attrs={"lemma": "purchase"}),
            Span(start=0, end=2, label="ARG0", role="argument", group="0"),
            Span(start=3, end=5, label="ARG1", role="argument", group="0", attrs={"head_offset": 1}),
            Span(start=5, end=6, label="V", role="argument", group="0"),  # a particle, as CoNLL-U Plus marks it
        ),
    )
    with pytest.raises(DataError, match=r"example aug: CoNLL-U Plus marks an argument by its head word, .* of ARG0 'Kim M\.' \(2 words\).*write_format=conll2012"):
        ConllSrl(ConllSrl.Config()).write([example], tmp_path / "aug.conllu")
    for fmt, target in (("conll2012", "purchase.01"), ("conll2005", "purchase")):  # CoNLL-2005 has no frameset column
        path = tmp_path / f"aug.{fmt}"
        ConllSrl(ConllSrl.Config(write_format=fmt)).write([example], path)
        (back,) = ConllSrl(ConllSrl.Config(format=fmt)).read(path)
        assert back.tokens == example.tokens
        assert [(s.role, s.label, s.start, s.end, s.group) for s in back.spans] == [
            ("target", target, 2, 3, "0"), ("argument", "ARG0", 0, 2, "0"), ("argument", "ARG1", 3, 5, "0"), ("argument", "V", 5, 6, "0")]
    # One-word arguments have a head to mark: CoNLL-U Plus takes them.
    short = example.model_copy(update={"spans": (example.spans[0], Span(start=4, end=5, label="ARG1", role="argument", group="0"))})
    ConllSrl(ConllSrl.Config(write_format="conllu")).write([short], tmp_path / "short.conllu")
    (back,) = ConllSrl(ConllSrl.Config()).read(tmp_path / "short.conllu")
    assert [(s.label, s.start, s.end) for s in back.spans] == [("purchase.01", 2, 3), ("ARG1", 4, 5)]


def sold(argument: str = "ARG0", predicate: str = "sell.01", **attrs: str) -> Example:
    return Example(
        id="s",
        tokens=("Kim", "sold", "it"),
        spans=(
            Span(start=1, end=2, label=predicate, role="target", group="0", attrs=attrs),
            Span(start=0, end=1, label=argument, role="argument", group="0"),
        ),
    )


@pytest.mark.parametrize(
    ("fmt", "example", "message"),
    [
        ("conll2012", sold("AR G0"), r"label 'AR G0' cannot be written in conll2012: its cells cannot hold whitespace \(it separates the columns\), nor '\(', '\)' or '\*'"),
        ("conll2012", sold("A(0)"), r"label 'A\(0\)' cannot be written in conll2012"),
        ("conll2005", sold("A*"), r"label 'A\*' cannot be written in conll2005"),
        ("conll2005", sold(predicate="se ll.01"), r"predicate 'se ll\.01': lemma 'se ll' cannot be written in conll2005"),
        ("conll2012", sold(lemma="sell", frameset="0 1"), r"predicate 'sell\.01': frameset '0 1' cannot be written in conll2012"),
        ("conll2005", sold(lemma="-"), r"predicate 'sell\.01': lemma '-' cannot be written in conll2005: .*a word that is no predicate"),
        ("conllu", sold("_"), r"label '_' cannot be written in CoNLL-U Plus: its cells cannot hold '_' alone \(CoNLL-U's empty cell\)"),
        ("conllu", sold(predicate="_"), r"predicate label '_' cannot be written in CoNLL-U Plus"),
    ],
)
def test_a_label_the_format_cannot_hold_is_refused_not_written(tmp_path: Path, fmt: str, example: Example, message: str) -> None:
    """Spaces split the bracket formats' columns and brackets and stars make their notation; "_" is
    CoNLL-U's empty cell: such a label would read back as other cells, or as nothing."""
    with pytest.raises(DataError, match=rf"^example s: {message}.*; rename it in the input, or convert to a format that holds any label \(--to jsonl\)$"):
        ConllSrl(ConllSrl.Config(write_format=fmt)).write([example], tmp_path / "out")


def test_conllu_plus_keeps_a_label_with_a_space(tmp_path: Path) -> None:
    """CoNLL-U Plus splits columns at tabs only: a space in a label reads back as it is."""
    ConllSrl(ConllSrl.Config(write_format="conllu")).write([sold("AR G0")], tmp_path / "out.conllu")
    (back,) = ConllSrl(ConllSrl.Config()).read(tmp_path / "out.conllu")
    assert [s.label for s in back.spans] == ["sell.01", "AR G0"]


def test_convert_refuses_such_a_label_and_leaves_no_file(tmp_path: Path, cli, capsys) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(sold().model_dump_json() + "\n" + sold("A(0)").model_copy(update={"id": "bad"}).model_dump_json() + "\n")
    out = tmp_path / "out" / "o_conll"
    args = ("convert", "--dataset", "jsonl", "--input", source, "--to", "conll-srl", "--to-set", "write_format=conll2012", "--output", out)
    assert cli("conll_srl,jsonl")(*args) == 2
    assert "example bad: label 'A(0)' cannot be written in conll2012" in " ".join(capsys.readouterr().err.split())
    assert list(out.parent.iterdir()) == []  # neither the file nor its temporary


def test_a_file_is_written_in_one_format_the_first_examples(tmp_path: Path) -> None:
    """Sources read from CoNLL-2005 and a record after them: all CoNLL-2005, so the file reads back."""
    source = tmp_path / "src.props"
    source.write_text(CONLL05)
    dataset = ConllSrl(ConllSrl.Config())
    examples = list(dataset.read(source))
    record = examples[0].model_copy(update={"id": "rec", "tokens": ("The", "cat", "rested", "and", "purred"), "meta": {}})
    out = tmp_path / "out.props"
    dataset.write([*examples, record], out)
    back = list(ConllSrl(ConllSrl.Config()).read(out))
    assert [e.meta["format"] for e in back] == ["conll2005"] * 3
    assert [(s.label, s.start, s.end) for s in back[2].spans] == [(s.label, s.start, s.end) for s in record.spans]


@pytest.mark.parametrize(
    ("text", "name", "message"),
    [
        (CONLL05.replace("(V*V)", "(V*"), "a.props", r"a\.props:5: proposition column 2: bracket '\(V' is never closed"),
        (CONLL05.replace("purred purr", "purred"), "b.props", r"b\.props:5: expected 4 columns"),
        (CONLLU.replace("\tARG1\n", "\n"), "c.conllu", r"c\.conllu:8: expected 13 columns"),
        # The rows of a CoNLL-2012 sentence follow its "#begin document" line: the line named is the row's.
        (CONLL12.replace("*          *)   -", "*          *    -"), "d_conll", r"d_conll:4: proposition column 1: bracket '\(ARG1' is never closed"),
        (CONLL12.replace("(ARG1*    -", "(ARG1*))  -"), "e_conll", r"e_conll:4: proposition column 1: '\)' closes no open bracket in '\(ARG1\*\)\)'"),
        (CONLL12.replace("(V*)", "*   "), "f_conll", r"f_conll:2: expected exactly one \(V\*\) on a row with a lemma in proposition column 1, found 0"),
        # A predicate whose sense is "_": its column is one too many, and the line named is its row's.
        (CONLLU.replace("leave.11", "_"), "g.conllu",
         r"g\.conllu:6: expected one argument column per predicate, got 2 for 1 predicate sense\(s\): this word is marked V "
         r"in argument column 1, but its sense is '_'; give it a roleset such as leave\.01"),
        # A label with a control character, which the core refuses: the line named is the label's.
        (CONLLU.replace("R-ARG0", "R-A\x00RG0"), "i.conllu", r"i\.conllu:5: label: label 'R-A\\x00RG0' contains the control character U\+0000"),
        (CONLL12.replace("(ARG1*", "(AR\x07G1*"), "j_conll", r"j_conll:4: label: label 'AR\\x07G1' contains the control character U\+0007"),
        # A sense on a word no column marks: no word to point at, so the sentence's first word line.
        (CONLLU.replace("SpaceAfter=No\t_\t", "SpaceAfter=No\tbread.01\t"), "h.conllu", r"h\.conllu:3: expected one argument column per predicate, got 2 for 3"),
    ],
)
def test_malformed_input_names_file_line_and_expectation(tmp_path: Path, text: str, name: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DataError, match=message):
        list(ConllSrl(ConllSrl.Config()).read(path))


def test_propbank_frames_describe_rolesets(tmp_path: Path) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    (frames / "buy.xml").write_text(
        '<frameset><predicate lemma="buy"><roleset id="buy.01" name="purchase"><roles>'
        '<role n="0" descr="buyer"/><role n="1" descr="thing bought"/></roles></roleset></predicate></frameset>'
    )
    path = tmp_path / "a.conllu"
    path.write_text(CONLLU)
    dataset = ConllSrl(ConllSrl.Config(frames=frames))
    example = next(iter(dataset.read(path)))
    described = {(s.label, s.attrs.get("description")) for s in example.spans if s.group == "1"}
    assert described == {("buy.01", "purchase"), ("ARG0", "buyer"), ("ARG1", "thing bought")}
    assert dataset.warnings["roleset not in frame files"] == 1  # leave.11


@pytest.mark.real_data
def test_universal_propbank_ewt_dev_round_trip(shared_member, tmp_path: Path) -> None:
    path = shared_member("up_english_ewt.tar.xz", "dev.conllu")
    dataset = ConllSrl(ConllSrl.Config())
    examples = list(dataset.read(path))
    assert len(examples) == 2002
    assert sum(s.role == "target" for e in examples for s in e.spans) == 4977
    dataset.write(examples, tmp_path / "out.conllu")
    assert (tmp_path / "out.conllu").read_bytes() == path.read_bytes()


@pytest.mark.real_data
@pytest.mark.parametrize(("member", "senses", "blank_rows", "blank_sentences"), [("dev.conllu", 4977, 179, 28), ("test.conllu", 4799, 87, 15)])
def test_every_ewt_roleset_is_a_target_and_the_blank_rows_are_no_predicates(
    shared_member, member: str, senses: int, blank_rows: int, blank_sentences: int
) -> None:
    # ../shared/data/README.md counts 5,156 / 4,886 "predicates": every word row whose sense
    # cell is not "_", which includes the blank cells of sentences outside PropBank.
    path = shared_member("up_english_ewt.tar.xz", member)
    blocks = [[line.split("\t") for line in block.split("\n") if line and not line.startswith("#")]
              for block in path.read_text(encoding="utf-8").split("\n\n") if block.strip()]
    words = [[row for row in rows if row[0].isdigit()] for rows in blocks]
    rolesets = [sum(row[10] not in ("_", "") for row in rows) for rows in words]
    blank = [sum(row[10] == "" for row in rows) for rows in words]
    examples = list(ConllSrl(ConllSrl.Config()).read(path))
    assert [sum(s.role == "target" for s in e.spans) for e in examples] == rolesets and sum(rolesets) == senses
    assert sum(blank) == blank_rows and sum(b > 0 for b in blank) == blank_sentences
    assert all(b == len(rows) for b, rows in zip(blank, words) if b)  # every word of those sentences is blank


# UP EWT as the user had it: "M." one token, "F-16-launched" split as UD splits it, a
# multiword ARG1 ("a F-16-launched bomb") found through the dependency tree, and a second
# predicate ("launched") whose proposition the records carry along.
EWT = "\n".join(
    [
        "# sent_id = ewt-1",
        "# text = Jennifer M. Anderson will buy a F-16-launched bomb quickly.",
        row(1, "Jennifer", "Jennifer", 5, "nsubj", "_", "ARG0", "_", upos="PROPN"),
        row(2, "M.", "M.", 1, "flat", "_", "_", "_", upos="PROPN"),
        row(3, "Anderson", "Anderson", 1, "flat", "_", "_", "_", upos="PROPN"),
        row(4, "will", "will", 5, "aux", "_", "_", "_", upos="AUX"),
        row(5, "buy", "buy", 0, "root", "buy.01", "V", "_", upos="VERB"),
        row(6, "a", "a", 12, "det", "_", "_", "_", upos="DET"),
        row(7, "F", "f", 11, "compound", "_", "_", "_", misc="SpaceAfter=No", upos="NOUN"),
        row(8, "-", "-", 9, "punct", "_", "_", "_", misc="SpaceAfter=No", upos="PUNCT"),
        row(9, "16", "16", 7, "compound", "_", "_", "_", misc="SpaceAfter=No", upos="NUM"),
        row(10, "-", "-", 11, "punct", "_", "_", "_", misc="SpaceAfter=No", upos="PUNCT"),
        row(11, "launched", "launch", 12, "acl", "launch.01", "_", "V", upos="VERB"),
        row(12, "bomb", "bomb", 5, "obj", "_", "ARG1", "ARG1", upos="NOUN"),
        row(13, "quickly", "quickly", 5, "advmod", "_", "ARGM-MNR", "_", misc="SpaceAfter=No", upos="ADV"),
        row(14, ".", ".", 5, "punct", "_", "_", "_", upos="PUNCT"),
        "",
        "",
    ]
)


def test_augmented_srl_records_written_back_read_as_augmented(tmp_path: Path, monkeypatch, capsys) -> None:
    """run on UP EWT -> augmented.jsonl -> convert --to conll-srl -> read back: the spans of augmented.jsonl."""
    import json

    from doubles import DoublesPlugin

    import spanaug_core.plugins
    import spanaug_core.run
    from spanaug_core.cli import main
    from spanaug_core.plugins import Registry

    reg = Registry()
    reg.add_plugin(DoublesPlugin(), "doubles")
    monkeypatch.setattr(spanaug_core.plugins, "default_registry", lambda: reg)
    monkeypatch.setattr(spanaug_core.run, "default_registry", lambda: reg)
    source = tmp_path / "ewt.conllu"
    source.write_text(EWT)
    run = tmp_path / "run"
    assert main(["run", "--dataset", "conll-srl", "--input", str(source), "--decoder", "synonym", "--aligner", "diff",
                 "--iterations", "2", "--output", str(run), "--no-progress"]) == 0
    records = [json.loads(line) for line in (run / "augmented.jsonl").read_text().splitlines()]
    assert [r["text"] for r in records] == ["Jennifer M. Anderson will purchase a F-16-launched bomb quickly.",
                                            "Jennifer M. Anderson will acquire a F-16-launched bomb quickly."]
    assert all("M." in r["tokens"] for r in records)  # not split again into "M" "."

    def spans(items) -> list[tuple]:
        return sorted((s["start"], s["end"], s["label"], s["role"], s["group"]) for s in items)

    # The record holds buy's proposition whole ("a F - 16 - launched bomb") and, carried, launch's.
    assert (5, 12, "ARG1", "argument", "0") in spans(records[0]["spans"]) and (10, 11, "launch.01", "target", "1") in spans(records[0]["spans"])
    capsys.readouterr()
    base = ["convert", "--dataset", "jsonl", "--input", str(run / "augmented.jsonl"), "--to", "conll-srl"]
    assert main([*base, "--output", str(tmp_path / "aug.conllu")]) == 2  # head words only: refused, not written wrong
    assert "--to-set write_format=conll2012" in capsys.readouterr().err and not (tmp_path / "aug.conllu").exists()
    assert main([*base, "--to-set", "write_format=conll2012", "--output", str(tmp_path / "aug_conll")]) == 0
    back = list(ConllSrl(ConllSrl.Config()).read(tmp_path / "aug_conll"))
    assert [e.tokens for e in back] == [tuple(r["tokens"]) for r in records]
    assert [spans(s.model_dump() for s in e.spans) for e in back] == [spans(r["spans"]) for r in records]
    # With the sources first, one file in one format, the sources' spans intact too.
    assert main([*base, "--with-sources", "--to-set", "write_format=conll2012", "--output", str(tmp_path / "train_conll")]) == 0
    both = list(ConllSrl(ConllSrl.Config()).read(tmp_path / "train_conll"))
    (ewt,) = ConllSrl(ConllSrl.Config()).read(source)
    assert [e.tokens for e in both] == [ewt.tokens, *(tuple(r["tokens"]) for r in records)]
    assert spans(s.model_dump() for s in both[0].spans) == spans(s.model_dump() for s in ewt.spans)
