"""``spanaug predict``: apply a saved downstream model to a dataset file and write the predictions.

Training is the core's ``spanaug train --trainer NAME``; a model folder names the trainer
that made it in its ``config.json`` (key ``trainer``), so prediction needs only the
folder and the data. Predictions are written by the input dataset's own writer (same
format as the input) or by any dataset that can write (``--to jsonl``).
"""

from __future__ import annotations

from pathlib import Path

import click

from spanaug_core.cli import overwrite_option
from spanaug_core.console import note
from spanaug_core.files import atomic_output
from spanaug_shared.trained import trainer_of

@click.command("predict")
@click.option(
    "--model", "model_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="model folder saved by `spanaug train --trainer`",
)
@click.option("--dataset", required=True, help="format of the input (a dataset name, e.g. conll-ner)")
@click.option("--input", "input_path", required=True, type=click.Path(exists=True, path_type=Path), help="file to tag")
@click.option("--output", "--out", required=True, type=click.Path(path_type=Path), help="file to write")
@click.option("--to", help="format to write (a dataset that can write)  [default: --dataset, or jsonl if it cannot write]")
@click.option(
    "--set", "assignments", multiple=True, metavar="KEY=VALUE",
    help="dataset.OPTION=V (the input dataset) or trainer.OPTION=V (e.g. device)",
)
@overwrite_option
def predict_command(
    model_dir: Path, dataset: str, input_path: Path, output: Path, to: str | None, assignments: tuple[str, ...], overwrite: bool
) -> None:
    """Tag a dataset file with a trained model (`spanaug train --trainer ...`) and write the result."""
    from spanaug_core.cli import component_options
    from spanaug_core.errors import SpanaugError
    from spanaug_core.plugins import default_registry
    from spanaug_core.protocols import DatasetWriter

    sets = component_options(assignments, ("dataset", "trainer"))
    registry = default_registry()
    reader = registry.create("dataset", dataset, **sets["dataset"])
    trainer = registry.create("trainer", trainer_of(model_dir), **sets["trainer"])
    if to is None:
        writer = reader if isinstance(reader, DatasetWriter) else registry.create("dataset", "jsonl")
    else:
        writer = registry.create("dataset", to)
        if not isinstance(writer, DatasetWriter):
            raise SpanaugError(f"dataset '{to}' cannot write; pick one that can (e.g. jsonl)")
    with atomic_output(output, overwrite) as partial:
        count = writer.write(trainer.predict(model_dir, reader.read(input_path)), partial)
    note(f"tagged {count} examples with {model_dir} ({trainer.name}) into {output}")
