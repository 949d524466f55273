"""The ``sense`` filter: ask the paraphrase model whether the new span means what the old one meant.

What stays wrong after the sentence-level checks is mostly the label: a fluent substitute
of another sense ("liked" for *appreciated*, "inbox" for *attention*, "period" for
*month*). The sentence still says nearly the same, so ``adequacy`` and ``recovery`` pass
it; WordNet (``wordnet``) sees some of these but knows no context and no multiword
phrase. An instruction-tuned model reads both sentences, so this filter shows it the
source and the paraphrase, names the two spans and asks a yes/no question. The score is
the log-odds of the first answer token, log P(yes) - log P(no), summed over the usual
spellings of each; the record is kept when it reaches ``min_score``.

The model defaults to the one that wrote the record, whose weights the decoder already
holds in this process (``spanaug_shared.weights``): the question costs one forward pass
over a prompt of about 150 tokens, with no second copy of the model.
"""

from __future__ import annotations

import weakref
from typing import Any, ClassVar

from pydantic import Field, field_validator

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ComponentConfig, FilterContext
from spanaug_core.text import detokenize, placeholders
from spanaug_core.types import Augmented
from spanaug_shared.records import replaced_words
from spanaug_shared.weights import load_weights, loaded

DEFAULT_SYSTEM = "You are a careful linguist who checks paraphrases."
DEFAULT_QUESTION = (
    "Sentence A: {source}\nSentence B: {paraphrase}\n\n"
    'In sentence B, "{after}" replaces "{before}" of sentence A. '
    'Does "{after}" in B mean the same as "{before}" in A? Answer yes or no.'
)
_FIELDS = {"source", "paraphrase", "before", "after"}
_YES = ("yes", "Yes", " yes", " Yes")
_NO = ("no", "No", " no", " No")
# The answers' token ids per tokenizer (a vocabulary is read once, as the decoder's line breaks are).
_ANSWERS: weakref.WeakKeyDictionary[Any, tuple[list[int], list[int]]] = weakref.WeakKeyDictionary()


class SenseFilter:
    """Drop a record whose rewritten span the paraphrase model does not take to mean what the source span meant."""

    name: ClassVar[str] = "sense"

    class Config(ComponentConfig):
        min_score: float = Field(
            default=1.0,
            description="keep a record when log P(yes) - log P(no) reaches this; the model leans to yes, so the cut is above 0 "
            "(docs/results/sense-filter.md)",
        )
        model: str | None = Field(
            default=None, description="model to ask (preset, folder or GGUF); None: the model that wrote the record"
        )
        device: str = Field(
            default="auto", description="where to load the model when no component of this process holds it yet (auto: cuda if there is one)"
        )
        dtype: str = Field(default="auto", description="dtype when loading (auto: float32 on a CPU, bfloat16 on an accelerator)")
        system: str = Field(default=DEFAULT_SYSTEM, description="system message of the question")
        question: str = Field(
            default=DEFAULT_QUESTION,
            description="the question, with {source} and {paraphrase} (the sentences) and {before} and {after} (the spans)",
        )

        @field_validator("question")
        @classmethod
        def _known_fields(cls, question: str) -> str:
            named = placeholders(question)
            unknown, missing = named - _FIELDS, {"before", "after"} - named
            if unknown:
                raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}; the question may use {', '.join(sorted(_FIELDS))}")
            if missing:
                raise ValueError(f"the question must name the spans: {', '.join('{' + m + '}' for m in sorted(missing))} missing")
            return question

    def __init__(self, config: Config) -> None:
        # The weights stay in spanaug_shared.weights: a filter sent to a worker carries no model.
        self.config = config

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        words = replaced_words(record, context.source)
        if words is None:
            return None  # a whole-sentence paraphrase (NER), or no single new span to ask about
        before, after = words
        score = self.ask(detokenize(context.source.tokens), record.text, before, after, record.components.get("model"))
        if score >= self.config.min_score:
            return None
        return f"the model doubts {after!r} means what {before!r} meant (yes/no log-odds {score:.2f} < {self.config.min_score:g})"

    def ask(self, source: str, paraphrase: str, before: str, after: str, writer: str | None = None) -> float:
        """log P(yes) - log P(no) for the question about one pair of sentences and spans."""
        import torch

        model, tokenizer = self._weights(writer)
        text = self.config.question.format(source=source, paraphrase=paraphrase, before=before, after=after)
        ids = tokenizer(self._render(tokenizer, text), return_tensors="pt", add_special_tokens=False)["input_ids"].to(model.device)
        yes, no = self._answer_ids(tokenizer)
        with torch.inference_mode():
            logprobs = model(input_ids=ids, logits_to_keep=1).logits[0, -1].float().log_softmax(-1)
        return float(torch.logsumexp(logprobs[yes], 0) - torch.logsumexp(logprobs[no], 0))

    def _weights(self, writer: str | None) -> tuple[Any, Any]:
        name = self.config.model or writer
        if name is None:
            raise ConfigError("filter 'sense': the records name no model that wrote them; set the filter's `model` option")
        found = loaded(name)
        if found is None:
            device = self.config.device
            if device == "auto":
                import torch

                device = "cuda" if torch.cuda.is_available() else "cpu"
            found = load_weights(name, self.config.dtype, device)
        model, tokenizer = found
        if model.config.is_encoder_decoder:
            raise ConfigError(f"filter 'sense' needs a decoder-only chat model to ask; {name!r} is an encoder-decoder model")
        return model, tokenizer

    def _render(self, tokenizer: Any, text: str) -> str:
        if not getattr(tokenizer, "chat_template", None):
            return f"{self.config.system}\n\n{text}\n" if self.config.system else f"{text}\n"
        messages = [{"role": "system", "content": self.config.system}] if self.config.system else []
        messages.append({"role": "user", "content": text})
        return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    @staticmethod
    def _answer_ids(tokenizer: Any) -> tuple[list[int], list[int]]:
        """The first token of each spelling of yes and of no (a spelling the vocabulary lacks is left out)."""
        if tokenizer not in _ANSWERS:

            def first_ids(words: tuple[str, ...]) -> list[int]:
                ids = set()
                for word in words:
                    pieces = tokenizer.encode(word, add_special_tokens=False)
                    if pieces and pieces[0] != tokenizer.unk_token_id:
                        ids.add(pieces[0])
                return sorted(ids)

            yes, no = first_ids(_YES), first_ids(_NO)
            if not yes or not no or set(yes) & set(no):
                raise ConfigError("filter 'sense': the model's vocabulary cannot tell the answers yes and no apart")
            _ANSWERS[tokenizer] = (yes, no)
        return _ANSWERS[tokenizer]
