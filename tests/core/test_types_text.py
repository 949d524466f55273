"""The data model's validation and the shared tokenizer/detokenizer."""

from __future__ import annotations

import itertools

import pytest
from pydantic import ValidationError

from spanaug_core.text import contains_phrase, detokenize, find_copy, find_phrase, token_offsets, tokenize
from spanaug_core.types import AlignItem, Alignment, Example, Span


def test_spans_are_validated() -> None:
    with pytest.raises(ValidationError, match="end .* must be greater than start"):
        Span(start=2, end=2, label="x")
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        Span(start=-1, end=2, label="x")
    with pytest.raises(ValidationError, match="ends after the last token"):
        Example(id="e", tokens=("a",), spans=(Span(start=0, end=2, label="x"),))
    with pytest.raises(ValidationError, match="at least one token"):
        Example(id="e", tokens=())
    with pytest.raises(ValidationError, match="not inside"):
        AlignItem(source_tokens=("a",), source_span=(0, 2), target_tokens=("b",))
    with pytest.raises(ValidationError):
        Alignment(span=None, score=1.5)


def test_types_are_frozen() -> None:
    span = Span(start=0, end=1, label="x")
    with pytest.raises(ValidationError):
        span.start = 3  # type: ignore[misc]
    assert span.moved(2, 4) == Span(start=2, end=4, label="x")


@pytest.mark.parametrize(
    "text",
    [
        "The panel will corroborate it.",
        'He doesn\'t think it\'s "fine" (really), U.S. firms paid $3.5 million -- 20% more.',
        "O'Neil's well-known e-mail... yes!",
    ],
)
def test_tokenize_detokenize_round_trip(text: str) -> None:
    assert detokenize(tokenize(text)) == text


@pytest.mark.parametrize(
    "tokens",
    [
        ("SOCCER", "-", "FIORENTINA", "beat", "Milan", "."),  # the hyphen's space depends on the word after it
        ("He", "said", ",", '"', "yes", '"', "(", "really", ")", "."),
        ("O'Neil", "'s", "well", "-", "known", "e", "-", "mail", "..."),
    ],
)
def test_token_offsets_point_into_the_detokenized_sentence(tokens: tuple[str, ...]) -> None:
    text, offsets = detokenize(tokens), token_offsets(tokens)
    assert [text[a:b] for a, b in offsets] == list(tokens)
    assert all(b <= c for (_, b), (c, _) in itertools.pairwise(offsets))


def test_phrase_search_is_on_word_boundaries() -> None:
    assert find_phrase(("a", "big", "Cat", "."), ("big", "cat"), case_sensitive=False) == (1, 3)
    assert find_phrase(("a", "big", "Cat"), ("big", "cat")) is None
    assert contains_phrase("They confirmed it.", "confirmed")
    assert not contains_phrase("They reconfirmed it.", "confirmed")


def test_a_copy_is_found_in_its_own_case_first_and_clear_of_taken_spans() -> None:
    words = ("The", "man", "saw", "the", "man", ".")
    assert find_copy(words, ("the", "man"), (), unique=True) == (3, 5)  # one in its own case
    assert find_copy(words, ("THE", "MAN"), (), unique=True) is None  # two, case folded: either
    assert find_copy(words, ("THE", "MAN"), (), unique=False) == (0, 2)
    assert find_copy(words, ("THE", "MAN"), [(3, 4)], unique=True) == (0, 2)  # the other is taken


def test_an_example_from_text_and_character_offsets() -> None:
    from spanaug_core.types import Example

    text = "The panel will corroborate Mr. Lee's account."
    start = text.index("corroborate")
    example = Example.from_text(
        "ex1", text,
        [{"start": start, "end": start + len("corroborate"), "label": "Evidence"},
         {"start": 27, "end": 35, "label": "Support", "role": "argument"}],  # "Mr. Lee'": its edge cuts a token
        meta={"doc": "d1"},
    )
    assert [example.tokens[s.start : s.end] for s in example.spans] == [("corroborate",), ("Mr", ".", "Lee", "'")]
    assert example.spans[1].role == "argument" and example.meta == {"doc": "d1"}
    assert Example(id="ex2", text="They buy bread.").tokens == ("They", "buy", "bread", ".")
    with pytest.raises(ValueError, match=r"spans\[0\] \(characters 3-4: ' '\) covers no token"):
        Example.from_text("ex3", "The  panel", [{"start": 3, "end": 4, "label": "X"}])
    with pytest.raises(ValueError, match="give tokens or text, not both"):
        Example(id="ex4", text="a b", tokens=("a", "b"))


def test_tokens_keep_their_character_offsets_and_split_at_boundaries() -> None:
    from spanaug_core.text import tokenize_with_offsets

    text = "wheel-chair users, e.g. Ann"
    plain = tokenize_with_offsets(text)
    assert [text[a:b] for a, b in plain.offsets] == list(plain.tokens)
    cut = tokenize_with_offsets(text, [5, 6])  # a span "-" inside the hyphenated word
    assert cut.tokens[:3] == ("wheel", "-", "chair") and cut.token_span(5, 6) == (1, 2)
    assert cut.token_span(0, 4) is None  # inside one token: no whole token is covered
