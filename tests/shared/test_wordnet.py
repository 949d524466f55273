"""WordNet read from dict files: synonyms, senses of inflected words and phrases, and nearness by one link."""

from __future__ import annotations

import pytest
from wordnet_files import DATA, INDEX, write_wordnet

from spanaug_shared.wordnet import load_wordnet

@pytest.fixture
def wordnet(tmp_path):
    load_wordnet.cache_clear()
    return load_wordnet(write_wordnet(tmp_path, INDEX, DATA))


def test_synonyms_of_the_most_frequent_senses(wordnet) -> None:
    assert wordnet.synonyms("buy", "verb") == ["purchase"]
    assert wordnet.synonyms("car", "noun") == ["auto"]
    assert wordnet.has("Month") and not wordnet.has("bike")


def test_senses_of_inflected_words_collocations_and_phrases(wordnet) -> None:
    assert wordnet.senses("bought") == wordnet.senses("purchases") == {("verb", "00000011")}
    assert wordnet.senses("motor vehicle") == {("noun", "00000002")}
    # A phrase WordNet does not list falls back to its content words ("a" is none).
    assert wordnet.senses("bought a car") == {("verb", "00000011"), ("noun", "00000001")}
    assert wordnet.senses("Xyzzy") == set()


def test_related_by_a_shared_synset_or_one_near_link_either_way(wordnet) -> None:
    assert wordnet.related("bought", "purchased") is True  # one synset
    assert wordnet.related("bought", "acquired") is True  # its hypernym
    assert wordnet.related("acquired", "bought") is True  # the same link, read from the other side
    assert wordnet.related("cars", "motor vehicle") is True
    # Siblings under one hypernym are two links apart: a different fact, not a synonym.
    assert wordnet.related("month", "year") is False
    # An antonym link does not count.
    assert wordnet.related("bought", "sold") is False
    assert wordnet.related("month", "Xyzzy") is None
    # With two links a shared neighbour is enough: siblings pass, an antonym still does not.
    assert wordnet.related("month", "year", links=2) is True
    assert wordnet.related("bought", "sold", links=2) is False


def test_alternatives_synonyms_first_then_near_words_the_most_common_first(wordnet) -> None:
    candidates = {"purchase": 1, "get": 5, "acquire": 9, "sell": 50, "buy": 70, "descend_(on)": 3, "month": 80}
    # sell (an antonym) and month (unrelated) are left out, so are the lemma and notation.
    assert wordnet.alternatives("buy", "verb", candidates, (), senses=3, words=4) == ["purchase", "acquire", "get"]
    assert wordnet.alternatives("buy", "verb", candidates, (), senses=3, words=2) == ["purchase", "acquire"]
    # Without a part of speech there are no synonyms to put first: one tier, by count.
    assert wordnet.alternatives("buy", None, candidates, (), senses=3, words=4) == ["acquire", "get", "purchase"]


def test_alternatives_leave_out_words_holding_an_avoided_phrase(wordnet) -> None:
    # A constrained decoder that avoids "get" cannot write "get hold of"; "acquire" it can.
    candidates = {"get hold of": 9, "get": 5, "acquire": 1, "purchase": 1}
    assert wordnet.alternatives("buy", "verb", candidates, ("Get", "Purchase", ""), senses=3, words=4) == ["acquire"]


def test_synonyms_of_a_collocation_and_semcor_frequencies(tmp_path) -> None:
    load_wordnet.cache_clear()
    index = {"verb": ["take_place v 1 0 1 0 00000021", "occur v 1 0 1 0 00000021"]}
    data = {"verb": ["00000021 30 v 02 take_place 0 occur 0 000 | come to pass"]}
    wordnet = load_wordnet(write_wordnet(tmp_path, index, data, ["occur%2:30:00:: 1 7", "occur%2:39:00:: 2 3", "occur%1:04:00:: 1 2"]))
    assert wordnet.synonyms("take place", "verb") == ["occur"]
    assert wordnet.synonyms("occur", "verb") == ["take place"]
    assert wordnet.frequency("occur", "verb") == 10 and wordnet.frequency("Occur", "noun") == 2
    assert wordnet.frequency("take place", "verb") == 0


def test_alternatives_near_a_frequent_sense_only_when_asked(tmp_path) -> None:
    load_wordnet.cache_clear()
    # take: 1. get hold of (grab below it), 2. travel by (ride below it).
    index = {"verb": ["take v 2 0 2 0 00000031 00000032", "grab v 1 0 1 0 00000033", "ride v 1 0 1 0 00000034"]}
    data = {"verb": ["00000031 35 v 01 take 0 001 ~ 00000033 v 0000 | get hold of",
                     "00000032 38 v 01 take 0 001 ~ 00000034 v 0000 | travel by",
                     "00000033 35 v 01 grab 0 001 @ 00000031 v 0000 | take hastily",
                     "00000034 38 v 01 ride 0 001 @ 00000032 v 0000 | be carried"]}
    wordnet = load_wordnet(write_wordnet(tmp_path, index, data))
    candidates = {"grab": 1, "ride": 5}
    assert wordnet.alternatives("take", "verb", candidates, (), senses=1, words=4) == ["ride", "grab"]
    assert wordnet.alternatives("take", "verb", candidates, (), senses=1, words=4, near_senses=1) == ["grab"]
    assert wordnet.alternatives("take", "verb", candidates, (), senses=1, words=4, near_senses=2) == ["ride", "grab"]
