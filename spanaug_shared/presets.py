"""The run lines docs/quality.md measured, as the presets datasets offer (``spanaug run --preset``).

Every measured line starts from the README's quality line: the ``adequacy``, ``fluency``
and ``facts`` filters, and a rerank that weighs the sentence's scores beside the
aligner's. Span jobs (FrameNet triggers, SRL predicates) were measured at beam 4 and
top-m 4, what a CPU affords; whole-sentence jobs (NER with kept entities) at the embedded
beam 10 and top-m 20, since a whole-sentence job decodes its n-best list once. A dataset
offers the lines measured on its kind of data, each described with the page that holds
its figures; ``ENTITY_PRESETS`` are those of the entity datasets (``conll-ner``, ``hf``,
``spacy``).
"""

from __future__ import annotations

from typing import Any

from spanaug_core.settings import RunPreset

QUALITY_FILTERS: tuple[str, ...] = ("adequacy", "fluency", "facts")
QUALITY_RERANK: dict[str, float] = {"alignment": 1.0, "adequacy": 1.0, "paraphrase_fluency": 1.0}
# Whole-sentence rounds that repeat an earlier round's wording are dropped (docs/results/conll2003-ten-rounds.md).
NOVELTY: dict[str, Any] = {"name": "novelty", "ceiling": 1, "previous_ceiling": 0.9}


def quality_line(*filters: str | dict[str, Any], iterations: int, beam: int, top_m: int) -> dict[str, Any]:
    """Run settings: the README's quality line with ``filters`` after its own, and the given search."""
    return {
        "filters": [*QUALITY_FILTERS, *filters],
        "rerank": dict(QUALITY_RERANK),
        "iterations": iterations,
        "top_m": top_m,
        "decoder": {"beam_size": beam},
    }


ENTITY_PRESETS: tuple[RunPreset, ...] = (
    RunPreset(
        "precise",
        "the NER line and an independent spaCy tagger that must read each entity alike (the pos extra): fewer, "
        "surer records (docs/results/conll2003-kept-text.md#a-second-tagger-entity-tagger)",
        quality_line("kept-text", NOVELTY, "entity-tagger", iterations=10, beam=10, top_m=20),
    ),
    RunPreset(
        "more",
        "the README's NER line: ten rounds of whole-sentence paraphrases, entities that read as before, no near-repeats "
        "(docs/results/conll2003-kept-text.md#copies-before-the-aligner-keep_copies)",
        quality_line("kept-text", NOVELTY, iterations=10, beam=10, top_m=20),
    ),
)
