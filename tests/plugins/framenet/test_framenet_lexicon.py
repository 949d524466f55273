"""The framenet lexicon: a frame's LUs that WordNet relates to the trigger, offered to the prompt.

The release is the embedded sample with Commerce_buy given more LUs and corpus counts; the
WordNet is tests/wordnet_files.py's (buy = purchase, a kind of acquire = get; sell its antonym).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from spanaug_framenet.lexicon import FrameNetLexicon
from spanaug_framenet.release import SAMPLE
from wordnet_files import DATA, INDEX, write_wordnet

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import LabelLexicon
from spanaug_core.types import Example, Span
from spanaug_shared.wordnet import load_wordnet

# (name, corpus sentences): get.v is more common than acquire.v; sell.v is no near word.
UNITS = (("get.v", 50), ("acquire.v", 10), ("sell.v", 90), ("buy.v", 70), ("purchase.v", 5), ("purchase.n", 40), ("descend_(on).v", 1))


@pytest.fixture
def lexicon(tmp_path: Path):
    load_wordnet.cache_clear()
    release = tmp_path / "release"
    shutil.copytree(SAMPLE, release)
    frame = release / "frame" / "Commerce_buy.xml"
    text = frame.read_text(encoding="utf-8")
    start = text.index("<lexUnit")
    end = text.index(">", text.rindex("<lexUnit")) + 1  # the sample's LUs are empty elements
    units = "".join(
        f'<lexUnit name="{name}" ID="{i}" POS="V" cDate="01/01/2001 00:00:00 PST Mon"><sentenceCount annotated="1" total="{n}"/></lexUnit>'
        for i, (name, n) in enumerate(UNITS)
    )
    frame.write_text(text[:start] + units + text[end:], encoding="utf-8")
    wordnet = write_wordnet(tmp_path, INDEX, DATA)

    def make(**options) -> FrameNetLexicon:
        return FrameNetLexicon(FrameNetLexicon.Config(release=release, wordnet=wordnet, **options))

    return make


def bought(attrs: dict | None = None, label: str = "Commerce_buy") -> tuple[Example, Span]:
    span = Span(start=1, end=2, label=label, role="target", group="1", attrs={"lu": "buy.v"} if attrs is None else attrs)
    return Example(id="s", tokens=("Maria", "bought", "a", "car", "."), spans=(span,)), span


def test_synonyms_come_first_then_near_words_by_how_common_they_are(lexicon) -> None:
    example, span = bought()
    # purchase.v (a synonym, though rarer) before get.v and acquire.v (one link away, by count);
    # sell.v (an antonym), buy.v itself, purchase.n (another part of speech) and notation are left out.
    assert lexicon().alternatives(example, span, ("buy", "bought")) == ["purchase", "get", "acquire"]
    assert lexicon(words=2).alternatives(example, span, ()) == ["purchase", "get"]


def test_avoided_words_are_not_offered(lexicon) -> None:
    example, span = bought()
    assert lexicon().alternatives(example, span, ("bought", "Purchase", "purchased")) == ["get", "acquire"]


def test_without_an_lu_the_trigger_s_words_are_the_lemma_and_any_part_of_speech_counts(lexicon) -> None:
    example, span = bought(attrs={})
    # "purchase" is a verb and a noun of the frame: offered once.
    assert lexicon().alternatives(example, span, ("buy", "bought")) == ["get", "purchase", "acquire"]


def test_a_frame_the_release_lacks_gets_nothing_and_a_warning(lexicon, caplog) -> None:
    example, span = bought(label="Getting")
    with caplog.at_level(logging.WARNING):
        assert lexicon().alternatives(example, span, ()) == []
    assert "frame 'Getting' is not in the FrameNet release" in caplog.text


def test_no_wordnet_is_a_clear_error_when_the_lexicon_is_built(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"framenet lexicon.*holds no WordNet 3.0 files.*lexicon\.wordnet"):
        FrameNetLexicon(FrameNetLexicon.Config(release=SAMPLE, wordnet=tmp_path))


def test_labels_for_are_the_frames_that_list_the_words_as_any_part_of_speech(lexicon) -> None:
    frames = lexicon()
    assert isinstance(frames, LabelLexicon)
    assert frames.labels_for("bought") == frozenset({"Commerce_buy"})  # buy.v
    assert frames.labels_for(" Purchases ") == frozenset({"Commerce_buy"})  # purchase.n, case and spaces aside
    assert frames.labels_for("sold") == frozenset({"Commerce_buy"})  # this release lists sell.v there too
    assert frames.labels_for("killed") == frozenset({"Killing"})
    assert frames.labels_for("car") == frozenset()  # an LU of no frame
    assert frames.labels() == frozenset({"Arriving", "Commerce_buy", "Giving", "Killing", "Motion", "Statement"})
