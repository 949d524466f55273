"""CLI commands of the FrameNet plugin: make the from-scratch seed, score a run against it.

``spanaug convert framenet-seed`` writes ``seed.jsonl`` (the examples to augment) and
``seed-lus.json`` (seed and held-out LUs per frame) into a folder, both or neither, and
replaces earlier ones only with ``--overwrite``;
``spanaug eval framenet-lus --seed FOLDER --run OUT/`` prints precision and recall of
the LUs the run found, and the run's statistics (Table 4 of Culkin et al.).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from spanaug_core.cli import overwrite_option

SEED_LUS = "seed-lus.json"
SEED_EXAMPLES = "seed.jsonl"


@click.command("framenet-seed")
@click.option("--input", "input_path", type=click.Path(path_type=Path), help="FrameNet release folder (default: NLTK's copy, else the embedded sample)")
@click.option("--output", "--out", required=True, type=click.Path(path_type=Path), help="folder to write seed.jsonl and seed-lus.json into")
@click.option("--frames", "n_frames", default=20, show_default=True, help="earliest-created frames to keep")
@click.option("--lus", "n_lus", default=3, show_default=True, help="earliest-created annotated LUs per frame")
@click.option("--annotations", "n_annotations", default=3, show_default=True, help="earliest annotations per LU")
@overwrite_option
def framenet_seed(input_path: Path | None, output: Path, n_frames: int, n_lus: int, n_annotations: int, overwrite: bool) -> None:
    """Write the FrameNet from-scratch seed and held-out LUs.

    The ablation is Culkin et al. 2021, §6.1. Both files are written aside and moved into
    the --output folder together; an existing seed.jsonl or seed-lus.json is refused unless
    --overwrite (other files in the folder stay).
    """
    from spanaug_framenet.ablation import select_seed

    from spanaug_core.console import note
    from spanaug_core.files import output_target, replace_files

    for name in (SEED_EXAMPLES, SEED_LUS):
        output_target(output / name, overwrite)  # refused (and the folder made) before FrameNet is read
    seed = select_seed(input_path, n_frames, n_lus, n_annotations)
    replace_files(output, {
        SEED_EXAMPLES: "".join(example.model_dump_json() + "\n" for example in seed.examples),
        SEED_LUS: json.dumps(seed.manifest(), indent=1, sort_keys=True) + "\n",
    })
    held = sum(len(lus) for lus in seed.held_out.values())
    note(f"wrote {len(seed.examples)} seed annotations over {len(seed.seed_lus)} frames ({held} held-out LUs) to {output}")


@click.command("framenet-lus")
@click.option("--seed", "seed_dir", required=True, type=click.Path(path_type=Path), metavar="FOLDER",
              help="the seed folder `spanaug convert framenet-seed` wrote (not a random seed)")
@click.option("--run", "run", required=True, type=click.Path(path_type=Path), help="run folder (augmented.jsonl) or the file itself")
@click.option("--json", "as_json", is_flag=True, help="print the numbers as JSON")
def framenet_lus(seed_dir: Path, run: Path, as_json: bool) -> None:
    """Precision/recall of the (frame, LU) pairs a run produced against the held-out LUs, and run statistics."""
    from spanaug_framenet.ablation import run_statistics, score_lus

    from spanaug_core.console import out_console
    from spanaug_core.errors import DataError

    manifest_path = seed_dir / SEED_LUS
    if not manifest_path.is_file():
        raise DataError(f"expected {SEED_LUS} written by `spanaug convert framenet-seed`", path=seed_dir)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    seed_size = sum(1 for line in (seed_dir / SEED_EXAMPLES).open(encoding="utf-8") if line.strip()) if (seed_dir / SEED_EXAMPLES).is_file() else 0
    numbers = {**score_lus(manifest, run), **run_statistics(seed_size, run)}
    if as_json:
        out_console.print_json(json.dumps(numbers))
        return
    for key, value in numbers.items():
        out_console.print(f"{key:24} {value:.3f}" if isinstance(value, float) else f"{key:24} {value}")
