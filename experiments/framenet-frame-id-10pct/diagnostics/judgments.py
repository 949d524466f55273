"""The blind judgments of the pool's records (docs/results/judgments/framenet-pool-10pct*.tsv), read once.

Two layouts: the first sample has one annotator (id, frame, meaning, verdict, reason); the later
ones a round column and two annotators (id, round, frame, meaning, frame, meaning, verdict,
reason, reason). A record is good on a count when every annotator said yes. The items the
annotators saw are written with ``item``; ``pair`` is how the diagnostics count a trigger.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

ONE_ANNOTATOR, TWO_ANNOTATORS = 5, 9
_FN = "{http://framenet.icsi.berkeley.edu}"


def definition(fndata: Path, frame: str) -> str:
    """The frame's definition as plain text (its markup and examples' tags removed), at most 600 characters."""
    text = ET.parse(fndata / "frame" / f"{frame}.xml").getroot().findtext(f"{_FN}definition") or ""
    return " ".join(re.sub(r"<[^>]+>", "", text).split())[:600]


def marked(tokens: Sequence[str], start: int, end: int) -> str:
    return " ".join([*tokens[:start], "[[" + " ".join(tokens[start:end]) + "]]", *tokens[end:]])


def pair(tokens: Sequence[str], label: str, start: int, end: int) -> tuple[str, str]:
    """A target as the diagnostics count triggers: its frame and its words, lower-cased."""
    return label, " ".join(tokens[start:end]).lower()


def item(number: int, frame: str, fndata: Path, source: tuple[Sequence[str], int, int], output: tuple[Sequence[str], int, int]) -> str:
    """One item to judge: the frame, its definition, and the source and output (tokens, start, end) marked."""
    return (f"## item {number}\nframe: {frame}\ndefinition: {definition(fndata, frame)}\n"
            f"source: {marked(*source)}\noutput: {marked(*output)}\n")


def record_item(number: int, record: dict[str, Any], sources: dict[str, dict[str, Any]], fndata: Path) -> str:
    """The item of one run record (as JSON): its source's rewritten target and its own new trigger, marked."""
    source = sources[record["source_id"]]
    target = source["spans"][record["target"]]
    new = next(s for s in record["spans"] if s["role"] == "target" and not s.get("attrs", {}).get("carried"))
    return item(number, target["label"], fndata, (source["tokens"], target["start"], target["end"]),
                (record["tokens"], new["start"], new["end"]))


class Judgment(NamedTuple):
    frame: bool  # the new trigger evokes the frame
    both: bool  # ... and the meaning is kept
    verdict: str  # the README's FrameNet filters' verdict: "kept", or the first filter that drops it


def read_judgments(tsv: Path) -> dict[str, Judgment]:
    """Record id -> its judgment, from one judgments file."""
    judgments = {}
    for number, line in enumerate(tsv.read_text().splitlines(), 1):
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) == ONE_ANNOTATOR:
            votes, verdict = fields[1:3], fields[3]
        elif len(fields) == TWO_ANNOTATORS:
            votes, verdict = fields[2:6], fields[6]
        else:
            raise SystemExit(f"{tsv}:{number}: expected {ONE_ANNOTATOR} or {TWO_ANNOTATORS} tab-separated fields, found {len(fields)}")
        if any(vote not in ("0", "1") for vote in votes):
            raise SystemExit(f"{tsv}:{number}: expected 1 or 0 for each judgment, found {votes}")
        yes = [vote == "1" for vote in votes]
        judgments[fields[0]] = Judgment(frame=all(yes[0::2]), both=all(yes), verdict=verdict)
    return judgments
