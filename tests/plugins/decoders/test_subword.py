"""Constraints through a real subword tokenizer: a byte-level BPE trained here, driving tiny random models.

The word-level test tokenizers give a phrase one token sequence; a real model's gives
several. A byte-level BPE (GPT-2, Llama 3, Qwen) folds the space before a word into its
first token, so "cat" at the start of an answer is ``c`` ``at`` but " cat" mid-sentence is
``Ġcat``, and "Cat", "cats" and "CAT" split differently again. The decoder must block (or
place) every one of them at the token level; its word-level check would otherwise drop the
hypotheses the tries let through (``stats["caught"]``), and with them the paraphrases.

The BPE is trained on a small corpus written here (nothing downloads), as the real ones
are: ``ByteLevel`` pre-tokenizer without an added prefix space, every byte in the
alphabet. Tiny random Llama (plain prompt) and Qwen2 (a ChatML template, as Qwen's) models
decode with it. A random model writes random words, so a logit bias (hooks on the model:
by how far each row is into its answer) makes it want what the test needs: the avoided
words, mid-sentence or as the answer's first word, and words only (no punctuation or bare
space token that would let a phrase's start-of-text tokenization stand as a word of its
own mid-sentence). Without the avoid constraints the model writes the words; with them,
nothing is left for the word-level check to catch.
"""

from __future__ import annotations

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

from spanaug_core.text import contains_phrase
from spanaug_core.types import Constraints, DecodeRequest
from spanaug_decoders.adapters import ChatAdapter
from spanaug_decoders.decoders import VDBADecoder
from spanaug_expanders.inflect import InflectExpander

CORPUS = [
    "the cat sat on the mat and the Cat sat on the CAT mat",
    "a small bird saw the big red house and the Red House",
    "the dog bought a red car and cats ran in the house",
    "she buys bread and he is buying milk for the small bird",
    "the committee will corroborate the account",
    "they corroborated the story and Corroborate it now",
    "a cat and a dog ran in the house",
    "the small cat saw a bird in the red house",
]
SPECIALS = ["<pad>", "</s>", "<|im_start|>", "<|im_end|>"]
# Qwen's ChatML, without its default system message.
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SOURCE = "the small cat saw a bird in the red house"


@pytest.fixture(scope="module")
def bpe() -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(CORPUS * 20, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>")


def _ids(tokenizer: PreTrainedTokenizerFast, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def test_the_bpe_splits_words_differently_after_a_space(bpe) -> None:
    pieces = {text: bpe.convert_ids_to_tokens(_ids(bpe, text)) for text in ("cat", " cat", "small bird", " small bird")}
    assert pieces == {"cat": ["c", "at"], " cat": ["Ġcat"], "small bird": ["s", "mall", "Ġbird"], " small bird": ["Ġsmall", "Ġbird"]}
    assert len(_ids(bpe, " corroborated")) > 1  # a word of several tokens


def _adapter(kind: str, tokenizer: PreTrainedTokenizerFast) -> ChatAdapter:
    """A two-layer random model over ``tokenizer``: Llama prompted with plain text, or Qwen2 through ChatML."""
    torch.manual_seed(0)
    sizes = dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=256, pad_token_id=0)
    if kind == "llama":
        model, end = LlamaForCausalLM(LlamaConfig(**sizes, eos_token_id=1, bos_token_id=1)), 1
    else:
        tokenizer = PreTrainedTokenizerFast(tokenizer_object=tokenizer.backend_tokenizer, pad_token="<pad>", eos_token="<|im_end|>")
        tokenizer.chat_template = CHATML
        end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        model = Qwen2ForCausalLM(Qwen2Config(**sizes, eos_token_id=end))
    return ChatAdapter(model, tokenizer, [end], system="You rewrite sentences.", prompt="Paraphrase: {text}")


def _bias(adapter: ChatAdapter, favoured: list[str]) -> torch.Tensor:
    """Logit biases [answer position, V] that make the random model write words as a real one
    does: -inf on every token but words and the ends (punctuation, digits, a bare space), +3
    on a word after a space (a real model rarely glues two words); +6 on the tokens of
    ``favoured`` written after a space, or, for "^word", +8 on its tokens without a space
    as the answer's first (the last row holds for every later position)."""
    tok = adapter.tokenizer
    words = torch.zeros(adapter.vocab_size)
    for i in range(len(tok)):
        piece = tok.decode([i])
        if i not in adapter.end_ids and not piece.strip().isalpha():
            words[i] = float("-inf")
        elif piece.startswith(" "):
            words[i] = 3.0
    openings = [_ids(tok, text[1:]) for text in favoured if text.startswith("^")]
    bias = words.repeat(max(map(len, openings), default=0) + 1, 1)
    for text in favoured:
        if not text.startswith("^"):
            bias[:, _ids(tok, " " + text)] = 6.0
    for ids in openings:
        for position, token in enumerate(ids):
            bias[position, token] = 8.0
    return bias.masked_fill(words.isinf(), float("-inf"))


def _decode(adapter: ChatAdapter, bias: torch.Tensor, constraints: Constraints, nbest: int = 4) -> tuple[list, dict]:
    """The candidates and stats of VDBA on ``SOURCE`` with the model's logits biased by ``bias``."""
    # Each row's position tells how far into its answer it is (the prompt has no hint: the same length).
    answer_starts = len(adapter.prompt_ids(SOURCE)) - 1
    step: dict[str, torch.Tensor | None] = {}

    def before(module, args, kwargs):
        positions = kwargs.get("position_ids")  # None for the shared prefix's own forward pass
        step["rows"] = None if positions is None else (positions[:, -1] - answer_starts).clamp(0, len(bias) - 1)

    def after(module, args, out):
        return out if step["rows"] is None else out + bias[step["rows"]][:, None, :]

    hooks = [adapter.model.register_forward_pre_hook(before, with_kwargs=True),
             adapter.model.get_output_embeddings().register_forward_hook(after)]
    try:
        config = VDBADecoder.Config(beam_size=4, max_length=10, dtype="float32", repeat_ngram=0, echo=None, fluency=False)
        decoder = VDBADecoder(config, adapter=adapter)
        (found,) = decoder.decode([DecodeRequest(text=SOURCE, constraints=constraints)], nbest=nbest)
    finally:
        for hook in hooks:
            hook.remove()
    return found, decoder.stats


@pytest.fixture(scope="module", params=["llama", "qwen2"])
def adapter(request, bpe) -> ChatAdapter:
    return _adapter(request.param, bpe)


def test_a_phrase_has_its_start_of_text_and_mid_sentence_tokenizations(adapter) -> None:
    tok = adapter.tokenizer
    assert adapter.encode_phrase("cat") == [_ids(tok, "cat"), _ids(tok, " cat")]
    assert adapter.encode_phrase("small bird") == [_ids(tok, "small bird"), _ids(tok, " small bird")]


@pytest.mark.parametrize(
    ("phrase", "favoured"),
    [
        ("cat", ["cat", "Cat", "cats", "CAT"]),  # case variants and an inflection; "cat" is one token after a space
        ("cat", ["^cat", "^Cat"]),  # the answer's first word: "c" "at", no space
        ("corroborate", ["corroborated", "corroborate", "Corroborate"]),  # words of several tokens
        ("red house", ["red house", "red houses"]),  # a phrase of two words
    ],
    ids=["mid-sentence", "first-word", "several-tokens", "two-words"],
)
def test_no_form_of_an_avoided_phrase_is_written_and_the_tries_block_them_all(adapter, phrase, favoured) -> None:
    forms = InflectExpander(InflectExpander.Config()).expand(phrase)
    assert {f.lstrip("^") for f in favoured} <= set(forms)
    bias = _bias(adapter, favoured)
    free, _ = _decode(adapter, bias, Constraints())
    assert any(contains_phrase(c.text, f) for c in free for f in forms), "the biased model writes the phrase when free"
    found, stats = _decode(adapter, bias, Constraints(avoid=tuple(forms)))
    assert found, "the model can paraphrase without the phrase"
    assert not any(contains_phrase(c.text, f, case_sensitive=False) for c in found for f in forms)
    # Nothing was left to the word-level check: the tries blocked every tokenization of every form.
    assert stats["caught"] == 0


def test_include_phrases_are_placed_mid_sentence_with_their_leading_space(adapter) -> None:
    # Only one phrase can open the answer: the other is placed after a word, where only
    # its tokenization with a leading space makes it a word of its own.
    include = ("small bird", "red house")
    found, _ = _decode(adapter, _bias(adapter, []), Constraints(include=include))
    assert found
    for cand in found:
        assert set(cand.met) == set(include) and all(contains_phrase(cand.text, p) for p in include)
