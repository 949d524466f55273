"""The ``label-consistency`` filter: keep a paraphrase only if a gold-trained model agrees with its labels.

After Woodsend & Lapata 2014: an augmented example is kept when a model trained on the
gold data (a saved ``ner``, ``srl`` or ``frame-id`` model, ``spanaug train --trainer``)
predicts the labels that were projected onto the paraphrase. A projected span the model
does not find — wrong boundaries, wrong label — is evidence that the paraphrase changed
what the span means, or that the alignment put it in the wrong place.

The record becomes the ``Example`` the trainer expects (its tokens and projected spans),
the trainer that saved the model predicts it, and the spans the trainer is responsible
for (ner: entities; srl: the arguments of each predicate; frame-id: the targets) are
compared with the predictions on exact ``(start, end, label)`` (and predicate group, for
srl). Which of
those spans count is ``match``: ``all`` of them, or (``target``) those about the span the
paraphrase rewrote — the rewritten span itself when the model tags its role (an entity),
the arguments of its group when it is a predicate, and every tagged span when neither
applies (a ner model on records whose rewritten span is not an entity). ``trainer`` gives
that trainer options that act at prediction, so that the model predicts as it is used (a
frame-id model trained held to FrameNet's LUs, held to them here too). The model is
loaded, and torch imported, on the first record; nothing else is kept between records.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import Field

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ComponentConfig, FilterContext
from spanaug_core.types import Augmented, Example, Span

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


class SpanTrainer(Protocol):
    """What the filter needs of a trainer: its predictions and which spans it predicts."""

    name: str

    def predict(self, model_dir: Path, examples: Iterable[Example]) -> Iterator[Example]: ...

    def tagged_spans(self, example: Example) -> list[Span]: ...

NAME = "label-consistency"


def rewritten_scope(record: Augmented, source: Example, tagged: list[Span]) -> list[Span]:
    """The tagged spans about the span ``record`` rewrote (all of ``tagged`` when that cannot be told)."""
    if record.target is None or not 0 <= record.target < len(source.spans):
        return tagged
    original = source.spans[record.target]
    same = [s for s in tagged if (s.label, s.role, s.group, s.attrs) == (original.label, original.role, original.group, original.attrs)]
    if same:
        return same
    if original.group is not None:
        grouped = [s for s in tagged if s.group == original.group]
        if grouped:
            return grouped
    return tagged


def is_predicted(span: Span, predicted: list[Span]) -> bool:
    """Whether ``predicted`` holds ``span``'s exact boundaries and label (in its group, when it names one)."""
    return any(
        (p.start, p.end, p.label) == (span.start, span.end, span.label) and p.group in (None, span.group)
        for p in predicted
    )


class LabelConsistencyFilter:
    """Keep records whose projected spans a model trained on gold data predicts (Woodsend & Lapata 2014)."""

    name: ClassVar[str] = NAME

    class Config(ComponentConfig):
        model: Path | None = Field(default=None, description="model folder saved by `spanaug train --trainer` (required)")
        match: Literal["target", "all"] = Field(
            default="target", description="spans checked: those about the rewritten span, or all the model tags"
        )
        min_recall: float = Field(default=1.0, ge=0.0, le=1.0, description="smallest share of checked spans predicted")
        device: str = Field(default="cpu", description="torch device of the model")
        trainer: dict[str, Any] = Field(
            default_factory=dict, description="options of the trainer that predicts, as `spanaug train --set trainer.KEY` "
            "takes them (e.g. frame-id's lexicon, for a model trained with it): those that act at prediction"
        )

    def __init__(self, config: Config) -> None:
        self.config = config
        self._trainer: SpanTrainer | None = None
        self._trainer_name: str | None = None
        # A wrong path fails when the run is built; a missing one only on the first record,
        # since every component must build from its default Config.
        if config.model is not None:
            self._trainer_name = self._model_trainer(config.model)

    @staticmethod
    def _model_trainer(model: Path) -> str:
        from spanaug_shared.trained import trainer_of

        try:
            return trainer_of(model)
        except ConfigError as err:
            raise ConfigError(f"filter '{NAME}': {err}") from None

    def trainer(self) -> SpanTrainer:
        """The trainer that saved the model (built on first use; it keeps the loaded model)."""
        if self._trainer is None:
            if self.config.model is None:
                raise ConfigError(f"filter '{NAME}' needs model=FOLDER, a model saved by `spanaug train --trainer`")
            from spanaug_core.plugins import default_registry

            name = self._trainer_name or self._model_trainer(self.config.model)
            self._trainer = default_registry().create("trainer", name, **{**self.config.trainer, "device": self.config.device})
        return self._trainer

    def predicted_spans(self, example: Example) -> list[Span]:
        """The spans the model predicts for ``example`` (only those its trainer tags)."""
        assert self.config.model is not None
        trainer = self.trainer()
        (predicted,) = trainer.predict(self.config.model, [example])
        return trainer.tagged_spans(predicted)

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        trainer = self.trainer()
        example = record.as_example()
        tagged = trainer.tagged_spans(example)
        checked = tagged if self.config.match == "all" else rewritten_scope(record, context.source, tagged)
        if not checked:
            return None
        predicted = self.predicted_spans(example)
        missing = [s for s in checked if not is_predicted(s, predicted)]
        found = len(checked) - len(missing)
        if missing and found / len(checked) < self.config.min_recall:
            listed = ", ".join(f"{s.label} '{s.text(record.tokens)}'" for s in missing)
            return f"predicted {found} of {len(checked)} spans (missing {listed})"
        return None
