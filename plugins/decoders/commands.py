"""The decoders plugin's command: ``spanaug decode``.

``decode`` reads plain text lines or JSONL lines ``{"text", "avoid", "include"}``
(positional sentences work too), expands avoid phrases with the ``inflect`` expander
unless ``--no-expand``, and writes one JSONL line per input with the n-best list.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from spanaug_core.console import note, progress_callback
from spanaug_core.errors import DataError
from spanaug_core.files import read_text, replace_text


def add_commands(cli: click.Group) -> None:
    """Attach the command to the ``spanaug`` group."""
    cli.add_command(decode_command)


@click.command("decode")
@click.argument("sentences", nargs=-1)
@click.option("--model", "model", help="model preset, local folder or GGUF file (default: the decoder's)")
@click.option("--decoder", "decoder_name", default="vdba", show_default=True, help="registered decoder")
@click.option("--avoid", multiple=True, metavar="PHRASE", help="phrase the paraphrase must not contain (repeatable)")
@click.option("--include", multiple=True, metavar="PHRASE", help="phrase the paraphrase must contain (repeatable)")
@click.option("--beam", "beam", type=int, default=None, help="beam width")
@click.option("--nbest", type=int, default=5, show_default=True, help="candidates per input")
@click.option("--input", "input_path", type=click.Path(path_type=Path, exists=True, dir_okay=False), help="text or JSONL file")
@click.option("--output", "output", type=click.Path(path_type=Path, dir_okay=False), help="JSONL file (default: stdout)")
@click.option("--no-expand", is_flag=True, help="use avoid phrases as given (no inflections or case variants)")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="a decoder option, e.g. --set dtype=float32")
def decode_command(
    sentences: tuple[str, ...],
    model: str | None,
    decoder_name: str,
    avoid: tuple[str, ...],
    include: tuple[str, ...],
    beam: int | None,
    nbest: int,
    input_path: Path | None,
    output: Path | None,
    no_expand: bool,
    sets: tuple[str, ...],
) -> None:
    """Paraphrase sentences under lexical constraints; one JSONL line per input."""
    from spanaug_core.cli import options_of
    from spanaug_core.plugins import default_registry
    from spanaug_core.types import Constraints, DecodeRequest

    registry = default_registry()
    rows = _read_inputs(sentences, input_path, avoid, include)
    if not rows:
        raise click.UsageError("give sentences as arguments or --input FILE")
    if not no_expand:
        expander = registry.create("expander", "inflect")
        rows = [{**r, "avoid": _expand(expander, r["avoid"])} for r in rows]
    options: dict[str, Any] = options_of("decoder", sets)
    if model is not None:
        options["model"] = model
    if beam is not None:
        options["beam_size"] = beam
    decoder = registry.create("decoder", decoder_name, **options)
    requests = [DecodeRequest(text=r["text"], constraints=Constraints(avoid=tuple(r["avoid"]), include=tuple(r["include"]))) for r in rows]
    with progress_callback(unit="sentences") as progress:
        decoder.progress = progress
        results = decoder.decode(requests, nbest)
    lines = [
        json.dumps(
            {
                "source": r["text"],
                "avoid": list(r["avoid"]),
                "include": list(r["include"]),
                "nbest": [
                    {"text": c.text, "tokens": list(c.tokens), "logprob": c.scores.get("logprob"), "score": c.score,
                     "prob": c.scores.get("prob"), "met": list(c.met)}
                    for c in cands
                ],
            },
            ensure_ascii=False,
        )
        for r, cands in zip(rows, results, strict=True)
    ]
    if output is None:
        sys.stdout.write("".join(line + "\n" for line in lines))
    else:
        replace_text(output, "".join(line + "\n" for line in lines))
        note(f"wrote {len(lines)} lines to {output}")
    stats = getattr(decoder, "stats", {})
    if stats.get("hypotheses"):
        note(f"word-level check removed {stats['caught']} of {stats['hypotheses']} hypotheses the token level let through")


def _expand(expander: Any, phrases: list[str]) -> list[str]:
    out: list[str] = []
    for phrase in phrases:
        out.extend(f for f in expander.expand(phrase) if f not in out)
    return out


def _read_inputs(sentences: tuple[str, ...], path: Path | None, avoid: tuple[str, ...], include: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rows ``{"text", "avoid", "include"}``; command-line phrases apply to every row."""
    rows = [{"text": s, "avoid": list(avoid), "include": list(include)} for s in sentences]
    if path is None:
        return rows
    for i, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"invalid JSON ({exc.msg})", path, i) from None
            if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
                raise DataError('expected an object with a "text" string', path, i)
            extra = set(obj) - {"text", "avoid", "include"}
            if extra:
                raise DataError(f"unknown keys {sorted(extra)} (expected text, avoid, include)", path, i)
            rows.append({"text": obj["text"], "avoid": [*avoid, *obj.get("avoid", [])], "include": [*include, *obj.get("include", [])]})
        else:
            rows.append({"text": line.strip(), "avoid": list(avoid), "include": list(include)})
    return rows
