"""The inflect expander: case variants and lemminflect inflections, multi-word cross products."""

from __future__ import annotations

from spanaug_expanders.inflect import InflectExpander


def expand(phrase: str, **options) -> list[str]:
    return InflectExpander(InflectExpander.Config(**options)).expand(phrase)


def test_verb_inflections_and_cases() -> None:
    forms = expand("corroborate")
    assert forms[0] == "corroborate"
    assert {"corroborates", "corroborated", "corroborating", "Corroborate", "CORROBORATE", "Corroborating"} <= set(forms)
    assert len(forms) == len(set(forms))


def test_all_lemmas_of_an_ambiguous_word() -> None:
    assert {"see", "seen", "sees", "seeing", "saws"} <= set(expand("saw"))


def test_multi_word_phrases_inflect_each_word_and_cap_the_product() -> None:
    forms = expand("took off", case_variants=False)
    assert {"take off", "takes off", "taking off", "taken off"} <= set(forms)
    capped = expand("confirm reports quickly", case_variants=False, max_variants=4)
    assert len(capped) <= 5 and capped[0] == "confirm reports quickly"


def test_switches() -> None:
    assert expand("Confirm", inflections=False) == ["Confirm", "confirm", "CONFIRM"]
    assert expand("blorf", case_variants=False) == ["blorf"]
    assert {"blorfs", "blorfed"} <= set(expand("blorf", case_variants=False, oov=True))
    assert expand("  ") == []
