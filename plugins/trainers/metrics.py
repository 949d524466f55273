"""Span precision, recall and F1: exact boundaries and label, micro-averaged, per label too.

Both trainers score *units*: NER's unit is an entity ``(start, end, label)``, which makes
the score seqeval's default (CoNLL-2003) span F1 on IOB2 tags; SRL's unit is a CoNLL-2005
argument, scored as ``srl-eval.pl`` does: a continuation piece ``C-X`` belongs to the
argument ``X`` before it, and the argument counts as correct only if its label and every
piece match. The predicate itself (``V``) is given, not predicted, so it is never scored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

from spanaug_trainers.bio import Triple

Unit = tuple[str, Hashable]  # (label, what must match exactly)
CONTINUATION = "C-"


def entity_units(spans: Iterable[Triple]) -> list[Unit]:
    """One unit per span: correct when start, end and label match."""
    return [(label, (start, end)) for start, end, label in spans]


def conll05_units(spans: Iterable[Triple]) -> list[Unit]:
    """One unit per argument, ``C-X`` pieces joined to the preceding ``X`` (srl-eval.pl).

    A ``C-X`` with no ``X`` before it stands alone under its own label, as in srl-eval.pl.
    """
    arguments: list[tuple[str, list[tuple[int, int]]]] = []
    for start, end, label in sorted(spans):
        base = label.removeprefix(CONTINUATION)
        owner = next((a for a in reversed(arguments) if a[0] == base), None) if label.startswith(CONTINUATION) else None
        if owner is not None:
            owner[1].append((start, end))
        else:
            arguments.append((label, [(start, end)]))
    return [(label, tuple(pieces)) for label, pieces in arguments]


def span_scores(gold: Sequence[Sequence[Unit]], predicted: Sequence[Sequence[Unit]]) -> dict[str, dict[str, float]]:
    """Scores over ``"all"`` and each label: precision, recall, f1 and the gold/predicted/correct counts.

    ``gold[i]`` and ``predicted[i]`` are the units of the same instance.
    """
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold instances but {len(predicted)} predicted")
    counts: dict[str, Counter[str]] = {"all": Counter()}
    for gold_units, pred_units in zip(gold, predicted):
        gold_set, pred_set = Counter(gold_units), Counter(pred_units)
        for bag, key in ((gold_set, "gold"), (pred_set, "predicted"), (gold_set & pred_set, "correct")):
            for (label, _), n in bag.items():
                for name in ("all", label):
                    counts.setdefault(name, Counter())[key] += n
    return {name: _prf(c) for name, c in counts.items()}


def _prf(c: Counter[str]) -> dict[str, float]:
    precision = c["correct"] / c["predicted"] if c["predicted"] else 0.0
    recall = c["correct"] / c["gold"] if c["gold"] else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1,
            "gold": float(c["gold"]), "predicted": float(c["predicted"]), "correct": float(c["correct"])}
