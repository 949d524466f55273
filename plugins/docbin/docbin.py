"""The ``spacy`` dataset: spaCy DocBin files (``.spacy``, what ``spacy train`` reads) as span examples and back.

``doc.ents`` become spans without a group, each span of ``doc.spans[key]`` a span whose
group is ``key`` (spancat's ``sc``...); both are entities (kept) or, with
``entities=rewrite``, the spans to paraphrase. A doc that marks its sentences (a parse,
sentence starts: ``spacy convert`` makes whole documents) is read one sentence at a time,
since a paraphraser rewrites sentences; its sentences, written back in a row and
unchanged, make the one doc again.

The tokens are the doc's: a doc read and written back keeps its words and whitespace,
and whatever else it carried (tags, POS, morphology, lemmas, the parse or sentence
starts, cats, tokens whose entity annotation is missing) through ``meta["spacy"]``.
Whitespace tokens (``"\\n"``, a double space) are no spanaug tokens: they wait in meta and
come back in place. A doc written from elsewhere (an augmented record) takes the
example's tokens as they are, spaced as spanaug detokenizes them; no tokenizer runs. It
follows its source doc where that is written too: no entity annotation if the source had
none (a spancat corpus), one marked sentence if the source marks sentences.

A DocBin records the layout version of the spaCy that wrote it (spaCy 2 wrote none), and
its token attributes are ids into that spaCy's symbol table: a file from another major
version is refused with what was expected rather than read wrong.
"""

from __future__ import annotations

import itertools
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from spanaug_core.errors import ConfigError, DataError, SpanaugError, one_line
from spanaug_core.settings import RunPreset
from spanaug_core.text import token_offsets
from spanaug_core.types import Example, Span
from spanaug_shared.presets import ENTITY_PRESETS
from spanaug_shared.tagging import EntityOptions, encode


# Token annotations a doc may carry, as Doc(...) takes them: (has_annotation name, argument, token value).
ANNOTATIONS = (
    ("TAG", "tags", lambda t: t.tag_),
    ("POS", "pos", lambda t: t.pos_),
    ("MORPH", "morphs", lambda t: str(t.morph)),
    ("LEMMA", "lemmas", lambda t: t.lemma_),
)


def _spacy() -> Any:
    try:
        import spacy
    except ImportError:
        raise SpanaugError("the spacy dataset needs spaCy: pip install 'spanaug[pos]'") from None
    return spacy


# What spaCy raises on a DocBin whose tables do not agree (a length list, a string missing from
# its string table): only a file spaCy did not write, or one damaged since, has them.
_DAMAGED = (ValueError, KeyError, IndexError, TypeError)


def load_docbin(path: Path) -> Any:
    """A spaCy DocBin read from ``path``; an error that says so for anything this spaCy cannot read."""
    spacy = _spacy()
    import srsly
    from spacy.tokens import DocBin

    expected = f"expected a .spacy file written by spaCy {spacy.__version__.split('.')[0]} (DocBin.to_disk, spacy convert)"
    data = path.read_bytes()
    try:
        message = srsly.msgpack_loads(zlib.decompress(data))
    except (zlib.error, ValueError, TypeError) as exc:
        raise DataError(f"not a DocBin ({one_line(exc)}); {expected}", path=path) from None
    if not isinstance(message, dict) or not {"attrs", "tokens", "spaces", "lengths", "strings"} <= set(message):
        raise DataError(f"not a DocBin (no token table); {expected}", path=path)
    ours = DocBin().version
    if message.get("version") != ours:
        written = f"layout version {message['version']}" if "version" in message else "no layout version, as spaCy 2 wrote"
        raise DataError(
            f"a DocBin from another spaCy major version ({written}; spaCy {spacy.__version__} reads version {ours}); "
            f"{expected}: convert it again with this version",
            path=path,
        )
    try:
        return DocBin().from_bytes(data)
    except _DAMAGED as exc:
        raise DataError(f"a damaged DocBin ({one_line(exc)}); {expected}", path=path) from None


def docs_of(path: Path, vocab: Any) -> Iterator[Any]:
    """The docs of the DocBin at ``path``; one it cannot rebuild is a ``DataError`` naming its number."""
    docs = load_docbin(path).get_docs(vocab)
    for number in itertools.count():
        try:
            doc = next(docs)
        except StopIteration:
            return
        except _DAMAGED as exc:
            raise DataError(f"doc {number}: a damaged DocBin ({one_line(exc)})", path=path) from None
        yield doc


def spaces_of(tokens: tuple[str, ...]) -> list[bool]:
    """Whether a space follows each token in the sentence spanaug detokenizes them into."""
    offsets = token_offsets(tokens)
    return [offsets[i + 1][0] > offsets[i][1] for i in range(len(tokens) - 1)] + [False]


def _runs(indices: Iterable[int]) -> list[list[int]]:
    """``[0, 1, 2, 5]`` -> ``[[0, 3], [5, 6]]`` (start, end exclusive)."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and runs[-1][1] == i:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    return runs


@dataclass
class _Sources:
    """What the writer saw of the docs read from a DocBin, so that their records match them."""

    unannotated: set[str] = field(default_factory=set)  # no entity annotation at all: nor has a record
    sentences: set[str] = field(default_factory=set)  # sentences marked: a record is marked one sentence

    def learn(self, ident: str, kept: dict[str, Any], entities: bool, length: int) -> None:
        if not entities and kept.get("missing") == [[0, length]]:
            self.unannotated.add(ident)
        if "sent_starts" in kept or "heads" in kept:
            self.sentences.add(ident)


class SpacyDataset:
    """spaCy DocBin (.spacy) files: doc.ents and doc.spans groups as spans, written back so `spacy train` reads them."""

    name: ClassVar[str] = "spacy"
    presets: ClassVar[tuple[RunPreset, ...]] = ENTITY_PRESETS

    class Config(EntityOptions):
        groups: list[str] | None = Field(
            default=None, description="span groups (doc.spans keys) to read besides doc.ents (default: all; [] for none)"
        )
        unit: Literal["sentence", "doc"] = Field(
            default="sentence",
            description="sentence: one example per sentence of a doc that marks them (a parse or sentence starts), "
            "written back as one doc; doc: one example per doc (a paraphraser rewrites sentences, not documents)",
        )

    def __init__(self, config: Config) -> None:
        self.config = config
        self.warnings: Counter[str] = Counter()

    # -- reading ----------------------------------------------------------------------
    def _files(self, path: Path | None) -> list[tuple[Path, str]]:
        """The .spacy files at ``path`` (a file, or a folder searched as spacy train does) with their names for ids."""
        if path is None:
            raise ConfigError("the spacy dataset has no default data; pass --input FILE.spacy (or a folder of them)")
        path = Path(path)
        if path.is_dir():
            files = sorted(path.rglob("*.spacy"))
            if not files:
                raise DataError("holds no .spacy file; expected a DocBin file or a folder of them", path=path)
            return [(file, str(file.relative_to(path))) for file in files]
        if not path.is_file():
            raise DataError("no such file or folder; expected a .spacy DocBin file or a folder of them", path=path)
        return [(path, path.name)]

    def count(self, path: str | Path | None) -> int | None:
        """Docs in the files, when each is one example (the progress bar's total)."""
        if self.config.unit == "sentence":
            return None  # counting sentences would read every doc twice
        return sum(len(load_docbin(file)) for file, _ in self._files(path))

    def read(self, path: str | Path | None) -> Iterator[Example]:
        """Stream the docs of the file(s), or their sentences, as examples."""
        files = self._files(path)
        _spacy()
        from spacy.vocab import Vocab

        vocab = Vocab()
        for file, name in files:
            for number, doc in enumerate(docs_of(file, vocab)):
                marked = doc.has_annotation("SENT_START") or doc.has_annotation("DEP")
                sentences = [(s.start, s.end) for s in doc.sents] if self.config.unit == "sentence" and marked else [(0, len(doc))]
                for k, (start, end) in enumerate(sentences):
                    ident = f"{name}#{number}" if len(sentences) == 1 else f"{name}#{number}.{k}"
                    part = (f"{name}#{number}", k, len(sentences))
                    yield self._example(file, ident, doc, start, end, part)

    def _example(self, file: Path, ident: str, doc: Any, start: int, end: int, part: tuple[str, int, int]) -> Example:
        """The example of ``doc[start:end]`` (the doc, or one of its ``part[2]`` sentences)."""
        tokens = doc[start:end]
        words = [token.text for token in tokens]
        keep = [i for i, word in enumerate(words) if not word.isspace()]
        position = {start + old: new for new, old in enumerate(keep)}
        spans = []
        wanted = [(None, list(doc.ents))] + [
            (key, list(group)) for key, group in doc.spans.items() if self.config.groups is None or key in self.config.groups
        ]
        for key, group in wanted:
            for span in group:
                if span.end <= start or span.start >= end:
                    continue
                if span.start < start or span.end > end:
                    if span.start >= start:  # counted once: in the sentence where it starts
                        self.warnings["span across a sentence boundary not read"] += 1
                    continue
                inside = [position[i] for i in range(span.start, span.end) if i in position]
                if not inside:  # a span of whitespace alone has nothing to keep or rewrite
                    continue
                try:  # the core refuses a label with a control character in it
                    spans.append(Span(start=inside[0], end=inside[-1] + 1, label=span.label_, role=self.config.role, group=key))
                except ValueError as exc:
                    raise DataError(f"doc {ident.rpartition('#')[2]}: {one_line(exc)}", path=file) from None
        meta: dict[str, Any] = {"spaces": [bool(token.whitespace_) for token in tokens]}
        if len(keep) < len(words):
            meta["words"] = words
        for attribute, argument, value in ANNOTATIONS:
            if doc.has_annotation(attribute):
                meta[argument] = [value(token) for token in tokens]
        if doc.has_annotation("DEP"):
            meta["heads"] = [token.head.i - start for token in tokens]
            meta["deps"] = [token.dep_ for token in tokens]
        elif doc.has_annotation("SENT_START"):
            meta["sent_starts"] = [token.is_sent_start for token in tokens]
        missing = _runs(token.i - start for token in tokens if token.ent_iob == 0)
        if missing:
            meta["missing"] = missing
        if doc.cats and part[1] == 0:
            meta["cats"] = dict(doc.cats)
        if part[2] > 1:
            meta["part"] = list(part)
        try:
            return Example(id=ident, tokens=tuple(words[i] for i in keep), spans=tuple(spans), meta={"spacy": meta})
        except ValueError as exc:
            raise DataError(f"doc {ident.rpartition('#')[2]}: {one_line(exc)}; spanaug tokens hold no whitespace", path=file) from None

    # -- writing ----------------------------------------------------------------------
    def write(self, examples: Iterable[Example], path: str | Path) -> int:
        """Write the examples as one DocBin file, the sentences read from one doc as that doc again; returns how many."""
        _spacy()
        from spacy.tokens import Doc, DocBin
        from spacy.vocab import Vocab

        vocab = Vocab()
        docbin = DocBin(store_user_data=False)
        written = _Sources()
        parts: list[Example] = []  # the sentences of one doc so far, in order
        count = 0

        def flush() -> None:
            for example in parts:
                docbin.add(self._doc(vocab, example, written))
            parts.clear()

        for example in examples:
            count += 1
            part = self._part(example)
            if parts and (part is None or part[0] != self._part(parts[0])[0] or part[1] != len(parts)):
                flush()  # the doc's sentences do not follow each other: each is a doc of its own
            if part is None or part[1] != len(parts):
                docbin.add(self._doc(vocab, example, written))
                continue
            parts.append(example)
            if len(parts) == part[2]:
                whole = Doc.from_docs([self._doc(vocab, e, written) for e in parts], ensure_whitespace=False)
                cats = parts[0].meta["spacy"].get("cats")
                if cats:
                    whole.cats = dict(cats)
                docbin.add(whole)
                parts.clear()
        flush()
        if count:
            docbin.to_disk(path)
        return count

    def _part(self, example: Example) -> tuple[str, int, int] | None:
        """(doc, sentence, sentences) of an unchanged sentence read from a doc of several, else None."""
        meta = example.meta.get("spacy")
        if not isinstance(meta, dict) or not isinstance(meta.get("part"), list) or not self._unchanged(meta, example.tokens):
            return None
        doc, k, n = meta["part"]
        return str(doc), int(k), int(n)

    def _doc(self, vocab: Any, example: Example, written: _Sources) -> Any:
        from spacy.tokens import Doc
        from spacy.tokens import Span as SpacySpan

        meta = example.meta.get("spacy")
        kept: dict[str, Any] = meta if isinstance(meta, dict) and self._unchanged(meta, example.tokens) else {}
        words = kept.get("words") or list(example.tokens)
        keep = [i for i, word in enumerate(words) if not word.isspace()]
        spaces = kept.get("spaces") or spaces_of(example.tokens)
        entities = [(keep[s.start], keep[s.end - 1] + 1, s.label) for s in example.spans if s.group is None]
        try:
            iob: list[str | None] = list(encode(entities, len(words), "iob2"))
        except ValueError as exc:
            overlap = str(exc).split(";")[0]  # "entities overlap at token N"
            raise DataError(f"example {example.id}: {overlap}; doc.ents holds one entity per token (give the others a group to write them to doc.spans)") from None
        missing = kept.get("missing", [])
        source = str(example.meta.get("source_id"))
        if not kept and not entities and source in written.unannotated:
            missing = [[0, len(words)]]
        for start, end in missing:
            iob[start:end] = [tag if tag != "O" else None for tag in iob[start:end]]
        annotations = {argument: kept[argument] for argument in ("tags", "pos", "morphs", "lemmas", "heads", "deps", "sent_starts") if argument in kept}
        if kept:
            written.learn(example.id, kept, bool(entities), len(words))
        elif source in written.sentences:
            annotations["sent_starts"] = [True] + [False] * (len(words) - 1)  # a record is one sentence
        doc = Doc(vocab, words=words, spaces=spaces, ents=iob, **annotations)
        groups: dict[str, list[Any]] = {}
        for s in example.spans:
            if s.group is not None:
                groups.setdefault(s.group, []).append(SpacySpan(doc, keep[s.start], keep[s.end - 1] + 1, label=s.label))
        for key, spans in groups.items():
            doc.spans[key] = spans
        if kept.get("cats") and "part" not in kept:
            doc.cats = dict(kept["cats"])
        return doc

    @staticmethod
    def _unchanged(meta: dict[str, Any], tokens: tuple[str, ...]) -> bool:
        """Whether the doc kept in meta still has the example's tokens (an augmented record has none of it)."""
        words = meta.get("words")
        if isinstance(words, list):
            return [w for w in words if not w.isspace()] == list(tokens)
        spaces = meta.get("spaces")
        return isinstance(spaces, list) and len(spaces) == len(tokens)
