"""spanaug: grow span-labeled datasets by iterative constrained paraphrasing and span alignment.

The core is small and imports nothing heavy: the data model (:mod:`types`), the component
protocols, the plugin registry, the run configuration, the iterative pipeline and what it
yields (records, and ``Rejection``: what a filter dropped, why a span stopped). Models,
datasets and aligners live in plugins.
"""

from spanaug_core.errors import ConfigError, DataError, SpanaugError, UnknownComponentError
from spanaug_core.outcomes import Rejection
from spanaug_core.plugins import Registry, build, create, default_registry
from spanaug_core.protocols import (
    AlignerConfig,
    ComponentConfig,
    DecoderConfig,
    FilterContext,
    ProgressEvent,
)
from spanaug_core.types import (
    AlignItem,
    Alignment,
    Augmented,
    Candidate,
    Constraints,
    DecodeRequest,
    Example,
    Span,
)

__version__ = "0.1.0"

__all__ = [
    "AlignItem",
    "Alignment",
    "AlignerConfig",
    "Augmented",
    "Candidate",
    "ComponentConfig",
    "ConfigError",
    "Constraints",
    "DataError",
    "DecodeRequest",
    "DecoderConfig",
    "Example",
    "FilterContext",
    "ProgressEvent",
    "Registry",
    "Rejection",
    "Span",
    "SpanaugError",
    "UnknownComponentError",
    "build",
    "create",
    "default_registry",
]
