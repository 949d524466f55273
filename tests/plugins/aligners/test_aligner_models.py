"""Encoder word vectors, span pooling, the bert-span head, its training, and embed-sim (tiny BERT)."""

from __future__ import annotations

import pytest
import torch

from spanaug_core.types import AlignItem, Alignment
from spanaug_shared.encoder import Encoder
from spanaug_aligners.bert_span import BertSpanAligner
from spanaug_aligners.embed_sim import EmbedSimAligner
from spanaug_aligners.head import (
    HeadConfig,
    HeadShape,
    SpanScorer,
    item_links,
    item_rows,
    labels,
    link_signals,
    links_of_items,
    load_head,
    pair_alignment,
    save_head,
    score_items,
)
from spanaug_aligners.pairs import SpanPair
from spanaug_aligners.spans import candidate_spans, span_means
from spanaug_aligners.train import TrainOptions, train_head

SRC = ("the", "man", "bought", "a", "red", "car", ".")
TGT = ("a", "red", "auto", "was", "purchased", "by", "the", "man", ".")


def test_encoder_word_vectors_pool_subwords(tiny_encoder):
    enc = Encoder(str(tiny_encoder))
    # "cats" splits into "cat ##s": still one vector per word.
    (src, tgt), = enc.encode([(("the", "cats", "sat"), ("a", "dog", "watched", "it"))], joint=True)
    assert src.shape == (3, 32) and tgt.shape == (4, 32)
    (alone, _), = enc.encode([(("the", "cats", "sat"), ("a", "dog", "watched", "it"))], joint=False)
    assert alone.shape == (3, 32) and not torch.allclose(alone, src)  # context differs


def test_span_means_and_candidates():
    words = torch.arange(12, dtype=torch.float).reshape(4, 3)
    pooled = span_means(words, torch.tensor([0, 1]), torch.tensor([2, 4]))
    assert torch.allclose(pooled, torch.stack([words[0:2].mean(0), words[1:4].mean(0)]))
    spans = candidate_spans(target_len=5, source_len=2, k=1, max_len=6)
    assert {e - s for s, e in spans} == {1, 2, 3} and len(spans) == 5 + 4 + 3


@pytest.mark.parametrize(
    "df, mx, cue, cos, links, width",
    [
        (True, True, True, False, False, 68),
        (True, False, False, False, False, 32),
        (False, True, True, False, False, 36),
        (True, True, True, True, False, 71),
        (True, True, True, True, True, 80),
        (False, True, False, False, True, 41),
    ],
)
def test_head_shapes_and_ablations(df, mx, cue, cos, links, width):
    cfg = HeadConfig(encoder="x", dim=32, hidden=16, use_df=df, use_mx=mx, use_cue=cue, use_cos=cos, use_links=links, k=1)
    model = SpanScorer(cfg).eval()
    spans, source, cands, cues = item_rows(torch.randn(7, 32), torch.randn(9, 32), (1, 3), cfg)
    assert source.shape == cands.shape == (len(spans), 32) and cues.shape == (len(spans), 16 if links else 7)
    assert model.features(source, cands, cues).shape == (len(spans), width)
    assert model(source, cands, cues).shape == (len(spans),)


def test_link_signals_read_the_word_alignment():
    # Source words e0 e1 e2; target e1 e0 v e2 with v mostly its own direction, a little e2.
    eye = torch.eye(4)
    src = eye[:3]
    tgt = torch.stack([eye[1], eye[0], torch.tensor([0.0, 0.0, 0.3, 1.0]), eye[2]])
    rows = link_signals(*pair_alignment(src, tgt), (0, 2), [(0, 2), (2, 4)])
    # The span's words are linked exactly onto target 0-2: everything says "this one".
    assert rows[0].tolist() == pytest.approx([1, 0, 1, 0, 1, 1, 1, 1, 1])
    # Target 2-4: nothing of the span; its e2 is linked to the source word outside the span,
    # and v's best source word is that one too (0.29), though not mutually.
    assert rows[1].tolist() == pytest.approx([0, 0.5, 0, 1, 0, 0, 0, 0, 0])
    # Training computes them once per item (item_links) and hands them back every epoch.
    cfg = HeadConfig(encoder="x", dim=32, hidden=16, use_links=True)
    src, tgt = torch.randn(6, 32), torch.randn(8, 32)
    fresh = item_rows(src, tgt, (2, 4), cfg)[3]
    assert torch.equal(item_rows(src, tgt, (2, 4), cfg, item_links(src, tgt, (2, 4), cfg))[3], fresh)
    # Items of one sentence pair share its word alignment; each keeps its own signals.
    other = torch.randn(5, 32)
    inputs = [(src, tgt, (2, 4)), (src, tgt, (0, 1)), (other, tgt, (2, 4))]
    pairs = [(("a",), ("b",)), (("a",), ("b",)), (("c",), ("b",))]
    shared = links_of_items(inputs, pairs, cfg)
    assert all(torch.equal(a, item_links(*x, cfg)) for a, x in zip(shared, inputs))
    assert links_of_items(inputs, pairs, cfg.model_copy(update={"use_links": False})) == [None] * 3


def test_head_needs_span_features():
    with pytest.raises(Exception, match="Df or Mx"):
        SpanScorer(HeadConfig(encoder="x", dim=4, use_df=False, use_mx=False))


def test_soft_and_hard_labels():
    spans = [(2, 3), (2, 4), (0, 1)]
    assert labels(spans, (2, 3), soft=True).tolist() == [1.0, 0.5, 2.0**-4]
    assert labels(spans, (2, 3), soft=False).tolist() == [1.0, 0.0, 0.0]
    assert labels(spans, None, soft=True).tolist() == [0.0, 0.0, 0.0]


def _fixture_pairs() -> list[SpanPair]:
    """Items whose gold follows a learnable rule: the target word at the source word's position."""
    sents = [SRC[:-1], ("she", "watched", "the", "big", "dog"), ("he", "saw", "a", "small", "house"), TGT[:-1]]
    out = []
    for n, s in enumerate(sents):
        for t in sents:
            for i in range(min(len(s), len(t))):
                out.append(SpanPair(id=f"{n}-{i}", item=AlignItem(source_tokens=s, source_span=(i, i + 1), target_tokens=t),
                                    gold_span=(i, i + 1), kind="paraphrased"))
    return out


@pytest.mark.parametrize("links", [False, True])
def test_training_lowers_loss_and_round_trips(tiny_encoder, tmp_path, links):
    pairs = _fixture_pairs()
    options = TrainOptions(encoder=str(tiny_encoder), shape=HeadShape(hidden=16, use_links=links), epochs=6, patience=10, lr=5e-3, batch_size=8)
    summary = train_head(pairs, pairs[:20], tmp_path / "head", options, cache_dir=tmp_path / "cache")
    assert summary["losses"][-1] < summary["losses"][0]
    assert 0.0 <= summary["threshold"] <= 1.0 and summary["dev"]["all"]["exact_f1"] > 0.0
    assert len(list((tmp_path / "cache").glob("encoded-*.pt"))) == 1  # encoder outputs were cached
    # The saved head scores exactly as the trained one would, and the aligner uses it.
    head = load_head(tmp_path / "head")
    assert head.config.threshold == summary["threshold"]
    assert head.config.longest_span == 1  # every fixture span is one word
    aligner = BertSpanAligner(BertSpanAligner.Config(head=str(tmp_path / "head"), top_k=3, copies=False))
    items = [p.item for p in pairs[:5]]
    results = aligner.align(items)
    assert len(results) == 5
    for item, res in zip(items, results):
        assert len(res.candidates) == 3 and res.candidates[0][2] == res.score
        assert res.span is None or res.span == res.candidates[0][:2]
    enc = Encoder(str(tiny_encoder))
    (src, tgt), = enc.encode([(items[0].source_tokens, items[0].target_tokens)], joint=True)
    ((spans, probs),) = score_items(head, [(src, tgt, items[0].source_span)])
    assert results[0].score == pytest.approx(float(probs.max()), abs=1e-5)


def test_tuning_the_top_layer_trains_it_and_the_aligner_loads_it(tiny_encoder, tmp_path):
    pairs = _fixture_pairs()
    options = TrainOptions(
        encoder=str(tiny_encoder), shape=HeadShape(hidden=16, use_cos=True, use_links=True), epochs=3, patience=10,
        lr=5e-3, batch_size=16, tune_layers=1, encoder_lr=1e-3,
    )
    summary = train_head(pairs, pairs[:20], tmp_path / "head", options)
    assert summary["losses"][-1] < summary["losses"][0]
    from safetensors.torch import load_file

    tuned = load_file(str(tmp_path / "head" / "encoder.safetensors"))
    assert tuned and all(name.startswith("encoder.layer.1.") for name in tuned)  # the top layer only
    base = Encoder(str(tiny_encoder)).model.state_dict()
    assert any(not torch.equal(t.float(), base[name].half().float()) for name, t in tuned.items())  # it learned
    assert load_head(tmp_path / "head").config.tuned_layers == 1
    # The aligner runs the head on the tuned encoder: its scores are the trainer's, not the frozen encoder's.
    item = pairs[3].item
    aligner = BertSpanAligner(BertSpanAligner.Config(head=str(tmp_path / "head"), top_k=3, copies=False))
    (result,) = aligner.align([item])
    tuned_encoder = Encoder(str(tiny_encoder), tuned=tmp_path / "head" / "encoder.safetensors")
    ((src, tgt),) = tuned_encoder.encode([(item.source_tokens, item.target_tokens)])
    ((_, probs),) = score_items(load_head(tmp_path / "head"), [(src, tgt, item.source_span)], links_of_items(
        [(src, tgt, item.source_span)], [(item.source_tokens, item.target_tokens)], load_head(tmp_path / "head").config))
    assert result.score == pytest.approx(float(probs.max()), abs=1e-5)
    assert Encoder(str(tiny_encoder)).model.state_dict()["encoder.layer.1.output.dense.weight"].equal(
        base["encoder.layer.1.output.dense.weight"])  # the shared frozen encoder was not touched


def test_tuned_layers_from_another_encoder_and_a_missing_file_are_refused(tiny_encoder, tmp_path):
    from safetensors.torch import save_file

    from spanaug_core.errors import ConfigError

    save_file({"encoder.layer.1.output.dense.weight": torch.zeros(3, 3)}, str(tmp_path / "wrong.safetensors"))
    with pytest.raises(ConfigError, match="another encoder"):
        Encoder(str(tiny_encoder), tuned=tmp_path / "wrong.safetensors")
    config = HeadConfig(encoder=str(tiny_encoder), dim=32, hidden=4, tuned_layers=1)
    with pytest.raises(ValueError, match="without encoder weights"):
        save_head(SpanScorer(config), config, tmp_path / "head")
    save_head(SpanScorer(config), config.model_copy(update={"tuned_layers": 0}), tmp_path / "head")
    (tmp_path / "head" / "config.json").write_text(config.model_dump_json(), encoding="utf-8")
    with pytest.raises(ConfigError, match="encoder.safetensors is missing"):
        load_head(tmp_path / "head")
    with pytest.raises(ConfigError, match="cannot tune the top 3 layers"):
        Encoder(str(tiny_encoder)).tune_top(3)
    # A head whose encoder layers were tuned runs on that encoder only.
    encoder = Encoder(str(tiny_encoder))
    encoder.tune_top(1)
    save_head(SpanScorer(config), config, tmp_path / "tuned", encoder.tuned_parameters())
    other = BertSpanAligner(BertSpanAligner.Config(head=str(tmp_path / "tuned"), encoder="all-minilm-l6-v2"))
    with pytest.raises(ConfigError, match="cannot run on encoder=all-minilm-l6-v2"):
        other.align([AlignItem(source_tokens=SRC, source_span=(1, 2), target_tokens=TGT)])


def test_bert_span_hands_spans_longer_than_its_training_to_simalign(tiny_encoder, tmp_path):
    from spanaug_aligners.simalign import SimAlignAligner

    config = HeadConfig(encoder=str(tiny_encoder), dim=32, hidden=4, use_cos=True, use_links=True, longest_span=2)
    save_head(SpanScorer(config).eval(), config, tmp_path / "head")
    short = AlignItem(source_tokens=SRC, source_span=(1, 3), target_tokens=TGT)
    words = (*SRC[:-1], "and", "she", "saw", "the", "big", "dog", ".")
    long = AlignItem(source_tokens=words, source_span=(0, 9), target_tokens=(*TGT[:-1], "and", "she", "saw", "a", "dog", "."))
    simalign = SimAlignAligner(SimAlignAligner.Config(encoder=str(tiny_encoder), threshold=0.3)).align([long])[0]
    aligner = BertSpanAligner(BertSpanAligner.Config(head=str(tmp_path / "head"), top_k=3))
    by_head, by_simalign = aligner.align([short, long])
    assert not aligner.handed_over(short) and aligner.handed_over(long)
    assert len(by_head.candidates) == 3  # the head scored the short span's candidates
    assert by_simalign == simalign and by_simalign.span is not None
    strict = BertSpanAligner(BertSpanAligner.Config(head=str(tmp_path / "head"), simalign_threshold=1.0))
    assert strict.align([long])[0].span is None
    # simalign_over moves the boundary: at 9 the head answers both, and has no candidate for 9 words
    # (max_span 6 + k 2 is the longest it scores).
    wide = BertSpanAligner(BertSpanAligner.Config(head=str(tmp_path / "head"), top_k=3, simalign_over=9))
    assert wide.align([long])[0] == Alignment(span=None, score=0.0) and not wide.handed_over(long)
    # A head saved before longest_span was recorded answers every span itself, as it did.
    old = config.model_copy(update={"longest_span": None})
    save_head(SpanScorer(old).eval(), old, tmp_path / "old")
    assert BertSpanAligner(BertSpanAligner.Config(head=str(tmp_path / "old"))).align([long])[0].span is None


def test_bert_span_aligns_a_single_copy_of_the_span_without_the_head(tiny_encoder, tmp_path):
    config = HeadConfig(encoder=str(tiny_encoder), dim=32, hidden=4, use_cos=True, use_links=True, longest_span=3)
    save_head(SpanScorer(config).eval(), config, tmp_path / "head")
    aligner = BertSpanAligner(BertSpanAligner.Config(head=str(tmp_path / "head"), top_k=3))
    once = AlignItem(source_tokens=("The", "Man", *SRC[2:]), source_span=(0, 2), target_tokens=TGT)  # "the man", once
    twice = AlignItem(source_tokens=SRC, source_span=(0, 1), target_tokens=(*TGT[:-1], "at", "the", "door", "."))
    copy, by_head = aligner.align([once, twice])
    assert copy == Alignment(span=(6, 8), score=1.0, candidates=((6, 8, 1.0),))
    assert len(by_head.candidates) == 3  # "the" occurs twice: the head chose
    assert len(BertSpanAligner(BertSpanAligner.Config(head=str(tmp_path / "head"), top_k=3, copies=False)).align([once])[0].candidates) == 3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (CI has none)")
def test_bert_span_on_a_gpu_answers_as_on_the_cpu(tiny_encoder, tmp_path):
    # The encoder hands its word vectors back on the CPU while the head sits on the GPU:
    # this once failed with "Expected all tensors to be on the same device".
    config = HeadConfig(encoder=str(tiny_encoder), dim=32, hidden=4, use_cos=True, use_links=True, longest_span=2)
    torch.manual_seed(0)
    save_head(SpanScorer(config).eval(), config, tmp_path / "head")
    words = (*SRC[:-1], "and", "she", "saw", "the", "big", "dog", ".")
    items = [
        AlignItem(source_tokens=SRC, source_span=(1, 3), target_tokens=TGT),
        AlignItem(source_tokens=words, source_span=(0, 9), target_tokens=(*TGT[:-1], "and", "she", "saw", "a", "dog", ".")),
    ]
    cpu, gpu = (
        BertSpanAligner(BertSpanAligner.Config(head=str(tmp_path / "head"), top_k=3, device=d)).align(items) for d in ("cpu", "cuda")
    )
    assert [a.span for a in gpu] == [a.span for a in cpu]
    assert [a.score for a in gpu] == pytest.approx([a.score for a in cpu], abs=1e-4)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (CI has none)")
@pytest.mark.parametrize("tune_layers", [0, 1])
def test_training_on_a_gpu_lowers_loss_and_saves_a_head_the_cpu_loads(tiny_encoder, tmp_path, tune_layers):
    # Training feeds the head the same CPU-side rows as alignment does (see the test above); a tuned
    # encoder on the GPU gets its gradients back through them.
    options = TrainOptions(
        encoder=str(tiny_encoder), shape=HeadShape(hidden=16), epochs=4, patience=10, lr=5e-3, batch_size=8, device="cuda",
        tune_layers=tune_layers,
    )
    summary = train_head(_fixture_pairs(), _fixture_pairs()[:20], tmp_path / "head", options, cache_dir=tmp_path / "cache")
    assert summary["losses"][-1] < summary["losses"][0]
    assert load_head(tmp_path / "head").config.threshold == summary["threshold"]


def test_the_shipped_head_loads_and_every_file_of_it_is_pinned(tmp_path):
    import shutil

    from spanaug_core.errors import SpanaugError
    from spanaug_shared.models import verify_pinned
    from spanaug_aligners.bert_span import DEFAULT_HEAD, DEFAULT_HEAD_SHA256

    assert {f.name for f in DEFAULT_HEAD.iterdir()} == set(DEFAULT_HEAD_SHA256)
    verify_pinned(DEFAULT_HEAD, DEFAULT_HEAD_SHA256, "the shipped head")
    head = load_head(DEFAULT_HEAD)
    assert head.config.dim == 384 and 0.0 < head.config.threshold < 1.0
    copy = tmp_path / "head"
    shutil.copytree(DEFAULT_HEAD, copy)
    weights = copy / "head.safetensors"
    weights.write_bytes(weights.read_bytes()[:-1] + b"\0")
    with pytest.raises(SpanaugError, match="sha256 of .*head.safetensors"):
        verify_pinned(copy, DEFAULT_HEAD_SHA256, "the shipped head")
    weights.unlink()
    with pytest.raises(SpanaugError, match="missing"):
        verify_pinned(copy, DEFAULT_HEAD_SHA256, "the shipped head")


def test_save_load_identical_scores(tmp_path):
    cfg = HeadConfig(encoder="x", dim=8, hidden=4)
    model = SpanScorer(cfg).eval()
    save_head(model, cfg, tmp_path)
    again = load_head(tmp_path)
    x = (torch.randn(5, 8), torch.randn(5, 8), torch.randn(5, 7))
    assert torch.equal(model(*x), again(*x))


def test_embed_sim_finds_the_span_in_an_unchanged_sentence(tiny_encoder):
    aligner = EmbedSimAligner(EmbedSimAligner.Config(encoder=str(tiny_encoder), threshold=0.0, top_k=4))
    # Each sentence is encoded alone, so an unchanged sentence gives the span its own vector back.
    item = AlignItem(source_tokens=SRC, source_span=(1, 3), target_tokens=SRC)
    (res,) = aligner.align([item])
    assert res.span == (1, 3) and res.score == pytest.approx(1.0, abs=1e-4)
    assert len(res.candidates) == 4 and all(0.0 <= c[2] <= 1.0 for c in res.candidates)
    strict = EmbedSimAligner(EmbedSimAligner.Config(encoder=str(tiny_encoder), threshold=0.999))
    changed = AlignItem(source_tokens=SRC, source_span=(1, 3), target_tokens=tuple(reversed(SRC)))
    assert strict.align([changed])[0].span is None  # nothing in a reordered sentence is the same vector


@pytest.mark.real_model
def test_embed_sim_real_encoder_finds_a_synonym():
    from spanaug_shared.models import presets

    # Only a cached copy: fetching it would download (PyPI or the hub), and tests never download.
    if presets()["all-minilm-l6-v2"].cached() is None:
        pytest.skip("preset all-minilm-l6-v2 is not in the cache (spanaug models fetch all-minilm-l6-v2)")
    aligner = EmbedSimAligner(EmbedSimAligner.Config())
    item = AlignItem(source_tokens=SRC, source_span=(2, 3), target_tokens=TGT)  # "bought"
    assert aligner.align([item])[0].span == (4, 5)  # "purchased"


def test_simalign_links_mutual_best_words_and_itermax_adds_second_links():
    from spanaug_aligners.simalign import aligned_span, mutual_argmax, word_links

    similarity = torch.tensor([[0.9, 0.1, 0.2], [0.2, 0.8, 0.7], [0.1, 0.75, 0.3]])
    # Source word 2's best match (target 1) prefers source word 1: argmax leaves it unlinked.
    assert mutual_argmax(similarity).nonzero().tolist() == [[0, 0], [1, 1]]
    assert word_links(similarity, "argmax").nonzero().tolist() == [[0, 0], [1, 1]]
    # itermax lets unlinked words take a link, damped by alpha where the other word is linked.
    assert word_links(similarity, "itermax", rounds=2, alpha=0.9).nonzero().tolist() == [[0, 0], [1, 1], [1, 2], [2, 1]]
    links = word_links(similarity, "argmax")
    assert aligned_span(links, similarity, 0, 2) == ((0, 2), pytest.approx(0.85))
    assert aligned_span(links, similarity, 1, 3) == ((1, 2), pytest.approx(0.4))  # word 2 unlinked counts 0
    assert aligned_span(links, similarity, 2, 3) == (None, 0.0)


def test_simalign_edges_take_in_an_unlinked_word_where_the_span_edge_is_unlinked():
    from spanaug_aligners.simalign import aligned_span

    # "negotiating over the completion" -> "negotiations regarding the completion": "over"
    # and "regarding" link to nothing, so the bare hull of "over the completion" stops short.
    links = torch.zeros(4, 4, dtype=torch.bool)
    links[0, 0] = links[2, 2] = links[3, 3] = True
    similarity = torch.eye(4)
    target = ("negotiations", "regarding", "the", "completion")
    assert aligned_span(links, similarity, 1, 4)[0] == (2, 4)
    assert aligned_span(links, similarity, 1, 4, target)[0] == (1, 4)
    assert aligned_span(links, similarity, 1, 4, ("negotiations", ",", "the", "completion"))[0] == (2, 4)  # not a word
    assert aligned_span(links, similarity, 2, 4, target)[0] == (2, 4)  # "the" is linked: the edge is where it should be
    links[1, 0] = True  # now "over" has a link (to an earlier word): the hull is what the links say
    assert aligned_span(links, similarity, 1, 4, target)[0] == (0, 4)


def test_a_head_with_link_edges_marks_the_widened_hull():
    # The same pair as above: the hull column marks "the completion" for a head without
    # link_edges and "regarding the completion" for one with it, which needs the tokens.
    links = torch.zeros(4, 4, dtype=torch.bool)
    links[0, 0] = links[2, 2] = links[3, 3] = True
    similarity = torch.eye(4)
    target = ("negotiations", "regarding", "the", "completion")
    spans = [(1, 4), (2, 4)]
    hull = 4  # the column of link_signals
    assert link_signals(similarity, links, (1, 4), spans)[:, hull].tolist() == [0, 1]
    assert link_signals(similarity, links, (1, 4), spans, target)[:, hull].tolist() == [1, 0]
    cfg = HeadConfig(encoder="x", dim=4, hidden=8, use_links=True, link_edges=True)
    src, tgt = torch.randn(4, 4), torch.randn(4, 4)
    with pytest.raises(ValueError, match="target tokens"):
        item_links(src, tgt, (1, 4), cfg)
    (rows,) = links_of_items([(src, tgt, (1, 4))], [(("negotiating", "over", "the", "completion"), target)], cfg)
    assert torch.equal(rows, item_links(src, tgt, (1, 4), cfg, target))


def test_simalign_finds_the_span_in_an_unchanged_sentence_and_answers_none_without_links(tiny_encoder):
    from spanaug_aligners.simalign import SimAlignAligner

    aligner = SimAlignAligner(SimAlignAligner.Config(encoder=str(tiny_encoder)))
    same = AlignItem(source_tokens=SRC, source_span=(1, 3), target_tokens=SRC)
    moved = AlignItem(source_tokens=SRC, source_span=(2, 3), target_tokens=(".", *SRC[:-1]))
    found = aligner.align([same, moved])
    assert found[0].span == (1, 3) and found[0].score == pytest.approx(1.0, abs=1e-4)
    assert found[1].span == (3, 4)  # every word moved one to the right
    strict = SimAlignAligner(SimAlignAligner.Config(encoder=str(tiny_encoder), threshold=1.0))
    other = AlignItem(source_tokens=SRC, source_span=(1, 3), target_tokens=("a", "dog", "barked"))
    assert strict.align([other])[0].span is None
