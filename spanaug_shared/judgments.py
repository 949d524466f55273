"""The judgments file: one human-judged system output a line, what ``spanaug train filter`` learns from.

``spanaug judge import`` writes it from collected answers; judgments from anywhere else
work as well if they carry the same fields::

    {"id": "fn-12/s0/it3", "iteration": 3, "scores": {"paraphrase": -0.41, "alignment": 0.97},
     "accepted": true, "mean": 71.7}

``accepted`` is the label (after Culkin et al. 2021: the mean of an output's 0-100
judgments is at least 50); a reader that learns from ``scores`` names the ones it needs.
``kept`` (optional) says whether the run's own filters kept the output, so that a learned
filter can be compared with them.
Other keys (the judge's item id, the single judgments, the text) are ignored here.
Malformed lines raise a ``DataError`` naming the file and line.

A judgment's *source* is the input sentence its output was made from, read off the
record id (``SOURCE/sK/itN`` or ``SOURCE/itN``, docs/data-format.md). The outputs of one
source are near-copies of each other (later iterations of the same sentence, or the
same round of two runs over one sample), so whoever scores a filter on judgments it was
not trained on keeps each source on one side.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from spanaug_core.errors import DataError, one_line
from spanaug_shared.jsonlines import objects

# What the pipeline appends to a source id: the rewritten span (absent for whole-sentence
# jobs), the iteration, and a round's further record's number (``per_round``).
_RECORD_SUFFIX = re.compile(r"(?:/s\d+)?/it\d+(?:\.\d+)?$")


class Judgment(BaseModel):
    """One judged output: its features and whether people accepted it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    iteration: int = Field(ge=1)
    scores: dict[str, float]
    accepted: StrictBool
    mean: float | None = None
    # Whether the run's filters kept the output (judge import writes it when the export
    # recorded it, i.e. made with --rejected); None: unknown.
    kept: StrictBool | None = None

    @property
    def source(self) -> str:
        """The source sentence's id (the whole id when it does not end in ``/itN``)."""
        return _RECORD_SUFFIX.sub("", self.id) or self.id


def read_judgments(path: Path, needed_scores: Sequence[str] = ()) -> list[Judgment]:
    """Every judgment of a JSONL file (blank lines skipped); an empty file is an error.

    A judgment whose ``scores`` lack one of ``needed_scores`` is an error naming it.
    """
    judgments = []
    for lineno, obj in objects(path):
        try:
            judgment = Judgment.model_validate(obj)
        except ValidationError as exc:
            raise DataError(f"not a judgment ({one_line(exc)})", path, lineno) from None
        missing = [key for key in needed_scores if key not in judgment.scores]
        if missing:
            raise DataError(f"scores lack {', '.join(missing)} (needed: {', '.join(needed_scores)})", path, lineno)
        judgments.append(judgment)
    if not judgments:
        raise DataError("holds no judgments", path)
    return judgments
