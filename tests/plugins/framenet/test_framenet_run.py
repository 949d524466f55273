"""A run of the framenet dataset over a release: its lexicon and the frame-lexicon filter read that release.

The release is the embedded sample with Commerce_buy given acquire.v and get.v, which the
sample lacks, and one full-text sentence that the doubles' synonym decoder rewrites
("buy" -> "purchase", "acquire"); the WordNet is tests/wordnet_files.py's.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
import spanaug_expanders
import spanaug_framenet
from doubles import DoublesPlugin
from spanaug_framenet.release import SAMPLE
from wordnet_files import DATA, INDEX, write_wordnet

from spanaug_core.config import load_run_config
from spanaug_core.errors import ConfigError
from spanaug_core.run import execute
from spanaug_core.types import Augmented
from spanaug_shared.wordnet import load_wordnet

NS = 'xmlns="http://framenet.icsi.berkeley.edu"'
UNITS = ("buy.v", "purchase.v", "acquire.v", "get.v")


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """A folder holding a release (``data/fndata-1.5``) whose Commerce_buy lists more words than the sample's."""
    root = shutil.copytree(SAMPLE, tmp_path / "data" / "fndata-1.5")
    frame = root / "frame" / "Commerce_buy.xml"
    text = frame.read_text(encoding="utf-8")
    start, end = text.index("<lexUnit"), text.index(">", text.rindex("<lexUnit")) + 1
    units = "".join(f'<lexUnit name="{name}" ID="{i}" POS="V"><sentenceCount total="{10 - i}"/></lexUnit>' for i, name in enumerate(UNITS))
    frame.write_text(text[:start] + units + text[end:], encoding="utf-8")
    (root / "fulltext" / "spanaug_sample.xml").write_text(
        f'<fullTextAnnotation {NS}><sentence ID="1"><text>They buy bread quickly .</text>'
        '<annotationSet ID="5" luID="0" luName="buy.v" frameID="171" frameName="Commerce_buy">'
        '<layer rank="1" name="Target"><label start="5" end="7" name="Target"/></layer>'
        '<layer rank="1" name="FE"><label start="0" end="3" name="Buyer"/></layer>'
        "</annotationSet></sentence></fullTextAnnotation>",
        encoding="utf-8",
    )
    return tmp_path / "data"


@pytest.fixture
def framenet_registry(registry):
    for plugin, name in ((spanaug_framenet, "framenet"), (spanaug_expanders, "expanders"), (DoublesPlugin(), "doubles")):
        registry.add_plugin(plugin, name)
    return registry


def run(tmp_path: Path, registry, given: Path | None, *assignments: str, **flags):  # type: ignore[no-untyped-def]
    load_wordnet.cache_clear()
    wordnet = write_wordnet(tmp_path, INDEX, DATA)
    base = {"dataset.name": "framenet", "input": str(given) if given else None, "decoder.name": "synonym", "aligner.name": "diff",
            "output": str(tmp_path / "out"), "iterations": 2, "filters": ["frame-lexicon"], **flags}
    notes: list[str] = []
    config = load_run_config(None, base, [f"lexicon.wordnet={wordnet}", *assignments])
    summary = execute(config, registry=registry, note=notes.append)
    records = [Augmented.model_validate_json(line) for line in (tmp_path / "out" / "augmented.jsonl").read_text().splitlines()]
    return summary, records, json.loads((tmp_path / "out" / "manifest.json").read_text()), notes


def test_the_lexicon_and_the_filter_read_the_release_given_as_input(tmp_path, framenet_registry, release, caplog) -> None:
    with caplog.at_level(logging.WARNING):
        _, records, manifest, notes = run(tmp_path, framenet_registry, release)
    resolved = str(release / "fndata-1.5")
    # The sample's Commerce_buy has no acquire.v: "acquire" is offered and kept because the release has it.
    assert [r.text for r in records] == ["They purchase bread quickly.", "They acquire bread quickly."]
    assert records[0].constraints.prefer == ("purchase", "acquire", "get")
    assert manifest["config"]["lexicon"]["release"] == manifest["config"]["filters"][0]["release"] == str(release)
    assert manifest["options"]["lexicon"]["release"] == manifest["options"]["filters"][0]["release"] == resolved
    assert f"lexicon.release = {str(release)!r}: the framenet dataset's input (to read another: --set lexicon.release=PATH)" in notes
    assert "is not in the FrameNet release" not in caplog.text


def test_the_warning_s_hint_works_as_written(tmp_path, framenet_registry, release, caplog) -> None:
    # The lexicon and the filter are told another release, which lacks the data's frame.
    other = shutil.copytree(SAMPLE, tmp_path / "other")
    (other / "frame" / "Commerce_buy.xml").unlink()
    (tmp_path / "first").mkdir()
    with caplog.at_level(logging.WARNING):
        _, records, _, _ = run(tmp_path / "first", framenet_registry, release, f"lexicon.release={other}", f"filters=[{{name: frame-lexicon, release: {other}}}]")
    hints = [line for line in caplog.text.splitlines() if "frame 'Commerce_buy' is not in the FrameNet release" in line]
    assert not records and len(hints) == 2  # the filter drops what has no words; one warning for each
    assert any(h.endswith("give the lexicon that one: --set lexicon.release=FOLDER") for h in hints)
    assert any(h.endswith("give the filter that one: --filter '{name: frame-lexicon, release: FOLDER}' in place of --filter frame-lexicon") for h in hints)
    # Both, as written, with FOLDER the data's release (lexicon.release alone: the dataset suggested the lexicon).
    (tmp_path / "again").mkdir()
    _, records, manifest, _ = run(tmp_path / "again", framenet_registry, release, f"lexicon.release={release}", f"filters=[{{name: frame-lexicon, release: {release}}}]")
    assert manifest["config"]["lexicon"]["name"] == "framenet" and len(records) == 2


def test_lexicon_options_with_a_dataset_that_suggests_no_lexicon_ask_for_its_name(tmp_path, framenet_registry) -> None:
    framenet_registry.add_plugin(__import__("spanaug_jsonl"), "jsonl")
    (tmp_path / "in.jsonl").write_text('{"id": "a", "tokens": ["They", "buy", "bread"], "spans": [{"start": 1, "end": 2, "label": "Commerce_buy"}]}\n')
    with pytest.raises(ConfigError, match=r"and the jsonl dataset suggests none: name it too \(--lexicon NAME"):
        run(tmp_path, framenet_registry, tmp_path / "in.jsonl", **{"dataset.name": "jsonl", "filters": []})
