"""The decoders plugin's command: ``spanaug decode``.

``decode`` reads plain text lines or JSONL lines ``{"text", "avoid", "include"}``
(positional sentences work too), expands avoid phrases with the ``inflect`` expander
unless ``--no-expand``, and writes one JSONL line per input with the n-best list, to
stdout or to ``--output`` whole or not at all (refused if it exists, unless ``--overwrite``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from spanaug_core.cli import overwrite_option
from spanaug_core.console import note, progress_callback
from spanaug_core.errors import DataError
from spanaug_core.files import atomic_output, output_target, read_text
from spanaug_core.protocols import DecoderConfig
from spanaug_core.types import Candidate, Constraints, DecodeRequest

# --beam sets the decoder's beam_size, so its help and default are the setting's own, as
# `spanaug run --beam` shows them (the decoders module is not imported here: every CLI call
# would load it).
BEAM = DecoderConfig.model_fields["beam_size"]


def add_commands(cli: click.Group) -> None:
    """Attach the command to the ``spanaug`` group."""
    cli.add_command(decode_command)


@click.command("decode")
@click.argument("sentences", nargs=-1)
@click.option("--model", "model", help="model preset, local folder or GGUF file, or hub id  [default: the decoder's]")
@click.option("--decoder", "decoder_name", default="vdba", show_default=True, help="registered decoder")
@click.option("--avoid", multiple=True, metavar="PHRASE", help="phrase the paraphrase must not contain (repeatable)")
@click.option("--include", multiple=True, metavar="PHRASE", help="phrase the paraphrase must contain (repeatable)")
@click.option("--beam", "beam", type=int, default=None, help=f"{BEAM.description}  [default: {BEAM.default}]")
@click.option("--nbest", type=int, default=5, show_default=True, help="candidates per input")
@click.option(
    "--input", "input_path", type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help='a sentence a line, or JSONL lines {"text": ..., "avoid": [...], "include": [...]} (avoid and include optional)',
)
@click.option("--output", "--out", "output", type=click.Path(path_type=Path, dir_okay=False), help="JSONL file (default: stdout)")
@overwrite_option
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
    overwrite: bool,
) -> None:
    """Paraphrase sentences under lexical constraints; one JSONL line per input."""
    from spanaug_core.cli import options_of
    from spanaug_core.plugins import default_registry

    registry = default_registry()
    rows = _read_inputs(sentences, input_path, avoid, include)
    if not rows:
        raise click.UsageError("give sentences as arguments or --input FILE")
    if output is not None:
        output_target(output, overwrite)  # refused before the model loads, not after the decoding
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
    lines = (_result_line(r, cands) for r, cands in zip(rows, results, strict=True))
    if output is None:
        sys.stdout.writelines(lines)
    else:
        with atomic_output(output, overwrite) as partial, partial.open("w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line)
        note(f"wrote {len(rows)} lines to {output}")
    stats = getattr(decoder, "stats", {})
    if stats.get("hypotheses"):
        note(f"word-level check removed {stats['caught']} of {stats['hypotheses']} hypotheses the token level let through")


def _result_line(row: dict[str, Any], candidates: list[Candidate]) -> str:
    """One input's output line: the source, its constraints and its n-best list."""
    nbest = [
        {"text": c.text, "tokens": list(c.tokens), "logprob": c.scores.get("logprob"), "score": c.score, "prob": c.scores.get("prob"),
         "met": list(c.met)}
        for c in candidates
    ]
    return json.dumps({"source": row["text"], "avoid": list(row["avoid"]), "include": list(row["include"]), "nbest": nbest},
                      ensure_ascii=False) + "\n"


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
            for key in ("avoid", "include"):
                # A bare string would be read as a list of its letters, each one a constraint.
                phrases = obj.get(key, [])
                if not isinstance(phrases, list) or not all(isinstance(p, str) for p in phrases):
                    raise DataError(f'"{key}" must be a list of phrases, e.g. ["the car"]', path, i)
            rows.append({"text": obj["text"], "avoid": [*avoid, *obj.get("avoid", [])], "include": [*include, *obj.get("include", [])]})
        else:
            rows.append({"text": line.strip(), "avoid": list(avoid), "include": list(include)})
    return rows
