"""Every real release in ../shared/data read whole, against counts taken from the raw files.

Each release goes through the command or reader a user would use (``spanaug convert``,
``spanaug convert word-alignments``, the adequacy trainer's MRPC reader). The expected
counts are not the readers': each test counts the raw files itself, with string and
regular-expression scans (or seqeval, for entities), and says how. The figures these
give are in ../shared/data/README.md and docs/datasets.md.

FrameNet 1.5 is the slow part (580 MB of XML): a subprocess unpacks and converts it from
the moment this module starts, while the other releases are read here, and its test
comes last. CI has ../shared/data; elsewhere every test skips.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SHARED_DATA
from seqeval.metrics.sequence_labeling import get_entities
from spanaug_aligners.convert import read_multimwa
from spanaug_filters.adequacy import read_pairs
from spanaug_framenet.lexicon import FrameUnits
from spanaug_framenet.release import frame_ids, frames

pytestmark = pytest.mark.real_data

FRAMENET15 = "framenet15.tar.xz"
# Unpack FrameNet 1.5, say so (the test counts the raw files meanwhile), then convert it as a user would.
_CONVERT = """
import sys, tarfile
from pathlib import Path
from spanaug_core.cli import main
archive, folder = sys.argv[1], Path(sys.argv[2])
with tarfile.open(archive) as tar:
    tar.extractall(folder, filter="data")
(folder / "unpacked").touch()
release = folder / "framenet15" / "fndata-1.5"
sys.exit(main(["convert", "--dataset", "framenet", "--input", str(release), "--to", "jsonl", "--output", str(folder / "fn.jsonl")]))
"""


@pytest.fixture(scope="module", autouse=True)
def framenet15(tmp_path_factory) -> Iterator[tuple[subprocess.Popen, Path] | None]:
    """The FrameNet 1.5 conversion, started in a subprocess when the module starts (None without the archive)."""
    archive = SHARED_DATA / FRAMENET15
    if not archive.exists():
        yield None
        return
    folder = tmp_path_factory.mktemp("framenet15")
    log = (folder / "convert.log").open("w")
    process = subprocess.Popen([sys.executable, "-c", _CONVERT, str(archive), str(folder)], stdout=log, stderr=subprocess.STDOUT)
    yield process, folder
    process.kill()
    process.wait()
    log.close()


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def convert_and_back(cli, source: Path, dataset: str, plugin: str, tmp_path: Path) -> list[dict]:  # type: ignore[no-untyped-def]
    """``source`` converted to JSONL and back to its own format, which must give the file byte for byte; the JSONL records."""
    spanaug = cli(f"{plugin},jsonl")
    assert spanaug("convert", "--dataset", dataset, "--input", source, "--to", "jsonl", "--output", tmp_path / "x.jsonl") == 0
    assert spanaug("convert", "--dataset", "jsonl", "--input", tmp_path / "x.jsonl", "--to", dataset, "--output", tmp_path / "back") == 0
    assert (tmp_path / "back").read_bytes() == source.read_bytes()
    return jsonl(tmp_path / "x.jsonl")


def blocks(path: Path) -> list[list[list[str]]]:
    """The file's runs of non-blank lines (whitespace-only lines separate them too, as in WNUT-17), each line split on whitespace."""
    found, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            current.append(line.split())
        elif current:
            found.append(current)
            current = []
    return found + ([current] if current else [])


@pytest.mark.parametrize(
    ("archive", "member", "sentences", "entities"),
    [
        ("conll2003.tar.xz", "conll2003/eng.train", 14041, 23499),
        ("conll2003.tar.xz", "conll2003/eng.testa", 3250, 5942),
        ("conll2003.tar.xz", "conll2003/eng.testb", 3453, 5648),
        ("wnut17.tar.xz", "wnut17/wnut17train.conll", 3394, 1975),
        ("wnut17.tar.xz", "wnut17/emerging.dev.conll", 1009, 836),
        ("wnut17.tar.xz", "wnut17/emerging.test.annotated", 1287, 1079),
    ],
)
def test_ner_files_convert_whole(shared_unpacked, cli, tmp_path: Path, archive: str, member: str, sentences: int, entities: int) -> None:
    source = shared_unpacked(archive) / member
    # Counted apart: sentences are the blocks of lines that are not a -DOCSTART- line; entities are
    # seqeval's chunks of each sentence's last column.
    raw = [block for block in blocks(source) if block[0][0] != "-DOCSTART-"]
    assert len(raw) == sentences and sum(len(get_entities([row[-1] for row in block])) for block in raw) == entities
    records = convert_and_back(cli, source, "conll-ner", "ner", tmp_path)
    assert len(records) == sentences and sum(len(r["spans"]) for r in records) == entities
    assert len({r["id"] for r in records}) == sentences


@pytest.mark.parametrize(("member", "sentences", "predicates"), [("en_ewt-up-dev.conllu", 2002, 4977), ("en_ewt-up-test.conllu", 2077, 4799)])
def test_universal_propbank_files_convert_whole(shared_unpacked, cli, tmp_path: Path, member: str, sentences: int, predicates: int) -> None:
    source = shared_unpacked("up_english_ewt.tar.xz") / "up_english_ewt" / "UP_English-EWT" / member
    # Counted apart: a sentence is a block with a `# sent_id` line; a predicate a word row (integer
    # ID) whose sense column (the 11th, tab-separated) holds a roleset, not "_" and not blank.
    text = source.read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines() if line[:1].isdigit()]
    assert text.count("\n# sent_id") + text.startswith("# sent_id") == sentences
    assert sum(row[0].isdigit() and row[10] not in ("_", "") for row in rows) == predicates
    records = convert_and_back(cli, source, "conll-srl", "conll_srl", tmp_path)
    assert len(records) == sentences and sum(s["role"] == "target" for r in records for s in r["spans"]) == predicates


@pytest.mark.parametrize(("member", "pairs", "paraphrases"), [("msr_paraphrase_train.txt", 4076, 2753), ("msr_paraphrase_test.txt", 1725, 1147)])
def test_mrpc_pairs_are_read_whole(shared_unpacked, member: str, pairs: int, paraphrases: int) -> None:
    source = shared_unpacked("mrpc.tar.xz") / "mrpc" / member
    # Counted apart: the non-blank lines after the header, and those whose first cell is 1.
    lines = [line for line in source.read_text(encoding="utf-8-sig").splitlines()[1:] if line.strip()]
    assert len(lines) == pairs and sum(line.startswith("1\t") for line in lines) == paraphrases
    read = read_pairs(source)
    assert len(read) == pairs and sum(p.label for p in read) == paraphrases


@pytest.mark.parametrize(
    ("member", "pairs"),
    [("MTRef/mtref-train.tsv", 2398), ("MTRef/mtref-dev.tsv", 800), ("Wiki/wiki-train.tsv", 2514), ("Wiki/wiki-dev.tsv", 533)],
)
def test_multimwa_pairs_convert_whole(shared_unpacked, cli, tmp_path: Path, member: str, pairs: int) -> None:
    source = shared_unpacked("multimwa_train_dev.tar.xz") / "multimwa" / member
    # Counted apart: the non-blank lines, the last one too (the Wiki files end without a newline).
    data = source.read_bytes()
    assert (data.count(b"\n") + (not data.endswith(b"\n"))) - len(re.findall(rb"^[ \t\r]*$\n", data, re.M)) == pairs
    assert not data.endswith(b"\n") if member.startswith("Wiki") else data.endswith(b"\n")
    read = list(read_multimwa(source))
    assert len(read) == pairs == len({p.id for p in read}) and read[-1].links
    spanaug = cli("aligners")
    assert spanaug("convert", "word-alignments", source, "--format", "multimwa", "--output", tmp_path / "items.jsonl") == 0
    given = {item["id"].split("/")[0] for item in jsonl(tmp_path / "items.jsonl")}
    assert given <= {p.id for p in read} and read[-1].id in given  # the last pair (the last line) gives items too


def test_framenet17_frames_are_read_whole(shared_unpacked, cli, tmp_path: Path) -> None:
    release = shared_unpacked("framenet17_frames_only.tar.xz") / "framenet17_frames_only" / "fndata-1.7-frames"
    # Counted apart: the frame files, the <frame> entries of frameIndex.xml, and the names of each frame
    # file's <lexUnit> elements (FrameNet 1.7's English ones are stripped; 278 frames keep Dutch FrameNet's 944).
    files = sorted((release / "frame").glob("*.xml"))
    index = re.findall(r'<frame\b[^>]*?\bID="(\d+)"[^>]*?\bname="([^"]*)"', (release / "frameIndex.xml").read_text(encoding="utf-8"))
    names = {f.stem: {n.lower() for n in re.findall(r'<lexUnit\b[^>]*?\sname="([^"]*)"', f.read_text(encoding="utf-8"))} for f in files}
    assert len(files) == len(index) == 1221 and sum(map(len, names.values())) == 944
    found = list(frames(release))
    assert {(f.id, f.name) for f in found} == set(index) and dict(index) == frame_ids(release)
    assert all(f.created.year >= 2000 for f in found)  # every frame file's created date parsed
    units = FrameUnits(release, hint="")  # the framenet lexicon's and frame-lexicon's reading of a frame's LUs
    assert {f.name: set(units(f.name)) for f in found} == {f.name: names[f.path.stem] for f in found}
    # The dataset reads no example from it (no fulltext/, no lu/).
    assert cli("framenet,jsonl")("convert", "--dataset", "framenet", "--input", release, "--to", "jsonl", "--output", tmp_path / "fn.jsonl") == 0
    assert (tmp_path / "fn.jsonl").read_text() == ""


# FrameNet 1.5, counted apart with regular expressions over the raw XML.
SENTENCE = re.compile(rb'<sentence\b[^>]*?\bID="([^"]*)"[^>]*>(.*?)</sentence>', re.S)
FRAME_SET = re.compile(rb"<annotationSet\b([^>]*\bframeName=[^>]*)>(.*?)</annotationSet>", re.S)
TARGET = re.compile(rb'<layer\b[^>]*\bname="Target"[^>/]*>\s*<label\b[^>]*\bstart="')  # a Target layer with offsets
FE_LAYER = re.compile(rb'<layer\b[^>]*\bname="FE"[^>/]*>(.*?)</layer>', re.S)


def frame_elements(xml: bytes) -> int:
    """Labels with offsets in the FE layers of ``xml`` (null instantiations have none)."""
    return sum(layer.count(b'start="') for layer in FE_LAYER.findall(xml))


def count_fulltext(release: Path, indexed: set[bytes]) -> Counter[str]:
    """Per full-text annotation set (one with a frameName): its frame id unknown, no target, or read (a target, its FEs)."""
    counts: Counter[str] = Counter()
    for path in sorted((release / "fulltext").glob("*.xml")):
        for _, sentence in SENTENCE.findall(path.read_bytes()):
            read = 0
            for attrs, body in FRAME_SET.findall(sentence):
                frame = re.search(rb'\bframeID="([^"]*)"', attrs)
                if frame is None or frame.group(1) not in indexed:
                    counts["unknown frame id"] += 1
                elif not TARGET.search(body):
                    counts["no target"] += 1
                else:
                    read += 1
                    counts["frame elements"] += frame_elements(body)
            counts["targets"] += read
            counts["examples"] += read > 0
    return counts


def count_exemplars(release: Path) -> Counter[str]:
    """Per LU file: its sentences (split at "<sentence "), those with a target, targets, FEs, IDs listed again."""
    counts: Counter[str] = Counter()
    for path in sorted((release / "lu").glob("*.xml")):
        ids: Counter[bytes] = Counter()
        for chunk in path.read_bytes().split(b"<sentence ")[1:]:
            ids[re.match(rb'[^>]*?\bID="([^"]*)"', chunk).group(1)] += 1
            targets = len(TARGET.findall(chunk))
            counts["targets"] += targets
            counts["examples"] += targets > 0
            counts["frame elements"] += frame_elements(chunk)
        counts["listed again"] += sum(n - 1 for n in ids.values())
    return counts


def test_framenet15_converts_whole(framenet15, tmp_path: Path) -> None:
    if framenet15 is None:
        pytest.skip(f"real data {FRAMENET15} not found in {SHARED_DATA} (only on the project's machines)")
    process, folder = framenet15
    while not (folder / "unpacked").exists():
        assert process.poll() is None, (folder / "convert.log").read_text()
        time.sleep(0.5)
    release = folder / "framenet15" / "fndata-1.5"
    indexed = set(re.findall(rb'<frame\b[^>]*?\bID="(\d+)"', (release / "frameIndex.xml").read_bytes()))
    fulltext, exemplars = count_fulltext(release, indexed), count_exemplars(release)
    # ../shared/data/README.md: 23,944 frame annotation sets in full text, 23,940 with a target (2 of them
    # of a frame the index lacks); 154,485 exemplar sentences, 19 of them listed a second time in their LU file.
    assert (fulltext["unknown frame id"], fulltext["no target"], fulltext["targets"]) == (2, 4, 23938)
    assert (exemplars["examples"], exemplars["listed again"]) == (154485, 19)

    assert process.wait(timeout=1800) == 0, (folder / "convert.log").read_text()
    said = " ".join((folder / "convert.log").read_text().split())
    records = jsonl(folder / "fn.jsonl")
    sources = Counter(r["meta"]["source"] for r in records)
    assert sources == {"fulltext": fulltext["examples"], "exemplar": exemplars["examples"]} and len({r["id"] for r in records}) == len(records)
    for source, counted in (("fulltext", fulltext), ("exemplar", exemplars)):
        roles = Counter(s["role"] for r in records if r["meta"]["source"] == source for s in r["spans"])
        assert roles == {"target": counted["targets"], "argument": counted["frame elements"]}
    # Every set not read and every sentence listed again is counted, and said. FrameNet 1.5's 19 repeats
    # are each annotated otherwise than the first listing (another target occurrence or other frame
    # elements; checked by hand): all kept, under <id>-2.
    assert (
        "the framenet dataset repaired or skipped in its input: 2 annotation sets with an unknown frame id, "
        "4 annotation sets without a target, 19 sentences listed again with other annotations, kept as <id>-2"
    ) in said
    assert f"wrote {len(records)} examples" in said
