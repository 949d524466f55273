"""FrameNet from-scratch ablation on the embedded sample: seed selection, LU scoring, CLI."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from spanaug_framenet.ablation import lu_form, select_seed
from spanaug_framenet.release import SAMPLE

from spanaug_core.cli import cli
from spanaug_core.plugins import Registry


def record(frame: str, tokens: list[str], start: int, lu: str) -> str:
    span = {"start": start, "end": start + 1, "label": frame, "role": "target", "group": "1", "attrs": {"lu": lu}}
    return json.dumps({"id": "x", "source_id": "y", "target": 0, "iteration": 1, "tokens": tokens, "text": " ".join(tokens),
                       "spans": [span], "scores": {}, "constraints": {}})


def test_seed_keeps_earliest_frames_lus_and_annotations() -> None:
    seed = select_seed(SAMPLE, n_frames=2, n_lus=1, n_annotations=2)
    assert seed.seed_lus == {"Motion": {"move.v"}, "Statement": {"say.v"}}
    assert seed.held_out["Motion"] == {"drift.v", "roll.v"}
    assert len(seed.examples) == 4
    assert all(len([s for s in e.spans if s.role == "target"]) == 1 for e in seed.examples)


def test_lu_form_lemmatizes_triggers() -> None:
    assert lu_form("Reached", "v") == "reach.v"
    assert lu_form("arrivals", "n") == "arrival.n"


def test_eval_command_scores_a_run(tmp_path: Path) -> None:
    registry = Registry()
    registry.add_commands(cli)
    runner = CliRunner()
    seed_dir, run = tmp_path / "seed", tmp_path / "run"
    result = runner.invoke(cli, ["convert", "framenet-seed", "--input", str(SAMPLE), "--output", str(seed_dir), "--frames", "3", "--lus", "1", "--annotations", "2"])
    assert result.exit_code == 0, result.output
    run.mkdir()
    (run / "augmented.jsonl").write_text("\n".join([
        record("Arriving", ["They", "reached", "home"], 1, "arrive.v"),    # held out: true positive
        record("Motion", ["It", "drifts"], 1, "move.v"),                   # held out: true positive
        record("Motion", ["We", "walked"], 1, "move.v"),                   # walk.v: false positive
        record("Arriving", ["She", "arrived"], 1, "arrive.v"),            # a seed LU: neither
    ]) + "\n")
    result = runner.invoke(cli, ["eval", "framenet-lus", "--seed", str(seed_dir), "--run", str(run), "--json"])
    assert result.exit_code == 0, result.output
    numbers = json.loads(result.output)
    assert (numbers["true_positives"], numbers["false_positives"], numbers["false_negatives"]) == (2, 1, 5)
    assert numbers["unique_frame_lemma"] == 4 and numbers["multiple"] == (6 + 4) / 6
