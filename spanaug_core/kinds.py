"""The kinds of component, declared once: one row per kind.

A row names the kind, the protocol its components keep and what its hook registers, and,
for the kinds a run is made of, its section of the run config. Everything else follows
from the rows: the ``register_<kind>s`` hook a plugin implements (``hookspecs``), the
protocol the registry checks a class against (``plugins``), the run config's sections
(``config.RunConfig``: ``dataset``, ``decoder``, ``filters``, ``lexicon``, ``engine``...),
and the manifest's ``options`` entry, which keeps each section's options with their
defaults filled in so that ``--resume`` checks them (``run``). A new kind is a new row
(and its protocol).
"""

from __future__ import annotations

from dataclasses import dataclass

from spanaug_core.errors import SpanaugError
from spanaug_core.protocols import (
    Aligner,
    ConstrainedDecoder,
    ConstraintExpander,
    DatasetReader,
    Engine,
    Filter,
    Lexicon,
    Trainer,
)


@dataclass(frozen=True)
class Section:
    """How a run config names components of a kind.

    ``key`` is the setting (``decoder``, ``filters``); ``default`` the component a run uses
    when it names none (None: no component unless one is named); ``many``: a list, every
    one applied; ``resumed``: a resumed run must keep its options (an engine's may change:
    more workers), which the manifest therefore records.
    """

    key: str
    description: str
    default: str | None = None
    flag: str | None = None
    many: bool = False
    resumed: bool = True


@dataclass(frozen=True)
class Kind:
    """One kind of component: its name, its protocol, what its hook registers, its run config section."""

    name: str
    protocol: type
    registers: str
    section: Section | None = None

    @property
    def hook(self) -> str:
        """The hook a plugin implements to register components of this kind."""
        return f"register_{self.name}s"


KINDS: tuple[Kind, ...] = (
    Kind("dataset", DatasetReader, "dataset readers (and writers)", Section("dataset", "dataset reader", "framenet", "--dataset")),
    Kind("expander", ConstraintExpander, "constraint expanders", Section("expander", "constraint expander", "inflect", "--expander")),
    Kind("decoder", ConstrainedDecoder, "constrained decoders", Section("decoder", "constrained decoder", "vdba", "--decoder")),
    Kind("aligner", Aligner, "span aligners", Section("aligner", "span aligner", "bert-span", "--aligner")),
    Kind("filter", Filter, "filters of augmented records", Section("filters", "all must accept a record", many=True)),
    Kind(
        "lexicon",
        Lexicon,
        "lexicons: words a rewritten span could become, named in the decoder's prompt",
        Section(
            "lexicon",
            "offers words the rewritten span could become, which the prompt names (framenet: the frame's "
            "lexical units near the old word); none unless given or the dataset suggests one (docs/quality.md#the-prompt)",
            flag="--lexicon",
        ),
    ),
    Kind("trainer", Trainer, "downstream trainers"),
    Kind(
        "engine",
        Engine,
        "execution engines (where a run's pipeline runs: this process, a cluster)",
        Section("engine", "where the pipeline runs: local (this process) or ray (docs/scale.md)", "local", "--engine", resumed=False),
    ),
)

KIND: dict[str, Kind] = {kind.name: kind for kind in KINDS}

SECTIONS: tuple[tuple[str, Section], ...] = tuple((kind.name, kind.section) for kind in KINDS if kind.section is not None)
"""(kind, run config section) of every kind a run is made of, in table order."""


def kind_named(word: str) -> Kind:
    """The kind ``word`` names, singular or plural (``decoder``, ``decoders``)."""
    found = KIND.get(word) or KIND.get(word.removesuffix("s"))
    if found is None:
        raise SpanaugError(f"unknown component kind '{word}'; kinds: {', '.join(KIND)}")
    return found
