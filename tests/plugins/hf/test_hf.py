"""hf: Hugging Face datasets read into entity spans and written back with their features, splits and columns."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

datasets = pytest.importorskip("datasets", reason="the hf dataset needs the datasets extra")

from doubles import DoublesPlugin  # noqa: E402
from spanaug_hf.dataset import HfDataset  # noqa: E402
from spanaug_jsonl.dataset import JsonlDataset  # noqa: E402

import spanaug_core.plugins  # noqa: E402
import spanaug_core.run  # noqa: E402
from spanaug_core.cli import main  # noqa: E402
from spanaug_core.errors import DataError, SpanaugError  # noqa: E402
from spanaug_core.plugins import Registry  # noqa: E402
from spanaug_core.types import Example, Span  # noqa: E402

# The ClassLabel names of the Hub's conll2003, in its order: a model's label ids depend on it.
NAMES = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
POS = ["NNP", "VBZ", "DT", "NN", "."]
ROWS = {
    "train": [
        (["John", "Smith", "will", "buy", "a", "car", "quickly", "."], [1, 2, 0, 0, 0, 0, 0, 0]),
        (["The", "EU", "rejects", "it", "."], [0, 3, 0, 0, 0]),
        (["Peter", "lives", "in", "New", "York", "."], [1, 0, 0, 5, 6, 0]),
    ],
    "validation": [(["Paris", "is", "big", "."], [5, 0, 0, 0])],
}


def features():
    return datasets.Features(
        {
            "id": datasets.Value("string"),
            "tokens": datasets.List(datasets.Value("string")),
            "pos_tags": datasets.List(datasets.ClassLabel(names=POS)),
            "ner_tags": datasets.List(datasets.ClassLabel(names=NAMES)),
        }
    )


def table(rows) -> datasets.Dataset:
    return datasets.Dataset.from_dict(
        {
            "id": [str(i) for i in range(len(rows))],
            "tokens": [tokens for tokens, _ in rows],
            "pos_tags": [[i % len(POS) for i in range(len(tokens))] for tokens, _ in rows],
            "ner_tags": [tags for _, tags in rows],
        },
        features=features(),
    )


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A DatasetDict folder as a user keeps one: train and validation, POS and NER ClassLabels."""
    folder = tmp_path / "corpus"
    datasets.DatasetDict({name: table(rows) for name, rows in ROWS.items()}).save_to_disk(str(folder))
    return folder


def hf(**options) -> HfDataset:
    return HfDataset(HfDataset.Config(**options))


def test_reads_every_split_with_entities_and_columns(corpus: Path) -> None:
    examples = list(hf().read(corpus))
    assert [e.id for e in examples] == ["train/0", "train/1", "train/2", "validation/0"]
    first = examples[0]
    assert [(s.start, s.end, s.label, s.role, s.group) for s in first.spans] == [(0, 2, "PER", "entity", None)]
    assert first.meta["scheme"] == "iob2"
    assert first.meta["hf"]["split"] == "train" and first.meta["hf"]["columns"] == {"id": "0", "pos_tags": [0, 1, 2, 3, 4, 0, 1, 2]}
    assert [(s.text(examples[2].tokens), s.label) for s in examples[2].spans] == [("Peter", "PER"), ("New York", "LOC")]
    train = list(hf(split="train", entities="rewrite").read(corpus))
    assert [e.id for e in train] == ["0", "1", "2"] and {s.role for e in train for s in e.spans} == {"target"}
    assert hf().count(corpus) == 4 and hf(split="validation").count(corpus) == 1


def test_round_trip_through_jsonl_keeps_features_rows_and_splits(corpus: Path, tmp_path: Path) -> None:
    as_jsonl = tmp_path / "x.jsonl"
    JsonlDataset(JsonlDataset.Config()).write(hf().read(corpus), as_jsonl)
    out = tmp_path / "back"
    assert hf().write(JsonlDataset(JsonlDataset.Config()).read(as_jsonl), out) == 4
    back, original = datasets.load_from_disk(str(out)), datasets.load_from_disk(str(corpus))
    assert list(back) == list(original)
    for name in original:
        assert back[name].features == original[name].features
        assert back[name].to_list() == original[name].to_list()


def test_augmented_records_join_their_source_split_and_like_gives_the_rest(corpus: Path, tmp_path: Path) -> None:
    sources = list(hf(split="train").read(corpus))
    record = Example(
        id="0/it1", tokens=("John", "Smith", "will", "purchase", "a", "car", "."),
        spans=(Span(start=0, end=2, label="PER", role="entity"),), meta={"source_id": "0"},
    )
    out = tmp_path / "augmented"
    assert hf(like=corpus).write([*sources, record], out) == 4
    written = datasets.load_from_disk(str(out))
    assert list(written) == ["train", "validation"]  # validation copied from like, in like's order
    assert written["validation"].to_list() == datasets.load_from_disk(str(corpus))["validation"].to_list()
    assert written["train"].features == features()
    last = written["train"][-1]
    assert last == {"id": "0/it1", "tokens": list(record.tokens), "pos_tags": None, "ner_tags": [1, 2, 0, 0, 0, 0, 0]}
    # Without its source, a record goes to write_split; without copy_splits, like's other splits stay out.
    alone = tmp_path / "alone"
    hf(like=corpus, write_split="extra", copy_splits=False).write([record], alone)
    assert list(datasets.load_from_disk(str(alone))) == ["extra"]


def test_data_from_elsewhere_gets_classlabel_names_or_the_given_ones(tmp_path: Path) -> None:
    examples = [
        Example(id="a", tokens=("Ann", "met", "Bo", "Li"), spans=(Span(start=0, end=1, label="PER"), Span(start=2, end=4, label="PER"))),
        Example(id="b", tokens=("in", "Rome"), spans=(Span(start=1, end=2, label="LOC", role="entity"),)),
    ]
    out = tmp_path / "new"
    hf().write(examples, out)
    written = datasets.load_from_disk(str(out))
    assert written.features["ner_tags"].feature.names == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    assert written.to_list()[0] == {"id": "a", "tokens": ["Ann", "met", "Bo", "Li"], "ner_tags": [3, 0, 3, 4]}
    hf(labels=NAMES).write(examples, tmp_path / "named")
    assert datasets.load_from_disk(str(tmp_path / "named")).features["ner_tags"].feature.names == NAMES


def test_parquet_and_json_lines_files(corpus: Path, tmp_path: Path) -> None:
    parquet = tmp_path / "train.parquet"
    table(ROWS["train"]).to_parquet(str(parquet))
    from_parquet = list(hf().read(parquet))
    assert [e.id for e in from_parquet] == ["0", "1", "2"] and from_parquet[2].spans[1].label == "LOC"
    lines = tmp_path / "train.jsonl"
    table(ROWS["train"]).to_json(str(lines))
    with pytest.raises(DataError, match=r"train\.jsonl: line 1: column 'ner_tags' holds integer tags but no ClassLabel names; give them"):
        list(hf().read(lines))
    from_lines = list(hf(labels=NAMES).read(lines))
    assert [e.spans for e in from_lines] == [e.spans for e in from_parquet]
    # Writing a file: one split, features of like (parquet keeps them; JSON lines has ids).
    out = tmp_path / "out.parquet"
    hf(format="parquet", like=parquet).write(from_lines, out)
    import pyarrow.parquet as pq

    assert datasets.Dataset(pq.read_table(out)).to_list() == table(ROWS["train"]).to_list()
    with pytest.raises(SpanaugError, match="a parquet file holds one split, but the examples go to 2"):
        hf(format="parquet").write(hf().read(corpus), tmp_path / "two.parquet")


def test_tag_strings_and_iob1_are_read_and_written_in_their_scheme(tmp_path: Path) -> None:
    path = tmp_path / "iob1.jsonl"
    rows = [{"tokens": ["EU", "rejects", "Peter", "Paris"], "ner_tags": ["I-ORG", "O", "I-PER", "B-PER"]}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    (example,) = hf().read(path)
    assert example.id == "0" and example.meta["scheme"] == "iob1"
    assert [(s.start, s.end, s.label) for s in example.spans] == [(0, 1, "ORG"), (2, 3, "PER"), (3, 4, "PER")]
    out = tmp_path / "out.jsonl"
    hf(format="jsonl").write([example], out)
    assert json.loads(out.read_text())["ner_tags"] == [2, 0, 4, 3]  # O, B-ORG, I-ORG, B-PER, I-PER: IOB1 kept


@pytest.mark.parametrize(
    ("rows", "options", "message"),
    [
        ([{"words": ["a"], "ner_tags": ["O"]}], {}, r"bad\.jsonl: has no column 'tokens' \(columns: words, ner_tags\); name yours with tokens=COLUMN"),
        ([{"tokens": ["a", "b"], "ner_tags": [0, 7]}], {"labels": ["O", "B-X", "I-X"]},
         r"bad\.jsonl: line 1: tag 7 \(token 1\) is outside the 3 ClassLabel names of 'ner_tags' \(0-2\)"),
        ([{"tokens": ["a"], "ner_tags": ["X-ORG"]}], {}, r"bad\.jsonl: line 1: token 0: expected a chunk tag"),
        ([{"tokens": ["a", "b"], "ner_tags": ["O"]}], {}, r"bad\.jsonl: line 1: 2 tokens but 1 tags"),
        ([{"tokens": ["a", "b"], "ner_tags": ["O", "I-X"]}], {"scheme": "iob2", "strict": True},
         r"bad\.jsonl: line 1: token 1: I-X only after B-X or I-X in IOB2"),
    ],
    ids=["missing-column", "outside-classlabel", "not-a-tag", "lengths", "strict"],
)
def test_bad_rows_name_the_file_the_row_and_what_was_expected(tmp_path: Path, rows, options, message) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(DataError, match=message):
        list(hf(**options).read(path))


def test_bad_inputs_and_outputs_say_what_was_expected(corpus: Path, tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(DataError, match=r"plain: not a datasets folder \(no dataset_dict.json or state.json\); expected a folder written by save_to_disk"):
        list(hf().read(tmp_path / "plain"))
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(DataError, match=r"x\.csv: unknown layout \.csv; expected"):
        list(hf().read(tmp_path / "x.csv"))
    with pytest.raises(DataError, match=r"corpus: has no split 'test' \(splits: train, validation\)"):
        list(hf(split="test").read(corpus))
    with pytest.raises(DataError, match=r"split train has no column 'labels'.*name yours with tags=COLUMN"):
        list(hf(tags="labels").read(corpus))
    record = Example(id="r/it1", tokens=("Bo", "won"), spans=(Span(start=0, end=1, label="EVENT", role="entity"),))
    with pytest.raises(DataError, match=r"example r/it1: tag 'B-EVENT' is not one of the ClassLabel names of 'ner_tags' in .*corpus \(O, B-PER"):
        hf(like=corpus).write([record], tmp_path / "o")


def test_without_datasets_the_error_names_the_extra(corpus: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(SpanaugError, match=r"needs the datasets package: pip install 'spanaug\[datasets\]'"):
        list(hf().read(corpus))


def test_registered_under_its_name(installed_registry) -> None:
    assert isinstance(installed_registry.create("dataset", "hf", split="train"), HfDataset)


def test_run_on_hf_data_and_write_sources_with_records_for_training(corpus: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """`spanaug run --dataset hf`, then `convert --with-sources`: what load_from_disk gives a training script."""
    reg = Registry()
    reg.add_plugin(DoublesPlugin(), "doubles")
    monkeypatch.setattr(spanaug_core.plugins, "default_registry", lambda: reg)
    monkeypatch.setattr(spanaug_core.run, "default_registry", lambda: reg)
    run = tmp_path / "run"
    assert main(["run", "--dataset", "hf", "--input", str(corpus), "--set", "dataset.split=train", "--decoder", "synonym",
                 "--aligner", "diff", "--iterations", "1", "--output", str(run), "--no-progress"]) == 0
    records = [json.loads(line) for line in (run / "augmented.jsonl").read_text().splitlines()]
    assert {r["source_id"] for r in records} == {"0"}  # only sentence 0 has words the synonym double knows
    out = tmp_path / "train-ready"
    assert main(["convert", "--dataset", "jsonl", "--input", str(run / "augmented.jsonl"), "--with-sources", "--to", "hf",
                 "--to-set", f"like={corpus}", "--output", str(out)]) == 0
    written, original = datasets.load_from_disk(str(out)), datasets.load_from_disk(str(corpus))
    assert written["train"].features == original["train"].features
    assert written["train"].to_list()[:3] == original["train"].to_list()
    assert [row["id"] for row in written["train"].to_list()[3:]] == [r["id"] for r in records]
    assert written["train"][3]["ner_tags"][:2] == [1, 2]  # John Smith kept as B-PER I-PER
    assert written["validation"].to_list() == original["validation"].to_list()
    capsys.readouterr()
    assert main(["convert", "--dataset", "jsonl", "--input", str(corpus / "dataset_dict.json"), "--with-sources", "--to", "hf",
                 "--output", str(tmp_path / "no")]) == 2
    assert "manifest.json: expected the manifest.json of the run" in capsys.readouterr().err


def test_an_entity_type_seen_once_among_many_is_warned_of_with_its_row(tmp_path: Path, caplog) -> None:
    path = tmp_path / "typo.jsonl"
    rows = [{"tokens": ["Peter", "saw", "German", "films"], "ner_tags": ["B-PER", "O", "B-MISC", "O"]}] * 6
    rows.append({"tokens": ["Lille", "liked", "French", "wine"], "ner_tags": ["B-PER", "O", "I-MSIC", "O"]})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with caplog.at_level("WARNING"):
        assert len(list(hf().read(path))) == 7
    assert f"{path}: line 7, token 2: entity type 'MSIC' occurs once here" in caplog.text
