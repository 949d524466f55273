"""The frame-id trainer on hand-made FrameNet-like sentences with a tiny random BERT and a fake POS tagger."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest
import torch
from safetensors.torch import load_file
from spanaug_trainers.frame_id import FrameIdTrainer, resolve_overlaps, spans_up_to
from spanaug_trainers.span_classifier import NULL_SCALES, SpanOdds, labelled, soft_targets, span_loss

import spanaug_core.plugins
from spanaug_core.errors import ConfigError
from spanaug_core.hookspecs import hookimpl
from spanaug_core.plugins import Registry
from spanaug_core.protocols import ComponentConfig, ProgressEvent, Trainer
from spanaug_core.types import Example, Span
from spanaug_shared import postag

FAST = {"hidden": 32, "span_hidden": 32, "layers": 1, "lr": 0.003, "batch_size": 2, "dropout": 0.0}
FULLTEXT, EXEMPLAR = {"source": "fulltext"}, {"source": "exemplar"}
AUGMENTED = {"source_id": "fn-1", "iteration": 1}


def _example(id: str, text: str, targets: Sequence[tuple[int, int, str]], meta: dict, arguments: Sequence[tuple[int, int, str, int]] = ()) -> Example:
    spans = [Span(start=s, end=e, label=frame, role="target", group=f"g{k}") for k, (s, e, frame) in enumerate(targets)]
    spans += [Span(start=s, end=e, label=fe, role="argument", group=f"g{k}") for s, e, fe, k in arguments]
    return Example(id=id, tokens=tuple(text.split()), spans=tuple(spans), meta=meta)


EXAMPLES = [
    _example("f1", "she bought a car .", [(1, 2, "Commerce_buy")], FULLTEXT, [(0, 1, "Buyer", 0), (2, 4, "Goods", 0)]),
    _example("f2", "the dog sat on the mat .", [(2, 3, "Posture")], FULLTEXT, [(0, 2, "Agent", 0)]),
    _example("f3", "he watched the red car .", [(1, 2, "Perception_active")], FULLTEXT),
    _example("f4", "the cat is in the house .", [(2, 4, "Locative_relation")], FULLTEXT),
    _example("e1", "the woman purchased a blue auto .", [(2, 3, "Commerce_buy")], EXEMPLAR),
    _example("e2", "a dog lay on the rug .", [(2, 3, "Posture")], EXEMPLAR),
    _example("a1", "the man bought a small house .", [(2, 3, "Commerce_buy")], AUGMENTED, [(0, 2, "Buyer", 0)]),
]


def fake_tagger(batch: Sequence[Sequence[str]]) -> list[list[str]]:
    """Penn-like tags from a word list; records each batch it is given."""
    fake_tagger.calls.append([tuple(tokens) for tokens in batch])  # type: ignore[attr-defined]
    verbs = {"bought", "sat", "watched", "is", "purchased", "lay"}
    return [["VBD" if w in verbs else "DT" if w in {"a", "the"} else "." if w == "." else "NN" for w in tokens] for tokens in batch]


@pytest.fixture(autouse=True)
def pos_tagger(monkeypatch: pytest.MonkeyPatch) -> list:
    """The fake tagger instead of whatever is installed (spaCy is slow to load and not always there)."""
    fake_tagger.calls = []  # type: ignore[attr-defined]
    monkeypatch.setattr(postag, "find_tagger", lambda: postag.TaggerChoice(fake_tagger, "fake tagger"))
    return fake_tagger.calls  # type: ignore[attr-defined]


def _no_tagger(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postag, "find_tagger", lambda: postag.TaggerChoice(None, "no POS tagger is installed"))


def _targets(example: Example) -> list[tuple[int, int, str]]:
    return sorted((s.start, s.end, s.label) for s in example.spans if s.role == "target")


@pytest.fixture(scope="module")
def model(tiny_encoder: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[FrameIdTrainer, Path, dict, list]:
    """A frame-id model fitted to the seven sentences (trainer, folder, metrics, the tagger's batches)."""
    calls: list = []
    with pytest.MonkeyPatch.context() as mp:
        fake_tagger.calls = calls  # type: ignore[attr-defined]
        mp.setattr(postag, "find_tagger", lambda: postag.TaggerChoice(fake_tagger, "fake tagger"))
        trainer = FrameIdTrainer(FrameIdTrainer.Config(encoder=str(tiny_encoder), epochs=25, patience=25, **FAST))
        events: list[ProgressEvent] = []
        out = tmp_path_factory.mktemp("frame-id")
        metrics = trainer.train(EXAMPLES, EXAMPLES, out, events.append)
    assert [e.done for e in events if e.stage == "epoch"] == list(range(1, 26))
    return trainer, out, metrics, calls


def test_instances_depend_on_how_the_sentence_was_annotated() -> None:
    trainer = FrameIdTrainer(FrameIdTrainer.Config())
    full = trainer.sentence(EXAMPLES[3])  # "the cat is in the house ." with the two-word target "is in"
    assert full.exhaustive and full.targets == ((2, 4, "Locative_relation"),)
    instances = full.instances(3)
    assert [(s, e) for s, e, _ in instances] == spans_up_to(7, 3) and len(instances) == 7 + 6 + 5
    assert [i for i in instances if i[2] is not None] == [(2, 4, "Locative_relation")]
    assert (2, 3, None) in instances and (3, 4, None) in instances and (2, 5, None) in instances
    assert trainer.sentence(EXAMPLES[4]).instances(3) == [(2, 3, "Commerce_buy")]  # exemplar: the target only
    assert trainer.sentence(EXAMPLES[6]).instances(3) == [(2, 3, "Commerce_buy")]  # augmented: no meta source
    long = trainer.sentence(_example("x", "a b c d e", [(0, 4, "Long"), (4, 5, "Short")], FULLTEXT))
    assert long.targets == ((0, 4, "Long"), (4, 5, "Short"))  # still gold for the metric (a sure miss)
    assert [i for i in long.instances(3) if i[2]] == [(4, 5, "Short")]
    double = trainer.sentence(_example("y", "a b", [(0, 1, "First"), (0, 1, "Second")], EXEMPLAR))
    assert double.targets == ((0, 1, "First"),)
    assert FrameIdTrainer(FrameIdTrainer.Config(negatives_from=["exemplar"])).sentence(EXAMPLES[4]).exhaustive


def test_a_paraphrase_learns_its_sources_labels_where_it_kept_the_words() -> None:
    trainer = FrameIdTrainer(FrameIdTrainer.Config())  # project_source is on by default
    source = _example("s1", "she bought a car in town .", [(1, 2, "Commerce_buy"), (4, 5, "Locative_relation")], FULLTEXT)
    # "bought" rewritten as "purchased a used" (its target), "a car" kept, "in town ." kept.
    para = _example("s1/t0", "yesterday she purchased a car in town .", [(2, 3, "Commerce_buy")], {"source_id": "s1"})
    orphan = _example("s9/t0", "he purchased it .", [(1, 2, "Commerce_buy")], {"source_id": "s9"})
    examples = [source, para, orphan]
    sentences = trainer.with_sources(examples, [trainer.sentence(e) for e in examples])
    assert sentences[0] == trainer.sentence(source) and sentences[2] == trainer.sentence(orphan)
    instances = sentences[1].instances(2)
    assert instances[0] == (2, 3, "Commerce_buy")
    known = {(s, e): frame for s, e, frame in instances[1:]}
    assert known[(5, 6)] == "Locative_relation"  # the source's other target, moved by one word
    assert known[(1, 2)] is None and known[(3, 5)] is None and known[(6, 8)] is None  # kept words: NULL
    assert (0, 1) not in known and (0, 2) not in known  # "yesterday" is new: unknown
    assert all(e <= 2 or 3 <= s for s, e in known)  # nothing overlaps the paraphrase's own target
    assert (1, 3) not in known and (2, 4) not in known
    assert trainer.sentence(para).instances(2) == [(2, 3, "Commerce_buy")]  # alone: its target only
    plain = FrameIdTrainer(FrameIdTrainer.Config(project_source=False))
    assert plain.with_sources(examples, [plain.sentence(e) for e in examples])[1].instances(2) == [(2, 3, "Commerce_buy")]


def test_paraphrase_share_weighs_paraphrases_down_to_it() -> None:
    source = _example("s1", "she bought a car .", [(1, 2, "Commerce_buy")], FULLTEXT)  # 12 spans of at most 3 words
    paras = [_example(f"s1/t{k}", "she purchased a car .", [(1, 2, "Commerce_buy")], {"source_id": "s1"}) for k in range(2)]
    exemplar = _example("e1", "he purchased it .", [(1, 2, "Commerce_buy")], EXEMPLAR)  # annotated, not a paraphrase
    examples = [source, *paras, exemplar]

    def weights(share: float | None) -> list[float]:
        trainer = FrameIdTrainer(FrameIdTrainer.Config(paraphrase_share=share))
        return [s.weight for s in trainer.weighted(examples, trainer.with_sources(examples, [trainer.sentence(e) for e in examples]))]

    # Each paraphrase knows its target and the 1 + 6 spans of "she" and "a car ." (8); the others hold 12 + 1.
    assert weights(None) == [1.0, 1.0, 1.0, 1.0]
    assert weights(0.5) == pytest.approx([1.0, 13 / 16, 13 / 16, 1.0])
    assert weights(0.9) == [1.0, 1.0, 1.0, 1.0]  # 16 of 29 is below 0.9: never weighted up
    with pytest.raises(ValueError):
        FrameIdTrainer.Config(paraphrase_share=1.0)


def test_exhaustive_repeat_shows_the_gold_sentences_more_often_before_paraphrase_share_weighs() -> None:
    source = _example("s1", "she bought a car .", [(1, 2, "Commerce_buy")], FULLTEXT)  # 12 spans of at most 3 words
    paras = [_example(f"s1/t{k}", "she purchased a car .", [(1, 2, "Commerce_buy")], {"source_id": "s1"}) for k in range(2)]
    exemplar = _example("e1", "he purchased it .", [(1, 2, "Commerce_buy")], EXEMPLAR)
    examples = [source, *paras, exemplar]
    trainer = FrameIdTrainer(FrameIdTrainer.Config(exhaustive_repeat=3, paraphrase_share=0.5))
    sentences = trainer.with_sources(examples, [trainer.sentence(e) for e in examples])
    repeated_examples, repeated = trainer.repeated(examples, sentences)
    assert [e.id for e in repeated_examples] == ["s1", "s1", "s1", "s1/t0", "s1/t1", "e1"]
    assert repeated[:3] == [sentences[0]] * 3 and repeated[3:] == sentences[1:]
    # The paraphrases' 16 spans against 3 x 12 + 1 = 37 others: already below half, so not weighted down.
    assert [s.weight for s in trainer.weighted(repeated_examples, repeated)] == [1.0] * 6
    assert FrameIdTrainer(FrameIdTrainer.Config()).repeated(examples, sentences) == (examples, sentences)
    with pytest.raises(ValueError):
        FrameIdTrainer.Config(exhaustive_repeat=0)


def test_span_loss_weighs_each_span_and_averages_over_spans() -> None:
    logits, targets = torch.tensor([[2.0, 0.0], [0.0, 1.0]]), torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    each = -(targets * logits.log_softmax(dim=1)).sum(dim=1)
    assert span_loss(logits, targets, torch.ones(2)) == pytest.approx(each.mean().item())
    assert span_loss(logits, targets, torch.tensor([1.0, 0.25])) == pytest.approx((each[0] + 0.25 * each[1]).item() / 2)
    assert span_loss(logits, targets, torch.tensor([0.5, 0.5])) == pytest.approx(0.5 * each.mean().item())


def test_null_spans_get_smoothed_targets() -> None:
    got = soft_targets(torch.tensor([0, 2]), torch.tensor([0.2, 0.0]), 4)
    assert torch.allclose(got, torch.tensor([[0.85, 0.05, 0.05, 0.05], [0.0, 0.0, 1.0, 0.0]]))
    assert torch.allclose(got.sum(1), torch.ones(2))


def test_overlapping_predictions_keep_the_most_probable() -> None:
    scored = [(0, 2, "A", 0.6), (1, 2, "B", 0.9), (2, 3, "C", 0.5), (3, 5, "D", 0.4), (4, 5, "E", 0.3)]
    assert resolve_overlaps(scored) == [(1, 2, "B"), (2, 3, "C"), (3, 5, "D")]
    assert resolve_overlaps([]) == []


def test_a_trigger_counts_only_with_its_span_and_frame() -> None:
    trainer = FrameIdTrainer(FrameIdTrainer.Config())
    gold = [trainer.sentence(EXAMPLES[0]), trainer.sentence(EXAMPLES[3])]
    predicted = [[(1, 2, "Commerce_buy"), (3, 4, "Vehicle")], [(2, 3, "Locative_relation")]]  # right; extra; span too short
    scores = trainer.score(gold, predicted)["all"]
    assert (scores["gold"], scores["predicted"], scores["correct"]) == (2.0, 3.0, 1.0)
    assert scores["f1"] == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    wrong_frame = trainer.score(gold[:1], [[(1, 2, "Commerce_sell")]])["all"]
    assert wrong_frame["correct"] == 0.0


def test_predictions_replace_targets_and_their_frame_elements() -> None:
    trainer = FrameIdTrainer(FrameIdTrainer.Config())
    example = EXAMPLES[0].model_copy(update={"spans": (*EXAMPLES[0].spans, Span(start=3, end=4, label="X", role="entity"),
                                                       Span(start=0, end=1, label="Orphan", role="argument", group="z"))})
    out = trainer.with_predictions(example, [(1, 2, "Getting"), (3, 4, "Vehicle")])
    assert [(s.start, s.end, s.label, s.role, s.group) for s in out.spans] == [
        (0, 1, "Orphan", "argument", "z"), (1, 2, "Getting", "target", "pred0"),
        (3, 4, "X", "entity", None), (3, 4, "Vehicle", "target", "pred1"),
    ]
    assert out.meta == example.meta


def test_training_fits_the_sentences_and_saves_a_model(model) -> None:
    trainer, out, metrics, calls = model
    assert isinstance(trainer, Trainer)
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors"]
    config = json.loads((out / "config.json").read_text())
    assert config["trainer"] == "frame-id" and config["frames"] == ["Commerce_buy", "Locative_relation", "Perception_active", "Posture"]
    assert config["pos"] is True and config["pos_tags"] == ["<pad>", "<unk>", ".", "DT", "NN", "VBD"]
    assert config["tagger"] == "fake tagger" and "ø" not in config["chars"] and config["chars"][:2] == ["<pad>", "<unk>"]
    losses = config["training"]["losses"]
    assert losses[-1] < losses[0] / 2  # smoothed NULL targets keep it above ~0.6
    assert {"dev_f1", "dev_precision", "dev_recall", "best_epoch", "epochs_run", "train_loss"} <= metrics.keys()
    assert metrics["dev_f1"] >= 0.8 and metrics["dev_f1"] == pytest.approx(max(config["training"]["dev_f1"]), abs=1e-5)
    assert sorted(sentence for batch in calls for sentence in batch) == sorted(e.tokens for e in EXAMPLES)  # each once


def test_saved_model_predicts_what_the_trained_one_did(model, tiny_encoder) -> None:
    trainer, out, metrics, _ = model
    in_memory = list(trainer.predict(out, EXAMPLES))
    fresh = FrameIdTrainer(FrameIdTrainer.Config())  # loads from disk; its own encoder option is not used
    reloaded = list(fresh.predict(out, EXAMPLES))
    assert [_targets(e) for e in reloaded] == [_targets(e) for e in in_memory]
    assert sum(_targets(p) == _targets(g) for p, g in zip(reloaded, EXAMPLES)) >= 5
    assert all(s.role != "argument" for e in reloaded for s in e.spans)
    assert [e.meta for e in reloaded] == [e.meta for e in EXAMPLES]
    assert fresh.evaluate(out, EXAMPLES)["f1"] == pytest.approx(metrics["dev_f1"])
    unseen = Example(id="u", tokens=("ø", "purchased", "a", "house", "quickly"))  # unknown characters are fine
    assert len(list(fresh.predict(out, [unseen]))) == 1


class WordList:
    """A lexicon of a few (words -> frames) lines; ``listed`` is the table."""

    name: ClassVar[str] = "word-list"
    listed: ClassVar[dict[str, frozenset[str]]] = {}

    class Config(ComponentConfig):
        pass

    def __init__(self, config: Config) -> None:
        self.config = config

    def alternatives(self, example: Example, span: Span, avoid: Sequence[str]) -> list[str]:
        return []

    def labels_for(self, words: str) -> frozenset[str]:
        return self.listed.get(words, frozenset())

    def labels(self) -> frozenset[str]:
        return frozenset().union(*self.listed.values())


class Offers(WordList):
    """A lexicon that offers words but cannot say which frames they evoke."""

    name: ClassVar[str] = "offers"
    labels_for = None  # type: ignore[assignment]


@pytest.fixture
def lexicons(monkeypatch: pytest.MonkeyPatch) -> None:
    class Plugin:
        @hookimpl
        def register_lexicons(self, register):  # type: ignore[no-untyped-def]
            register(WordList)
            register(Offers)

    registry = Registry(entry_points=False)
    registry.add_plugin(Plugin(), "test")
    monkeypatch.setattr(spanaug_core.plugins, "default_registry", lambda: registry)


def test_a_lexicon_holds_predictions_to_the_frames_it_lists(model, lexicons, monkeypatch, caplog) -> None:
    _, out, _, _ = model
    plain = [_targets(e) for e in FrameIdTrainer(FrameIdTrainer.Config()).predict(out, EXAMPLES)]
    assert any(plain)
    every = {" ".join(e.tokens[s:t]) for e in EXAMPLES for s in range(len(e.tokens)) for t in range(s + 1, min(s + 3, len(e.tokens)) + 1)}
    frames = frozenset(["Commerce_buy", "Locative_relation", "Perception_active", "Posture", "Not_trained"])
    monkeypatch.setattr(WordList, "listed", {words: frames for words in every})
    held = FrameIdTrainer(FrameIdTrainer.Config(lexicon="word-list"))
    assert [_targets(e) for e in held.predict(out, EXAMPLES)] == plain  # every frame listed everywhere: no change
    monkeypatch.setattr(WordList, "listed", {"bought": frozenset(["Commerce_buy"]), "purchased": frozenset(["Posture"])})
    held = FrameIdTrainer(FrameIdTrainer.Config(lexicon={"name": "word-list"}))
    with caplog.at_level(logging.WARNING):
        predicted = [_targets(e) for e in held.predict(out, EXAMPLES)]
    assert "2 of the model's 4 frames are not in the lexicon word-list, so they are never predicted: Locative_relation, Perception_active" in caplog.text
    listed = {(" ".join(e.tokens[s:t]), f) for e, p in zip(EXAMPLES, predicted) for s, t, f in p}
    assert listed <= {("bought", "Commerce_buy"), ("purchased", "Posture")}  # only what the lexicon lists
    assert predicted[0] == plain[0] == [(1, 2, "Commerce_buy")] and predicted[1:4] == [[], [], []]
    # "purchased" evokes Commerce_buy to the model; held to Posture, it takes that where Posture beats NULL
    assert predicted[4] in ([], [(2, 3, "Posture")]) and plain[4] == [(2, 3, "Commerce_buy")]
    with pytest.raises(ConfigError, match="'offers' cannot say which frames"):
        list(FrameIdTrainer(FrameIdTrainer.Config(lexicon="offers")).predict(out, EXAMPLES))


def test_the_lexicon_chooses_the_epoch_and_nothing_else_in_training(tiny_encoder, lexicons, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(WordList, "listed", {"bought": frozenset(["Commerce_buy"])})
    trained = {}
    for name, lexicon in (("plain", None), ("held", "word-list")):
        trainer = FrameIdTrainer(FrameIdTrainer.Config(encoder=str(tiny_encoder), epochs=3, lexicon=lexicon, **FAST))
        trainer.train(EXAMPLES, None, tmp_path / name)  # without dev every epoch runs: the weights must not differ
        trainer = FrameIdTrainer(FrameIdTrainer.Config(encoder=str(tiny_encoder), epochs=25, patience=25, lexicon=lexicon, **FAST))
        trained[name] = trainer, trainer.train(EXAMPLES, EXAMPLES, tmp_path / f"{name}-dev")
    plain, held = (load_file(str(tmp_path / name / "model.safetensors")) for name in ("plain", "held"))
    assert plain.keys() == held.keys() and all(torch.equal(plain[k], held[k]) for k in plain)
    for name, (trainer, metrics) in trained.items():  # dev is scored as the trainer predicts: held to the lexicon or not
        assert trainer.evaluate(tmp_path / f"{name}-dev", EXAMPLES)["f1"] == pytest.approx(metrics["dev_f1"])
    assert trained["held"][1]["dev_f1"] < trained["plain"][1]["dev_f1"]  # the lexicon lists one of the 7 targets


def test_null_scale_moves_the_line_between_null_and_a_frame() -> None:
    model = SimpleNamespace(config=SimpleNamespace(frames=["Commerce_buy", "Posture"]))
    odds = [SpanOdds(spans=[(0, 1), (1, 2), (1, 3)], null=[0.6, 0.5, 0.9], best=[0.3, 0.5, 0.05], label=[1, 2, 1])]
    assert labelled(model, odds) == [[]]  # at 1 a frame must beat NULL: a tie is NULL, as under an argmax
    assert labelled(model, odds, 0.5) == [[(1, 2, "Posture")]]  # (0, 1) ties again: 0.3 is not above 0.5 * 0.6
    assert labelled(model, odds, 0.4) == [[(0, 1, "Commerce_buy"), (1, 2, "Posture")]]
    assert labelled(model, odds, 0.05) == [[(0, 1, "Commerce_buy"), (1, 2, "Posture")]]  # (1, 3) overlaps a likelier one
    narrowed = [odds[0].above(0.4)]  # what any scale from 0.4 up labels
    assert narrowed[0] == SpanOdds(spans=[(0, 1), (1, 2)], null=[0.6, 0.5], best=[0.3, 0.5], label=[1, 2])
    assert all(labelled(model, narrowed, scale) == labelled(model, odds, scale) for scale in (0.4, 0.5, 1))
    assert odds[0].above(1) == SpanOdds([], [], [], [])


def test_null_scale_dev_is_chosen_on_dev_and_saved_with_the_model(tiny_encoder, tmp_path) -> None:
    trainer = FrameIdTrainer(FrameIdTrainer.Config(encoder=str(tiny_encoder), epochs=6, null_scale="dev", **FAST))
    metrics = trainer.train(EXAMPLES, EXAMPLES, tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    by_scale = config["training"]["null_scales"]
    assert config["null_scale"] == metrics["null_scale"] and metrics["null_scale"] in NULL_SCALES and len(by_scale) == len(NULL_SCALES)
    assert metrics["dev_f1"] == max(by_scale.values()) >= by_scale["1.0"] == metrics["dev_f1_at_1"]
    # each epoch was scored at its best scale: the kept epoch is the best of those
    epochs = config["training"]["dev_f1"]  # rounded
    assert metrics["dev_f1"] == pytest.approx(max(epochs), abs=1e-5) == epochs[config["training"]["best_check"]]
    assert config["training"]["best_check"] == metrics["best_epoch"] - 1  # once an epoch
    fresh = FrameIdTrainer(FrameIdTrainer.Config())  # predicts with the model's own scale
    assert fresh.evaluate(tmp_path / "m", EXAMPLES)["f1"] == pytest.approx(metrics["dev_f1"])
    assert fresh.calibrate(tmp_path / "m", EXAMPLES) == (metrics["null_scale"], {float(k): v for k, v in by_scale.items()})
    at_one = FrameIdTrainer(FrameIdTrainer.Config(null_scale=1))  # a number overrides it
    assert at_one.evaluate(tmp_path / "m", EXAMPLES)["f1"] == pytest.approx(metrics["dev_f1_at_1"])
    # A number chooses the epoch at that scale: at the chosen one, the same best dev F1 (training is the same).
    fixed = FrameIdTrainer(FrameIdTrainer.Config(encoder=str(tiny_encoder), epochs=6, null_scale=metrics["null_scale"], **FAST))
    assert fixed.train(EXAMPLES, EXAMPLES, tmp_path / "f")["dev_f1"] == metrics["dev_f1"]
    assert json.loads((tmp_path / "f" / "config.json").read_text())["null_scale"] == metrics["null_scale"]
    with pytest.raises(ConfigError, match="null_scale 'dev' is chosen on dev data"):
        trainer.train(EXAMPLES, None, tmp_path / "n")
    with pytest.raises(ConfigError, match="needs dev examples"):
        fresh.calibrate(tmp_path / "m", [])


def test_dev_every_keeps_the_best_check_and_its_scale(tiny_encoder, tmp_path) -> None:
    # 4 steps an epoch on the 7 examples in pairs; dev every 3 steps
    trainer = FrameIdTrainer(FrameIdTrainer.Config(encoder=str(tiny_encoder), epochs=3, null_scale="dev", dev_every=3, **FAST))
    metrics = trainer.train(EXAMPLES, EXAMPLES, tmp_path / "m")
    training = json.loads((tmp_path / "m" / "config.json").read_text())["training"]
    assert metrics["steps_run"] == 12 and len(training["dev_f1"]) == 4  # at steps 3, 6, 9 and 12
    assert metrics["dev_f1"] == pytest.approx(max(training["dev_f1"]), abs=1e-5) == training["dev_f1"][training["best_check"]]
    assert metrics["best_step"] == 3 * (training["best_check"] + 1)
    fresh = FrameIdTrainer(FrameIdTrainer.Config())  # the kept weights and their scale
    assert fresh.evaluate(tmp_path / "m", EXAMPLES)["f1"] == pytest.approx(metrics["dev_f1"])


def test_dev_every_gold_scores_dev_as_often_as_the_examples_that_are_not_paraphrases(tiny_encoder, tmp_path) -> None:
    # 6 of the 7 examples are not paraphrases: 3 steps a pass in pairs; with 3 repeats of the
    # fulltext and 5 more paraphrases an epoch is (4 x 3 + 2 + 6) / 2 = 10 steps.
    paras = [_example(f"f1/t{k}", "she purchased a car .", [(1, 2, "Commerce_buy")], {"source_id": "f1"}) for k in range(5)]
    config = {"encoder": str(tiny_encoder), "epochs": 2, "dev_every": "gold", "exhaustive_repeat": 3, **FAST}
    metrics = FrameIdTrainer(FrameIdTrainer.Config(**config)).train([*EXAMPLES, *paras], EXAMPLES, tmp_path / "m")
    training = json.loads((tmp_path / "m" / "config.json").read_text())["training"]
    assert metrics["dev_every"] == training["dev_every"] == 3
    assert metrics["steps_run"] == 20 and len(training["dev_f1"]) == 7  # at steps 3, 6, ..., 18 and the end
    alone = FrameIdTrainer(FrameIdTrainer.Config(**{**config, "exhaustive_repeat": 1})).train(EXAMPLES[:6], EXAMPLES, tmp_path / "g")
    assert alone["dev_every"] == 3 and alone["steps_run"] == 6  # gold alone: once an epoch, as with dev_every 0
    with pytest.raises(ConfigError, match="every training example is one"):
        FrameIdTrainer(FrameIdTrainer.Config(**config)).train(paras, EXAMPLES, tmp_path / "p")


@pytest.mark.parametrize(("epochs", "won"), [(2, False), (3, True)])  # the second run worse on dev, then better
def test_finish_exhaustive_trains_on_gold_alone_and_keeps_it_only_where_dev_says_better(tiny_encoder, tmp_path, epochs, won) -> None:
    # The 4 fulltext examples are the exhaustive ones: the second run makes 2 steps an epoch in pairs,
    # and its best weights win only where their dev F1 beats the first run's.
    config = {"encoder": str(tiny_encoder), "epochs": epochs, "patience": 2, "null_scale": "dev", "finish_lr": 0.003, **FAST}
    alone = FrameIdTrainer(FrameIdTrainer.Config(**config)).train(EXAMPLES, EXAMPLES, tmp_path / "a")
    trainer = FrameIdTrainer(FrameIdTrainer.Config(**config, finish_exhaustive=True))
    metrics = trainer.train(EXAMPLES, EXAMPLES, tmp_path / "m")
    saved = json.loads((tmp_path / "m" / "config.json").read_text())
    training, finish = saved["training"], saved["training"]["finish"]
    assert finish["sentences"] == 4 and finish["lr"] == 0.003 and finish["steps_run"] == 2 * finish["epochs_run"]
    assert training["steps_run"] == alone["steps_run"]  # the first run is as without the option
    first, second = max(training["dev_f1"]), max(finish["dev_f1"])
    assert alone["dev_f1"] == pytest.approx(first, abs=1e-5)
    assert finish["kept"] is won is (second > first) and metrics["finish_kept"] == float(won)
    assert metrics["dev_f1"] == pytest.approx(max(first, second), abs=1e-5)
    assert max(training["null_scales"].values()) == pytest.approx(metrics["dev_f1"])  # the kept score's scales
    assert saved["null_scale"] == metrics["null_scale"]
    fresh = FrameIdTrainer(FrameIdTrainer.Config())  # the weights saved are the kept ones
    assert fresh.evaluate(tmp_path / "m", EXAMPLES)["f1"] == pytest.approx(metrics["dev_f1"])


def test_finish_exhaustive_runs_at_a_tenth_of_lr_unless_told_and_needs_dev_and_gold(tiny_encoder, tmp_path) -> None:
    config = {"encoder": str(tiny_encoder), "epochs": 1, "finish_exhaustive": True, **FAST}
    FrameIdTrainer(FrameIdTrainer.Config(**config)).train(EXAMPLES, EXAMPLES, tmp_path / "m")
    assert json.loads((tmp_path / "m" / "config.json").read_text())["training"]["finish"]["lr"] == pytest.approx(FAST["lr"] / 10)
    with pytest.raises(ConfigError, match="finish_exhaustive keeps its second run only where dev"):
        FrameIdTrainer(FrameIdTrainer.Config(**config)).train(EXAMPLES, None, tmp_path / "n")
    with pytest.raises(ConfigError, match="no training example is one"):
        FrameIdTrainer(FrameIdTrainer.Config(**config)).train(EXAMPLES[4:], EXAMPLES, tmp_path / "e")


def test_a_model_saved_before_null_scale_predicts_at_1(model, tmp_path) -> None:
    _, out, _, _ = model
    old = tmp_path / "old"
    old.mkdir()
    config = json.loads((out / "config.json").read_text())
    del config["null_scale"]
    (old / "config.json").write_text(json.dumps(config))
    (old / "model.safetensors").write_bytes((out / "model.safetensors").read_bytes())
    trainer = FrameIdTrainer(FrameIdTrainer.Config())
    assert [_targets(e) for e in trainer.predict(old, EXAMPLES)] == [_targets(e) for e in trainer.predict(out, EXAMPLES)]


def test_without_a_pos_tagger_the_model_has_no_pos_embedding(model, tiny_encoder, tmp_path, monkeypatch) -> None:
    _no_tagger(monkeypatch)
    trainer = FrameIdTrainer(FrameIdTrainer.Config(encoder=str(tiny_encoder), epochs=2, **FAST))
    metrics = trainer.train(EXAMPLES[:3], None, tmp_path / "m")
    assert metrics["best_epoch"] == 2.0 and "dev_f1" not in metrics
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["pos"] is False and config["pos_tags"] == [] and config["tagger"] == "no POS tagger is installed"
    assert not any(k.startswith("pos_embedding") for k in load_file(str(tmp_path / "m" / "model.safetensors")))
    assert len(list(FrameIdTrainer(FrameIdTrainer.Config()).predict(tmp_path / "m", EXAMPLES))) == len(EXAMPLES)
    _, with_pos, _, _ = model
    with pytest.raises(ConfigError, match="trained with POS tags"):
        list(FrameIdTrainer(FrameIdTrainer.Config()).predict(with_pos, EXAMPLES))


def test_training_sees_each_exhaustive_sentence_exhaustive_repeat_times(tiny_encoder, tmp_path) -> None:
    trainer = FrameIdTrainer(FrameIdTrainer.Config(encoder=str(tiny_encoder), epochs=1, exhaustive_repeat=2, **FAST))
    trainer.train([*EXAMPLES[:3], _example("p", "she purchased a car .", [(1, 2, "Commerce_buy")], AUGMENTED)], None, tmp_path / "m")
    training = json.loads((tmp_path / "m" / "config.json").read_text())["training"]
    assert training["train_sentences"] == 3 * 2 + 1 and training["steps_run"] == 4  # batches of 2


def test_patience_waits_for_the_first_correct_trigger(tiny_encoder, tmp_path) -> None:
    options = {**FAST, "lr": 1e-6, "hidden": 8, "span_hidden": 8}  # learns nothing in three epochs
    trainer = FrameIdTrainer(FrameIdTrainer.Config(encoder=str(tiny_encoder), epochs=3, patience=1, **options))
    metrics = trainer.train(EXAMPLES[:3], EXAMPLES[:3], tmp_path / "m")
    assert (metrics["epochs_run"], metrics["best_epoch"], metrics["dev_f1"]) == (3.0, 3.0, 0.0)  # the last weights


def test_user_errors(tmp_path) -> None:
    trainer = FrameIdTrainer(FrameIdTrainer.Config())
    with pytest.raises(ConfigError, match="nothing to learn"):
        trainer.train([_example("x", "a b c d", [(0, 4, "Long")], EXEMPLAR)], None, tmp_path / "m")
    with pytest.raises(ConfigError, match="not a saved model"):
        list(trainer.predict(tmp_path, EXAMPLES))
    (tmp_path / "config.json").write_text(json.dumps({"trainer": "ner"}))
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(ConfigError, match="holds a 'ner' model; use the ner trainer"):
        list(trainer.predict(tmp_path, EXAMPLES))


def test_cli_trains_and_predicts(cli, tiny_encoder, tmp_path, capsys) -> None:
    spanaug = cli("trainers,jsonl,aligners")
    data = tmp_path / "fn.jsonl"
    data.write_text("".join(json.dumps(e.model_dump(mode="json")) + "\n" for e in EXAMPLES), encoding="utf-8")
    out = tmp_path / "model"
    sets = [f"trainer.{k}={v}" for k, v in {**FAST, "encoder": tiny_encoder, "epochs": 3}.items()]
    code = spanaug("train", "--trainer", "frame-id", "--dataset", "jsonl", "--train", data, "--dev", data, "--test", data,
                   "--out", out, *[a for s in sets for a in ("--set", s)], "--no-progress")
    assert code == 0, capsys.readouterr().err
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["test_f1"] == pytest.approx(metrics["dev_f1"]) and metrics["test_gold"] == 7.0
    predicted = tmp_path / "pred.jsonl"
    assert spanaug("predict", "--model", out, "--dataset", "jsonl", "--input", data, "--output", predicted) == 0
    rows = [json.loads(line) for line in predicted.read_text().splitlines()]
    assert [r["id"] for r in rows] == [e.id for e in EXAMPLES]
    expected = list(FrameIdTrainer(FrameIdTrainer.Config()).predict(out, EXAMPLES))
    assert [sorted((s["start"], s["end"], s["label"]) for s in r["spans"] if s["role"] == "target") for r in rows] == [
        _targets(e) for e in expected
    ]
