"""The lexical-substitution baseline of Culkin et al. 2021, §6.3.

Instead of the whole paraphrase, keep the original sentence and put only the aligned
span back into it: the source's rewritten span (a FrameNet trigger, an SRL predicate) is
replaced by the words the aligner found in the paraphrase, and every span of the same
group moves with the new length. To keep the result grammatical, a substitution is kept
only when the POS tags over the new words equal those over the original ones (the paper
drops about 35% this way). A record that rewrote no single span (a whole-sentence NER
paraphrase) has nothing to substitute and gives nothing; neither does a substitution
that reproduces the source word for word.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from spanaug_core.errors import ConfigError
from spanaug_core.types import Augmented, Example, Span
from spanaug_shared.postag import Tagger, find_tagger, tag_sentences
from spanaug_shared.records import rewritten_span


@dataclass
class Substitutions:
    """The baseline's examples, with how many records each reason dropped."""

    examples: list[Example] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)


def substitute(source: Example, target: int, words: Sequence[str]) -> Example:
    """``source`` with span ``target`` replaced by ``words``, keeping only that span's group, spans moved."""
    original = source.spans[target]
    shift = len(words) - (original.end - original.start)
    tokens = (*source.tokens[: original.start], *words, *source.tokens[original.end :])
    spans: list[Span] = []
    for k, span in enumerate(source.spans):
        if k != target and (span.group != original.group or original.group is None):
            continue
        if k == target:
            spans.append(span.moved(original.start, original.start + len(words)))
        elif span.end <= original.start:
            spans.append(span)
        elif span.start >= original.end:
            spans.append(span.moved(span.start + shift, span.end + shift))
        # A span overlapping the replaced words has no place in the new sentence.
    return Example(id=source.id, tokens=tokens, spans=tuple(spans))


def lexical_substitutions(
    records: Sequence[Augmented],
    sources: Mapping[str, Example],
    rewrite_roles: Sequence[str] = ("target",),
    tagger: Tagger | None = None,
    batch_size: int = 256,
) -> Substitutions:
    """One example per record whose aligned span can replace its source span with the same POS tags."""
    if tagger is None:
        choice = find_tagger()
        if choice.tagger is None:
            raise ConfigError(f"the lexical-substitution baseline keeps same-POS substitutions only, but {choice.description}")
        tagger = choice.tagger
    out = Substitutions()
    made: list[tuple[Augmented, Example, Example, Span]] = []
    for record in records:
        source = sources.get(record.source_id)
        aligned = rewritten_span(record, rewrite_roles)
        if source is None:
            out.dropped["source not found"] += 1
            continue
        if aligned is None or record.target is None or record.target >= len(source.spans):
            out.dropped["no single rewritten span"] += 1
            continue
        words = record.tokens[aligned.start : aligned.end]
        original = source.spans[record.target]
        if tuple(words) == source.tokens[original.start : original.end]:
            out.dropped["same words as the source"] += 1
            continue
        made.append((record, source, substitute(source, record.target, words), original))
    tags = tag_sentences(tagger, (s for _, source, new, _ in made for s in (source.tokens, new.tokens)), batch_size)
    seen: set[tuple[str, ...]] = set()
    for record, source, new, original in made:
        width = len(new.tokens) - len(source.tokens) + original.end - original.start
        if tags[source.tokens][original.start : original.end] != tags[new.tokens][original.start : original.start + width]:
            out.dropped["POS tags differ"] += 1
        elif new.tokens in seen:
            out.dropped["duplicate"] += 1
        else:
            seen.add(new.tokens)
            out.examples.append(new.model_copy(update={"id": f"{record.id}/lexsub", "meta": {"source_id": record.source_id, "lexsub": True}}))
    return out
