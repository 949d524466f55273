"""What a round's runners-up could add: new (frame, trigger) pairs the filters accept beyond the kept one.

Findings 8 and 16 say the records teach too few new triggers: the goal needs about 1.4 times as
many at 100% and 3 times at 50%. A round decodes an n-best list (beam 4, top-m 4) and keeps one
candidate; this asks whether the others carry other triggers worth keeping, which would give
more records per target at no extra decoding.

``run`` runs ``spanaug run`` with its arguments, and logs every round's ranked choices (the
candidates whose target and kept spans were found, best first) to ROUNDS: each choice's trigger
words, its alignment score, and the first filter that drops its record (None: every filter the
run names keeps it). The run itself is an ordinary run (the round keeps what it always keeps).

    python runners-up.py run ROUNDS.jsonl -- spanaug run arguments ...
    python runners-up.py count ROUNDS.jsonl

``count`` prints, per iteration and over the run, the rounds, those that keep a record, the new
triggers the kept records bring (lemmas other than the source's and the job's earlier ones), and
the new triggers every accepted choice brings, the kept one and its accepted runners-up. Each
counts a new (frame, trigger) pair for the source sentence.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def run(rounds: Path, argv: list[str]) -> None:
    from spanaug_core import cli
    from spanaug_core.choices import first_rejection, ranked_choices, record_of
    from spanaug_core.pipeline import Pipeline
    from spanaug_core.protocols import FilterContext

    advance = Pipeline._advance
    log = rounds.open("a", encoding="utf-8")

    def logged(self: Pipeline, attempt: Any) -> Any:
        job, example = attempt.job, attempt.run.example
        choices, _ = ranked_choices(attempt, self.settings)
        context = FilterContext(source=example, previous_texts=frozenset(attempt.run.seen))
        rows = []
        for choice in choices:
            record = record_of(job, example, choice, self.components)
            words = choice.candidate.tokens[choice.span[0] : choice.span[1]] if choice.span else []
            rows.append({"rank": choice.rank, "trigger": " ".join(words), "scores": choice.scores,
                         "rejected": first_rejection(self.filters, record, context)})
        target = example.spans[job.target] if job.target is not None else None
        log.write(json.dumps({"example": example.id, "target": job.target, "iteration": attempt.run.iteration,
                              "frame": target.label if target else None,
                              "source": target.text(example.tokens) if target else None, "choices": rows}) + "\n")
        log.flush()
        return advance(self, attempt)

    Pipeline._advance = logged  # type: ignore[method-assign]
    sys.argv = ["spanaug", *argv]
    cli.main()


def _lemmas(words: str) -> str:
    """A trigger as its words' lemmas ("turned" and "turns" are one trigger), case folded."""
    from lemminflect import getAllLemmas

    out = []
    for word in words.lower().split():
        found = sorted({lemma for lemmas in getAllLemmas(word).values() for lemma in lemmas})
        out.append(found[0] if found else word)
    return " ".join(out)


def count(rounds: Path) -> None:
    # Per iteration: rounds, rounds that keep a record, the new triggers the kept records bring,
    # and those all the accepted choices bring (the kept one and its accepted runners-up).
    per_iteration: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    kept_known: dict[tuple[str, int], set[str]] = {}
    all_known: dict[tuple[str, int], set[str]] = {}
    for line in rounds.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        key = (r["example"], r["target"])
        source = _lemmas(r["source"] or "")
        kept_seen = kept_known.setdefault(key, {source})
        all_seen = all_known.setdefault(key, {source})
        accepted = [_lemmas(c["trigger"]) for c in r["choices"] if c["rejected"] is None]
        row = per_iteration[r["iteration"]]
        row[0] += 1
        if accepted:  # the round keeps the first choice the filters accept (filter_candidates)
            row[1] += 1
            row[2] += accepted[0] not in kept_seen
            kept_seen.add(accepted[0])
            fresh = set(accepted) - all_seen
            row[3] += len(fresh)
            all_seen |= fresh
    print("iteration\trounds\trounds kept\tnew triggers kept\tnew triggers, every accepted choice")
    total = [0, 0, 0, 0]
    for it in sorted(per_iteration):
        print(it, *per_iteration[it], sep="\t")
        total = [a + b for a, b in zip(total, per_iteration[it])]
    print("all", *total, sep="\t")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "run" and "--" in sys.argv:
        run(Path(sys.argv[2]), sys.argv[sys.argv.index("--") + 1 :])
    elif len(sys.argv) == 3 and sys.argv[1] == "count":
        count(Path(sys.argv[2]))
    else:
        sys.exit(__doc__)
