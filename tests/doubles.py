"""Test doubles for the pipeline: a decoder and an aligner whose behaviour is scripted.

``SynonymDecoder`` paraphrases by swapping words for synonyms from a table, honouring
avoid and include phrases like a real constrained decoder must; ``DiffAligner`` aligns a
span to the same position when the paraphrase kept the sentence length, scoring a changed
word higher than an unchanged one. Both record what they were asked, so tests can check
batching and constraints. ``LoggedDecoder`` (``logged``) is the synonym double that logs
to a file, fails or kills its process on cue, for the ray engine's fault tests. They are
registered by ``DoublesPlugin`` under the names ``synonym``, ``logged``, ``on-device`` and
``diff``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from spanaug_core import AlignerConfig, Alignment, AlignItem, Candidate, DecodeRequest, DecoderConfig
from spanaug_core.errors import DataError
from spanaug_core.hookspecs import hookimpl
from spanaug_core.text import contains_phrase, detokenize, tokenize

SYNONYMS = {
    "corroborate": ["confirm", "verify", "support", "back"],
    "attest": ["confirm", "confirms", "verify"],
    "confirm": ["verify"],
    "buy": ["purchase", "acquire"],
    "quickly": ["rapidly", "fast"],
}


class SynonymDecoder:
    """Scripted paraphraser: swap one word for a synonym that no avoid phrase bans."""

    name: ClassVar[str] = "synonym"

    class Config(DecoderConfig):
        pass

    def __init__(self, config: Config) -> None:
        self.config = config
        self.calls: list[list[DecodeRequest]] = []

    def decode(self, requests: Sequence[DecodeRequest], nbest: int) -> list[list[Candidate]]:
        self.calls.append(list(requests))
        out = []
        for req in requests:
            tokens = tokenize(req.text)
            cands = []
            for i, tok in enumerate(tokens):
                for syn in SYNONYMS.get(tok.lower(), []):
                    text = detokenize([*tokens[:i], syn, *tokens[i + 1 :]])
                    if any(contains_phrase(text, p) for p in req.constraints.avoid):
                        continue
                    if not all(contains_phrase(text, p) for p in req.constraints.include):
                        continue
                    cands.append(text)
            out.append(
                [
                    Candidate(text=t, tokens=tuple(tokenize(t)), score=-0.1 * (r + 1), scores={"logprob": -1.0 * (r + 1)})
                    for r, t in enumerate(cands[:nbest])
                ]
            )
        return out


class DiffAligner:
    """Scripted aligner: same position if the length is unchanged; a changed word scores 0.9, a kept one 0.6."""

    name: ClassVar[str] = "diff"

    class Config(AlignerConfig):
        threshold: float = 0.5

    def __init__(self, config: Config) -> None:
        self.config = config
        self.calls = 0

    def align(self, items: Sequence[AlignItem]) -> list[Alignment]:
        self.calls += 1
        out = []
        for item in items:
            s, e = item.source_span
            if len(item.target_tokens) != len(item.source_tokens):
                out.append(Alignment(span=None, score=0.0))
                continue
            changed = item.target_tokens[s:e] != item.source_tokens[s:e]
            score = 0.9 if changed else 0.6
            span = (s, e) if score >= self.config.threshold else None
            out.append(Alignment(span=span, score=score, candidates=((s, e, score),)))
        return out


class LoggedDecoder(SynonymDecoder):
    """The synonym double, appending every sentence it decodes to ``log`` (workers share the file).

    ``die_on``: a sentence with this text kills the worker process (the first ``die_times``
    times); ``fail_on``: a sentence with this text raises a DataError; ``delay_s``: seconds
    per sentence, as a model would take.
    """

    name = "logged"

    class Config(SynonymDecoder.Config):
        log: str = ""
        die_on: str = ""
        die_times: int = 1
        fail_on: str = ""
        delay_s: float = 0.0

    def decode(self, requests, nbest):  # type: ignore[no-untyped-def]
        cfg = self.config
        time.sleep(cfg.delay_s * len(requests))
        for req in requests:
            if cfg.log:
                with open(cfg.log, "a", encoding="utf-8") as fh:
                    fh.write(req.text + "\n")
            if cfg.fail_on and cfg.fail_on in req.text:
                raise DataError(f"cannot paraphrase {req.text!r}")
            if cfg.die_on and cfg.die_on in req.text:
                deaths = Path(cfg.log).with_suffix(".deaths")
                if not deaths.exists() or len(deaths.read_text()) < cfg.die_times:
                    with deaths.open("a") as fh:
                        fh.write("x")
                    os._exit(1)  # as the OOM killer would: no exception, no clean-up
        return super().decode(requests, nbest)


class OnDeviceDecoder(SynonymDecoder):
    """The synonym double with a ``device`` option, like the model decoders."""

    name = "on-device"

    class Config(SynonymDecoder.Config):
        device: str = "cpu"


class DoublesPlugin:
    """Registers the doubles, as a third-party plugin would."""

    @hookimpl
    def register_decoders(self, register):  # type: ignore[no-untyped-def]
        register(SynonymDecoder)
        register(LoggedDecoder)
        register(OnDeviceDecoder)

    @hookimpl
    def register_aligners(self, register):  # type: ignore[no-untyped-def]
        register(DiffAligner)


# Sentences the synonym table can paraphrase, with the target word's position; each has
# an argument span (its first token) to keep.
SENTENCES = [
    ("The panel will corroborate it .", 3),
    ("They buy bread quickly .", 1),
    ("We will confirm the date .", 2),
    ("Ann will buy it .", 2),
]


def before_decode_call(monkeypatch, n: int, act: Callable[[], None]) -> None:
    """Do ``act`` (Ctrl-C, a signal) as ``SynonymDecoder.decode`` is called for the ``n``-th time, and only then."""
    decode, calls = SynonymDecoder.decode, []

    def counted(self, requests, nbest):
        calls.append(len(requests))
        if len(calls) == n:
            act()
        return decode(self, requests, nbest)

    monkeypatch.setattr(SynonymDecoder, "decode", counted)


def ctrl_c() -> None:
    """What Ctrl-C does to the code it interrupts."""
    raise KeyboardInterrupt


def write_examples(path: Path, n: int) -> Path:
    """A jsonl input of ``n`` examples ``s0``, ``s1``... cycling through ``SENTENCES``."""
    with path.open("w") as fh:
        for i in range(n):
            text, pos = SENTENCES[i % len(SENTENCES)]
            spans = [{"start": pos, "end": pos + 1, "label": "F"}, {"start": 0, "end": 1, "label": "A", "role": "argument"}]
            fh.write(json.dumps({"id": f"s{i}", "tokens": text.split(), "spans": spans}) + "\n")
    return path
