"""Pipeline semantics (Culkin et al. §5): growing avoid sets, kept spans, early stops, chaining, batching."""

from __future__ import annotations

import pytest
from doubles import DiffAligner, SynonymDecoder

from spanaug_core import Alignment, Candidate, Example, Span
from spanaug_core.config import PipelineSettings
from spanaug_core.errors import SpanaugError
from spanaug_core.protocols import ComponentConfig
from spanaug_core.outcomes import IDLE, Checkpoint, Rejection
from spanaug_core.pipeline import Pipeline
from spanaug_core.text import contains_phrase, tokenize
from spanaug_expanders.inflect import InflectExpander
from spanaug_filters.basic import MaxIterationFilter
from spanaug_filters.novelty import NoveltyFilter


def make(iterations: int = 10, filters=(), decoder=None, aligner=None, batch_size: int | None = None, **settings) -> Pipeline:
    sizes = {} if batch_size is None else {"batch_size": batch_size}  # the decoder's, a plain decoder's batches
    return Pipeline(
        decoder=decoder or SynonymDecoder(SynonymDecoder.Config(**sizes)),
        aligner=aligner or DiffAligner(DiffAligner.Config()),
        expander=InflectExpander(InflectExpander.Config()),
        filters=list(filters),
        settings=PipelineSettings(iterations=iterations, **settings),
    )


def corroborate(idx: int = 0) -> Example:
    return Example(
        id=f"ex{idx}",
        tokens=("The", "panel", "will", "corroborate", "it", "."),
        spans=(
            Span(start=3, end=4, label="Evidence", role="target", group="a1", attrs={"lu": "corroborate.v"}),
            Span(start=0, end=2, label="Support", role="argument", group="a1"),
        ),
    )


def test_avoid_set_grows_with_each_aligned_phrase() -> None:
    pipe = make()
    records = list(pipe.run([corroborate()]))
    words = [r.tokens[3] for r in records]
    # Every round avoids all forms of every earlier word, so each output finds a new one.
    assert words == ["confirm", "verify", "support", "back"]
    assert [r.iteration for r in records] == [1, 2, 3, 4]
    avoid_sets = [set(r.constraints.avoid) for r in records]
    assert all(a < b for a, b in zip(avoid_sets, avoid_sets[1:]))
    assert {"corroborates", "Corroborated", "CORROBORATE"} <= avoid_sets[0]
    assert {"confirmed", "Confirm"} <= avoid_sets[1] and "confirmed" not in avoid_sets[0]
    # Decoding always starts from the ORIGINAL sentence unless chain is set.
    assert all(call[0].text == "The panel will corroborate it." for call in pipe.decoder.calls)
    assert pipe.stats.stopped == {"no-candidates": 1}


def test_kept_spans_become_include_constraints_and_are_carried() -> None:
    pipe = make(iterations=1, keep="include")
    (record,) = list(pipe.run([corroborate()]))
    assert record.constraints.include == ("The panel",)
    target, kept = sorted(record.spans, key=lambda s: s.role, reverse=True)
    assert (target.start, target.end, target.label, target.attrs) == (3, 4, "Evidence", {"lu": "corroborate.v"})
    assert (kept.start, kept.end, kept.label, kept.group) == (0, 2, "Support", "a1")
    assert record.scores["alignment"] == 0.9 and record.scores["paraphrase"] == -0.1
    assert record.id == "ex0/s0/it1" and record.source_id == "ex0" and record.target == 0


def test_keep_drop_carries_only_the_target() -> None:
    (record,) = list(make(iterations=1, keep="drop").run([corroborate()]))
    assert record.constraints.include == () and [s.role for s in record.spans] == ["target"]


def test_keep_align_locates_kept_spans_with_the_aligner() -> None:
    (record,) = list(make(iterations=1, keep="align").run([corroborate()]))
    assert record.constraints.include == ()
    assert {(s.start, s.end, s.role) for s in record.spans} == {(3, 4, "target"), (0, 2, "argument")}


def test_stops_early_when_nothing_aligns() -> None:
    pipe = make()
    pipe.aligner = DiffAligner(DiffAligner.Config(threshold=0.95))
    outcomes = list(pipe.outcomes([corroborate()]))
    stops = [o for o in outcomes if isinstance(o, Rejection)]
    assert [s.reason for s in stops] == ["no-alignment"] and stops[0].iteration == 1
    assert pipe.stats.accepted == 0 and pipe.stats.stopped == {"no-alignment": 1}


def test_chain_paraphrases_the_previous_output() -> None:
    pipe = make(iterations=3, chain=True)
    records = list(pipe.run([corroborate()]))
    sources = [call[0].text for call in pipe.decoder.calls]
    assert sources[0] == "The panel will corroborate it."
    assert sources[1] == records[0].text == "The panel will confirm it."
    # From "confirm" the only synonym is "verify"; after that nothing new can be made.
    assert [r.tokens[3] for r in records] == ["confirm", "verify"]


def test_filters_reject_but_the_loop_goes_on() -> None:
    pipe = make(filters=[MaxIterationFilter(MaxIterationFilter.Config(max_iteration=2))])
    outcomes = list(pipe.outcomes([corroborate()]))
    accepted = [o for o in outcomes if not isinstance(o, (Rejection, Checkpoint))]
    rejected = [o for o in outcomes if isinstance(o, Rejection) and o.record is not None]
    assert [r.iteration for r in accepted] == [1, 2]
    assert [r.record.iteration for r in rejected] == [3, 4]
    assert rejected[0].reason == "max-iteration: iteration 3 > 2"


class _RejectWord:
    """A filter that drops any record containing its word."""

    name = "no-word"

    def __init__(self, word: str) -> None:
        self.word = word
        self.checked: list[str] = []

    def check(self, record, context):
        self.checked.append(" ".join(record.tokens))
        return f"has {self.word!r}" if self.word in record.tokens else None


def test_a_round_keeps_the_best_candidate_the_filters_accept() -> None:
    pipe = make(iterations=1, filters=[_RejectWord("confirm")])
    (record,) = list(pipe.run([corroborate()]))
    # The aligner's favourite (the decoder's first, "confirm") is dropped; its runner-up is kept.
    assert record.tokens[3] == "verify" and record.scores["rank"] == 1.0
    assert pipe.stats.filtered_choices == 1 and pipe.stats.rejected == 0
    # The avoid set grows from the kept word, not the dropped one: round 2 offers "confirm"
    # again (dropped again) and keeps the next, "support".
    pipe = make(iterations=2, filters=[_RejectWord("confirm")])
    assert [r.tokens[3] for r in pipe.run([corroborate()])] == ["verify", "support"]
    # Off, the best candidate alone is filtered, and the round keeps nothing (the paper's order).
    pipe = make(iterations=1, filters=[_RejectWord("confirm")], filter_candidates=False)
    outcomes = list(pipe.outcomes([corroborate()]))
    (rejected,) = [o for o in outcomes if isinstance(o, Rejection)]
    assert rejected.reason == "no-word: has 'confirm'" and rejected.record.tokens[3] == "confirm"
    assert pipe.stats.filtered_choices == 0 and pipe.stats.accepted == 0


def test_whole_sentence_jobs_keep_entities_and_take_new_candidates() -> None:
    pipe = make(iterations=5, rewrite_roles=[])
    ex = Example(id="n", tokens=("Ann", "will", "buy", "it", "quickly", "."), spans=(Span(start=0, end=1, label="PER", role="entity"),))
    records = list(pipe.run([ex]))
    texts = [r.text for r in records]
    assert len(texts) == len(set(texts)) == 4  # purchase, acquire, rapidly, fast
    assert all(r.spans[0].start == 0 and r.tokens[0] == "Ann" for r in records)
    assert pipe.stats.stopped == {"no-new-candidates": 1}


def test_per_round_keeps_the_rounds_next_new_phrases_too() -> None:
    pipe = make(iterations=1, per_round=2)
    records = list(pipe.run([corroborate()]))
    assert [r.tokens[3] for r in records] == ["confirm", "verify"]
    assert [r.id for r in records] == ["ex0/s0/it1", "ex0/s0/it1.2"] and {r.iteration for r in records} == {1}
    assert records[0].constraints == records[1].constraints  # each carries what its round was decoded under
    assert pipe.stats.accepted == 2 and pipe.stats.more_records == 1
    # Both phrases join the avoid set: the next round finds the two words left.
    pipe = make(iterations=2, per_round=2)
    assert [(r.iteration, r.tokens[3]) for r in pipe.run([corroborate()])] == [(1, "confirm"), (1, "verify"), (2, "support"), (2, "back")]
    # The filters judge the further records too; one they drop makes way for the next.
    pipe = make(iterations=1, per_round=2, filters=[_RejectWord("verify")])
    assert [r.tokens[3] for r in pipe.run([corroborate()])] == ["confirm", "support"]
    # The further records come after the round's choice: a candidate dropped before it is not judged again.
    no_confirm = _RejectWord("confirm")
    pipe = make(iterations=1, per_round=2, filters=[no_confirm])
    assert [r.tokens[3] for r in pipe.run([corroborate()])] == ["verify", "support"]
    assert [text.split()[3] for text in no_confirm.checked] == ["confirm", "verify", "support"]
    # Another form of a phrase the round kept is nothing new ("confirms" after "confirm").
    attest = Example(id="a", tokens=("They", "attest", "it", "."), spans=(Span(start=1, end=2, label="Evidence", role="target"),))
    pipe = make(iterations=1, per_round=3)
    assert [r.tokens[1] for r in pipe.run([attest])] == ["confirm", "verify"]
    # A whole-sentence job keeps sentences it has not written: four rounds' worth in two.
    ner = Example(id="n", tokens=("Ann", "will", "buy", "it", "quickly", "."), spans=(Span(start=0, end=1, label="PER", role="entity"),))
    pipe = make(iterations=2, per_round=2, rewrite_roles=[])
    texts = [r.text for r in pipe.run([ner])]
    assert len(texts) == len(set(texts)) == 4


class _Listed:
    """A decoder that answers every request with its fixed sentences, less those holding an avoid phrase."""

    name = "listed"

    def __init__(self, *texts: str) -> None:
        self.texts = texts

    def decode(self, requests, nbest):
        return [[Candidate(text=t, tokens=tuple(tokenize(t)), score=-0.1) for t in self.texts
                 if not any(contains_phrase(t, p, case_sensitive=False) for p in r.constraints.avoid)][:nbest] for r in requests]


class _Between:
    """An aligner that places the span between "will" and "today"."""

    name = "between"

    def align(self, items):
        return [Alignment(span=(list(i.target_tokens).index("will") + 1, list(i.target_tokens).index("today")), score=0.9) for i in items]


def test_per_round_takes_nothing_the_next_round_would_bar() -> None:
    # "review the results" holds "review" and "results", which "review its results" puts in
    # the avoid set (avoid_words): no new phrase, though not the same one.
    ex = Example(id="x", tokens=tuple("The panel will examine the report today .".split()), spans=(Span(start=3, end=5, label="E"),))
    decoder = _Listed("The panel will review its results today .", "The panel will review the results today .",
                      "The panel will study the document today .")
    pipe = Pipeline(decoder, _Between(), InflectExpander(InflectExpander.Config()),
                    settings=PipelineSettings(per_round=3, iterations=1, keep="drop"))
    assert [" ".join(r.tokens[3:-2]) for r in pipe.run([ex])] == ["review its results", "study the document"]
    # A whole-sentence job's sentence spelt with other spaces is the same sentence.
    ner = Example(id="n", tokens=("Ann", "will", "buy", "it", "quickly", "."), spans=(Span(start=0, end=1, label="PER", role="entity"),))
    decoder = _Listed("Ann will purchase it quickly.", "Ann will purchase it quickly .", "Ann will acquire it fast.")
    pipe = make(decoder=decoder, iterations=1, per_round=3, rewrite_roles=[])
    assert [r.text for r in pipe.run([ner])] == ["Ann will purchase it quickly.", "Ann will acquire it fast."]
    # The filters see the round's earlier records as earlier outputs: "acquire" is too close
    # to "purchase" (2-gram overlap above 0.7), as it is when a later round writes it.
    near = NoveltyFilter(NoveltyFilter.Config(ceiling=1.0, previous_ceiling=0.7))
    pipe = make(filters=[near], iterations=1, per_round=2, rewrite_roles=[])
    assert [r.text for r in pipe.run([ner])] == ["Ann will purchase it quickly.", "Ann will buy it rapidly."]


def test_per_round_stays_within_top_m() -> None:
    with pytest.raises(ValueError, match=r"per_round \(5\) is above top_m \(4\)"):
        PipelineSettings(top_m=4, per_round=5)


class _RepeatableDecoder(SynonymDecoder):
    repeatable = True


def test_a_repeatable_decoder_is_not_asked_the_same_request_twice() -> None:
    # A whole-sentence job asks the same every round (nothing is added to avoid): its first
    # n-best list serves the later rounds. Span jobs ask something new each round.
    ner = Example(id="n", tokens=("Ann", "will", "buy", "it", "quickly", "."), spans=(Span(start=0, end=1, label="PER", role="entity"),))
    examples = [corroborate(0), ner, corroborate(1)]
    plain = make(iterations=5, rewrite_roles=["target"])
    reusing = make(iterations=5, rewrite_roles=["target"], decoder=_RepeatableDecoder(_RepeatableDecoder.Config()))
    assert list(reusing.outcomes(examples)) == list(plain.outcomes(examples))
    asked = [r.text for call in reusing.decoder.calls for r in call]
    assert asked.count("Ann will buy it quickly.") == 1 and [r.text for call in plain.decoder.calls for r in call].count("Ann will buy it quickly.") == 5
    assert reusing.stats.reused_nbest == 4 and plain.stats.reused_nbest == 0
    assert reusing.stats.as_dict()["reused_nbest"] == 4


def test_skip_labels_leaves_matching_targets_alone_and_does_not_paraphrase_their_sentence_whole() -> None:
    copula = Example(
        id="b",
        tokens=("The", "panel", "will", "corroborate", "it", "."),
        spans=(
            Span(start=3, end=4, label="be.01", role="target", group="p"),
            Span(start=0, end=2, label="ARG1", role="argument", group="p"),
        ),
    )
    pipe = make(iterations=1, skip_labels=["be.*", "do.*"])
    records = list(pipe.run([corroborate(), copula]))
    assert [r.source_id for r in records] == ["ex0"]  # "Evidence" matches no pattern; "be.01" does
    assert not pipe.decoder.calls[1:] and len(pipe.decoder.calls[0]) == 1
    assert pipe.stats.as_dict()["skipped_spans"] == 1 and pipe.stats.jobs == 1
    assert [r.source_id for r in make(iterations=1).run([copula])] == ["b"]  # by default it is rewritten


def test_skip_pos_leaves_targets_of_those_parts_of_speech_alone() -> None:
    def predicate(pos: str | None) -> Example:
        attrs = {"pos": pos} if pos else {}
        return corroborate(0).model_copy(update={"id": f"p-{pos}", "spans": (Span(start=3, end=4, label="corroborate.01", attrs=attrs),)})

    examples = [predicate("NOUN"), predicate("VERB"), predicate(None)]
    pipe = make(iterations=1, skip_pos=["NOUN"])
    assert [r.source_id for r in pipe.run(examples)] == ["p-VERB", "p-None"]  # a span without pos is rewritten
    assert pipe.stats.as_dict()["skipped_spans"] == 1
    assert len(list(make(iterations=1).run(examples))) == 3  # by default every part of speech is rewritten


def test_examples_are_decoded_in_batches_across_examples() -> None:
    pipe = make(iterations=2, batch_size=4)
    examples = [corroborate(i) for i in range(10)]
    records = list(pipe.run(examples))
    calls = [[r.text for r in call] for call in pipe.decoder.calls]
    # A plain decoder gets full batches from the queue while requests wait; an example's
    # second iteration goes ahead of newer examples' first.
    assert [len(c) for c in calls] == [4, 4, 4, 4, 2, 2]
    assert [r.id for r in records] == [f"ex{i}/s0/it{n}" for i in range(10) for n in (1, 2)]  # input order


def test_streaming_yields_in_input_order_with_checkpoints_and_stays_lazy() -> None:
    pipe = make(iterations=1, batch_size=2)
    consumed = []

    def source():
        for i in range(7):
            consumed.append(i)
            yield corroborate(i)

    outcomes = pipe.outcomes(source())
    first = next(outcomes)
    # The queue reads ahead a window of two batches, no more.
    assert consumed == [0, 1, 2, 3] and first.source_id == "ex0"
    rest = list(outcomes)
    marks = [o for o in rest if isinstance(o, Checkpoint) and o.examples]
    assert [(m.examples, m.last_id) for m in marks] == [(1, f"ex{i}") for i in range(7)]  # one per example
    assert [o.source_id for o in [first, *rest] if not isinstance(o, Checkpoint)] == [f"ex{i}" for i in range(7)]
    assert pipe.in_flight() == []


def test_an_idle_input_is_asked_again_and_ends_the_stream_only_when_nothing_is_in_progress() -> None:
    examples = [corroborate(i) for i in range(5)]
    whole = [o for o in make(iterations=3, batch_size=2).outcomes(examples) if not isinstance(o, Checkpoint)]

    def fed_late():  # the next chunk arrives while the first is still being decoded
        yield from examples[:2]
        yield IDLE
        yield IDLE
        yield from examples[2:]

    got = [o for o in make(iterations=3, batch_size=2).outcomes(fed_late()) if not isinstance(o, Checkpoint)]
    assert got == whole

    def starved():  # no more chunks: the stream ends once the examples read are done
        yield from examples[:2]
        while True:
            yield IDLE

    pipe = make(iterations=3, batch_size=2)
    got = [o for o in pipe.outcomes(starved()) if not isinstance(o, Checkpoint)]
    assert got == [o for o in whole if o.source_id in ("ex0", "ex1")] and pipe.in_flight() == []


def test_in_flight_state_restores_to_the_same_outcomes() -> None:
    examples = [corroborate(i) for i in range(5)]
    whole = [o for o in make(iterations=3, batch_size=2).outcomes(examples) if not isinstance(o, Checkpoint)]
    pipe = make(iterations=3, batch_size=2)
    before, state, read = [], None, 0
    for outcome in pipe.outcomes(examples):
        if isinstance(outcome, Checkpoint):
            if state is None and pipe.in_flight():
                state, cut = pipe.in_flight(), len(before)
                read = int(state[-1]["example"]["id"][2:]) + 1
        else:
            before.append(outcome)
    assert state is not None and any(s["outcomes"] or s["iteration"] for s in state)
    resumed = make(iterations=3, batch_size=2)
    resumed.restore(state)
    after = [o for o in resumed.outcomes(examples[read:]) if not isinstance(o, Checkpoint)]
    assert before[:cut] + after == whole


def test_example_without_any_span_is_skipped() -> None:
    pipe = make()
    assert list(pipe.run([Example(id="x", tokens=("Hi", "."))])) == []
    assert pipe.stats.skipped_examples == 1


def test_from_components_mixes_names_instances_and_classes(registry) -> None:
    from doubles import DoublesPlugin

    import spanaug_expanders

    registry.add_plugin(DoublesPlugin(), "doubles")
    registry.add_plugin(spanaug_expanders, "expanders")
    pipe = Pipeline.from_components(
        decoder="synonym",
        aligner=("diff", {"threshold": 0.5}),
        expander=InflectExpander(InflectExpander.Config(case_variants=False)),
        registry=registry,
        iterations=1,
    )
    assert [r.tokens[3] for r in pipe.run([corroborate()])] == ["confirm"]
    with pytest.raises(Exception, match="unknown aligner 'dif'.*Did you mean 'diff'"):
        Pipeline.from_components(decoder="synonym", aligner="dif", registry=registry)


class _ListedDecoder(SynonymDecoder):
    """The first of a fixed list of paraphrases that keeps the constraints."""

    TEXTS = ("The panel will confirm findings .", "The panel will confirm the findings about it .", "The panel will check it .")

    def decode(self, requests, nbest):
        from spanaug_core.text import contains_phrase, tokenize
        from spanaug_core.types import Candidate

        out = []
        for request in requests:
            ok = [t for t in self.TEXTS if not any(contains_phrase(t, p, case_sensitive=False) for p in request.constraints.avoid)]
            out.append([Candidate(text=t, tokens=tuple(tokenize(t)), score=-1.0) for t in ok[:1]])
        return out


class _ToTheEndAligner(DiffAligner):
    """Aligns the target from its start up to the last word before the final stop."""

    def align(self, items):
        from spanaug_core.types import Alignment

        spans = [(it.source_span[0], len(it.target_tokens) - 1) for it in items]
        return [Alignment(span=s, score=0.9, candidates=((*s, 0.9),)) for s in spans]


@pytest.mark.parametrize(("avoid_words", "second"), [(True, "The panel will check it ."), (False, "The panel will confirm the findings about it .")])
def test_the_avoid_set_blocks_each_content_word_of_a_multiword_alignment(avoid_words: bool, second: str) -> None:
    pipe = make(2, decoder=_ListedDecoder(_ListedDecoder.Config()), aligner=_ToTheEndAligner(_ToTheEndAligner.Config()),
                avoid_words=avoid_words, keep="drop")
    example = Example(id="e", tokens=("The", "panel", "will", "corroborate", "it", "."), spans=(Span(start=3, end=4, label="Verify"),))
    first, then = list(pipe.run([example]))
    assert first.text == "The panel will confirm findings ."  # aligned: "confirm findings"
    assert then.text == second  # with avoid_words, "confirm" alone is blocked too (and "confirmed", "confirms"...)
    if avoid_words:
        assert {"confirm", "confirmed", "findings", "finding"} <= set(then.constraints.avoid)
        assert "it" not in then.constraints.avoid and "will" not in then.constraints.avoid


class _SamePlaceAligner(DiffAligner):
    """Aligns the target to the same token positions, whatever the lengths."""

    def align(self, items):
        from spanaug_core.types import Alignment

        return [Alignment(span=it.source_span, score=0.9, candidates=((*it.source_span, 0.9),)) for it in items]


def test_corpus_tokenization_is_undone_before_paraphrasing() -> None:
    # CoNLL/OntoNotes split hyphenated words; the decoder sees, and must include, "wheel-chair".
    pipe = make(1, aligner=_SamePlaceAligner(_SamePlaceAligner.Config()), keep="include")
    tokens = ("They", "buy", "a", "wheel", "-", "chair", ".")
    example = Example(id="w", tokens=tokens, spans=(Span(start=1, end=2, label="Buy"), Span(start=2, end=6, label="Goods", role="argument")))
    (record,) = pipe.run([example])
    request = pipe.decoder.calls[0][0]
    assert request.text == "They buy a wheel-chair." and request.constraints.include == ("a wheel-chair",)
    assert record.text == "They purchase a wheel-chair."
    assert record.tokens[record.spans[1].start : record.spans[1].end] == ("a", "wheel", "-", "chair")  # the corpus' tokens


def test_a_spaced_dash_of_a_headline_keeps_its_entities_findable() -> None:
    # CoNLL-2003 headlines: "SOCCER - JAPAN GET ..." with JAPAN a kept entity.
    pipe = make(1, aligner=_SamePlaceAligner(_SamePlaceAligner.Config()))
    tokens = ("SOCCER", "-", "JAPAN", "buy", "WIN", ".")
    example = Example(id="h", tokens=tokens, spans=(Span(start=3, end=4, label="Buy"), Span(start=2, end=3, label="LOC", role="entity")))
    (record,) = pipe.run([example])
    assert pipe.decoder.calls[0][0].text == "SOCCER-JAPAN buy WIN."
    assert record.text == "SOCCER-JAPAN purchase WIN." and record.tokens[record.spans[1].start] == "JAPAN"


class _PreferWord:
    """A scoring filter double: ``liked`` scores 1 for candidates containing ``word``, else 0; keeps everything."""

    name = "prefer"

    class Config(ComponentConfig):
        pass

    def __init__(self, word: str) -> None:
        self.config = self.Config()
        self.word, self.asked = word, []

    def score(self, source, paraphrases):
        self.asked.append((source.id, list(paraphrases)))
        return [{"liked": float(self.word in p)} for p in paraphrases]

    def check(self, record, context):
        return None


def test_rerank_weighs_scoring_filters_against_the_aligner() -> None:
    # The aligner scores every synonym alike (0.9); by default the decoder's order decides.
    (first,) = list(make(iterations=1).run([corroborate()]))
    assert first.tokens[3] == "confirm" and "liked" not in first.scores
    prefer = _PreferWord("support")
    pipe = make(iterations=1, filters=[prefer], rerank={"alignment": 1.0, "liked": 0.5})
    (record,) = list(pipe.run([corroborate()]))
    assert record.tokens[3] == "support" and record.scores["rank"] == 2.0
    assert record.scores["liked"] == 1.0 and record.scores["alignment"] == 0.9
    # Every candidate of the round was scored, against the input example.
    assert prefer.asked[0][0] == "ex0" and len(prefer.asked[0][1]) == 4
    assert pipe.stats.score_s >= 0.0
    # Weights name what counts: with the preference alone, the alignment score is ignored.
    (kept,) = list(make(iterations=1, filters=[_PreferWord("support")], rerank={"liked": 1.0}).run([corroborate()]))
    assert kept.tokens[3] == "support"


def test_rerank_also_chooses_whole_sentence_paraphrases() -> None:
    ex = Example(id="n", tokens=("Ann", "will", "buy", "it", "quickly", "."), spans=(Span(start=0, end=1, label="PER", role="entity"),))
    (record,) = list(make(iterations=1, rewrite_roles=[], filters=[_PreferWord("fast")], rerank={"liked": 1.0}).run([ex]))
    assert record.text == "Ann will buy it fast."


def test_a_rerank_weight_without_a_score_is_an_error() -> None:
    with pytest.raises(SpanaugError, match="rerank weight 'adequacy' names a score no component gave"):
        list(make(iterations=1, rerank={"alignment": 1.0, "adequacy": 1.0}).run([corroborate()]))


def test_score_lines_and_tables_are_not_paraphrased() -> None:
    row = Example(id="t", tokens=("Leeds", "22", "6", "0", "16", "555", "745", "12"), spans=(Span(start=0, end=1, label="ORG", role="entity"),))
    pipe = make(iterations=1, rewrite_roles=[])
    assert list(pipe.outcomes([row]))[-1].examples == 1 and pipe.stats.skipped_examples == 1 and pipe.stats.jobs == 0
    sentence = Example(id="n", tokens=("Ann", "will", "buy", "it", "quickly", "."), spans=(Span(start=0, end=1, label="PER", role="entity"),))
    assert len(list(make(iterations=1, rewrite_roles=[], min_words=4).run([sentence]))) == 1  # will, buy, it, quickly
    assert list(make(iterations=1, rewrite_roles=[], min_words=5).run([sentence])) == []


class _NoLongSpanAligner(_SamePlaceAligner):
    """Places one-word spans as _SamePlaceAligner does and nothing longer (as bert-span cannot place a long span)."""

    def align(self, items):
        from spanaug_core.types import Alignment

        answers = super().align(items)
        return [a if it.source_span[1] - it.source_span[0] == 1 else Alignment(span=None, score=0.0) for it, a in zip(items, answers)]


class _TwiceDecoder(_ListedDecoder):
    TEXTS = ("The panel will confirm it , The panel said .",)


@pytest.mark.parametrize("copies", [True, False])
def test_keep_align_keeps_a_copied_span_the_aligner_does_not_place(copies: bool) -> None:
    pipe = make(1, aligner=_NoLongSpanAligner(_NoLongSpanAligner.Config()), keep="align", keep_copies=copies)
    records = list(pipe.run([corroborate()]))
    if copies:
        (record,) = records
        assert record.text == "The panel will confirm it."
        assert {(s.start, s.end, s.role) for s in record.spans} == {(3, 4, "target"), (0, 2, "argument")}
    else:
        assert records == [] and pipe.stats.stopped == {"kept-spans-lost": 1}


class _LastWordAligner(_SamePlaceAligner):
    """Places the last word of a longer span only (as an aligner may place "Baghdad" of "pro-Baghdad")."""

    def align(self, items):
        from spanaug_core.types import Alignment

        return [Alignment(span=(a.span[1] - 1, a.span[1]), score=0.9) for a in super().align(items)]


@pytest.mark.parametrize("copies", [True, False])
def test_keep_align_prefers_a_copy_to_the_part_the_aligner_places(copies: bool) -> None:
    pipe = make(1, aligner=_LastWordAligner(_LastWordAligner.Config()), keep="align", keep_copies=copies)
    (record,) = pipe.run([corroborate()])
    assert record.text == "The panel will confirm it."
    argument = next(s for s in record.spans if s.role == "argument")
    assert (argument.start, argument.end) == ((0, 2) if copies else (1, 2))


def test_keep_align_leaves_a_span_copied_twice_lost() -> None:
    pipe = make(1, decoder=_TwiceDecoder(_TwiceDecoder.Config()), aligner=_NoLongSpanAligner(_NoLongSpanAligner.Config()), keep="align")
    assert list(pipe.run([corroborate()])) == [] and pipe.stats.stopped == {"kept-spans-lost": 1}


class _AllListedDecoder(_ListedDecoder):
    """Every paraphrase of its list that keeps the constraints, in order."""

    TEXTS = ("The panel went into it.", "The panel will confirm it.")

    def decode(self, requests, nbest):
        from spanaug_core.text import contains_phrase, tokenize
        from spanaug_core.types import Candidate

        return [
            [
                Candidate(text=t, tokens=tuple(tokenize(t)), score=-1.0)
                for t in self.TEXTS
                if not any(contains_phrase(t, p, case_sensitive=False) for p in request.constraints.avoid)
            ]
            for request in requests
        ]


def test_a_content_word_target_found_on_function_words_alone_is_not_found() -> None:
    # The aligner places "corroborate" on "into" of "went into it": the round keeps the next candidate.
    same_place = _SamePlaceAligner(_SamePlaceAligner.Config())
    pipe = make(1, decoder=_AllListedDecoder(_AllListedDecoder.Config()), aligner=same_place, keep="drop")
    assert [r.text for r in pipe.run([corroborate()])] == ["The panel will confirm it."]
    # With no other candidate the job stops for want of an alignment.
    only = _AllListedDecoder(_AllListedDecoder.Config())
    only.TEXTS = ("The panel went into it.",)
    pipe = make(1, decoder=only, aligner=same_place, keep="drop")
    assert list(pipe.run([corroborate()])) == [] and pipe.stats.stopped == {"no-alignment": 1}
    # A function-word target ("will") may become a function word.
    modal = Example(id="m", tokens=corroborate().tokens, spans=(Span(start=3, end=4, label="Future"),))
    modal = modal.model_copy(update={"tokens": ("The", "panel", "will", "will", "it", ".")})
    (record,) = make(1, decoder=only, aligner=same_place, keep="drop").run([modal])
    assert record.tokens[3] == "into"
    # "will" tagged a verb by its reader is a content word, though on the function-word list.
    verb = modal.model_copy(update={"spans": (Span(start=3, end=4, label="Future", attrs={"pos": "VERB"}),)})
    assert list(make(1, decoder=only, aligner=same_place, keep="drop").run([verb])) == []
    # content_targets=false takes any span the aligner finds, as before the setting.
    (record,) = make(1, decoder=only, aligner=same_place, keep="drop", content_targets=False).run([corroborate()])
    assert record.tokens[3] == "into"


class _Lexicon:
    """Offers the synonyms of a target's ``lu`` lemma that are not avoided, and records each call."""

    name = "test-lexicon"

    def __init__(self, words: dict[str, list[str]]) -> None:
        self.words, self.calls = words, []

    def alternatives(self, example, span, avoid):
        self.calls.append((example.id, span.label, tuple(avoid)))
        lemma = span.attrs["lu"].rsplit(".", 1)[0]
        return [w for w in self.words.get(lemma, []) if w not in avoid]


def test_a_lexicon_offers_words_each_round_that_the_round_before_has_not_used() -> None:
    lexicon = _Lexicon({"corroborate": ["confirm", "verify", "support"]})
    pipe = Pipeline(
        decoder=SynonymDecoder(SynonymDecoder.Config()),
        aligner=DiffAligner(DiffAligner.Config()),
        expander=InflectExpander(InflectExpander.Config()),
        settings=PipelineSettings(iterations=3),
        lexicon=lexicon,
    )
    records = list(pipe.run([corroborate()]))
    requests = [call[0].constraints for call in pipe.decoder.calls]
    # The words go to the decoder with the request and stay on the record; a word written
    # (and so now avoided) is not offered again.
    assert [c.prefer for c in requests] == [("confirm", "verify", "support"), ("verify", "support"), ("support",)]
    assert [r.constraints.prefer for r in records] == [c.prefer for c in requests]
    assert lexicon.calls[0] == ("ex0", "Evidence", requests[0].avoid)
    assert pipe.components["lexicon"] == "test-lexicon"
    # Without a lexicon nothing is offered.
    plain = make(iterations=2)
    list(plain.run([corroborate()]))
    assert all(call[0].constraints.prefer == () for call in plain.decoder.calls)


def test_offered_words_survive_a_resume() -> None:
    def piped() -> Pipeline:
        return Pipeline(
            decoder=SynonymDecoder(SynonymDecoder.Config(batch_size=2)),
            aligner=DiffAligner(DiffAligner.Config()),
            expander=InflectExpander(InflectExpander.Config()),
            settings=PipelineSettings(iterations=3),
            lexicon=_Lexicon({"corroborate": ["confirm", "verify", "support"]}),
        )

    examples = [corroborate(i) for i in range(4)]
    whole = [o for o in piped().outcomes(examples) if not isinstance(o, Checkpoint)]
    pipe, before, state = piped(), [], None
    for outcome in pipe.outcomes(examples):
        if isinstance(outcome, Checkpoint):
            if state is None and pipe.in_flight():
                state, cut = pipe.in_flight(), len(before)
        else:
            before.append(outcome)
    assert state is not None and any(job["prefer"] for s in state for job in s["jobs"])
    resumed = piped()
    resumed.restore(state)
    read = int(state[-1]["example"]["id"][2:]) + 1
    after = [o for o in resumed.outcomes(examples[read:]) if not isinstance(o, Checkpoint)]
    assert before[:cut] + after == whole
    # A state written before lexicons existed resumes with nothing offered.
    for s in state:
        for job in s["jobs"]:
            del job["prefer"]
    old = piped()
    old.restore(state)
    assert all(job.prefer == [] for run in old._restored.values() for job in run.jobs)


class _ShortSpanAligner(DiffAligner):
    """Aligns one-word spans to the same place and finds no longer span (a carried span it cannot place)."""

    def align(self, items):
        from spanaug_core.types import Alignment

        return [Alignment(span=it.source_span, score=0.9) if it.source_span[1] - it.source_span[0] == 1 else Alignment(span=None, score=0.0)
                for it in items]


def two_sets_and_an_entity() -> Example:
    """A sentence with the rewritten set (a1), another set (a2) and an ungrouped entity, as brat or FrameNet give them."""
    return Example(
        id="b",
        tokens=("The", "firm", "will", "buy", "shares", "for", "2,000", "euros", "."),
        spans=(
            Span(start=3, end=4, label="Commerce_buy", group="a1"),
            Span(start=4, end=5, label="Goods", role="argument", group="a1"),
            Span(start=1, end=2, label="Businesses", group="a2", attrs={"lu": "firm.n"}),
            Span(start=0, end=2, label="Business", role="argument", group="a2"),
            Span(start=6, end=8, label="MONEY", role="entity"),
        ),
    )


def test_a_record_carries_the_sources_other_spans_where_they_survive() -> None:
    records = list(make(1).run([two_sets_and_an_entity()]))
    bought = next(r for r in records if r.target == 0)
    assert bought.text == "The firm will purchase shares for 2,000 euros."
    spans = [(s.start, s.end, s.label, s.group, s.attrs.get("carried", False)) for s in bought.spans]
    assert spans == [(3, 4, "Commerce_buy", "a1", False), (4, 5, "Goods", "a1", False), (1, 2, "Businesses", "a2", True),
                     (0, 2, "Business", "a2", True), (6, 8, "MONEY", None, True)]
    assert bought.spans[2].attrs == {"lu": "firm.n", "carried": True} and bought.dropped == ()
    assert "dropped" not in bought.model_dump(mode="json")
    # The rewritten span is the one not carried, whatever other targets the record holds.
    from spanaug_shared.records import replacement

    assert replacement(bought, two_sets_and_an_entity())[1].label == "Commerce_buy"


def test_another_group_comes_whole_or_not_at_all_and_the_record_says_what_it_dropped() -> None:
    example = two_sets_and_an_entity()
    # a2's Business now spans "will buy", across the rewritten word: no copy, and this aligner cannot place it.
    spans = list(example.spans)
    spans[3] = Span(start=2, end=4, label="Business", role="argument", group="a2")
    example = example.model_copy(update={"spans": tuple(spans)})
    (bought, *_) = make(1, aligner=_ShortSpanAligner(_ShortSpanAligner.Config())).run([example])
    assert [(s.label, s.attrs.get("carried", False)) for s in bought.spans] == [("Commerce_buy", False), ("Goods", False), ("MONEY", True)]
    assert bought.dropped == (2, 3)  # a2's target too: a set without its element would say the element is none
    assert bought.model_dump(mode="json")["dropped"] == [2, 3]


def test_carry_false_writes_the_rewritten_group_only_as_before() -> None:
    (bought, *_) = make(1, carry=False).run([two_sets_and_an_entity()])
    assert [s.label for s in bought.spans] == ["Commerce_buy", "Goods"] and bought.dropped == ()
    assert "dropped" not in bought.model_dump(mode="json")


def test_a_paraphrase_keeps_the_sources_tokens_whole() -> None:
    """UD holds "M." as one token; spanaug's tokenizer splits the decoder's text into "M" "."."""
    example = Example(
        id="m",
        tokens=("Jennifer", "M.", "Anderson", "will", "buy", "it", "."),
        spans=(Span(start=4, end=5, label="buy.01", group="0"), Span(start=0, end=3, label="ARG0", role="argument", group="0")),
    )
    (record,) = make(1, keep="include").run([example])
    assert record.tokens == ("Jennifer", "M.", "Anderson", "will", "purchase", "it", ".")
    assert [(s.start, s.end) for s in record.spans] == [(4, 5), (0, 3)]
    assert list(make(1, keep="include", source_tokens=False).run([example])) == []  # "M" "." : the aligner found nothing
