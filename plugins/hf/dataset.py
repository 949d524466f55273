"""The ``hf`` dataset: Hugging Face token-classification data read into entity spans and written back with its features.

A row holds a token column and a tag column (``tokens`` and ``ner_tags`` by default); the
tags are ClassLabel ids whose names are chunk tags (``B-PER``), or the tag strings
themselves. They are decoded as ``conll-ner`` decodes a tag column (scheme detected per
split, slips counted or refused, an entity type seen once among many warned of as a likely typo), and every other column is kept in ``meta["hf"]`` with
the split, the row and the features, so an example goes back as it came.

Writing builds the layout a user's training script loads with ``load_from_disk``: the
features of ``like`` (or of the examples read from a dataset), the same ClassLabel names
in the same order, and the same splits. An example from elsewhere (an augmented record)
goes to the split of its source when the source is written too, else to ``write_split``;
its other columns are empty (null), but for the id column, which takes its id.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from spanaug_core.errors import ConfigError, DataError, SpanaugError, one_line
from spanaug_core.settings import RunPreset
from spanaug_core.types import Example
from spanaug_hf.tables import Split, open_splits, quiet, save
from spanaug_shared.presets import ENTITY_PRESETS
from spanaug_shared.tagging import SCHEMES, Scheme, TagOptions, column_of, read_column, scheme_of, split_tag


def _label_names(feature: Any) -> list[str] | None:
    """The ClassLabel names of a sequence feature (``List(ClassLabel(...))``), else None."""
    inner = getattr(feature, "feature", None)
    return list(inner.names) if type(inner).__name__ == "ClassLabel" else None


def _dtype(feature: Any) -> str:
    """The value type of a sequence feature (``List(Value("string"))`` -> ``string``), else ``""``."""
    return str(getattr(getattr(feature, "feature", None), "dtype", ""))


def label_set(tags: Iterable[str]) -> list[str]:
    """ClassLabel names for tags that have none: O, then each type's prefixes (B, I; E, S in BIOES), types sorted."""
    seen = set(tags)
    kinds = sorted({tag.partition("-")[2] for tag in seen if tag != "O"})
    prefixes = ("B", "I", "E", "S") if any(tag[:1] in "ES" for tag in seen) else ("B", "I")
    return ["O", *(f"{p}-{kind}" for kind in kinds for p in prefixes)]


class HfDataset:
    """Hugging Face datasets (save_to_disk folder, parquet, JSON lines): a tag column as entities, written back with its features."""

    name: ClassVar[str] = "hf"
    presets: ClassVar[tuple[RunPreset, ...]] = ENTITY_PRESETS

    class Config(TagOptions):
        tokens: str = Field(default="tokens", min_length=1, description="column of the tokens (a list of strings per row)")
        tags: str = Field(default="ner_tags", min_length=1, description="column of the chunk tags: ClassLabel ids, or tag strings such as B-PER")
        id: str = Field(default="id", min_length=1, description="column of row ids, if the data has it (example ids; augmented rows get theirs)")
        split: str | None = Field(default=None, description="the split of a DatasetDict folder to read (default: every split, ids prefixed with the split)")
        labels: list[str] | None = Field(
            default=None,
            description="tag names of integer tags when the data carries no ClassLabel (JSON lines); on writing, "
            "the ClassLabel names, in order, when neither like nor the examples give them",
        )
        like: Path | None = Field(
            default=None,
            description="writer: the dataset (folder or file) whose features, columns and splits the output takes, "
            "e.g. the one a run augmented; its splits that get no example are copied unless copy_splits=false",
        )
        copy_splits: bool = Field(default=True, description="writer: copy the splits of like that get no example (so every split a script loads is there)")
        write_split: str = Field(default="train", min_length=1, description="writer: the split of examples whose split is unknown (augmented records whose source is not written)")
        format: Literal["disk", "parquet", "jsonl"] = Field(
            default="disk", description="writer: a save_to_disk folder, or one parquet or JSON lines file (one split)"
        )

    def __init__(self, config: Config) -> None:
        self.config = config
        self.warnings: Counter[str] = Counter()

    # -- reading ----------------------------------------------------------------------
    def _splits(self, path: Path | None) -> tuple[list[Split], bool]:
        if path is None:
            raise ConfigError("the hf dataset has no default data; pass --input FOLDER (save_to_disk) or a .parquet / .jsonl file")
        splits, named = open_splits(path)
        if self.config.split is not None:
            if not named:
                raise DataError(f"holds one dataset, not a DatasetDict; drop split={self.config.split}", path=path)
            chosen = [s for s in splits if s.name == self.config.split]
            if not chosen:
                raise DataError(f"has no split {self.config.split!r} (splits: {', '.join(str(s.name) for s in splits)})", path=path)
            return chosen, named
        return splits, named

    def count(self, path: str | Path | None) -> int:
        """Rows in the splits read (the progress bar's total)."""
        return sum(split.size for split in self._splits(path)[0])

    def read(self, path: str | Path | None) -> Iterator[Example]:
        """Stream the rows of the chosen splits as examples (entity spans, other columns in meta)."""
        splits, named = self._splits(path)
        prefix = named and len(splits) > 1
        for split in splits:
            yield from self._read_split(path, split, prefix)

    def _where(self, split: Split, where: str) -> str:
        """Where a row is, in words: ``split train, row 12`` or ``line 7``."""
        return f"split {split.name}, {where}" if split.name is not None else where

    def _read_split(self, path: Path, split: Split, prefix: bool) -> Iterator[Example]:
        config = self.config
        for column in (config.tokens, config.tags):
            if split.columns and column not in split.columns:
                option = "tokens" if column == config.tokens else "tags"
                holder = f"split {split.name} has" if split.name is not None else "has"
                raise DataError(f"{holder} no column {column!r} (columns: {', '.join(split.columns)}); name yours with {option}=COLUMN", path=path)
        names = _label_names(split.features[config.tags]) if split.features is not None else None
        names = names or config.labels
        scheme = self._scheme(path, split, names, config.scheme)
        features = split.features.to_dict() if split.features is not None else None
        for index, (where, row) in enumerate(split.rows()):
            yield self._example(path, split, self._where(split, where), index, row, names, scheme, features, prefix)

    def _tag_strings(self, path: Path, place: str, raw: Any, names: list[str] | None) -> list[str]:
        """A row's tags as strings (ClassLabel ids through their names), checked."""
        if not isinstance(raw, list):
            raise DataError(f"{place}: column {self.config.tags!r} holds {type(raw).__name__}; expected a list of tags", path=path)
        tags = []
        for position, tag in enumerate(raw):
            if isinstance(tag, bool) or not isinstance(tag, (int, str)):
                raise DataError(f"{place}: tag {position} is {tag!r}; expected a ClassLabel id or a tag string", path=path)
            if isinstance(tag, int):
                if names is None:
                    raise DataError(
                        f"{place}: column {self.config.tags!r} holds integer tags but no ClassLabel names; give them in order with labels=[O, B-PER, ...]",
                        path=path,
                    )
                if not 0 <= tag < len(names):
                    raise DataError(
                        f"{place}: tag {tag} (token {position}) is outside the {len(names)} ClassLabel names of {self.config.tags!r} (0-{len(names) - 1})",
                        path=path,
                    )
                tag = names[tag]
            try:
                split_tag(tag)
            except ValueError as exc:
                raise DataError(f"{place}: token {position}: {exc}", path=path) from None
            tags.append(tag)
        return tags

    def _scheme(self, path: Path, split: Split, names: list[str] | None, configured: str) -> Scheme:
        """The split's scheme (detected when ``auto``), from a first pass over its tag column that also
        warns of a likely typo among its entity types (``scheme_of``)."""

        def columns() -> Iterator[tuple[list[str], Callable[[int], str]]]:
            for where, row in split.rows():
                place = self._where(split, where)
                try:
                    tags = self._tag_strings(path, place, row.get(self.config.tags), names)
                except DataError:
                    return  # a bad tag: the reading pass reports it with its row
                yield tags, lambda at, place=place: f"{path}: {place}, token {at}"

        return scheme_of(columns(), configured)

    def _example(
        self, path: Path, split: Split, place: str, index: int, row: dict[str, Any],
        names: list[str] | None, scheme: Scheme, features: dict | None, prefix: bool,
    ) -> Example:
        config = self.config
        for column in (config.tokens, config.tags):
            if column not in row:
                raise DataError(f"{place}: no column {column!r}; name yours with {'tokens' if column == config.tokens else 'tags'}=COLUMN", path=path)
        tokens = row[config.tokens]
        if not isinstance(tokens, list) or not all(isinstance(token, str) for token in tokens):
            raise DataError(f"{place}: column {config.tokens!r} must hold a list of strings", path=path)
        tags = self._tag_strings(path, place, row[config.tags], names)
        if len(tags) != len(tokens):
            raise DataError(f"{place}: {len(tokens)} tokens but {len(tags)} tags", path=path)
        try:  # the core refuses an entity type with a control character in it
            spans, canonical = read_column(tags, scheme, config, self.warnings, lambda at, message: DataError(f"{place}: token {at}: {message}", path=path))
        except ValueError as exc:
            raise DataError(f"{place}: invalid sentence: {one_line(exc)}", path=path) from None
        others = {key: value for key, value in row.items() if key not in (config.tokens, config.tags)}
        hf: dict[str, Any] = {"row": index, "length": len(tokens), "columns": others}
        if split.name is not None:
            hf["split"] = split.name
        if features is not None:
            hf["features"] = features
        meta: dict[str, Any] = {"scheme": scheme, "hf": hf}
        if not canonical:
            meta["tags"] = tags
        ident = row.get(config.id)
        ident = str(index if ident is None else ident)
        try:
            return Example(id=f"{split.name}/{ident}" if prefix else ident, tokens=tuple(tokens), spans=spans, meta=meta)
        except ValueError as exc:
            raise DataError(f"{place}: invalid sentence: {one_line(exc)}", path=path) from None

    # -- writing ----------------------------------------------------------------------
    def write(self, examples: Iterable[Example], path: str | Path) -> int:
        """Write the examples with the features and splits of ``like`` (or of the data they were read from); returns how many."""
        config = self.config
        like = open_splits(config.like) if config.like is not None else None
        by_split = self._place(examples, like)
        every = [e for group in by_split.values() for e in group]
        if not every and like is None:
            return 0
        default = self._default_scheme(every, like)
        tags = {id(e): self._tags(e, default) for e in every}
        with quiet() as datasets:
            features = self._features(datasets, every, [t for column in tags.values() for t in column], like)
            tables = {name: self._table(datasets, group, tags, features(name), name) for name, group in by_split.items()}
            if like is not None and like[1] and config.copy_splits:
                copied = {split.name: split.data for split in like[0] if split.name not in tables and split.data is not None}
                order = [split.name for split in like[0]]
                tables = dict(sorted({**tables, **copied}.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order)))
        save(tables, path, config.format)
        return len(every)

    def _place(self, examples: Iterable[Example], like: tuple[list[Split], bool] | None) -> dict[str | None, list[Example]]:
        """The examples by the split they are written to (None: the output has no splits), in input order."""
        config = self.config
        by_split: dict[str | None, list[Example]] = {}
        split_of: dict[str, str | None] = {}  # the split of each example read from a dataset
        elsewhere: list[Example] = []  # the others, placed once every example is seen
        for example in examples:
            hf = example.meta.get("hf")
            if isinstance(hf, dict):
                split_of[example.id] = hf.get("split")
                by_split.setdefault(hf.get("split"), []).append(example)
            else:
                elsewhere.append(example)
        named = like[1] if like is not None else any(name is not None for name in by_split)
        if not named:
            return {None: [e for group in by_split.values() for e in group] + elsewhere} if by_split or elsewhere else {}
        if None in by_split:  # read from a single dataset, written beside splits
            by_split.setdefault(config.write_split, []).extend(by_split.pop(None))
        for example in elsewhere:
            split = split_of.get(str(example.meta.get("source_id"))) or config.write_split
            by_split.setdefault(split, []).append(example)
        return by_split

    def _default_scheme(self, examples: list[Example], like: tuple[list[Split], bool] | None) -> Scheme:
        """The scheme of examples not read from a Hugging Face dataset: that of those that were, else of like, else IOB2 (the Hub's usual)."""
        read = next((e.meta["scheme"] for e in examples if isinstance(e.meta.get("hf"), dict) and e.meta.get("scheme") in SCHEMES), None)
        if read is not None:
            return read
        if like is not None and self.config.tags in like[0][0].columns:
            split = like[0][0]
            names = _label_names(split.features[self.config.tags]) if split.features is not None else None
            return self._scheme(self.config.like, split, names or self.config.labels, "auto")
        return "iob2"

    def _tags(self, example: Example, default: Scheme) -> list[str]:
        """The tag strings an example is written with: its own scheme if read from a dataset ("same"), else ``default``."""
        scheme = self.config.write_scheme
        if scheme == "same" and not isinstance(example.meta.get("hf"), dict):
            scheme = default
        try:
            return column_of(example, scheme, default, self.warnings)
        except ValueError as exc:
            raise DataError(f"example {example.id}: {exc}") from None

    def _features(self, datasets: Any, examples: list[Example], tags: list[str], like: tuple[list[Split], bool] | None) -> Any:
        """A function from a split name to the features its table is written with."""
        if like is not None:
            known = {split.name: split.features for split in like[0] if split.features is not None}
            if not known:
                raise SpanaugError(f"{self.config.like} carries no features (JSON lines); give a save_to_disk folder or a parquet file as like")
            first = next(iter(known.values()))
            return lambda name: known.get(name, first)
        given = next((e.meta["hf"]["features"] for e in examples if isinstance(e.meta.get("hf"), dict) and e.meta["hf"].get("features")), None)
        if given is not None:
            features = datasets.Features.from_dict(given)
            return lambda name: features
        features = datasets.Features(
            {
                self.config.id: datasets.Value("string"),
                self.config.tokens: datasets.List(datasets.Value("string")),
                self.config.tags: datasets.List(datasets.ClassLabel(names=self.config.labels or label_set(tags))),
            }
        )
        return lambda name: features

    def _table(self, datasets: Any, examples: list[Example], tags: dict[int, list[str]], features: Any, split: str | None) -> Any:
        """One split's examples as a datasets.Dataset with ``features``."""
        config = self.config
        for column in (config.tokens, config.tags):
            if column not in features:
                where = config.like or "the examples' features"
                raise SpanaugError(f"{where} has no column {column!r} (columns: {', '.join(features)}); name it with tokens=/tags=")
        names = _label_names(features[config.tags])
        if names is None and _dtype(features[config.tags]).startswith("int"):
            names = config.labels  # integer tags without ClassLabel names: those given, if any
        index = {name: i for i, name in enumerate(names)} if names is not None else None
        columns: dict[str, list[Any]] = {name: [] for name in features}
        for example in examples:
            hf = example.meta.get("hf") if isinstance(example.meta.get("hf"), dict) else {}
            kept = hf.get("columns") if isinstance(hf.get("columns"), dict) else {}
            unchanged = hf.get("length") == len(example.tokens)
            for name, values in columns.items():
                if name == config.tokens:
                    values.append(list(example.tokens))
                elif name == config.tags:
                    values.append(self._encode(example, tags[id(example)], index, features[name]))
                elif name in kept and (unchanged or not isinstance(kept[name], list)):
                    values.append(kept[name])
                elif name == config.id and not kept and getattr(features[name], "dtype", None) == "string":
                    values.append(example.id)
                else:
                    values.append(None)
        try:
            return datasets.Dataset.from_dict(columns, features=features)
        except (ValueError, TypeError) as exc:
            raise SpanaugError(f"the examples of split {split} do not fit the features {'of ' + str(config.like) if config.like else 'they were read with'}: {one_line(exc)}") from None

    def _encode(self, example: Example, tags: list[str], index: dict[str, int] | None, feature: Any) -> list[Any]:
        """A tag column as the feature holds it: ClassLabel ids (a tag outside the names is an error) or the strings."""
        if index is None:
            if _dtype(feature) not in ("string", "large_string"):
                raise SpanaugError(f"column {self.config.tags!r} holds {feature} without ClassLabel names; give them with labels=[O, B-PER, ...]")
            return tags
        for tag in tags:
            if tag not in index:
                source = self.config.like or "the features the examples were read with"
                raise DataError(
                    f"example {example.id}: tag {tag!r} is not one of the ClassLabel names of {self.config.tags!r} in {source} "
                    f"({', '.join(index)}); write another scheme (write_scheme=...) or give a dataset whose names have it"
                )
        return [index[tag] for tag in tags]
