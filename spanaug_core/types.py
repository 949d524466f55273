"""The data model every component speaks: labeled examples in, augmented records out.

All types are frozen pydantic models so that a value handed to a plugin cannot be changed
behind the pipeline's back, and so that JSONL input is validated with messages that name
the offending field. Token offsets are ``[start, end)``; ``Example`` checks that every span
lies inside its tokens.
"""

from __future__ import annotations

import numbers
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from spanaug_core.text import detokenize, tokenize, tokenize_with_offsets


CARRIED = "carried"
"""The ``attrs`` key that marks a record's span as carried from the source, not rewritten or kept
(``PipelineSettings.carry``)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _control_character(text: str) -> str | None:
    """A control character in ``text`` (a tab, a newline, U+0000...), which no output format can hold in a token or label."""
    return next((f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) == "Cc"), None)


class Span(_Frozen):
    """A labeled token span: ``tokens[start:end]`` of the example that holds it."""

    start: int = Field(ge=0)
    end: int
    label: str = Field(min_length=1)
    role: str = Field(default="target", min_length=1)
    group: str | None = None
    attrs: dict[str, Any] = Field(default_factory=dict)

    @field_validator("start", "end", mode="before")
    @classmethod
    def _an_integer(cls, value: Any) -> Any:
        # JSON "3" or 3.5 is a slip in the data, not an offset: no silent coercion.
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"expected an integer token offset, got {value!r}")
        return int(value)

    @field_validator("label")
    @classmethod
    def _printable(cls, label: str) -> str:
        control = _control_character(label)
        if control is not None:
            raise ValueError(f"label {label!r} contains the control character {control}")
        return label

    @model_validator(mode="after")
    def _ordered(self) -> Span:
        if self.end <= self.start:
            raise ValueError(f"span end ({self.end}) must be greater than start ({self.start})")
        return self

    def text(self, tokens: tuple[str, ...] | list[str]) -> str:
        """The span's surface text in ``tokens``."""
        return detokenize(tokens[self.start : self.end])

    def moved(self, start: int, end: int) -> Span:
        """The same label, role, group and attrs at another position."""
        return self.model_copy(update={"start": start, "end": end})


class Example(_Frozen):
    """One labeled sentence: the unit datasets yield and the pipeline augments.

    Give ``tokens``, or ``text`` and it is tokenized (``spans`` then count the tokens of
    that text, as in the JSONL format). For spans given by character offsets, use
    ``Example.from_text``.
    """

    id: str
    tokens: tuple[str, ...]
    spans: tuple[Span, ...] = ()
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _text_as_tokens(cls, data: Any) -> Any:
        if isinstance(data, dict) and "text" in data:
            data = dict(data)
            text = data.pop("text")
            if "tokens" in data:
                raise ValueError("give tokens or text, not both")
            if not isinstance(text, str):
                raise ValueError(f"text must be a string (got {type(text).__name__})")
            data["tokens"] = tokenize(text)
        return data

    @classmethod
    def from_text(
        cls, id: str, text: str, spans: Iterable[Mapping[str, Any]] = (), meta: Mapping[str, Any] | None = None
    ) -> Example:
        """An example from plain text and spans at character offsets.

        Each span is a mapping with ``start`` and ``end`` character offsets (``end``
        exclusive, as in ``text[start:end]``), ``label`` and optionally ``role``, ``group``
        and ``attrs``. Tokens are split wherever a span starts or ends, so every span
        covers whole tokens; an edge on whitespace snaps inward. A span that covers no
        token is a ``ValueError`` naming it.
        """
        spans = [dict(span) for span in spans]
        for i, span in enumerate(spans):
            for edge in ("start", "end"):
                # 4.0 would slice like 4 and 4.5 would fail in slicing: both are slips, as in Span.
                if isinstance(span.get(edge), bool) or not isinstance(span.get(edge), numbers.Integral):
                    raise ValueError(f"spans[{i}]: expected an integer character offset for {edge}, got {span.get(edge)!r}")
        tokenized = tokenize_with_offsets(text, [edge for span in spans for edge in (span["start"], span["end"])])
        placed = []
        for i, span in enumerate(spans):
            where = tokenized.token_span(span["start"], span["end"])
            if where is None:
                raise ValueError(f"spans[{i}] (characters {span['start']}-{span['end']}: {text[span['start']:span['end']]!r}) covers no token")
            placed.append(Span(**{**span, "start": where[0], "end": where[1]}))
        return cls(id=id, tokens=tokenized.tokens, spans=tuple(placed), meta=dict(meta or {}))

    @field_validator("tokens")
    @classmethod
    def _tokens_ok(cls, tokens: tuple[str, ...]) -> tuple[str, ...]:
        if not tokens:
            raise ValueError("an example needs at least one token")
        for i, tok in enumerate(tokens):
            if not tok or any(ch.isspace() for ch in tok):
                raise ValueError(f"token {i} ({tok!r}) is empty or contains whitespace")
            control = _control_character(tok)
            if control is not None:
                raise ValueError(f"token {i} ({tok!r}) contains the control character {control}")
        return tokens

    @model_validator(mode="after")
    def _spans_inside(self) -> Example:
        n = len(self.tokens)
        for i, span in enumerate(self.spans):
            if span.end > n:
                raise ValueError(
                    f"spans[{i}] ({span.start}, {span.end}) ends after the last token (the example has {n} tokens)"
                )
        return self

    @property
    def text(self) -> str:
        """The sentence as plain text (tokens joined by the detokenizer)."""
        return detokenize(self.tokens)


class Constraints(_Frozen):
    """Lexical constraints for one decode: phrases to avoid and phrases to include, both
    enforced, and words to prefer, which the prompt only offers (a lexicon's alternatives)."""

    avoid: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    prefer: tuple[str, ...] = ()


class DecodeRequest(_Frozen):
    """One sentence to paraphrase under its own constraints."""

    text: str
    constraints: Constraints = Constraints()


class Candidate(_Frozen):
    """One hypothesis of a decoder's n-best list.

    ``score`` is the decoder's main ranking score (by convention the length-normalised
    log-probability); ``scores`` holds any others (total log-probability, a [0, 1]
    probability-like score...). ``met`` lists the include phrases the hypothesis contains.
    """

    text: str
    tokens: tuple[str, ...]
    score: float
    scores: dict[str, float] = Field(default_factory=dict)
    met: tuple[str, ...] = ()


class AlignItem(_Frozen):
    """Find in ``target_tokens`` the span that means ``source_tokens[source_span]``."""

    source_tokens: tuple[str, ...]
    source_span: tuple[int, int]
    target_tokens: tuple[str, ...]

    @model_validator(mode="after")
    def _span_inside(self) -> AlignItem:
        s, e = self.source_span
        if not 0 <= s < e <= len(self.source_tokens):
            raise ValueError(f"source_span {self.source_span} is not inside the {len(self.source_tokens)} source tokens")
        return self


class Alignment(_Frozen):
    """An aligner's answer for one item: the span (or None), its score and the top-k."""

    span: tuple[int, int] | None
    score: float = Field(ge=0.0, le=1.0)
    candidates: tuple[tuple[int, int, float], ...] = ()


class Augmented(_Frozen):
    """One accepted (or rejected) paraphrase with its projected spans: a line of augmented.jsonl."""

    id: str
    source_id: str
    target: int | None
    iteration: int = Field(ge=1)
    tokens: tuple[str, ...]
    text: str
    spans: tuple[Span, ...]
    scores: dict[str, float]
    constraints: Constraints
    components: dict[str, str] = Field(default_factory=dict)
    # Left out of the JSON when empty: a record of a run begun before spans were carried
    # (``carry``) reads and writes as it did then.
    dropped: tuple[int, ...] = Field(
        default=(), exclude_if=lambda value: not value, description="indices, in the source's spans, of those the record lacks"
    )

    def as_example(self) -> Example:
        """This record as an input example (to augment augmented data, or to train on it)."""
        return Example(id=self.id, tokens=self.tokens, spans=self.spans, meta={"source_id": self.source_id})
