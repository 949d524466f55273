"""Hugging Face ``datasets`` data on disk, as splits of rows: what the ``hf`` dataset reads and writes.

Three layouts hold the same rows: a ``save_to_disk`` folder (one Dataset, or a DatasetDict
whose sub-folders are its splits), a parquet file (its features ride in the schema's
metadata) and a JSON lines file (no features: integer tags need their names given).
``open_splits`` gives each split's name, features, columns and rows, read lazily and
memory-mapped where the layout allows; ``save`` writes a split layout back. Nothing here
prints: the progress bars ``datasets`` draws are switched off while it works.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spanaug_core.errors import DataError, SpanaugError
from spanaug_core.files import read_lines
from spanaug_shared.jsonlines import objects

JSON_SUFFIXES = (".jsonl", ".json")
EXPECTED = "expected a folder written by save_to_disk, a .parquet file or a JSON lines file (.jsonl, .json)"


def datasets_module() -> Any:
    """The ``datasets`` package, or an error that names the extra to install."""
    try:
        import datasets
    except ImportError:
        raise SpanaugError("the hf dataset needs the datasets package: pip install 'spanaug[datasets]'") from None
    return datasets


@contextmanager
def quiet() -> Iterator[Any]:
    """``datasets`` with its progress bars off (library code never prints), restored afterwards."""
    datasets = datasets_module()
    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield datasets
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


@dataclass(frozen=True)
class Split:
    """One split of the input: ``name`` None for a single dataset or file; ``features`` None for JSON lines.

    ``rows()`` yields ``(where, row)``: where the row is, in words for errors ("row 12",
    "line 7"), and the row as a dict of plain Python values.
    """

    name: str | None
    features: Any
    columns: tuple[str, ...]
    size: int
    rows: Callable[[], Iterator[tuple[str, dict[str, Any]]]]
    data: Any = None  # the datasets.Dataset behind a save_to_disk split (to copy it whole)


def is_datasets_folder(path: Path) -> bool:
    return (path / "dataset_dict.json").is_file() or (path / "state.json").is_file()


def open_splits(path: Path) -> tuple[list[Split], bool]:
    """The splits at ``path`` and whether it holds several (a DatasetDict folder)."""
    path = Path(path)
    if path.is_dir():
        if not is_datasets_folder(path):
            raise DataError(f"not a datasets folder (no dataset_dict.json or state.json); {EXPECTED}", path=path)
        with quiet() as datasets:
            loaded = datasets.load_from_disk(str(path))
        if isinstance(loaded, datasets.DatasetDict):
            return [_table(name, table) for name, table in loaded.items()], True
        return [_table(None, loaded)], False
    if not path.is_file():
        raise DataError(f"no such file or folder; {EXPECTED}", path=path)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return [_parquet(path)], False
    if suffix in JSON_SUFFIXES:
        return [_json_lines(path)], False
    raise DataError(f"unknown layout {suffix or '(no suffix)'}; {EXPECTED}", path=path)


def _table(name: str | None, table: Any) -> Split:
    def rows() -> Iterator[tuple[str, dict[str, Any]]]:
        index = 0
        for batch in table.iter(batch_size=1000):
            for values in zip(*batch.values(), strict=True):
                yield f"row {index}", dict(zip(batch.keys(), values, strict=True))
                index += 1

    return Split(name, table.features, tuple(table.column_names), len(table), rows, table)


def _parquet(path: Path) -> Split:
    import pyarrow.parquet as pq

    datasets = datasets_module()
    try:
        handle = pq.ParquetFile(path)
    except (OSError, ValueError) as exc:
        raise DataError(f"not a readable parquet file ({exc})", path=path) from None
    features = datasets.Features.from_arrow_schema(handle.schema_arrow)

    def rows() -> Iterator[tuple[str, dict[str, Any]]]:
        index = 0
        for batch in pq.ParquetFile(path).iter_batches(batch_size=1000):
            for row in batch.to_pylist():
                yield f"row {index}", row
                index += 1

    return Split(None, features, tuple(handle.schema_arrow.names), handle.metadata.num_rows, rows)


def _json_lines(path: Path) -> Split:
    first = next(objects(path), None)
    columns = tuple(first[1]) if first is not None and isinstance(first[1], dict) else ()
    size = sum(1 for _, line in read_lines(path) if line.strip())

    def rows() -> Iterator[tuple[str, dict[str, Any]]]:
        for lineno, row in objects(path):
            if not isinstance(row, dict):
                raise DataError(f"expected a JSON object (a row), got {type(row).__name__}", path, lineno)
            yield f"line {lineno}", row

    return Split(None, None, columns, size, rows)


def save(tables: dict[str | None, Any], path: Path, layout: str) -> None:
    """Write datasets.Dataset ``tables`` to ``path``: a save_to_disk folder (a DatasetDict when
    the keys are split names), or one parquet or JSON lines file (one table only)."""
    with quiet() as datasets:
        if layout == "disk":
            if None in tables:
                tables[None].save_to_disk(str(path))
            else:
                datasets.DatasetDict(tables).save_to_disk(str(path))
            return
        if len(tables) != 1:
            names = ", ".join(str(name) for name in tables)
            raise SpanaugError(f"a {layout} file holds one split, but the examples go to {len(tables)} ({names}): write format=disk, or one split at a time")
        (table,) = tables.values()
        if layout == "parquet":
            table.to_parquet(str(path))
        else:
            table.to_json(str(path), lines=True, force_ascii=False)
