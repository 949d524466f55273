"""spacy: DocBin files read into spans (doc.ents, doc.spans groups) and written back as spacy train reads them."""

from __future__ import annotations

import subprocess
import sys
import zlib
from pathlib import Path

import pytest

spacy = pytest.importorskip("spacy", reason="the spacy dataset needs spaCy (the pos extra)")

import srsly  # noqa: E402
from spacy.tokens import Doc, DocBin  # noqa: E402
from spacy.tokens import Span as SpacySpan  # noqa: E402
from spacy.vocab import Vocab  # noqa: E402
from spanaug_docbin.docbin import SpacyDataset  # noqa: E402

from spanaug_core.errors import DataError, SpanaugError  # noqa: E402
from spanaug_core.types import Example, Span  # noqa: E402


def docs(vocab: Vocab) -> list[Doc]:
    """Docs as users keep them: NER with tags and a parse; spancat groups; a whitespace token; no NER; cats."""
    ner = Doc(
        vocab, words=["John", "Smith", "visited", "New", "York", "."], spaces=[True, True, True, True, False, False],
        tags=["NNP", "NNP", "VBD", "NNP", "NNP", "."], heads=[1, 2, 2, 4, 2, 2], deps=["compound", "nsubj", "ROOT", "compound", "dobj", "punct"],
        ents=["B-PER", "I-PER", "O", "B-GPE", "I-GPE", "O"],
    )
    ner.spans["sc"] = [SpacySpan(ner, 0, 2, "PERSON"), SpacySpan(ner, 3, 5, "PLACE"), SpacySpan(ner, 3, 4, "PART")]
    spaced = Doc(vocab, words=["Hi", "\n", "Ann", "!"], spaces=[False, False, False, False], ents=["O", "O", "B-PER", "O"])
    spancat = Doc(vocab, words=["a", "red", "car"], spaces=[True, True, False], lemmas=["a", "red", "car"])
    spancat.spans["sc"] = [SpacySpan(spancat, 1, 3, "THING")]
    spancat.cats = {"ADS": 1.0}
    story = Doc(vocab, words=["Ann", "left", ".", "Bo", "stayed", "."], spaces=[True, False, True, True, False, False],
                sent_starts=[True, False, False, True, False, False], ents=["B-PER", "O", "O", "B-PER", "O", "O"])
    story.spans["sc"] = [SpacySpan(story, 3, 5, "EVENT")]
    story.cats = {"NEWS": 1.0}
    return [ner, spaced, spancat, story]


def save(docs_: list[Doc], path: Path) -> Path:
    DocBin(docs=docs_, store_user_data=False).to_disk(path)
    return path


def data(doc: Doc) -> dict:
    """What a doc holds, to compare two docs."""
    return {**doc.to_json(), "iob": [t.ent_iob_ for t in doc], "lemmas": [t.lemma_ for t in doc]}


def spacy_dataset(**options) -> SpacyDataset:
    return SpacyDataset(SpacyDataset.Config(**options))


def test_reads_ents_and_span_groups_as_spans(tmp_path: Path) -> None:
    path = save(docs(Vocab()), tmp_path / "train.spacy")
    examples = list(spacy_dataset().read(path))
    # A doc that marks its sentences is read one sentence at a time.
    assert [e.id for e in examples] == ["train.spacy#0", "train.spacy#1", "train.spacy#2", "train.spacy#3.0", "train.spacy#3.1"]
    assert [e.tokens for e in examples[3:]] == [("Ann", "left", "."), ("Bo", "stayed", ".")]
    assert [(s.start, s.end, s.label, s.group) for s in examples[4].spans] == [(0, 1, "PER", None), (0, 2, "EVENT", "sc")]
    ner = examples[0]
    assert [(s.start, s.end, s.label, s.role, s.group) for s in ner.spans] == [
        (0, 2, "PER", "entity", None), (3, 5, "GPE", "entity", None),
        (0, 2, "PERSON", "entity", "sc"), (3, 5, "PLACE", "entity", "sc"), (3, 4, "PART", "entity", "sc"),
    ]
    assert examples[1].tokens == ("Hi", "Ann", "!") and examples[1].spans[0].start == 1  # the newline waits in meta
    assert [s.group for s in spacy_dataset(groups=[], entities="rewrite").read(path).__next__().spans] == [None, None]
    assert {s.role for e in spacy_dataset(entities="rewrite").read(path) for s in e.spans} == {"target"}
    assert [e.id for e in spacy_dataset(unit="doc").read(path)][3:] == ["train.spacy#3"]
    assert spacy_dataset(unit="doc").count(path) == 4


def test_docs_read_and_written_back_are_the_same(tmp_path: Path) -> None:
    original = docs(Vocab())
    path = save(original, tmp_path / "in.spacy")
    out = tmp_path / "out.spacy"
    assert spacy_dataset().write(spacy_dataset().read(path), out) == 5  # examples: the story's two sentences are one doc again
    again = list(DocBin().from_disk(out).get_docs(Vocab()))
    assert [data(d) for d in again] == [data(d) for d in original]
    assert [t.ent_iob_ for t in again[2]] == ["", "", ""]  # no NER annotation stays none, not O
    # Sentences that do not follow each other are docs of their own.
    sentences = list(spacy_dataset().read(path))[3:]
    spacy_dataset().write(sentences[::-1], out)
    assert [d.text for d in DocBin().from_disk(out).get_docs(Vocab())] == ["Bo stayed.", "Ann left. "]


def test_a_span_across_sentences_is_counted_not_read(tmp_path: Path) -> None:
    doc = Doc(Vocab(), words=["a", "b", "c"], sent_starts=[True, False, True])
    doc.spans["sc"] = [SpacySpan(doc, 1, 3, "X")]
    reader = spacy_dataset()
    assert [e.spans for e in reader.read(save([doc], tmp_path / "x.spacy"))] == [(), ()]
    assert reader.warnings == {"span across a sentence boundary not read": 1}


def test_records_from_elsewhere_keep_their_tokens_and_groups(tmp_path: Path) -> None:
    path = save(docs(Vocab()), tmp_path / "in.spacy")
    spancat = list(spacy_dataset().read(path))[2]
    records = [
        Example(id="x/it1", tokens=("U.S.", "firms", "(", "big", ")", "don't", "sell", "."),
                spans=(Span(start=0, end=1, label="GPE", role="entity"), Span(start=1, end=2, label="ORG", group="sc")),
                meta={"source_id": "x"}),
        Example(id=f"{spancat.id}/it1", tokens=("a", "scarlet", "car"), spans=(Span(start=1, end=3, label="THING", group="sc"),),
                meta={"source_id": spancat.id}),
    ]
    out = tmp_path / "aug.spacy"
    spacy_dataset().write([spancat, *records], out)
    _, first, second = DocBin().from_disk(out).get_docs(Vocab())
    assert [t.text for t in first] == list(records[0].tokens)  # no tokenizer ran
    assert first.text == "U.S. firms (big) don't sell."
    assert [(e.text, e.label_) for e in first.ents] == [("U.S.", "GPE")]
    assert [t.ent_iob_ for t in first][1:] == ["O"] * 7
    assert [(s.text, s.label_) for s in first.spans["sc"]] == [("firms", "ORG")]
    # The record of a doc without NER annotation has none either (not all O).
    assert [t.ent_iob_ for t in second] == ["", "", ""] and [(s.text, s.label_) for s in second.spans["sc"]] == [("scarlet car", "THING")]
    assert not first.has_annotation("SENT_START")  # its source is unknown here, the spancat doc marks no sentences
    # The record of a sentence of a doc that marks them is marked one sentence.
    story = list(spacy_dataset().read(path))[3]
    record = Example(id="s/it1", tokens=("Ann", "went", "away", "."), spans=(Span(start=0, end=1, label="PER"),), meta={"source_id": story.id})
    spacy_dataset().write([story, record], out)
    assert [len(list(d.sents)) for d in DocBin().from_disk(out).get_docs(Vocab())] == [1, 1]


def test_overlapping_entities_need_a_group(tmp_path: Path) -> None:
    example = Example(id="o", tokens=("New", "York", "City"), spans=(Span(start=0, end=2, label="GPE"), Span(start=0, end=3, label="GPE")))
    with pytest.raises(DataError, match="example o: entities overlap at token 0; doc.ents holds one entity per token"):
        spacy_dataset().write([example], tmp_path / "o.spacy")


def test_files_spacy_cannot_read_are_refused_with_what_was_expected(tmp_path: Path) -> None:
    message = srsly.msgpack_loads(zlib.decompress(DocBin(docs=docs(Vocab())).to_bytes()))
    # spaCy 2 wrote the same table without a version, flags or span groups (its attribute ids differ).
    for key in ("version", "flags", "span_groups"):
        del message[key]
    old = tmp_path / "v2.spacy"
    old.write_bytes(zlib.compress(srsly.msgpack_dumps(message)))
    with pytest.raises(DataError, match=r"v2\.spacy: a DocBin from another spaCy major version \(no layout version, as spaCy 2 wrote; spaCy 3\.\S+ reads version 0\.1\); expected a \.spacy file written by spaCy 3"):
        list(spacy_dataset().read(old))
    newer = tmp_path / "v4.spacy"
    newer.write_bytes(zlib.compress(srsly.msgpack_dumps({**message, "version": "0.2"})))
    with pytest.raises(DataError, match=r"v4\.spacy: a DocBin from another spaCy major version \(layout version 0\.2"):
        list(spacy_dataset().read(newer))
    junk = tmp_path / "junk.spacy"
    junk.write_text("not a docbin")
    with pytest.raises(DataError, match=r"junk\.spacy: not a DocBin"):
        list(spacy_dataset().read(junk))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"empty: holds no \.spacy file"):
        list(spacy_dataset().read(tmp_path / "empty"))


def test_a_folder_reads_every_docbin_in_it(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    (folder / "b").mkdir(parents=True)
    vocab = Vocab()
    save(docs(vocab)[:1], folder / "a.spacy")
    save(docs(vocab)[1:], folder / "b" / "c.spacy")
    assert [e.id for e in spacy_dataset(unit="doc").read(folder)] == ["a.spacy#0", "b/c.spacy#0", "b/c.spacy#1", "b/c.spacy#2"]


def test_without_spacy_the_error_names_the_extra(tmp_path: Path, monkeypatch) -> None:
    path = save(docs(Vocab()), tmp_path / "in.spacy")
    monkeypatch.setitem(sys.modules, "spacy", None)
    with pytest.raises(SpanaugError, match=r"needs spaCy: pip install 'spanaug\[pos\]'"):
        list(spacy_dataset().read(path))


def test_registered_under_its_name(installed_registry) -> None:
    assert isinstance(installed_registry.create("dataset", "spacy", groups=["sc"]), SpacyDataset)


@pytest.mark.slow
def test_spacy_train_and_debug_data_accept_what_is_written(tmp_path: Path) -> None:
    """A tiny real `spacy train` (NER and spancat, one epoch, CPU) on a written DocBin with augmented records."""
    source = save(docs(Vocab()), tmp_path / "in.spacy")
    records = [Example(id="r/it1", tokens=("Mary", "Jones", "visited", "Old", "Paris", "."),
                       spans=(Span(start=0, end=2, label="PER", role="entity"), Span(start=3, end=5, label="PLACE", group="sc")),
                       meta={"source_id": "in.spacy#0"})]
    train = tmp_path / "train.spacy"
    spacy_dataset().write([*spacy_dataset().read(source), *records], train)
    config = tmp_path / "config.cfg"
    python = [sys.executable, "-m", "spacy"]
    subprocess.run([*python, "init", "config", "-l", "en", "-p", "ner,spancat", str(config)], check=True, capture_output=True)
    paths = ["--paths.train", str(train), "--paths.dev", str(train)]
    debug = subprocess.run([*python, "debug", "data", str(config), *paths], capture_output=True, text=True)
    assert "Corpus is loadable" in debug.stdout and "5 training docs" in debug.stdout, debug.stdout
    trained = subprocess.run(
        [*python, "train", str(config), *paths, "--output", str(tmp_path / "model"), "--training.max_epochs", "1", "--training.max_steps", "0"],
        capture_output=True, text=True,
    )
    assert trained.returncode == 0, trained.stderr[-2000:]
    assert (tmp_path / "model" / "model-last" / "config.cfg").is_file()


def test_run_on_a_docbin_and_write_sources_with_records_for_spacy_train(tmp_path: Path, monkeypatch, capsys) -> None:
    """`spanaug run --dataset spacy`, then `convert --with-sources --to spacy`: the corpus and its records."""
    import json

    import spanaug_core.plugins
    import spanaug_core.run
    from doubles import DoublesPlugin

    from spanaug_core.cli import main
    from spanaug_core.plugins import Registry

    reg = Registry()
    reg.add_plugin(DoublesPlugin(), "doubles")
    monkeypatch.setattr(spanaug_core.plugins, "default_registry", lambda: reg)
    monkeypatch.setattr(spanaug_core.run, "default_registry", lambda: reg)
    vocab = Vocab()
    story = Doc(vocab, words=["Ann", "will", "buy", "a", "big", "car", ".", "Bo", "left", "."], sent_starts=[True] + [False] * 6 + [True, False, False],
                ents=["B-PER", "O", "O", "O", "O", "O", "O", "B-PER", "O", "O"])
    corpus = save([story], tmp_path / "train.spacy")
    run = tmp_path / "run"
    assert main(["run", "--dataset", "spacy", "--input", str(corpus), "--decoder", "synonym", "--aligner", "diff",
                 "--iterations", "1", "--set", "min_words=1", "--output", str(run), "--no-progress"]) == 0
    records = [json.loads(line) for line in (run / "augmented.jsonl").read_text().splitlines()]
    assert [r["source_id"] for r in records] == ["train.spacy#0.0"]
    out = tmp_path / "train-aug.spacy"
    assert main(["convert", "--dataset", "jsonl", "--input", str(run / "augmented.jsonl"), "--with-sources", "--to", "spacy", "--output", str(out)]) == 0
    source, record = DocBin().from_disk(out).get_docs(Vocab())
    assert data(source) == data(story)
    assert record.text == records[0]["text"] and [(e.text, e.label_) for e in record.ents] == [("Ann", "PER")]
    assert len(list(record.sents)) == 1
