"""FrameNet from-scratch ablation on the embedded sample: seed selection, LU scoring, CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from spanaug_framenet.ablation import lu_form, select_seed
from spanaug_framenet.reader import FrameNetReader
from spanaug_framenet.release import NAMESPACE, SAMPLE

from spanaug_core.cli import cli, main
from spanaug_core.errors import DataError
from spanaug_core.plugins import Registry

# An exemplar file of move.v (Motion's earliest LU) with one annotation older than the sample's.
MOVE_V = f"""<lexUnit xmlns="{NAMESPACE}" name="move.v" ID="70" frame="Motion" frameID="7" POS="V"><subCorpus name="V-np">
<sentence ID="5001"><text>Glaciers move slowly .</text><annotationSet cDate="01/01/1999 10:00:00 PST Fri" ID="7001">
<layer rank="1" name="Target"><label start="9" end="12" name="Target"/></layer>
<layer rank="1" name="FE"><label start="0" end="7" name="Theme"/></layer></annotationSet></sentence></subCorpus></lexUnit>"""


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


def test_seed_parses_only_the_lu_files_of_the_lus_it_chooses(tmp_path: Path) -> None:
    release = tmp_path / "fn"
    shutil.copytree(SAMPLE, release)
    (release / "lu").mkdir()
    (release / "lu" / "lu70.xml").write_text(MOVE_V)
    # drift.v and roll.v come after Motion's first annotated LU, announce.v after Statement's,
    # give.v is in a frame not chosen: parsing any of them would fail.
    for lu_id in (71, 72, 1002, 3001):
        (release / "lu" / f"lu{lu_id}.xml").write_text("<lexUnit this is not XML")
    with pytest.raises(DataError, match=r"lu1002\.xml: not well-formed"):
        list(FrameNetReader(FrameNetReader.Config()).read(release))
    seed = select_seed(release, n_frames=2, n_lus=1, n_annotations=2)
    assert seed.seed_lus == {"Motion": {"move.v"}, "Statement": {"say.v"}}
    assert next(e.id for e in seed.examples if e.spans[0].label == "Motion") == "fn-lu70-5001-as7001"
    assert len(seed.examples) == 4


def test_lu_form_lemmatizes_triggers() -> None:
    assert lu_form("Reached", "v") == "reach.v"
    assert lu_form("arrivals", "n") == "arrival.n"


def test_the_seed_command_refuses_an_earlier_seed_unless_overwrite(tmp_path: Path, capsys) -> None:
    seed_dir = tmp_path / "seed"
    args = ["convert", "framenet-seed", "--input", str(SAMPLE), "--output", str(seed_dir), "--frames", "3", "--lus", "1", "--annotations", "2"]
    assert main(args) == 0
    (seed_dir / "seed.jsonl").write_text("earlier\n")
    (seed_dir / "notes.txt").write_text("mine\n")
    lus = (seed_dir / "seed-lus.json").read_bytes()
    # Refused before FrameNet is read: a release folder that is not there goes unnoticed.
    assert main([*args[:3], str(tmp_path / "no-release"), *args[4:]]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {seed_dir / 'seed.jsonl'} exists; pass --overwrite to replace it, or choose another output")
    assert (seed_dir / "seed.jsonl").read_text() == "earlier\n" and (seed_dir / "seed-lus.json").read_bytes() == lus
    assert main([*args, "--overwrite"]) == 0
    assert (seed_dir / "seed.jsonl").read_text() != "earlier\n" and (seed_dir / "seed-lus.json").read_bytes() == lus
    assert sorted(p.name for p in seed_dir.iterdir()) == ["notes.txt", "seed-lus.json", "seed.jsonl"]


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
