"""Real data: CoNLL-2003 eng.testb as a Hugging Face dataset, through spanaug and back, and through a DocBin.

The dataset is built here the way the Hub's ``conll2003`` holds it (IOB2 ClassLabels in its
order, POS tags as ClassLabels), from the raw IOB1 file; the sentence and entity counts
are taken from the raw file by a count that shares no code with spanaug's readers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

datasets = pytest.importorskip("datasets", reason="the hf dataset needs the datasets extra")
pytest.importorskip("spacy", reason="the spacy dataset needs spaCy (the pos extra)")

from spanaug_hf.dataset import HfDataset  # noqa: E402
from spanaug_docbin.docbin import SpacyDataset  # noqa: E402

from spanaug_core.cli import main  # noqa: E402

NAMES = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]


def raw_sentences(path: Path) -> list[list[list[str]]]:
    """Sentences of a CoNLL-2003 file as lists of split lines, -DOCSTART- blocks left out."""
    sentences, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        if line.strip():
            current.append(line.split())
        elif current:
            if current[0][0] != "-DOCSTART-":
                sentences.append(current)
            current = []
    return sentences


def opens(tags: list[str]) -> list[bool]:
    """Where an IOB1 entity begins: a B- tag, or an I- tag after O or another type."""
    return [tag != "O" and (tag[0] == "B" or i == 0 or tags[i - 1][2:] != tag[2:]) for i, tag in enumerate(tags)]


@pytest.mark.real_data
def test_eng_testb_through_hf_spanaug_and_docbin(shared_member, tmp_path: Path, capsys) -> None:
    sentences = raw_sentences(shared_member("conll2003.tar.xz", "eng.testb"))
    iob1 = [[cells[-1] for cells in sentence] for sentence in sentences]
    assert len(sentences) == 3453 and sum(sum(opens(tags)) for tags in iob1) == 5648
    iob2 = [[("B" if first else tag[0]) + tag[1:] for tag, first in zip(tags, opens(tags), strict=True)] for tags in iob1]
    pos = sorted({cells[1] for sentence in sentences for cells in sentence})
    features = datasets.Features({
        "id": datasets.Value("string"),
        "tokens": datasets.List(datasets.Value("string")),
        "pos_tags": datasets.List(datasets.ClassLabel(names=pos)),
        "ner_tags": datasets.List(datasets.ClassLabel(names=NAMES)),
    })
    test = datasets.Dataset.from_dict({
        "id": [str(i) for i in range(len(sentences))],
        "tokens": [[cells[0] for cells in sentence] for sentence in sentences],
        "pos_tags": [[pos.index(cells[1]) for cells in sentence] for sentence in sentences],
        "ner_tags": [[NAMES.index(tag) for tag in tags] for tags in iob2],
    }, features=features)
    hub = tmp_path / "conll2003"
    datasets.DatasetDict({"test": test}).save_to_disk(str(hub))

    examples = list(HfDataset(HfDataset.Config()).read(hub))
    assert len(examples) == 3453 and sum(len(e.spans) for e in examples) == 5648

    def convert(*args: object) -> None:
        assert main(["convert", *map(str, args)]) == 0, capsys.readouterr().err

    # hf -> spanaug JSONL -> hf: the same dataset, features and rows.
    convert("--dataset", "hf", "--input", hub, "--to", "jsonl", "--output", tmp_path / "testb.jsonl")
    convert("--dataset", "jsonl", "--input", tmp_path / "testb.jsonl", "--to", "hf", "--output", tmp_path / "back")
    back = datasets.load_from_disk(str(tmp_path / "back"))
    assert list(back) == ["test"] and back["test"].features == features
    assert back["test"].to_list() == test.to_list()

    # hf -> DocBin -> hf (with the original's features): the same tokens and tags.
    convert("--dataset", "hf", "--input", hub, "--to", "spacy", "--output", tmp_path / "testb.spacy")
    from_docbin = list(SpacyDataset(SpacyDataset.Config()).read(tmp_path / "testb.spacy"))
    assert len(from_docbin) == 3453 and sum(len(e.spans) for e in from_docbin) == 5648
    assert [(e.tokens, e.spans) for e in from_docbin] == [(e.tokens, e.spans) for e in examples]
    convert("--dataset", "spacy", "--input", tmp_path / "testb.spacy", "--to", "hf", "--to-set", f"like={hub}",
            "--to-set", "write_split=test", "--output", tmp_path / "again")
    again = datasets.load_from_disk(str(tmp_path / "again"))["test"]
    assert again.features == features
    assert again["tokens"] == test["tokens"] and again["ner_tags"] == test["ner_tags"]
