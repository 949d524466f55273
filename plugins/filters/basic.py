"""The heuristic filters of Culkin et al. 2021, Table 4 (upper section), and simple checks beside them.

The checks: a copy of the source, a lost number or name (``facts``), a kept entity that no
longer reads as it did (``kept-text``), and thresholds on the decoder's fluency and
recovery scores.

Each looks at one record: its iteration, one of its scores, or its text against the
source and the outputs already made for the same source. A run's ``filters`` list is a
conjunction (a record must pass all of them), which is how the paper's "lax" and
"strict" rows combine single criteria. Rejected records keep every score in
``rejected.jsonl``, so other thresholds can be tried afterwards without re-running.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from pydantic import Field

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ComponentConfig, FilterContext
from spanaug_core.text import normalize
from spanaug_core.types import Augmented, Span


# Tokens after which a capitalised word starts a sentence (or a quotation), not a name.
_SENTENCE_STARTS = frozenset({".", "!", "?", ":", '"', "``", "''", "“", "-", "--"})


class MaxIterationFilter:
    """Keep records from the first N iterations (later ones drift further from the source)."""

    name: ClassVar[str] = "max-iteration"

    class Config(ComponentConfig):
        max_iteration: int = Field(default=3, ge=1, description="largest iteration kept")

    def __init__(self, config: Config) -> None:
        self.config = config

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        if record.iteration > self.config.max_iteration:
            return f"iteration {record.iteration} > {self.config.max_iteration}"
        return None


class _ScoreFilter:
    """Keep records whose ``scores[key]`` is at least ``min_score``.

    A score that a decoder option turns on (``setting``) and the run did not is an error,
    not a rejection: otherwise every record would be dropped for a missing score.
    """

    key: ClassVar[str]
    setting: ClassVar[str | None] = None

    class Config(ComponentConfig):
        min_score: float = Field(description="smallest score kept")

    def __init__(self, config: Config) -> None:
        self.config = config

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        value = record.scores.get(self.key)
        if value is None:
            if self.setting is not None:
                raise ConfigError(
                    f"filter '{self.name}' reads the score '{self.key}', which this run's decoder did not give "  # type: ignore[attr-defined]
                    f"(vdba and hf-beam give it with --set {self.setting}=true)"
                )
            return f"no '{self.key}' score"
        if value < self.config.min_score:
            return f"{self.key} score {value:.4g} < {self.config.min_score:g}"
        return None


class ParaphraseScoreFilter(_ScoreFilter):
    """Keep records whose paraphrase score (length-normalised log-probability) is high enough."""

    name: ClassVar[str] = "paraphrase-score"
    key: ClassVar[str] = "paraphrase"

    class Config(ComponentConfig):
        min_score: float = Field(default=-1.0, description="smallest paraphrase score kept")


class AlignmentScoreFilter(_ScoreFilter):
    """Keep records whose alignment score is high enough."""

    name: ClassVar[str] = "alignment-score"
    key: ClassVar[str] = "alignment"

    class Config(ComponentConfig):
        min_score: float = Field(default=0.5, ge=0.0, le=1.0, description="smallest alignment score kept")


class FluencyFilter(_ScoreFilter):
    """Keep records whose fluency (per-token log-probability against the source's, from the decoder) is high enough."""

    name: ClassVar[str] = "fluency"
    key: ClassVar[str] = "paraphrase_fluency"
    setting: ClassVar[str | None] = "decoder.fluency"

    class Config(ComponentConfig):
        min_score: float = Field(
            default=-0.35,
            description="smallest paraphrase_fluency kept (0: as likely per token as the source; docs/results/rerank.md)",
        )


class RecoveryFilter(_ScoreFilter):
    """Keep records from which the paraphrase model recovers the source nearly as well as from the source itself.

    Reads the decoder's ``recovery`` score (``--set decoder.recovery=true``): a paraphrase
    that dropped or changed a fact scores far below 0 (docs/results/recovery.md).
    """

    name: ClassVar[str] = "recovery"
    key: ClassVar[str] = "paraphrase_recovery"
    setting: ClassVar[str | None] = "decoder.recovery"

    class Config(ComponentConfig):
        min_score: float = Field(
            default=-0.5,
            description="smallest paraphrase_recovery kept (0: the source as likely from the paraphrase as from itself; "
            "docs/results/recovery.md)",
        )


def facts(tokens: Sequence[str], skip: Iterable[int] = ()) -> set[str]:
    """The lower-cased numbers and names of a sentence (less the tokens at ``skip``): tokens
    with a digit, and capitalised words not at a sentence start (after the first token, an
    end mark or a quote)."""
    skipped = set(skip)
    if len(tokens) > 1 and tokens[0].isdigit() and tokens[1] == "-":
        skipped.add(0)  # a list item's number ("4 - It is preferable..."), not a fact of the sentence
    found = set()
    for i, token in enumerate(tokens):
        if i in skipped:
            continue
        if any(c.isdigit() for c in token):
            found.add(token.lower())
        elif i > 0 and token[:1].isupper() and token.isalpha() and tokens[i - 1] not in _SENTENCE_STARTS:
            found.add(token.lower())
    return found


class FactsFilter:
    """Drop a paraphrase that lost a number or a name of its source (outside the rewritten span)."""

    name: ClassVar[str] = "facts"

    class Config(ComponentConfig):
        pass

    def __init__(self, config: Config) -> None:
        self.config = config

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        source = context.source
        rewritten = source.spans[record.target] if record.target is not None else None
        skip = range(rewritten.start, rewritten.end) if rewritten is not None else ()
        # Compared without spaces: a paraphrase's tokenizer may split "116th" into "116 th".
        text = "".join(record.tokens).lower()
        lost = sorted(f for f in facts(source.tokens, skip) if f not in text)
        if lost:
            return f"lost {', '.join(repr(f) for f in lost[:3])}" + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
        return None


class KeptTextFilter:
    """Drop a paraphrase in which a kept span (a named entity, by default) no longer reads as it did.

    ``keep = align`` places kept spans where the aligner finds their meaning, which for a
    name is sometimes another word: "Albania" (LOC) lands on "Albanian", "Indian" (MISC) on
    "India's", "ITALIAN SUPERCUP" on "Italian Super" of "Italian Super Cup". The label is
    then wrong or the span cut, though ``facts`` still finds the name inside the new word.
    """

    name: ClassVar[str] = "kept-text"

    class Config(ComponentConfig):
        roles: list[str] = Field(default=["entity"], min_length=1, description="span roles that must read word for word as in the source")
        case_sensitive: bool = Field(default=False, description="treat \"ITALIAN\" and \"Italian\" as different text")

    def __init__(self, config: Config) -> None:
        self.config = config

    def _text(self, span: Span, tokens: Sequence[str]) -> str:
        # Joined without spaces: a tokenizer may write "U.S." as "U.S ." on one side only.
        text = "".join(tokens[span.start : span.end])
        return text if self.config.case_sensitive else text.lower()

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        source = context.source
        # A record keeps a subset of its source's spans (those inside a rewritten target go),
        # so each kept span is matched to an unused source span of its role and label.
        unused = [(sp, self._text(sp, source.tokens)) for sp in source.spans if sp.role in self.config.roles]
        for span in record.spans:
            if span.role not in self.config.roles:
                continue
            mine = self._text(span, record.tokens)
            match = next((pair for pair in unused if pair[0].label == span.label and pair[1] == mine), None)
            if match is None:
                was = [sp.text(source.tokens) for sp, _ in unused if sp.label == span.label]
                return f"{span.label} {span.text(record.tokens)!r} is not as in the source" + (f" ({', '.join(map(repr, was))})" if was else "")
            unused.remove(match)
        return None


class CopyFilter:
    """Drop a paraphrase identical to its source sentence or to an earlier output of the same source."""

    name: ClassVar[str] = "copy"

    class Config(ComponentConfig):
        case_sensitive: bool = Field(default=False, description="treat case differences as different text")

    def __init__(self, config: Config) -> None:
        self.config = config

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        cs = self.config.case_sensitive
        mine = normalize(record.text, cs)
        if mine == normalize(context.source.text, cs):
            return "identical to the source"
        if any(mine == normalize(text, cs) for text in context.previous_texts):
            return "identical to an earlier output"
        return None
