"""FrameNet "from scratch" (Culkin et al. 2021, §6.1): a tiny seed, and how many held-out LUs a run finds.

``select_seed`` keeps the N earliest-created frames, the K earliest-created LUs of each
that have annotations, and the M earliest annotation sets of each such LU; every other
LU of those frames is held-out gold. ``score_lus`` lemmatizes each augmented target
into FrameNet's LU form (``confirmed`` under a ``.v`` source -> ``confirm.v``) and
counts (frame, LU) pairs: true positives are held-out LUs found, false positives pairs
that are neither held out nor seed, false negatives held-out LUs never produced (seed
LUs are never counted missing). ``run_statistics`` gives the paper's Table 4 counts.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spanaug_framenet.reader import FrameNetReader
from spanaug_framenet.release import find_release, frame_ids, frames, lu_file, parse_date

from spanaug_core.errors import DataError
from spanaug_core.types import Example

_UPOS = {"v": "VERB", "n": "NOUN", "a": "ADJ", "adv": "ADV"}


def lu_form(words: str, pos: str) -> str:
    """A trigger in FrameNet's LU form: lemmatized words plus the POS suffix (``confirm.v``)."""
    from lemminflect import getLemma

    tokens = words.lower().split()
    upos = _UPOS.get(pos)
    lemmas = [(getLemma(tok, upos=upos) or (tok,))[0] if upos else tok for tok in tokens]
    return f"{' '.join(lemmas)}.{pos}"


@dataclass
class Seed:
    """The seed examples and, per seed frame, its seed LUs and its held-out LUs."""

    examples: list[Example]
    seed_lus: dict[str, set[str]]
    held_out: dict[str, set[str]]

    def manifest(self) -> dict[str, Any]:
        return {frame: {"seed": sorted(self.seed_lus[frame]), "held_out": sorted(self.held_out[frame])} for frame in self.seed_lus}


def _single_set_examples(examples: Iterable[Example]) -> Iterator[tuple[Example, str]]:
    """One example per annotation set (its target and elements only), with its created date."""
    for example in examples:
        for target in (s for s in example.spans if s.role == "target"):
            spans = tuple(s for s in example.spans if s.group == target.group)
            yield example.model_copy(update={"id": f"{example.id}-as{target.group}", "spans": spans}), target.attrs.get("created", "")


def select_seed(path: Path | None, n_frames: int = 20, n_lus: int = 3, n_annotations: int = 3) -> Seed:
    """The from-scratch seed corpus of a release (see the module docstring).

    Frames and LUs are chosen from metadata (created dates in the frame files); of the LU
    exemplar files only those of the chosen frames' LUs are parsed, in created order, and
    only until each frame has its ``n_lus`` annotated LUs.
    """
    release = find_release(path)
    chosen = sorted(frames(release), key=lambda f: (f.created, f.name))[:n_frames]
    if not chosen:
        raise DataError("expected frame files (frame/*.xml) to choose seed frames from", path=release)
    reader = FrameNetReader(FrameNetReader.Config(frames=tuple(f.name for f in chosen)))
    known = frame_ids(release)
    by_lu: dict[tuple[str, str], list[tuple[Any, Example]]] = defaultdict(list)

    def collect(examples: Iterable[Example]) -> None:
        for example, created in _single_set_examples(examples):
            target = next(s for s in example.spans if s.role == "target")
            by_lu[(target.label, target.attrs.get("lu", ""))].append((parse_date(created), example))

    # Full text is not indexed by LU: every document may annotate a chosen frame.
    fulltext: dict[str, bytes] = {}  # ids read, as the reader keeps them across documents
    for document in sorted((release / "fulltext").glob("*.xml")):
        collect(reader.read_xml(document, "fulltext", known, fulltext))
    seed = Seed([], {}, {})
    for frame in chosen:
        lus = sorted(frame.lexical_units(), key=lambda lu: (lu.created, lu.name))
        files: dict[str, list[Path]] = defaultdict(list)
        for lu in lus:
            files[lu.name].append(lu_file(release, lu.id))
        annotated: list[str] = []
        for name in (lu.name for lu in lus):
            if len(annotated) == n_lus:
                break
            for file in files.pop(name, []):  # an LU name listed twice has its files read at its first entry
                if file.is_file():
                    collect(reader.read_xml(file, "exemplar", known))
            if by_lu.get((frame.name, name)):
                annotated.append(name)
        seed.seed_lus[frame.name] = set(annotated)
        seed.held_out[frame.name] = {lu.name for lu in lus} - seed.seed_lus[frame.name]
        for name in annotated:
            ordered = sorted(by_lu[(frame.name, name)], key=lambda pair: (pair[0], pair[1].id))
            seed.examples.extend(example for _, example in ordered[:n_annotations])
    reader.log_skipped(release)
    return seed


def _produced(run: Path) -> Iterator[tuple[str, str, str]]:
    """(frame, trigger text, source LU) of every target in a run's augmented.jsonl."""
    path = run / "augmented.jsonl" if run.is_dir() else run
    if not path.is_file():
        raise DataError("expected a run folder with augmented.jsonl (or the file itself)", path=run)
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                tokens = record["tokens"]
                for span in record["spans"]:
                    if span.get("role") == "target":
                        yield span["label"], " ".join(tokens[span["start"] : span["end"]]), span.get("attrs", {}).get("lu", "")
            except (ValueError, KeyError, TypeError) as exc:
                raise DataError(f"expected an augmented record with tokens and spans ({exc})", path=path, line=number) from None


def score_lus(seed_manifest: dict[str, Any], run: Path) -> dict[str, float]:
    """Precision and recall of the (frame, LU) pairs a run produced against the held-out LUs."""
    held = {(frame, lu) for frame, entry in seed_manifest.items() for lu in entry["held_out"]}
    seeds = {(frame, lu) for frame, entry in seed_manifest.items() for lu in entry["seed"]}
    produced = {(frame, lu_form(text, lu.rsplit(".", 1)[-1] if "." in lu else "v")) for frame, text, lu in _produced(run)}
    tp = len(produced & held)
    fp = len(produced - held - seeds)
    fn = len(held - produced)
    return {
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
    }


def run_statistics(seed_size: int, run: Path) -> dict[str, float]:
    """Table 4 counts: unique (frame, trigger) pairs, unique after lemmatization, annotations per lemma, size multiple."""
    records = list(_produced(run))
    pairs = {(frame, text.lower()) for frame, text, _ in records}
    lemmas = Counter((frame, lu_form(text, lu.rsplit(".", 1)[-1] if "." in lu else "v")) for frame, text, lu in records)
    return {
        "annotations": len(records),
        "unique_frame_trigger": len(pairs),
        "unique_frame_lemma": len(lemmas),
        "annotations_per_lemma": len(records) / len(lemmas) if lemmas else 0.0,
        "multiple": (seed_size + len(records)) / seed_size if seed_size else 0.0,
    }
