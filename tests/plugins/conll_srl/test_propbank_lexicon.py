"""The propbank lexicon: words of the rolesets PropBank links to the predicate's, that WordNet relates to it.

The frames are written here; the WordNet is tests/wordnet_files.py's (buy = purchase, a
kind of acquire = get; sell its antonym), with SemCor counts (get more common than acquire).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from spanaug_conll_srl.lexicon import PropBankLexicon
from wordnet_files import COUNTS, DATA, INDEX, write_wordnet

from spanaug_core.errors import ConfigError, DataError
from spanaug_core.types import Example, Span
from spanaug_shared.wordnet import load_wordnet


def roleset(roleset_id: str, aliases: dict[str, str], links: tuple[str, ...]) -> str:
    words = "".join(f'<alias pos="{pos}">{word}</alias>' for word, pos in aliases.items())
    lexlinks = "".join(f'<lexlink class="{c}" confidence="1.0" resource="{r}"/>' for r, c in (link.split(":") for link in links))
    return f'<roleset id="{roleset_id}" name="x"><aliases>{words}</aliases><lexlinks>{lexlinks}</lexlinks><roles/></roleset>'


FRAMES = {
    "buy": [roleset("buy.01", {"buy": "v", "buying": "n"}, ("FrameNet:Commerce_buy", "VerbNet:get-13.5.1"))],
    "purchase": [roleset("purchase.01", {"purchase": "v", "purchasing": "n"}, ("FrameNet:Commerce_buy",))],
    # get.01 shares VerbNet's class with buy.01; "get_hold_of" is a multiword alias.
    "get": [roleset("get.01", {"get": "v", "get_hold_of": "v"}, ("VerbNet:get-13.5.1",)), roleset("get.03", {"get": "v"}, ())],
    "acquire": [roleset("acquire.01", {"acquire": "v", "acquisition": "n"}, ("VerbNet:get-13.5.1",))],
    # sell.01 shares a frame with no one; month.01 (a made-up roleset) is linked but unrelated.
    "sell": [roleset("sell.01", {"sell": "v"}, ("FrameNet:Commerce_sell",))],
    "month": [roleset("month.01", {"month": "v"}, ("FrameNet:Commerce_buy",))],
}


@pytest.fixture
def lexicon(tmp_path: Path):
    load_wordnet.cache_clear()
    frames = tmp_path / "frames"
    frames.mkdir()
    for lemma, rolesets in FRAMES.items():
        (frames / f"{lemma}.xml").write_text(f'<frameset><predicate lemma="{lemma}">{"".join(rolesets)}</predicate></frameset>')
    wordnet = write_wordnet(tmp_path, INDEX, DATA, COUNTS)

    def make(**options) -> PropBankLexicon:
        return PropBankLexicon(PropBankLexicon.Config(frames=tmp_path, wordnet=wordnet, **options))

    return make


def bought(label: str = "buy.01", word: str = "bought", lemma: str = "buy") -> tuple[Example, Span]:
    span = Span(start=1, end=2, label=label, role="target", group="0", attrs={"lemma": lemma})
    return Example(id="s", tokens=("Maria", word, "a", "car", "."), spans=(span,)), span


def test_linked_words_synonyms_first_then_near_words_the_most_common_first(lexicon) -> None:
    example, span = bought()
    # purchase (a synonym, rare in SemCor) first, then get before acquire (one link away, by
    # count); get_hold_of holds the avoided "get" in the second call; sell and month are out.
    assert lexicon().alternatives(example, span, ("buy", "bought")) == ["purchase", "get", "acquire", "get hold of"]
    assert lexicon(words=2).alternatives(example, span, ("Get",)) == ["purchase", "acquire"]


def test_the_alias_the_sentence_uses_sets_the_part_of_speech(lexicon) -> None:
    example, span = bought(word="buying", lemma="buying")
    # A noun: WordNet is asked about "buying" as a noun, which this one does not know, so
    # nothing is near it; the verbs purchase, get and acquire are not offered for a noun.
    assert lexicon().alternatives(example, span, ()) == []
    example, span = bought(word="bought", lemma="bought")  # no alias: a verb
    assert lexicon().alternatives(example, span, ())[:1] == ["purchase"]


def test_a_word_that_is_a_verb_and_a_noun_of_its_roleset_takes_its_tagged_part_of_speech_else_the_verb(lexicon, tmp_path: Path) -> None:
    # buy.01 of these frames also lists "buy" as a noun ("a good buy"); the verbs are still offered.
    path = tmp_path / "frames" / "buy.xml"
    path.write_text(path.read_text().replace('<alias pos="n">buying</alias>', '<alias pos="n">buying</alias><alias pos="n">buy</alias>'))
    example, span = bought()
    assert lexicon().alternatives(example, span, ("buy", "bought"))[:1] == ["purchase"]
    # Unless the reader tagged it a noun ("a good buy"): the verbs are not offered for it.
    noun = span.model_copy(update={"attrs": {**span.attrs, "pos": "NOUN"}})
    assert lexicon().alternatives(example, noun, ("buy", "bought")) == []
    verb = span.model_copy(update={"attrs": {**span.attrs, "pos": "VERB"}})
    assert lexicon().alternatives(example, verb, ("buy", "bought"))[:1] == ["purchase"]


def test_a_roleset_the_frames_lack_gets_nothing_and_one_warning(lexicon, caplog) -> None:
    example, span = bought(label="buy.07")
    built = lexicon()
    with caplog.at_level(logging.WARNING):
        assert built.alternatives(example, span, ()) == []
        assert built.alternatives(example, span, ()) == []
    assert caplog.text.count("roleset 'buy.07' is not in the PropBank frames") == 1


def test_frames_are_required_and_checked(tmp_path: Path) -> None:
    example, span = bought()
    unset = PropBankLexicon(PropBankLexicon.Config())  # built without frames, as `spanaug list` does
    with pytest.raises(ConfigError, match=r"propbank lexicon needs PropBank frame files: set lexicon\.frames"):
        unset.alternatives(example, span, ())
    with pytest.raises(DataError, match="expected a PropBank frames folder"):
        PropBankLexicon(PropBankLexicon.Config(frames=tmp_path / "nowhere"))
