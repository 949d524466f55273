"""The built-in filters, one criterion each (the learned filter is in test_learned.py)."""

from __future__ import annotations

import pytest
from spanaug_shared.encoder import Encoder

from spanaug_core.errors import ConfigError, SpanaugError
from spanaug_core.plugins import build
from spanaug_core.protocols import FilterContext
from spanaug_core.types import Augmented, Constraints, Example, Span
from spanaug_filters.basic import (
    AlignmentScoreFilter,
    CopyFilter,
    FactsFilter,
    FluencyFilter,
    KeptTextFilter,
    MaxIterationFilter,
    ParaphraseScoreFilter,
    RecoveryFilter,
    facts,
)
from spanaug_filters.novelty import NoveltyFilter, ngram_overlap
from spanaug_filters.similarity import SimilarityFilter

SOURCE = Example(id="s", tokens=("The", "panel", "will", "corroborate", "it", "."))


def record(text: str, iteration: int = 1, **scores: float) -> Augmented:
    return Augmented(
        id="s/s0/it1", source_id="s", target=0, iteration=iteration, tokens=tuple(text.split()), text=text,
        spans=(), scores={"paraphrase": -0.5, "alignment": 0.8, **scores}, constraints=Constraints(),
    )


def ctx(*previous: str) -> FilterContext:
    return FilterContext(source=SOURCE, previous_texts=frozenset(previous))


def test_max_iteration() -> None:
    f = MaxIterationFilter(MaxIterationFilter.Config(max_iteration=2))
    assert f.check(record("a", iteration=2), ctx()) is None
    assert f.check(record("a", iteration=3), ctx()) == "iteration 3 > 2"


def test_score_thresholds() -> None:
    para = ParaphraseScoreFilter(ParaphraseScoreFilter.Config(min_score=-0.4))
    assert para.check(record("a"), ctx()) == "paraphrase score -0.5 < -0.4"
    assert para.check(record("a", paraphrase=-0.3), ctx()) is None
    align = AlignmentScoreFilter(AlignmentScoreFilter.Config())
    assert align.check(record("a", alignment=0.49), ctx()) == "alignment score 0.49 < 0.5"
    assert align.check(record("a"), ctx()) is None


def test_recovery_threshold_and_a_score_the_decoder_was_not_asked_for() -> None:
    recovery = RecoveryFilter(RecoveryFilter.Config())
    assert recovery.check(record("a", paraphrase_recovery=-0.2), ctx()) is None
    assert recovery.check(record("a", paraphrase_recovery=-1.5), ctx()) == "paraphrase_recovery score -1.5 < -0.5"
    # Without the decoder's score every record would be dropped: say how to turn it on instead.
    with pytest.raises(ConfigError, match=r"filter 'recovery' reads the score 'paraphrase_recovery'.*with --set decoder.recovery=true"):
        recovery.check(record("a"), ctx())
    with pytest.raises(ConfigError, match=r"--set decoder.fluency=true"):
        FluencyFilter(FluencyFilter.Config()).check(record("a"), ctx())


def test_copy() -> None:
    f = CopyFilter(CopyFilter.Config())
    assert f.check(record("the panel will corroborate it."), ctx()) == "identical to the source"
    assert f.check(record("The panel will confirm it."), ctx("The panel will confirm it .")) == "identical to an earlier output"
    assert f.check(record("The panel will confirm it."), ctx("The panel will verify it.")) is None
    strict = CopyFilter(CopyFilter.Config(case_sensitive=True))
    assert strict.check(record("the panel will corroborate it."), ctx()) is None


def test_novelty_overlap_is_containment_in_the_shorter_sentence() -> None:
    assert ngram_overlap("a b c".split(), "a b c d e".split(), 2) == 1.0  # Jaccard would be 0.6 / 0.5
    assert ngram_overlap("a b".split(), "c d".split(), 2) == 0.0
    # Unigrams 5/6, bigrams 3/5; an order longer than a sentence is left out.
    assert ngram_overlap(SOURCE.tokens, "The panel will confirm it .".split(), 2) == pytest.approx((5 / 6 + 3 / 5) / 2)
    assert ngram_overlap(["a"], ["a"], 3) == 1.0


def test_novelty_accepts_and_rejects_with_reasons() -> None:
    f = NoveltyFilter(NoveltyFilter.Config())
    assert f.check(record("The panel will confirm it ."), ctx()) is None
    assert f.check(record("the panel will corroborate it ."), ctx()) == "2-gram overlap 1.000 > 0.9"
    assert f.check(record("Confirmed ."), ctx()) == "length ratio 0.33 outside [0.5, 2]"
    long = "The panel that met on Monday will in the end confirm all of it ."
    assert f.check(record(long), ctx()) == "length ratio 2.50 outside [0.5, 2]"
    # A reordering keeps every word: unigrams alone call it a copy, bigrams see the change.
    reordered = record("it will the panel corroborate .")
    assert NoveltyFilter(NoveltyFilter.Config(max_n=1)).check(reordered, ctx()) == "1-gram overlap 1.000 > 0.9"
    assert f.check(reordered, ctx()) is None


def test_novelty_can_also_ask_for_a_new_wording_against_earlier_outputs() -> None:
    f = NoveltyFilter(NoveltyFilter.Config(previous_ceiling=0.8))
    earlier = "The panel is going to confirm it."
    near_copy = record("The panel is going to verify it .")  # unigrams 7/8, bigrams 5/7: 0.79 against the earlier output
    assert f.check(near_copy, ctx(earlier)) is None
    closer = record("The panel is going to confirm it !")  # 7/8 and 6/7
    assert f.check(closer, ctx(earlier)) == "2-gram overlap 0.866 with an earlier output > 0.8"
    # The source is among the earlier texts the pipeline passes; the source ceiling judges it, not this one.
    assert NoveltyFilter(NoveltyFilter.Config(ceiling=1.0, previous_ceiling=0.5)).check(
        record("The panel will check it ."), ctx(SOURCE.text)) is None
    assert NoveltyFilter(NoveltyFilter.Config()).check(closer, ctx(earlier)) is None  # off by default


def test_novelty_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="min_length_ratio 3.0 > max_length_ratio 2.0"):
        build(NoveltyFilter, min_length_ratio=3.0)


def test_similarity_accepts_and_rejects_with_reasons(tiny_encoder) -> None:
    source = Example(id="s", tokens=tuple("the cat sat on the mat .".split()))
    context = FilterContext(source=source, previous_texts=frozenset())
    other = record("a big dog lay on a red rug quickly .")
    # A random encoder's mean vectors are all alike: place the floors around the cosine it gives.
    cosine = SimilarityFilter(SimilarityFilter.Config(encoder=str(tiny_encoder))).similarity(source.tokens, other.tokens)
    assert -1.0 <= cosine < 0.9999
    strict = SimilarityFilter(SimilarityFilter.Config(encoder=str(tiny_encoder), floor=round((1 + cosine) / 2, 6)))
    assert strict.check(record("the cat sat on the mat ."), context) is None  # cosine 1
    assert strict.check(other, context) == f"similarity {cosine:.3f} < {strict.config.floor:g}"
    lax = SimilarityFilter(SimilarityFilter.Config(encoder=str(tiny_encoder), floor=cosine - 0.01))
    assert lax.check(other, context) is None


def test_similarity_encodes_each_source_once(tiny_encoder, monkeypatch) -> None:
    fresh = SimilarityFilter(SimilarityFilter.Config(encoder=str(tiny_encoder)))
    source, para = tuple("the cat sat .".split()), tuple("a dog sat .".split())
    expected = fresh.similarity(source, para)
    f = SimilarityFilter(SimilarityFilter.Config(encoder=str(tiny_encoder)))
    f.similarity(source, tuple("the dog sat .".split()))
    calls = []
    encode = Encoder.encode_sentences
    monkeypatch.setattr(Encoder, "encode_sentences", lambda self, sents, **kw: calls.append(sents) or encode(self, sents, **kw))
    assert f.similarity(source, para) == pytest.approx(expected, abs=1e-5)
    assert calls == [[para]]


def test_similarity_loads_its_encoder_on_first_use(tmp_path) -> None:
    f = SimilarityFilter(SimilarityFilter.Config(encoder=str(tmp_path / "missing")))  # building costs nothing
    with pytest.raises(SpanaugError, match="missing"):
        f.check(record("The panel will confirm it ."), ctx())


def test_facts_are_numbers_and_names_outside_sentence_starts() -> None:
    tokens = ("4", "-", "Mo", "Vaughn", "went", "3-for-3", "on", "Thursday", ".", "He", "scored", "116th")
    assert facts(tokens) == {"vaughn", "3-for-3", "thursday", "116th"}  # "4 -": a list item's number
    assert facts(tokens, skip=range(5, 8)) == {"vaughn", "116th"}


def test_kept_text_drops_an_entity_the_paraphrase_rewrote() -> None:
    source = Example(
        id="s", tokens=tuple("Oldest Albania book disappears from Vatican - paper .".split()),
        spans=(Span(start=1, end=2, label="LOC", role="entity"), Span(start=5, end=6, label="LOC", role="entity")),
    )
    context = FilterContext(source=source, previous_texts=frozenset())

    def out(text: str, *spans: tuple[int, int, str]) -> Augmented:
        entities = tuple(Span(start=a, end=b, label=label, role="entity") for a, b, label in spans)
        return record(text).model_copy(update={"target": None, "spans": entities})

    f = KeptTextFilter(KeptTextFilter.Config())
    assert f.check(out("The oldest book in Albania vanished from the VATICAN .", (4, 5, "LOC"), (8, 9, "LOC")), context) is None
    assert f.check(out("The oldest Albanian book vanished from the Vatican .", (2, 3, "LOC"), (7, 8, "LOC")), context) == (
        "LOC 'Albanian' is not as in the source ('Albania', 'Vatican')"
    )
    # Each source span matches once: two "Vatican"s cannot stand for "Albania" and "Vatican".
    assert f.check(out("Vatican book left the Vatican .", (0, 1, "LOC"), (4, 5, "LOC")), context) == (
        "LOC 'Vatican' is not as in the source ('Albania')"
    )
    assert f.check(out("Albania 's oldest book left .", (0, 1, "LOC")), context) is None  # a subset is fine
    # The label counts, and so does case when asked to.
    assert f.check(out("Albania lost Vatican 's book .", (0, 1, "ORG"), (2, 3, "LOC")), context) == "ORG 'Albania' is not as in the source"
    strict = KeptTextFilter(KeptTextFilter.Config(case_sensitive=True))
    assert strict.check(out("ALBANIA lost Vatican 's book .", (0, 1, "LOC"), (2, 3, "LOC")), context) is not None
    # Other roles are not its business unless named.
    arguments = KeptTextFilter(KeptTextFilter.Config(roles=["argument"]))
    assert arguments.check(out("The oldest Albanian book vanished .", (2, 3, "LOC")), context) is None


def test_facts_filter_drops_a_paraphrase_that_lost_a_number_or_a_name() -> None:
    source = Example(
        id="s", tokens=tuple("The 30-share DAX index in Frankfurt closed up on Thursday .".split()),
        spans=(Span(start=7, end=8, label="Change_position"),),
    )
    f = FactsFilter(FactsFilter.Config())
    context = FilterContext(source=source, previous_texts=frozenset())
    kept = record("The 30-share DAX index in Frankfurt rose on Thursday .")
    assert f.check(kept, context) is None
    assert f.check(record("The DAX index in Frankfurt rose on Thursday ."), context) == "lost '30-share'"
    assert f.check(record("The index rose ."), context) == "lost '30-share', 'dax', 'frankfurt' and 1 more"
    # The rewritten span's own words may change; "116 th" is "116th" written apart.
    rewritten = Example(id="s", tokens=("Boston", "'s", "Vaughn", "collected", "his", "116th", "RBI", "."), spans=(Span(start=5, end=6, label="Ordinal"),))
    ctx = FilterContext(source=rewritten, previous_texts=frozenset())
    assert f.check(record("Boston 's Vaughn got his 116 th RBI ."), ctx) is None
    assert f.check(record("Boston 's Vaughn got his hundredth RBI ."), ctx) is None
    assert f.check(record("He got his 116 th RBI ."), ctx) == "lost 'vaughn'"
