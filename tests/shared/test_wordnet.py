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
