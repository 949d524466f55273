"""The label-consistency filter: a model trained on gold data must predict a record's projected spans."""

from __future__ import annotations

from pathlib import Path

import pytest
from spanaug_filters.consistency import LabelConsistencyFilter
from spanaug_trainers.trainers import NerTrainer, SrlTrainer

from spanaug_core.errors import ConfigError
from spanaug_core.plugins import default_registry
from spanaug_core.protocols import Filter, FilterContext
from spanaug_core.types import Augmented, Constraints, Example, Span

FAST = {"hidden": 16, "lr": 0.01, "batch_size": 2, "dropout": 0.0}


def entity(start: int, end: int, label: str) -> Span:
    return Span(start=start, end=end, label=label, role="entity")


def record(tokens: str, spans: tuple[Span, ...], target: int | None = 0) -> Augmented:
    return Augmented(
        id="s/s0/it1", source_id="s", target=target, iteration=1, tokens=tuple(tokens.split()), text=tokens,
        spans=spans, scores={}, constraints=Constraints(),
    )


def ctx(source: Example) -> FilterContext:
    return FilterContext(source=source, previous_texts=frozenset())


def fake_model(folder: Path, trainer: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(f'{{"trainer": "{trainer}"}}', encoding="utf-8")
    return folder


def predicting(monkeypatch: pytest.MonkeyPatch, spans: list[Span]) -> None:
    """Make every tagger trainer predict ``spans`` (replacing the ones it tags) without a model."""

    def predict(self, model_dir, examples):
        for example in examples:
            kept = [s for s in example.spans if s not in self.tagged_spans(example)]
            yield example.model_copy(update={"spans": tuple(kept + spans)})

    monkeypatch.setattr(NerTrainer, "predict", predict)
    monkeypatch.setattr(SrlTrainer, "predict", predict)


def test_registered_and_a_filter() -> None:
    flt = default_registry().create("filter", "label-consistency")
    assert isinstance(flt, Filter) and isinstance(flt, LabelConsistencyFilter)


def test_missing_or_wrong_model_is_a_clear_error(tmp_path: Path) -> None:
    flt = LabelConsistencyFilter(LabelConsistencyFilter.Config())  # builds: the model is needed on first use
    source = Example(id="s", tokens=("a", "dog"), spans=(entity(1, 2, "ANI"),))
    with pytest.raises(ConfigError, match="label-consistency' needs model=FOLDER"):
        flt.check(record("a dog", (entity(1, 2, "ANI"),)), ctx(source))
    with pytest.raises(ConfigError, match="label-consistency'.*not a trained model folder"):
        LabelConsistencyFilter(LabelConsistencyFilter.Config(model=tmp_path))


NER_SOURCE = Example(id="s", tokens=("the", "man", "saw", "the", "red", "car"),
                     spans=(entity(1, 2, "PER"), entity(4, 6, "VEH")))


def test_ner_target_mode_checks_the_rewritten_entity(monkeypatch, tmp_path) -> None:
    model = fake_model(tmp_path / "m", "ner")
    predicting(monkeypatch, [entity(1, 2, "PER"), entity(4, 5, "VEH")])  # the vehicle's boundary is wrong
    rec = record("the woman saw the blue auto", (entity(1, 2, "PER"), entity(4, 6, "VEH")))
    target = LabelConsistencyFilter(LabelConsistencyFilter.Config(model=model, match="target"))
    assert target.check(rec, ctx(NER_SOURCE)) is None  # the rewritten span (source span 0, PER) is predicted
    moved = rec.model_copy(update={"target": 1})  # the vehicle was rewritten
    assert target.check(moved, ctx(NER_SOURCE)) == "predicted 0 of 1 spans (missing VEH 'blue auto')"


def test_ner_all_mode_and_min_recall(monkeypatch, tmp_path) -> None:
    model = fake_model(tmp_path / "m", "ner")
    predicting(monkeypatch, [entity(1, 2, "ANI"), entity(4, 6, "VEH")])  # right boundaries, wrong label for the man
    rec = record("the woman saw the blue auto", (entity(1, 2, "PER"), entity(4, 6, "VEH")))
    strict = LabelConsistencyFilter(LabelConsistencyFilter.Config(model=model, match="all"))
    assert strict.check(rec, ctx(NER_SOURCE)) == "predicted 1 of 2 spans (missing PER 'woman')"
    half = LabelConsistencyFilter(LabelConsistencyFilter.Config(model=model, match="all", min_recall=0.5))
    assert half.check(rec, ctx(NER_SOURCE)) is None
    no_spans = record("nothing here", ())
    assert strict.check(no_spans, ctx(NER_SOURCE)) is None  # nothing to check


def test_ner_target_mode_on_a_predicate_rewrite_checks_the_entities(monkeypatch, tmp_path) -> None:
    model = fake_model(tmp_path / "m", "ner")
    predicting(monkeypatch, [entity(1, 2, "PER")])
    source = Example(id="s", tokens=("the", "man", "saw", "the", "car"),
                     spans=(Span(start=2, end=3, label="see"), entity(1, 2, "PER"), entity(4, 5, "VEH")))
    rec = record("the man noticed the car", (Span(start=2, end=3, label="see"), entity(1, 2, "PER"), entity(4, 5, "VEH")))
    flt = LabelConsistencyFilter(LabelConsistencyFilter.Config(model=model))
    assert flt.check(rec, ctx(source)) == "predicted 1 of 2 spans (missing VEH 'car')"


def test_srl_checks_the_arguments_of_the_rewritten_predicate(monkeypatch, tmp_path) -> None:
    model = fake_model(tmp_path / "m", "srl")

    def arg(start: int, end: int, label: str, group: str) -> Span:
        return Span(start=start, end=end, label=label, role="argument", group=group)

    spans = (arg(0, 1, "A0", "p0"), Span(start=1, end=2, label="buy", group="p0"), arg(2, 4, "A1", "p0"),
             Span(start=5, end=6, label="see", group="p1"), arg(6, 8, "A1", "p1"))
    source = Example(id="s", tokens=("she", "bought", "the", "house", "and", "saw", "the", "car"), spans=spans)
    rec = record("she purchased the house and saw the car", spans, target=1)
    # The model finds the first predicate's A0, puts its A1 on the wrong words, and gets the other predicate right.
    predicting(monkeypatch, [arg(0, 1, "A0", "p0"), arg(3, 4, "A1", "p0"), arg(6, 8, "A1", "p1")])
    target = LabelConsistencyFilter(LabelConsistencyFilter.Config(model=model))
    assert target.check(rec, ctx(source)) == "predicted 1 of 2 spans (missing A1 'the house')"
    assert target.check(rec.model_copy(update={"target": 3}), ctx(source)) is None
    every = LabelConsistencyFilter(LabelConsistencyFilter.Config(model=model, match="all", min_recall=0.6))
    assert every.check(rec, ctx(source)) is None  # 2 of 3
    # An argument predicted for the other predicate does not count.
    predicting(monkeypatch, [arg(0, 1, "A0", "p1")])
    assert target.check(rec.model_copy(update={"target": 1}), ctx(source)).startswith("predicted 0 of 2 spans")


TRAIN = [  # words the tiny BERT knows: people and vehicles
    ("the man saw the red car", (entity(1, 2, "PER"), entity(4, 6, "VEH"))),
    ("she bought a blue auto", (entity(0, 1, "PER"), entity(3, 5, "VEH"))),
    ("the woman purchased a small car", (entity(1, 2, "PER"), entity(4, 6, "VEH"))),
    ("he watched the big dog", (entity(0, 1, "PER"),)),
]


def test_with_a_trained_ner_model(tiny_encoder: Path, tmp_path: Path) -> None:
    examples = [Example(id=str(i), tokens=tuple(text.split()), spans=spans) for i, (text, spans) in enumerate(TRAIN)]
    trainer = NerTrainer(NerTrainer.Config(encoder=str(tiny_encoder), epochs=8, patience=8, **FAST))
    trainer.train(examples, None, tmp_path / "ner")
    flt = LabelConsistencyFilter(LabelConsistencyFilter.Config(model=tmp_path / "ner", match="all"))
    gold = examples[0]
    (predicted,) = trainer.predict(tmp_path / "ner", [gold])
    found = {(s.start, s.end, s.label) for s in predicted.spans}
    rec = record(" ".join(gold.tokens), gold.spans)
    reason = flt.check(rec, ctx(gold))
    missing = [s for s in gold.spans if (s.start, s.end, s.label) not in found]
    if missing:
        assert reason is not None and reason.startswith(f"predicted {len(gold.spans) - len(missing)} of {len(gold.spans)}")
    else:
        assert reason is None
    wrong = record(" ".join(gold.tokens), tuple(s.model_copy(update={"label": "NOPE"}) for s in gold.spans))
    assert flt.check(wrong, ctx(gold)) == f"predicted 0 of {len(gold.spans)} spans (missing " + ", ".join(
        f"NOPE '{s.text(gold.tokens)}'" for s in gold.spans) + ")"


def test_frame_id_checks_the_rewritten_target_whatever_its_group(monkeypatch, tmp_path) -> None:
    from spanaug_trainers.frame_id import FrameIdTrainer

    def predict(self, model_dir, examples):  # a model that finds one trigger: "purchased" as Commerce_buy
        for example in examples:
            spans = [s for s in example.spans if s.role != "target"]
            found = [Span(start=i, end=i + 1, label="Commerce_buy", role="target", group=f"pred{i}")
                     for i, word in enumerate(example.tokens) if word == "purchased"]
            yield example.model_copy(update={"spans": tuple(spans + found)})

    monkeypatch.setattr(FrameIdTrainer, "predict", predict)
    flt = LabelConsistencyFilter(LabelConsistencyFilter.Config(model=fake_model(tmp_path / "m", "frame-id")))
    buy = Span(start=1, end=2, label="Commerce_buy", role="target", group="as7")
    buyer = Span(start=0, end=1, label="Buyer", role="argument", group="as7")
    source = Example(id="s", tokens=("she", "bought", "a", "car"), spans=(buy, buyer))
    assert flt.check(record("she purchased a car", (buy, buyer)), ctx(source)) is None  # frame elements are not its job
    moved = buy.moved(2, 3)
    assert flt.check(record("she then purchased a car", (moved, buyer)), ctx(source)) is None
    assert flt.check(record("she then got a car", (moved, buyer)), ctx(source)) == "predicted 0 of 1 spans (missing Commerce_buy 'got')"


def test_trainer_options_reach_the_predicting_trainer(tmp_path: Path) -> None:
    model = fake_model(tmp_path / "m", "frame-id")
    flt = LabelConsistencyFilter(LabelConsistencyFilter.Config(model=model, trainer={"null_scale": 0.5}, device="cpu"))
    assert flt.trainer().config.null_scale == 0.5 and flt.trainer().config.device == "cpu"
    wrong = LabelConsistencyFilter(LabelConsistencyFilter.Config(model=model, trainer={"no_such_option": 1}))
    with pytest.raises(ConfigError, match="no_such_option"):
        wrong.trainer()
