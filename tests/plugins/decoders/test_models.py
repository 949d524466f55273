"""VDBA and hf-beam over tiny randomly initialised T5 and Llama models (nothing downloads)."""

from __future__ import annotations

import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

from spanaug_core.errors import ConfigError
from spanaug_core.text import contains_phrase
from spanaug_core.types import Constraints, DecodeRequest
from spanaug_decoders.adapters import ChatAdapter, Seq2SeqAdapter, hint_names
from spanaug_decoders.decoders import HFBeamDecoder, VDBADecoder, echoes, repeated_ngrams, sentence_breaks, strip_preamble
from spanaug_decoders.tries import NegativeTrie, PositiveTrie
from spanaug_decoders.vdba import SearchOptions, search

WORDS = "the a cat dog sat on mat saw small big bird red house ran quickly slowly and".split()
SPECIALS = ["<pad>", "</s>", "<unk>"]
PAD, EOS = 0, 1


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    vocab = {w: i for i, w in enumerate(SPECIALS + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")


def tiny_llama(tokenizer, seed: int, prompt: str) -> ChatAdapter:
    """A two-layer random Llama prompted with ``prompt`` (no chat template: the prompt is the whole input)."""
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=128, pad_token_id=PAD, eos_token_id=EOS, bos_token_id=EOS,
    )
    return ChatAdapter(LlamaForCausalLM(config), tokenizer, [EOS], system="", prompt=prompt)


@pytest.fixture(scope="module")
def llama(tokenizer) -> ChatAdapter:
    return tiny_llama(tokenizer, 0, "{text}")


@pytest.fixture(scope="module")
def t5(tokenizer) -> Seq2SeqAdapter:
    torch.manual_seed(0)
    config = T5Config(
        vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
        pad_token_id=PAD, eos_token_id=EOS, decoder_start_token_id=PAD,
    )
    return Seq2SeqAdapter(T5ForConditionalGeneration(config), tokenizer, [EOS])


SOURCES = ["the cat sat on the mat", "a small bird saw the big red house and ran"]


def _greedy(adapter, texts, n):
    k1 = SearchOptions.of(VDBADecoder.Config(beam_size=1))
    requests = [DecodeRequest(text=t) for t in texts]
    found = search(adapter.start(), [PositiveTrie([]) for _ in texts], [NegativeTrie([]) for _ in texts], adapter.end_ids, k1, n, requests)
    return [list(hyps[0].tokens) for hyps in found]


def _hf_greedy(adapter, texts, n):
    chat = isinstance(adapter, ChatAdapter)
    enc = adapter.tokenizer([adapter.render(t) for t in texts] if chat else texts, return_tensors="pt", padding=True)
    with torch.inference_mode():
        out = adapter.model.generate(**enc, do_sample=False, num_beams=1, max_new_tokens=n, eos_token_id=EOS, pad_token_id=PAD)
    out = out[:, enc["input_ids"].shape[1] :] if chat else out[:, 1:]
    result = []
    for row in out.tolist():
        result.append(row[: row.index(EOS)] if EOS in row else row)
    return result


@pytest.mark.parametrize("which", ["llama", "t5"])
def test_unconstrained_greedy_equals_transformers_greedy(which, request):
    adapter = request.getfixturevalue(which)
    # One sentence, then a left-padded batch of two of different lengths.
    assert _greedy(adapter, SOURCES[:1], 12) == _hf_greedy(adapter, SOURCES[:1], 12)
    assert _greedy(adapter, SOURCES, 12) == _hf_greedy(adapter, SOURCES, 12)


@pytest.mark.parametrize("which", ["llama", "t5"])
def test_every_returned_hypothesis_satisfies_its_constraints(which, request):
    # Random models babble: the repeat filter would leave some sentences without output.
    config = VDBADecoder.Config(beam_size=5, max_length=12, case_sensitive=True, repeat_ngram=0)
    decoder = VDBADecoder(config, adapter=request.getfixturevalue(which))
    requests = [
        DecodeRequest(text=SOURCES[0], constraints=Constraints(avoid=("cat", "the mat"), include=("small bird",))),
        DecodeRequest(text=SOURCES[1], constraints=Constraints(include=("dog", "red house"))),
        DecodeRequest(text=SOURCES[0], constraints=Constraints(avoid=("the",))),
    ]
    results = decoder.decode(requests, nbest=5)
    assert all(results), "the tiny models can always place these constraints within 12 tokens"
    for request, candidates in zip(requests, results):
        for cand in candidates:
            assert not any(contains_phrase(cand.text, p) for p in request.constraints.avoid)
            assert set(cand.met) == set(request.constraints.include)
            assert all(contains_phrase(cand.text, p) for p in request.constraints.include)
            assert 0.0 <= cand.scores["prob"] <= 1.0 and cand.score == cand.scores["norm_logprob"]
        scores = [c.score for c in candidates]
        assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("which", ["llama", "t5"])
def test_vectorized_and_sequential_modes_agree(which, request):
    # Two sentences with different constraints in one vectorized batch decode exactly as
    # each does alone.
    adapter = request.getfixturevalue(which)
    requests = [
        DecodeRequest(text=SOURCES[0], constraints=Constraints(include=("dog",))),
        DecodeRequest(text=SOURCES[1], constraints=Constraints(avoid=("the",), include=("mat",))),
    ]
    config = dict(beam_size=4, max_length=10, dtype="float32")
    together = VDBADecoder(VDBADecoder.Config(**config), adapter=adapter).decode(requests, nbest=3)
    apart = VDBADecoder(VDBADecoder.Config(vectorize=False, **config), adapter=adapter).decode(requests, nbest=3)
    assert all(together)
    assert [[c.text for c in cs] for cs in together] == [[c.text for c in cs] for cs in apart]
    for a, b in zip(together, apart):
        assert [c.score for c in a] == pytest.approx([c.score for c in b], abs=1e-4)


def test_hf_beam_bans_avoid_phrases_and_rejects_include(t5):
    decoder = HFBeamDecoder(HFBeamDecoder.Config(beam_size=4, max_length=10), adapter=t5)
    requests = [DecodeRequest(text=s, constraints=Constraints(avoid=("the", "cat"))) for s in SOURCES]
    for candidates in decoder.decode(requests, nbest=3):
        assert candidates and not any(contains_phrase(c.text, p) for c in candidates for p in ("the", "cat"))
    with pytest.raises(ConfigError, match="avoid phrases only"):
        decoder.decode([DecodeRequest(text=SOURCES[0], constraints=Constraints(include=("dog",)))], nbest=1)


def test_word_level_check_removes_what_tokens_missed(llama):
    # Ban the first word of the unconstrained best output, but let the token level see
    # only an unrelated token: the word-level check must remove every hypothesis with it.
    config = VDBADecoder.Config(beam_size=4, max_length=8, dtype="float32")
    free = VDBADecoder(config, adapter=llama).decode([DecodeRequest(text=SOURCES[0])], nbest=1)[0][0]
    word = free.tokens[0]
    decoder = VDBADecoder(config, adapter=llama)
    decoder.encode = lambda phrases: [[[llama.tokenizer.convert_tokens_to_ids("quickly")]] for _ in phrases]  # type: ignore[method-assign]
    out = decoder.decode([DecodeRequest(text=SOURCES[0], constraints=Constraints(avoid=(word,)))], nbest=4)
    assert not any(contains_phrase(c.text, word) for c in out[0])
    assert decoder.stats["caught"] > 0


def test_a_line_break_ends_a_chat_answer():
    # A chat model must not run on past its one-line answer into an invented next turn.
    vocab = {w: i for i, w in enumerate([*SPECIALS, *WORDS, "\n"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, pad_token_id=PAD, eos_token_id=EOS)
    adapter = ChatAdapter(LlamaForCausalLM(config), fast, [EOS], system="", prompt="{text}")
    newline = vocab["\n"]
    assert adapter.end_ids == sorted([EOS, newline])
    ids = [vocab["the"], vocab["cat"], newline, vocab["dog"], EOS]
    assert adapter.decode(ids) == "the cat"


def test_sentence_breaks_counts_boundaries_inside_a_text():
    assert sentence_breaks("He left. She stayed.") == 1
    assert sentence_breaks('He said "go." Then he left!') == 1
    assert sentence_breaks("He paid 3.5 dollars at 5 p.m.") == 0
    assert sentence_breaks("One sentence only.") == 0


def test_hypotheses_with_an_extra_sentence_are_not_returned(llama, monkeypatch):
    # Whatever the ids, the model "wrote" two sentences for a one-sentence source.
    monkeypatch.setattr(llama, "decode", lambda ids: "The cat sat. It was a mat.")
    request, hyps = DecodeRequest(text=SOURCES[0]), [((5, 6), -1.0, 3)]
    strict = VDBADecoder(VDBADecoder.Config(beam_size=2), adapter=llama)
    assert strict._checked(request, hyps, nbest=3) == [] and strict.stats["extra_sentence"] == 1
    loose = VDBADecoder(VDBADecoder.Config(beam_size=2, same_sentences=False), adapter=llama)
    assert [c.text for c in loose._checked(request, hyps, nbest=3)] == ["The cat sat. It was a mat."]


@pytest.mark.parametrize(
    ("output", "paraphrase"),
    [  # lead-ins SmolLM2 writes before its paraphrase
        ("The revised sentence would be: The team will back the account.", "The team will back the account."),
        ("Here's a revised version of the original sentence: \"The team will back the account.\"", "The team will back the account."),
        ("Paraphrase: The team will back the account.", "The team will back the account."),
        ("Here's a revised version of the sentence with a focus on clarity and concision:", ""),  # nothing after it
        ("The team will back the account.", None),
        ("Note: the team will back the account.", None),  # no lead-in word: a colon of the sentence's own
        ("The court announced its sentence: a decade behind bars.", None),
        ("The two versions differ in one respect: the ending.", None),
        ("The sentence can be rephrased as: \"The team will back it.\"", "The team will back it."),
        ("The sentence is rephrased to: The team will back it.", "The team will back it."),
    ],
)
def test_a_chat_preamble_is_cut_off(output, paraphrase):
    assert strip_preamble(output, "The committee will corroborate the account.") == paraphrase
    assert strip_preamble("The sentence reads: fine.", "The sentence reads: good.") is None  # the source's own words


def test_constraints_are_checked_on_the_paraphrase_without_its_preamble(llama, monkeypatch):
    monkeypatch.setattr(llama, "decode", lambda ids: "Here is the rewritten committee sentence: The team will back it.")
    request = DecodeRequest(text="The committee will back it.", constraints=Constraints(avoid=("committee",)))
    decoder = VDBADecoder(VDBADecoder.Config(beam_size=2), adapter=llama)
    (candidate,) = decoder._checked(request, [((5, 6), -1.0, 3)], nbest=3)
    assert candidate.text == "The team will back it." and decoder.stats["preamble"] == 1
    kept = VDBADecoder(VDBADecoder.Config(beam_size=2, strip_preamble=False), adapter=llama)
    assert kept._checked(request, [((5, 6), -1.0, 3)], nbest=3) == []  # the preamble names the avoided word


def test_hypotheses_repeating_a_phrase_are_not_returned(llama, monkeypatch):
    text = "he is the leader of the party and the leader of the party ."
    assert repeated_ngrams(text, 4) == {("the", "leader", "of", "the"), ("leader", "of", "the", "party")}
    monkeypatch.setattr(llama, "decode", lambda ids: text)
    hyps = [((5, 6), -1.0, 3)]
    decoder = VDBADecoder(VDBADecoder.Config(beam_size=2), adapter=llama)
    assert decoder._checked(DecodeRequest(text="he leads the party ."), hyps, nbest=3) == []
    assert decoder.stats["repeated"] == 1
    # A repetition the source has too is the source's, not the decoder's.
    assert len(decoder._checked(DecodeRequest(text=text), hyps, nbest=3)) == 1


def test_an_include_phrase_written_beside_its_own_paraphrase_is_dropped(llama, monkeypatch):
    text = "Maria last week purchased a used bicycle from her neighbor from her neighbour."
    assert echoes(text, "from her neighbour", 0.8)
    assert not echoes("Maria purchased a used bicycle from her neighbour.", "from her neighbour", 0.8)
    assert not echoes(text, "Maria", 0.8) and not echoes("from him", "from her neighbour", 0.8)
    # A piece of the phrase written twice: the model began it, left it, then wrote it whole.
    assert echoes("But it can be pricey otherwise for what you for what you get.", "for what you get", 0.8)
    assert echoes("Despite the food, it mediocre at mediocre at best.", "mediocre at best", 0.8)
    assert not echoes("I went to the shop and to the bank.", "to the bank", 0.8)  # "to the": no content word
    monkeypatch.setattr(llama, "decode", lambda ids: text)
    request = DecodeRequest(text="Maria bought a used bicycle from her neighbour last week.", constraints=Constraints(include=("from her neighbour",)))
    decoder = VDBADecoder(VDBADecoder.Config(beam_size=2), adapter=llama)
    assert decoder._checked(request, [((5, 6), -1.0, 3)], nbest=3) == []
    assert decoder.stats["echo"] == 1
    off = VDBADecoder(VDBADecoder.Config(beam_size=2, echo=None), adapter=llama)
    assert len(off._checked(request, [((5, 6), -1.0, 3)], nbest=3)) == 1



@pytest.fixture(scope="module")
def prompted(tokenizer) -> ChatAdapter:
    """A tiny Llama whose prompt has a constant start, so the shared prefix cache is used."""
    return tiny_llama(tokenizer, 1, "the small dog saw {text} and")


def _steps(adapter: ChatAdapter, shared: bool, groups: list[list[str]], k: int = 2) -> list[torch.Tensor]:
    """Log-probabilities of a session where each group of sentences joins after one more step."""
    session = adapter.start(share_prefix=shared)
    out, rows = [], 0
    for group in groups:
        session.add([DecodeRequest(text=t) for t in group], k)
        out.append(session.logprobs().clone())  # the session reuses the tensor
        rows += len(group) * k
        tokens = torch.arange(rows) % 5 + 3  # any tokens: the same for both paths
        session.advance(torch.arange(rows), tokens)
    out.append(session.logprobs().clone())
    return out


def test_shared_prefix_gives_the_logits_of_the_whole_prompt(prompted):
    assert prompted.prefix_ids == prompted.prompt_ids("a cat")[:3]  # "the small dog" (the last token before {text} is left out)
    groups = [["the cat sat on the mat", "a bird"], ["a small bird saw the big red house and ran"], ["cat"]]
    shared, whole = _steps(prompted, True, groups), _steps(prompted, False, groups)
    for a, b in zip(shared, whole, strict=True):
        assert a.shape == b.shape and torch.allclose(a, b, atol=1e-5)
    session = prompted.start()
    session.add([DecodeRequest(text="the cat sat on the mat")], 1)
    session.logprobs()
    assert session.prefilled == len(prompted.prompt_ids("the cat sat on the mat")) - 3  # the prefix ran once, before
    assert prompted.shares_prefix and session.cache.end - session.cache.start == session.prefilled  # the rows hold no copy of it


def test_forced_scores_after_a_shared_prefix_are_those_of_the_whole_prompt(tokenizer, prompted):
    whole = tiny_llama(tokenizer, 1, "the small dog saw {text} and")
    whole._shares_prefix = False
    pairs = [("the cat sat", "a cat sat on the mat"), ("a small bird saw the big red house", "a bird ran")]
    assert [s for s, _ in prompted.forced_logprobs(pairs)] == pytest.approx([s for s, _ in whole.forced_logprobs(pairs)], abs=1e-4)


def test_other_users_of_the_weights_see_the_model_s_own_attention(tokenizer):
    # The wrapper is installed in the model, which other decoders over the same weights share.
    wrapped, plain = (tiny_llama(tokenizer, 1, "the small dog saw {text} and") for _ in range(2))
    assert wrapped.shares_prefix and wrapped.model.config._attn_implementation != plain.model.config._attn_implementation
    requests = [DecodeRequest(text=s, constraints=Constraints(avoid=("cat",))) for s in SOURCES]
    config = HFBeamDecoder.Config(beam_size=3, max_length=6)
    got, expected = (HFBeamDecoder(config, adapter=a).decode(requests, nbest=3) for a in (wrapped, plain))
    assert [[c.text for c in cs] for cs in got] == [[c.text for c in cs] for cs in expected]


def test_a_model_whose_attention_cannot_share_the_prefix_encodes_prompts_whole(tokenizer, prompted, monkeypatch, caplog):
    from spanaug_decoders import prefix_attention

    groups = [["the cat sat on the mat", "a bird"], ["cat"]]
    eager = tiny_llama(tokenizer, 1, "the small dog saw {text} and")
    eager.model.set_attn_implementation("eager")  # each model's own code: nothing to wrap
    assert not eager.shares_prefix and "encoded whole" in caplog.text
    for a, b in zip(_steps(eager, True, groups), _steps(prompted, True, groups), strict=True):
        assert torch.allclose(a, b, atol=1e-5)
    # An attention that would get the model wrong (here: blind to the prefix) fails the check.
    real = prefix_attention.attend
    monkeypatch.setattr(prefix_attention, "attend", lambda q, k, v, prefix, *rest: real(q, k, v, prefix._replace(shared=~prefix.shared), *rest))
    wrong = tiny_llama(tokenizer, 1, "the small dog saw {text} and")
    assert not wrong.shares_prefix
    session = wrong.start()
    session.add([DecodeRequest(text="the cat sat on the mat")], 1)
    session.logprobs()
    assert session.prefilled == len(wrong.prompt_ids("the cat sat on the mat"))


@pytest.mark.parametrize("which", ["prompted", "t5"])
def test_continuous_batching_gives_each_request_what_it_gets_alone(which, request):
    adapter = request.getfixturevalue(which)
    requests = [
        DecodeRequest(text=SOURCES[0], constraints=Constraints(include=("dog",))),
        DecodeRequest(text=SOURCES[1], constraints=Constraints(avoid=("the",), include=("mat",))),
        DecodeRequest(text="the dog ran", constraints=Constraints()),
        DecodeRequest(text="a cat saw a bird quickly", constraints=Constraints(avoid=("cat",))),
        DecodeRequest(text=SOURCES[1], constraints=Constraints(include=("slowly",))),
    ]
    config = dict(beam_size=3, dtype="float32", repeat_ngram=0)
    streamed = VDBADecoder(VDBADecoder.Config(batch_size=2, **config), adapter=adapter).decode(requests, nbest=3)
    alone = VDBADecoder(VDBADecoder.Config(vectorize=False, **config), adapter=adapter).decode(requests, nbest=3)
    assert sum(map(bool, streamed)) >= 4
    assert [[c.text for c in cs] for cs in streamed] == [[c.text for c in cs] for cs in alone]
    for a, b in zip(streamed, alone):
        assert [c.score for c in a] == pytest.approx([c.score for c in b], abs=1e-4)


def test_long_outputs_move_and_grow_the_cache_without_changing_what_a_request_gets(prompted):
    # A random model rarely ends: each request decodes to its own limit (2x its tokens + 16),
    # so requests finish at different steps and others join the rows they leave. The cache
    # runs out of columns: its live columns move to the buffer's left edge (the columns of
    # rows that left are free) and, where that is not enough, the buffers grow.
    words = "the small bird saw the big red house and ran quickly on the mat and the cat sat slowly".split()
    texts = [" ".join(words[: n]) for n in (18, 4, 12, 2, 16, 6, 9)]
    requests = [DecodeRequest(text=t, constraints=Constraints()) for t in texts]
    config = dict(beam_size=2, dtype="float32", repeat_ngram=0, same_sentences=False, echo=None)
    streamed = VDBADecoder(VDBADecoder.Config(batch_size=2, **config), adapter=prompted)
    alone = VDBADecoder(VDBADecoder.Config(vectorize=False, **config), adapter=prompted)
    got, want = streamed.decode(requests, nbest=2), alone.decode(requests, nbest=2)
    assert [[c.text for c in cs] for cs in got] == [[c.text for c in cs] for cs in want]
    for a, b in zip(got, want):
        assert [c.score for c in a] == pytest.approx([c.score for c in b], abs=1e-4)


def test_the_stream_refills_rows_as_sentences_finish(prompted):
    class Recording:
        def __init__(self, requests):
            self.waiting, self.taken = list(enumerate(requests)), []

        def take(self, n):
            got, self.waiting = self.waiting[:n], self.waiting[n:]
            self.taken.append(len(got))
            return got

    texts = ["the cat sat on the mat", "a bird", "the dog ran", "a red house", "cat and dog"]
    source = Recording([DecodeRequest(text=t, constraints=Constraints()) for t in texts])
    decoder = VDBADecoder(VDBADecoder.Config(batch_size=2, beam_size=2, max_length=8, dtype="float32"), adapter=prompted)
    finished = [key for batch in decoder.stream(source, nbest=2) for key, _ in batch]
    assert sorted(finished) == list(range(5))
    # Two at first, then one request at a time as each finishes (never a drained batch).
    assert source.taken[0] == 2 and 1 in source.taken and max(source.taken[1:]) <= 2
    fixed = Recording([DecodeRequest(text=t, constraints=Constraints()) for t in texts])
    off = VDBADecoder(VDBADecoder.Config(batch_size=2, beam_size=2, max_length=8, dtype="float32", continuous=False), adapter=prompted)
    list(off.stream(fixed, nbest=2))
    assert [n for n in fixed.taken if n] == [2, 2, 1]


def _stepped_logprob(adapter, text: str, output: str) -> float:
    """``output`` then an end token scored one step at a time through a decoding session."""
    ids = adapter.tokenizer(output, add_special_tokens=False)["input_ids"]
    session = adapter.start()
    session.add([DecodeRequest(text=text)], 1)
    logprobs = session.logprobs()
    total = 0.0
    for token in ids:
        total += float(logprobs[0, token])
        session.advance(torch.tensor([0]), torch.tensor([token]))
        logprobs = session.logprobs()
    return total + float(torch.logsumexp(logprobs[0, adapter.end_ids], dim=0))


@pytest.mark.parametrize("which", ["prompted", "llama", "t5"])
def test_forced_logprob_is_what_decoding_scores_the_same_tokens(which, request):
    adapter = request.getfixturevalue(which)
    logprob, length = adapter.forced_logprob("the cat sat on the mat", "a dog sat on a mat")
    assert length == 7  # six words and the end
    assert logprob == pytest.approx(_stepped_logprob(adapter, "the cat sat on the mat", "a dog sat on a mat"), abs=1e-4)


def test_fluency_is_the_per_token_logprob_against_the_source(prompted):
    decoder = VDBADecoder(VDBADecoder.Config(beam_size=3, max_length=8, dtype="float32"), adapter=prompted)
    (candidates,) = decoder.decode([DecodeRequest(text="the cat sat on the mat", constraints=Constraints())], nbest=3)
    source, length = prompted.forced_logprob("the cat sat on the mat", "the cat sat on the mat")
    assert candidates
    for cand in candidates:
        per_token = cand.scores["logprob"] / cand.scores["length"]
        assert cand.scores["fluency"] == pytest.approx(per_token - source / length, abs=1e-5)
    quiet = VDBADecoder(VDBADecoder.Config(beam_size=3, max_length=8, dtype="float32", fluency=False), adapter=prompted)
    (plain,) = quiet.decode([DecodeRequest(text="the cat sat on the mat", constraints=Constraints())], nbest=3)
    assert all("fluency" not in c.scores for c in plain)


@pytest.mark.parametrize("which", ["prompted", "llama", "t5"])
def test_batched_forced_logprobs_equal_one_at_a_time(which, request):
    adapter = request.getfixturevalue(which)
    # Prompts and answers of different lengths pad differently in one batch.
    pairs = [("the cat sat on the mat", "a dog sat"), ("a bird", "the cat sat on the red mat"), ("the dog ran", "")]
    batched = adapter.forced_logprobs(pairs)
    for (text, output), (logprob, length) in zip(pairs, batched, strict=True):
        alone, alone_length = adapter.forced_logprob(text, output)
        assert length == alone_length
        assert logprob == pytest.approx(_stepped_logprob(adapter, text, output), abs=1e-4)
        assert logprob == pytest.approx(alone, abs=1e-4)


def test_recovery_is_the_source_recovered_from_the_candidate_against_from_itself(prompted):
    text = "the cat sat on the mat"
    decoder = VDBADecoder(VDBADecoder.Config(beam_size=3, max_length=8, dtype="float32", recovery=True), adapter=prompted)
    (candidates,) = decoder.decode([DecodeRequest(text=text, constraints=Constraints())], nbest=3)
    source, length = prompted.forced_logprob(text, text)
    assert candidates
    for cand in candidates:
        recovered, recovered_length = prompted.forced_logprob(cand.text, text)
        assert recovered_length == length
        assert cand.scores["recovery"] == pytest.approx(recovered / length - source / length, abs=1e-5)
    (plain,) = VDBADecoder(VDBADecoder.Config(beam_size=3, max_length=8, dtype="float32"), adapter=prompted).decode(
        [DecodeRequest(text=text, constraints=Constraints())], nbest=3
    )
    assert [c.text for c in plain] == [c.text for c in candidates]  # a score only: the search is the same
    assert all("recovery" not in c.scores for c in plain)


def test_few_shot_examples_come_before_the_sentence_and_share_the_prefix(tokenizer):
    plain = tiny_llama(tokenizer, 2, "the small dog saw {text} and")
    shots = ChatAdapter(plain.model, tokenizer, [EOS], system="", prompt=plain.prompt, examples=[("a cat", "a bird"), ("the mat", "a house")])
    assert shots.render("red house") == "the small dog saw a cat and\na bird\n\nthe small dog saw the mat and\na house\n\nthe small dog saw red house and"
    # The examples belong to the constant start, so the prefix cache holds them.
    assert len(shots.prefix_ids) == len(shots.prompt_ids("red house")) - 4  # less "saw", "red", "house", "and"
    assert shots.prompt_ids("red house")[: len(shots.prefix_ids)] == shots.prefix_ids


def test_the_avoid_hint_names_each_avoided_phrase_once_after_the_sentence(tokenizer):
    plain = tiny_llama(tokenizer, 2, "the small dog saw {text} and")
    hinted = ChatAdapter(plain.model, tokenizer, [EOS], system="", prompt=plain.prompt, avoid_hint=" not {avoid}")
    assert hinted.render("red house", ["house", "House", "houses"]) == 'the small dog saw red house and not "house", "houses"'
    assert hinted.render("red house") == plain.render("red house")  # nothing avoided: no hint
    assert ChatAdapter(plain.model, tokenizer, [EOS], system="", prompt=plain.prompt).render("red house", ["house"]) == plain.render("red house")
    # The session prompts on the hint too; the shared prefix is unchanged.
    assert hinted.prefix_ids == plain.prefix_ids
    session = hinted.start()
    session.add([DecodeRequest(text="red house", constraints=Constraints(avoid=("house",)))], 1)
    session.logprobs()
    assert session.prefilled == len(hinted.prompt_ids("red house", ["house"])) - len(hinted.prefix_ids)
    with pytest.raises(ConfigError, match="hint must contain the placeholder {avoid}"):
        ChatAdapter(plain.model, tokenizer, [EOS], system="", prompt=plain.prompt, avoid_hint="no placeholder")


def test_a_long_avoid_set_is_named_one_form_a_phrase_within_the_budget():
    forms = ["weapons of mass destruction", "Weapons of mass destruction", "weapon of masses destructions", "arms", "arm", "WMD"]
    # Within the budget every form is named, once each case folded (the measured hint).
    assert hint_names(forms, 240) == ["weapons of mass destruction", "weapon of masses destructions", "arms", "arm", "wmd"]
    # Past it, one form a phrase: an inflection of a named phrase is left to the constraint.
    assert hint_names(forms, 40) == ["weapons of mass destruction", "arms", "wmd"]
    # Then as many as fit, in order; the first is named whatever its length.
    assert hint_names(forms, 30) == ["weapons of mass destruction"]
    assert hint_names(forms, 1) == ["weapons of mass destruction"]
    # Words that only look alike are not folded: "mass" and "massive" have no lemma in common.
    assert hint_names(["mass effect", "massive effect", "x" * 40], 30) == ["mass effect", "massive effect"]


def test_the_adapter_keeps_its_avoid_hint_within_the_budget(tokenizer):
    plain = tiny_llama(tokenizer, 2, "the small dog saw {text} and")
    hinted = ChatAdapter(plain.model, tokenizer, [EOS], system="", prompt=plain.prompt, avoid_hint=" not {avoid}", avoid_hint_chars=7)
    assert hinted.render("red house", ["house", "houses", "hut"]) == 'the small dog saw red house and not "house"'


def test_the_avoid_hint_offers_a_lexicon_s_words_where_it_says_so(tokenizer):
    plain = tiny_llama(tokenizer, 2, "the small dog saw {text} and")
    hinted = ChatAdapter(
        plain.model, tokenizer, [EOS], system="", prompt=plain.prompt, avoid_hint=" not {avoid}{prefer}", prefer_hint=", try {words}"
    )
    assert hinted.render("red house", ["house"], ["home", "hut"]) == 'the small dog saw red house and not "house", try "home", "hut"'
    assert hinted.render("red house", ["house"]) == 'the small dog saw red house and not "house"'  # nothing offered: no words
    # The prompt tokens follow: a session prefills the offered words too.
    session = hinted.start()
    session.add([DecodeRequest(text="red house", constraints=Constraints(avoid=("house",), prefer=("home",)))], 1)
    session.logprobs()
    assert session.prefilled == len(hinted.prompt_ids("red house", ["house"], ["home"])) - len(hinted.prefix_ids)
    # A hint without {prefer} leaves the words out; one with {words} missing is refused.
    unoffered = ChatAdapter(plain.model, tokenizer, [EOS], system="", prompt=plain.prompt, avoid_hint=" not {avoid}", prefer_hint=", try {words}")
    assert unoffered.render("red house", ["house"], ["home"]) == 'the small dog saw red house and not "house"'
    with pytest.raises(ConfigError, match="hint must contain the placeholder {words}"):
        ChatAdapter(plain.model, tokenizer, [EOS], system="", prompt=plain.prompt, avoid_hint=" not {avoid}", prefer_hint=", try")


def test_an_invented_next_turn_counts_as_another_sentence():
    assert sentence_breaks("It was wrong.Human: Can you paraphrase this?") == 1
    assert sentence_breaks("Venantius sets a $300 million FRN.VHuman: Venantius sets") == 1
    assert sentence_breaks("Assistant: it was wrong") == 1
    assert sentence_breaks("The user: a name.") == 0


def test_int8_weights_decode_what_float32_does_within_rounding(tokenizer, tmp_path):
    """quantize=int8: every linear layer quantized, the same constraints met, log-probabilities close."""
    from spanaug_decoders.adapters import load
    from spanaug_shared.weights import loaded

    tiny_llama(tokenizer, 3, "{text}").model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    plain = load(str(tmp_path), system="", prompt="{text}")
    int8 = load(str(tmp_path), quantize="int8", system="", prompt="{text}")
    assert int8.model is not plain.model and loaded(str(tmp_path)) is not None
    from torch.ao.nn.quantized.dynamic import Linear as DynamicInt8Linear

    assert not any(type(m) is torch.nn.Linear for m in int8.model.modules())
    assert sum(isinstance(m, DynamicInt8Linear) for m in int8.model.modules()) == 2 * 7 + 1  # q k v o gate up down, lm_head
    assert int8.vocab_size == plain.vocab_size == len(tokenizer)
    enc = tokenizer(SOURCES, return_tensors="pt", padding=True)
    with torch.inference_mode():
        a, b = (m.model(**enc).logits.log_softmax(-1) for m in (plain, int8))
    assert (a - b).abs().max() < 0.05
    request = DecodeRequest(text=SOURCES[0], constraints=Constraints(avoid=("cat",), include=("dog",)))
    config = VDBADecoder.Config(beam_size=4, max_length=10, repeat_ngram=0, quantize="int8")
    found = VDBADecoder(config, adapter=int8).decode([request], nbest=3)[0]
    assert found and all("dog" in c.text.split() and "cat" not in c.text.split() for c in found)


@pytest.mark.parametrize("settings", [{"device": "cuda"}, {"dtype": "bfloat16"}])
def test_int8_is_refused_where_it_cannot_run(settings):
    with pytest.raises(ValueError, match="quantize=int8 runs on a CPU in float32"):
        VDBADecoder.Config(quantize="int8", **settings)
