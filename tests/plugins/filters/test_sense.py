"""The sense filter: a yes/no question to a tiny random Llama saved to a folder (nothing downloads)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from span_records import SOURCE, record
from spanaug_filters.sense import SenseFilter
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
    T5Config,
    T5ForConditionalGeneration,
)

from spanaug_core.errors import ConfigError
from spanaug_core.plugins import create
from spanaug_core.protocols import FilterContext, ScoringFilter
from spanaug_core.types import Augmented
from spanaug_shared.weights import load_weights, loaded

WORDS = ["Maria", "bought", "purchased", "sold", "a", "car", "last", "month", ".", "Sentence", "A", "B", ":", "In", "sentence", "replaces", "of", "Does", "in", "mean", "the", "same", "as", "?", "Answer", "or"]
SPECIALS = ["<pad>", "</s>", "<unk>"]


def save_llama(folder: Path, words: list[str]) -> Path:
    """A two-layer random Llama and a word-level tokenizer (no chat template) in ``folder``."""
    vocab = {w: i for i, w in enumerate(SPECIALS + words)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=256, pad_token_id=0, eos_token_id=1, bos_token_id=1,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def llama(tmp_path_factory) -> str:
    return str(save_llama(tmp_path_factory.mktemp("tiny-llama"), [*WORDS, "yes", "Yes", "no", "No"]))


def check(rec: Augmented, **options) -> str | None:
    return create("filter", "sense", **options).check(rec, FilterContext(source=SOURCE, previous_texts=frozenset()))


def test_the_score_is_the_log_odds_of_yes_against_no_after_the_question(llama) -> None:
    flt = SenseFilter(SenseFilter.Config(model=llama))
    score = flt.ask("Maria bought a car .", "Maria purchased a car .", "bought", "purchased")
    model, tokenizer = load_weights(llama)
    prompt = f"{SenseFilter.Config().system}\n\n" + SenseFilter.Config().question.format(
        source="Maria bought a car .", paraphrase="Maria purchased a car .", before="bought", after="purchased"
    ) + "\n"
    with torch.inference_mode():
        logprobs = model(**tokenizer(prompt, return_tensors="pt")).logits[0, -1].log_softmax(-1)
    ids = tokenizer.convert_tokens_to_ids
    expected = torch.logsumexp(logprobs[ids(["yes", "Yes"])], 0) - torch.logsumexp(logprobs[ids(["no", "No"])], 0)
    assert score == pytest.approx(float(expected), abs=1e-5)


def test_min_score_decides_and_the_reason_names_both_spans(llama) -> None:
    rec = record("Maria purchased a car last month .", (1, 2))
    score = SenseFilter(SenseFilter.Config(model=llama)).ask("Maria bought a car last month .", rec.text, "bought", "purchased")
    assert check(rec, model=llama, min_score=score - 0.01) is None
    reason = check(rec, model=llama, min_score=score + 0.01)
    assert reason is not None and "'purchased' means what 'bought' meant" in reason and f"{score:.2f}" in reason


def test_the_model_that_wrote_the_record_is_asked_by_default(llama) -> None:
    assert check(record("Maria purchased a car last month .", (1, 2), model=llama), min_score=-1e9) is None
    with pytest.raises(ConfigError, match="name no model"):
        check(record("Maria purchased a car last month .", (1, 2)))


def test_records_that_replaced_no_span_are_kept_without_asking() -> None:
    # No model is named anywhere: asking would raise.
    assert check(record("Maria purchased a car last month .", None)) is None
    assert check(record("Maria purchased a car last month .", (1, 3)).model_copy(update={"spans": ()})) is None


def test_weights_already_in_memory_are_reused_on_any_device(llama) -> None:
    model, _ = load_weights(llama, "float32", "cpu")
    assert loaded(llama)[0] is model
    assert loaded(llama + "-other") is None


def test_a_vocabulary_without_yes_and_no_is_refused(tmp_path) -> None:
    folder = str(save_llama(tmp_path, WORDS))
    with pytest.raises(ConfigError, match="yes and no"):
        check(record("Maria purchased a car last month .", (1, 2)), model=folder)


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("Is {after} like {before} in {sentence}?", "unknown field"),
        ("Does {after} mean the same?", "{before} missing"),
        ("Does {after mean {before}?", "not a format string"),
    ],
)
def test_a_question_must_name_both_spans_and_only_known_fields(question, message) -> None:
    with pytest.raises(ConfigError, match=message):
        create("filter", "sense", question=question)


def test_it_is_a_filter_of_records_not_a_scorer_of_candidates() -> None:
    # The pipeline asks a ScoringFilter to score every candidate before alignment, when there
    # is no new span to ask about yet.
    assert not isinstance(create("filter", "sense"), ScoringFilter)


def test_an_encoder_decoder_model_is_refused(llama, tmp_path) -> None:
    # The records of a T5 paraphraser name it as their model: there is no chat turn to ask in.
    PreTrainedTokenizerFast.from_pretrained(llama).save_pretrained(tmp_path)
    config = T5Config(vocab_size=40, d_model=16, d_kv=4, d_ff=32, num_layers=1, num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    T5ForConditionalGeneration(config).save_pretrained(tmp_path)
    with pytest.raises(ConfigError, match="encoder-decoder"):
        check(record("Maria purchased a car last month .", (1, 2), model=str(tmp_path)))
