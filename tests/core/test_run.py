"""Runs on disk: output files, the manifest, resume after an interruption, refusals."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import spanaug_expanders
import spanaug_filters
import spanaug_jsonl
from doubles import DoublesPlugin, SynonymDecoder, before_decode_call, ctrl_c
from pydantic import ConfigDict, model_validator
from spanaug_jsonl.dataset import JsonlDataset

from spanaug_core.config import load_run_config
from spanaug_core.errors import ConfigError, RunStateError, SpanaugError
from spanaug_core.hookspecs import hookimpl
from spanaug_core.output import RunStore
from spanaug_core.protocols import ComponentConfig
from spanaug_core.run import (
    execute,
    resolved_component_options,
    with_preset,
    with_suggested_settings,
)
from spanaug_core.settings import RunPreset
from spanaug_core.types import Augmented

SENTENCES = [
    ("The panel will corroborate it .", 3, "corroborate"),
    ("They buy bread .", 1, "buy"),
    ("We will confirm the date .", 2, "confirm"),
]


@pytest.fixture
def run_registry(registry):
    for plugin, name in ((spanaug_jsonl, "jsonl"), (spanaug_expanders, "expanders"), (spanaug_filters, "filters")):
        registry.add_plugin(plugin, name)
    registry.add_plugin(DoublesPlugin(), "doubles")
    return registry


def write_input(path: Path, n: int) -> Path:
    with path.open("w") as fh:
        for i in range(n):
            text, pos, _ = SENTENCES[i % len(SENTENCES)]
            tokens = text.split()
            fh.write(json.dumps({"id": f"s{i}", "tokens": tokens, "spans": [{"start": pos, "end": pos + 1, "label": "F"}]}) + "\n")
    return path


def config_for(tmp_path: Path, n: int = 9, **flags):
    data = write_input(tmp_path / "in.jsonl", n)
    base = {
        "dataset.name": "jsonl",
        "input": str(data),
        "decoder.name": "synonym",
        "aligner.name": "diff",
        "output": str(tmp_path / "out"),
        "commit_every_s": 0,  # commit at every checkpoint
        "decoder.batch_size": 3,
        "iterations": 3,
    }
    base.update(flags)
    return load_run_config(None, base)


def rewrite_manifest(tmp_path: Path, change: Callable[[dict[str, Any]], object]) -> None:
    """Change the manifest of the run in ``tmp_path/out`` as an older spanaug (or a crash) might have left it."""
    path = tmp_path / "out" / "manifest.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))


def read_records(out: Path) -> list[Augmented]:
    return [Augmented.model_validate_json(line) for line in (out / "augmented.jsonl").read_text().splitlines()]


def test_a_run_writes_records_rejections_and_manifest(tmp_path, run_registry) -> None:
    config = config_for(tmp_path, filters=["copy", {"name": "max-iteration", "max_iteration": 2}])
    summary = execute(config, registry=run_registry)
    out = tmp_path / "out"
    records = read_records(out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert summary.status == manifest["status"] == "completed"
    assert manifest["counts"]["accepted"] == len(records) > 0
    assert manifest["progress"]["examples_done"] == 9 and manifest["progress"]["last_example_id"] == "s8"
    assert manifest["config"]["decoder"] == {"name": "synonym", "batch_size": 3} and "python" in manifest["versions"]
    assert all(r.iteration <= 2 for r in records)
    rejected = [json.loads(line) for line in (out / "rejected.jsonl").read_text().splitlines()]
    reasons = {r["reason"] for r in rejected}
    assert "max-iteration: iteration 3 > 2" in reasons and "no-candidates" in reasons
    assert all(r.components == {"decoder": "synonym", "aligner": "diff", "expander": "inflect"} for r in records)


def test_resume_after_interruption_loses_and_duplicates_nothing(tmp_path, run_registry, monkeypatch) -> None:
    (tmp_path / "ref").mkdir()
    execute(config_for(tmp_path / "ref"), registry=run_registry)
    expected = read_records(tmp_path / "ref" / "out")

    # Ctrl-C at the 5th decoder call, with examples in progress.
    before_decode_call(monkeypatch, 5, ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        execute(config_for(tmp_path), registry=run_registry)
    out = tmp_path / "out"
    manifest = json.loads((out / "manifest.json").read_text())
    progress = manifest["progress"]
    assert manifest["status"] == "interrupted" and 0 < progress["examples_done"] < 9
    # Examples read but not finished are committed with their state, to go on from.
    in_flight = [s["example"]["id"] for s in progress["in_flight"]]
    assert progress["examples_read"] == progress["examples_done"] + len(in_flight)
    assert in_flight == [f"s{i}" for i in range(progress["examples_done"], progress["examples_read"])]
    assert any(s["iteration"] >= 1 for s in progress["in_flight"])
    written = (out / "augmented.jsonl").read_text()
    assert all(json.loads(line) for line in written.splitlines())  # whole lines only

    summary = execute(config_for(tmp_path), resume=True, registry=run_registry)
    assert summary.status == "completed"
    assert read_records(out) == expected
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["accepted"] == len(expected) and manifest["resumed"] is True


class RepairingJsonl(JsonlDataset):
    """A jsonl reader that counts a repair for each example with an even number, as a release's reader counts its quirks."""

    name = "repairing"

    def __init__(self, config: JsonlDataset.Config) -> None:
        super().__init__(config)
        self.warnings: Counter[str] = Counter()

    def read(self, path):  # type: ignore[no-untyped-def]
        for example in super().read(path):
            if int(example.id.removeprefix("s")) % 2 == 0:
                self.warnings["even examples repaired"] += 1
            yield example


class RepairingPlugin:
    @hookimpl
    def register_datasets(self, register):  # type: ignore[no-untyped-def]
        register(RepairingJsonl)


def test_what_the_reader_repaired_reaches_the_manifest_and_the_summary_whole_after_a_resume(tmp_path, run_registry, monkeypatch) -> None:
    run_registry.add_plugin(RepairingPlugin(), "repairing")
    before_decode_call(monkeypatch, 3, ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        execute(config_for(tmp_path, **{"dataset.name": "repairing"}), registry=run_registry)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and 0 < manifest["reader_warnings"]["even examples repaired"] < 5
    # The resumed run reads the input from its start again: its count covers all 9 examples, once.
    summary = execute(config_for(tmp_path, **{"dataset.name": "repairing"}), resume=True, registry=run_registry)
    assert summary.reader_warnings == {"even examples repaired": 5}
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["reader_warnings"] == {"even examples repaired": 5}


def test_existing_output_needs_resume(tmp_path, run_registry) -> None:
    execute(config_for(tmp_path), registry=run_registry)
    with pytest.raises(RunStateError, match="already holds a run.*--resume"):
        execute(config_for(tmp_path), registry=run_registry)


def test_resume_refuses_a_changed_config(tmp_path, run_registry) -> None:
    execute(config_for(tmp_path), registry=run_registry)
    with pytest.raises(RunStateError, match="differs in iterations .iterations: the run had 3, now 2.*--set KEY=VALUE"):
        execute(config_for(tmp_path, iterations=2), resume=True, registry=run_registry)
    with pytest.raises(RunStateError, match="differs in iterations, top_m"):
        execute(config_for(tmp_path, iterations=4, top_m=3), resume=True, registry=run_registry)


def read_rejected(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "rejected.jsonl").read_text().splitlines()]


# A filter that drops some records (their rounds still grow the avoid set) and spans that stop.
GROWN = {"filters": ["copy", {"name": "max-iteration", "max_iteration": 2}], "decoder.batch_size": 2}


@pytest.mark.parametrize("per_round", [1, 2])
def test_a_completed_run_resumed_with_more_iterations_writes_what_a_longer_run_writes(tmp_path, run_registry, per_round) -> None:
    grown = {**GROWN, "per_round": per_round}  # 2: a round's further records grow the avoid set in the replay too
    (tmp_path / "ref").mkdir()
    execute(config_for(tmp_path / "ref", iterations=4, **grown), registry=run_registry)
    ref = tmp_path / "ref" / "out"
    execute(config_for(tmp_path, iterations=1, **grown), registry=run_registry)
    out = tmp_path / "out"
    first = read_records(out)
    execute(config_for(tmp_path, iterations=2, **grown), resume=True, registry=run_registry)
    summary = execute(config_for(tmp_path, iterations=4, **grown), resume=True, registry=run_registry)
    assert summary.status == "completed"
    records = read_records(out)
    assert records[: len(first)] == first  # what the run had stays as it was; the new rounds follow
    assert sorted(records, key=lambda r: r.id) == sorted(read_records(ref), key=lambda r: r.id)
    assert {r.iteration for r in records} == {1, 2} and {r["iteration"] for r in read_rejected(out)} >= {3}
    assert any(r.id.endswith(".2") for r in records) == (per_round == 2)
    key = lambda line: (line["source_id"], line["target"], line["iteration"])  # noqa: E731
    assert sorted(read_rejected(out), key=key) == sorted(read_rejected(ref), key=key)
    manifest, expected = (json.loads((folder / "manifest.json").read_text()) for folder in (out, ref))
    assert [(s["from"], s["to"]) for s in manifest["iterations_added"]] == [(1, 2), (2, 4)]
    assert manifest["config"]["iterations"] == 4 and manifest["progress"]["examples_done"] == 9
    for count in ("examples", "jobs", "accepted", "rejected", "stopped"):
        assert manifest["counts"][count] == expected["counts"][count], count
    # Taken further, it resumes as any run: nothing left to do.
    assert execute(config_for(tmp_path, iterations=4, **grown), resume=True, registry=run_registry).status == "completed"
    assert read_records(out) == records


def test_taking_a_run_further_survives_an_interruption(tmp_path, run_registry, monkeypatch) -> None:
    (tmp_path / "ref").mkdir()
    execute(config_for(tmp_path / "ref", iterations=3, **GROWN), registry=run_registry)
    execute(config_for(tmp_path, iterations=1, **GROWN), registry=run_registry)
    before_decode_call(monkeypatch, 2, ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        execute(config_for(tmp_path, iterations=3, **GROWN), resume=True, registry=run_registry)
    progress = json.loads((tmp_path / "out" / "manifest.json").read_text())["progress"]
    assert progress["continuing"]["iterations"] == 1 and progress["in_flight"]
    monkeypatch.undo()
    execute(config_for(tmp_path, iterations=3, **GROWN), resume=True, registry=run_registry)
    assert sorted(read_records(tmp_path / "out"), key=lambda r: r.id) == sorted(read_records(tmp_path / "ref" / "out"), key=lambda r: r.id)


def test_a_run_is_taken_further_only_when_it_completed_and_kept_what_it_needs(tmp_path, run_registry, monkeypatch) -> None:
    before_decode_call(monkeypatch, 3, ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        execute(config_for(tmp_path, iterations=2), registry=run_registry)
    monkeypatch.undo()
    with pytest.raises(RunStateError, match="has not completed. Resume it with --iterations 2 first"):
        execute(config_for(tmp_path, iterations=3), resume=True, registry=run_registry)

    (tmp_path / "quiet").mkdir()
    execute(config_for(tmp_path / "quiet", iterations=1, write_rejected=False), registry=run_registry)
    with pytest.raises(RunStateError, match="write_rejected = false"):
        execute(config_for(tmp_path / "quiet", iterations=2, write_rejected=False), resume=True, registry=run_registry)

    (tmp_path / "chain").mkdir()
    execute(config_for(tmp_path / "chain", iterations=1, chain=True), registry=run_registry)
    with pytest.raises(ConfigError, match="chain = true: its rounds' sentences are not kept"):
        execute(config_for(tmp_path / "chain", iterations=2, chain=True), resume=True, registry=run_registry)


def test_a_run_whose_records_do_not_replay_is_not_taken_further(tmp_path, run_registry) -> None:
    execute(config_for(tmp_path, iterations=1), registry=run_registry)
    path = tmp_path / "out" / "augmented.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[1])
    record["constraints"]["avoid"] = ["something else"]
    lines[1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    rewrite_manifest(tmp_path, lambda m: m["progress"].update(augmented_bytes=path.stat().st_size))
    with pytest.raises(RunStateError, match=f"example '{record['source_id']}'.*other constraints in iteration 1"):
        execute(config_for(tmp_path, iterations=2), resume=True, registry=run_registry)


def test_a_run_whose_input_lost_examples_is_not_taken_further(tmp_path, run_registry) -> None:
    execute(config_for(tmp_path, iterations=1), registry=run_registry)
    config = config_for(tmp_path, iterations=2)
    lines = (tmp_path / "in.jsonl").read_text().splitlines()
    (tmp_path / "in.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(RunStateError, match="fewer than the 9 examples the run had done"):
        execute(config, resume=True, registry=run_registry)
    (tmp_path / "in.jsonl").write_text("\n".join([*lines[:-1], lines[0].replace('"s0"', '"s9"')]) + "\n")
    with pytest.raises(RunStateError, match="example 9 of the input is 's9', but the run had 's8' there"):
        execute(config, resume=True, registry=run_registry)
    (tmp_path / "in.jsonl").write_text("\n".join([lines[1], lines[0], *lines[2:]]) + "\n")
    with pytest.raises(RunStateError, match="iteration 1 in the run's files .did the input change"):
        execute(config, resume=True, registry=run_registry)


def test_resume_refuses_a_changed_input(tmp_path, run_registry) -> None:
    execute(config_for(tmp_path, limit=4), registry=run_registry)
    config = config_for(tmp_path, limit=8)
    lines = (tmp_path / "in.jsonl").read_text().splitlines()
    lines[3], lines[4] = lines[4], lines[3]  # the 4th example, the last one done, moves
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(RunStateError, match="did the input change"):
        execute(config, resume=True, registry=run_registry)


def test_resume_with_a_larger_limit_continues(tmp_path, run_registry) -> None:
    execute(config_for(tmp_path, limit=4), registry=run_registry)
    first = read_records(tmp_path / "out")
    execute(config_for(tmp_path, limit=9), resume=True, registry=run_registry)
    both = read_records(tmp_path / "out")
    assert both[: len(first)] == first and {r.source_id for r in both} == {f"s{i}" for i in range(9)}


def test_bad_component_option_fails_before_writing(tmp_path, run_registry) -> None:
    from spanaug_core.errors import ConfigError

    with pytest.raises(ConfigError, match="aligner 'diff': option 'threshold'"):
        execute(config_for(tmp_path, **{"aligner.threshold": "high"}), registry=run_registry)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("dataset", "good_file"),
    [
        ("jsonl", None),
        ("conll-ner", "EU B-ORG\nrejects O\nGerman B-MISC\ncall O\n. O\n"),
        ("conll-srl", "The\tDT\t-\t-\t(ARG0*\npanel\tNN\t-\t-\t*)\nwill\tMD\t-\t-\t*\nconfirm\tVB\tconfirm\t01\t(V*)\nit\tPRP\t-\t-\t(ARG1*)\n.\t.\t-\t-\t*\n"),
    ],
)
def test_a_run_that_fails_on_its_input_leaves_a_reusable_folder(run_registry, tmp_path, dataset, good_file) -> None:
    import spanaug_conll_srl
    import spanaug_ner

    run_registry.add_plugin(spanaug_ner, "ner")
    run_registry.add_plugin(spanaug_conll_srl, "conll_srl")
    good = write_input(tmp_path / "in.jsonl", 3) if good_file is None else tmp_path / "good.txt"
    if good_file is not None:
        good.write_text(good_file)
    wrong = config_for(tmp_path, **{"dataset.name": dataset, "input": str(tmp_path / "missing.txt")})
    with pytest.raises(SpanaugError):
        execute(wrong, registry=run_registry)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "missing.txt" in manifest["error"]
    fixed = config_for(tmp_path, **{"dataset.name": dataset, "input": str(good)})
    assert execute(fixed, registry=run_registry).status == "completed"  # no --resume, no deleting by hand
    assert execute(config_for(tmp_path, **{"dataset.name": dataset, "input": str(good), "output": str(tmp_path / "o2")}),
                   registry=run_registry, resume=True).status == "completed"


@pytest.mark.parametrize("work", ["examples_done", "examples_read", "in_flight", "augmented_bytes", "rejected_bytes"])
def test_a_failed_run_with_committed_work_still_needs_resume(run_registry, tmp_path, work) -> None:
    # Any one sign of committed work is enough to keep the folder for --resume.
    config = config_for(tmp_path)
    execute(config, registry=run_registry)

    def failed_with_only(manifest: dict[str, Any]) -> None:
        manifest.update(status="failed")
        progress = manifest["progress"]
        progress.update({key: ([] if key == "in_flight" else 0) for key in ("examples_done", "examples_read", "in_flight",
                                                                            "augmented_bytes", "rejected_bytes") if key != work})
        progress[work] = progress[work] or [{}]

    rewrite_manifest(tmp_path, failed_with_only)
    with pytest.raises(RunStateError, match="already holds a run"):
        execute(config, registry=run_registry)


def test_records_without_a_manifest_are_not_taken_for_a_run(run_registry, tmp_path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "augmented.jsonl").write_text("{}\n")
    with pytest.raises(RunStateError, match=r"out has augmented.jsonl but no manifest.json: it is not a spanaug run folder"):
        execute(config_for(tmp_path), registry=run_registry, resume=True)


def test_a_resumed_run_counts_the_time_it_ran_before(run_registry, tmp_path) -> None:
    execute(config_for(tmp_path), registry=run_registry)
    rewrite_manifest(tmp_path, lambda manifest: manifest["timings"].update(elapsed_s=1000.0))
    execute(config_for(tmp_path), registry=run_registry, resume=True)
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["timings"]["elapsed_s"] >= 1000.0


@pytest.mark.parametrize("setting", ["avoid_words", "carry", "source_tokens"])
def test_a_run_started_before_a_setting_existed_resumes_as_it_began(run_registry, tmp_path, setting: str) -> None:
    config = config_for(tmp_path, **{setting: False})
    execute(config, registry=run_registry)
    # As a manifest written before the setting existed.
    rewrite_manifest(tmp_path, lambda manifest: manifest["fingerprint"].pop(setting))
    # Such a run did without it (avoid_words: whole phrases only; carry: the rewritten group
    # only; source_tokens: spanaug's tokens): it resumes so, not with the new default.
    with pytest.raises(RunStateError, match=f"differs in {setting}"):
        execute(config_for(tmp_path), registry=run_registry, resume=True)
    assert execute(config, registry=run_registry, resume=True).status == "completed"


def test_the_manifest_keeps_every_component_option_with_its_default(run_registry, tmp_path) -> None:
    execute(config_for(tmp_path, filters=["copy", {"name": "max-iteration", "max_iteration": 2}]), registry=run_registry)
    options = json.loads((tmp_path / "out" / "manifest.json").read_text())["options"]
    assert options["expander"]["max_variants"] == 64  # not set: the default is written down
    assert options["filters"][1] == {"max_iteration": 2}
    assert set(options) == {"dataset", "expander", "decoder", "aligner", "filters", "lexicon"} and options["lexicon"] is None


def test_resume_refuses_a_component_default_that_changed_since_the_run_began(run_registry, tmp_path) -> None:
    config = config_for(tmp_path, limit=4)
    execute(config, registry=run_registry)
    # As if an older spanaug's default had been 32.
    rewrite_manifest(tmp_path, lambda manifest: manifest["options"]["expander"].update(max_variants=32))
    with pytest.raises(RunStateError, match=r"differs in expander\.max_variants \(expander\.max_variants: the run had 32, now 64\)"):
        execute(config_for(tmp_path), registry=run_registry, resume=True)
    # Setting the run's value goes on; it is no change of the settings the run wrote down.
    assert execute(config_for(tmp_path, **{"expander.max_variants": 32}), registry=run_registry, resume=True).status == "completed"


def test_resume_accepts_a_default_written_out_and_refuses_a_changed_filter_option(run_registry, tmp_path) -> None:
    execute(config_for(tmp_path, limit=3, filters=["copy"]), registry=run_registry)
    written_out = config_for(tmp_path, limit=6, filters=["copy"], **{"expander.max_variants": 64})
    assert execute(written_out, registry=run_registry, resume=True).status == "completed"
    changed = config_for(tmp_path, limit=9, filters=[{"name": "max-iteration", "max_iteration": 2}])
    with pytest.raises(RunStateError, match=r"differs in filters \(filters: the run had \['copy'\], now \['max-iteration'\]\)"):
        execute(changed, registry=run_registry, resume=True)


def test_a_run_from_before_options_were_kept_still_resumes(run_registry, tmp_path) -> None:
    execute(config_for(tmp_path, limit=4), registry=run_registry)
    rewrite_manifest(tmp_path, lambda manifest: manifest.pop("options"))
    assert execute(config_for(tmp_path), registry=run_registry, resume=True).status == "completed"
    with pytest.raises(RunStateError, match="differs in expander"):  # compared as written, as before
        execute(config_for(tmp_path, **{"expander.max_variants": 64}), registry=run_registry, resume=True)


class Opaque:
    """A value JSON cannot hold."""


class OpaqueDecoder(SynonymDecoder):
    """The synonym double with an option of a type of its own, as a plugin may have."""

    name = "opaque"

    class Config(SynonymDecoder.Config):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        handle: Opaque = Opaque()


class OpaquePlugin:
    @hookimpl
    def register_decoders(self, register):  # type: ignore[no-untyped-def]
        register(OpaqueDecoder)


def test_an_option_json_cannot_hold_is_recorded_by_its_type(run_registry, tmp_path) -> None:
    run_registry.add_plugin(OpaquePlugin(), "opaque")
    options = resolved_component_options(run_registry.plan(config_for(tmp_path, **{"decoder.name": "opaque"})))
    assert options["decoder"]["handle"] == "<Opaque>"


class CountedDecoder(SynonymDecoder):
    """The synonym double, counting how often its options are validated."""

    name = "counted"
    validated = 0

    class Config(SynonymDecoder.Config):
        @model_validator(mode="after")
        def _count(self):  # type: ignore[no-untyped-def]
            CountedDecoder.validated += 1
            return self


class CountedPlugin:
    @hookimpl
    def register_decoders(self, register):  # type: ignore[no-untyped-def]
        register(CountedDecoder)


def test_a_run_validates_each_component_option_once(run_registry, tmp_path) -> None:
    run_registry.add_plugin(CountedPlugin(), "counted")
    CountedDecoder.validated = 0
    execute(config_for(tmp_path, n=2, **{"decoder.name": "counted", "decoder.beam_size": 4}), registry=run_registry)
    assert CountedDecoder.validated == 1


class SuggestingPlugin:
    """A jsonl reader whose data is best augmented without rewriting spans labelled F."""

    def __init__(self, suggested: dict, presets: tuple = ()) -> None:
        self.cls = type("Suggesting", (JsonlDataset,), {"name": "suggesting", "suggested_settings": suggested, "presets": presets})

    @hookimpl
    def register_datasets(self, register):  # type: ignore[no-untyped-def]
        register(self.cls)


def test_a_dataset_suggestion_applies_where_the_run_set_nothing(run_registry, tmp_path) -> None:
    run_registry.add_plugin(SuggestingPlugin({"skip_labels": ["F"]}), "suggesting")
    config = config_for(tmp_path, n=3, **{"dataset.name": "suggesting"})
    assert with_suggested_settings(config, run_registry)[1] == {"skip_labels": ["F"]}
    summary = execute(config, registry=run_registry)
    assert summary.counts["skipped_spans"] == 3 and summary.counts["accepted"] == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["config"]["skip_labels"] == ["F"]
    # The same command resumes: the suggestion is applied again, equal to what the run recorded.
    execute(config, resume=True, registry=run_registry)


def test_a_setting_the_user_gave_wins_over_the_suggestion_even_when_it_is_the_default(run_registry, tmp_path) -> None:
    run_registry.add_plugin(SuggestingPlugin({"skip_labels": ["F"]}), "suggesting")
    config = config_for(tmp_path, n=3, **{"dataset.name": "suggesting", "skip_labels": []})
    assert with_suggested_settings(config, run_registry) == (config, {})
    assert execute(config, registry=run_registry).counts["accepted"] > 0


def test_a_suggested_filter_list_is_said_as_a_config_file_writes_it(run_registry, tmp_path) -> None:
    run_registry.add_plugin(SuggestingPlugin({"filters": ["copy"]}), "suggesting")
    notes: list[str] = []
    execute(config_for(tmp_path, n=3, **{"dataset.name": "suggesting"}), registry=run_registry, note=notes.append)
    assert notes == ["filters = [{'name': 'copy'}]: the suggesting dataset's suggestion (set filters to override it)"]


@pytest.mark.parametrize(("suggested", "message"), [({"skip_label": ["F"]}, "unknown setting"), ({"top_m": 0}, "invalid setting")])
def test_a_bad_suggestion_names_the_dataset(run_registry, tmp_path, suggested, message) -> None:
    run_registry.add_plugin(SuggestingPlugin(suggested), "suggesting")
    with pytest.raises(ConfigError, match=f"dataset 'suggesting' suggests (an )?{message}"):
        with_suggested_settings(config_for(tmp_path, n=3, **{"dataset.name": "suggesting"}), run_registry)


class TableLexicon:
    """Offers a fixed list of words for every span, less the avoided ones."""

    name = "table"

    class Config(ComponentConfig):
        words: tuple[str, ...] = ("verify", "support")

    def __init__(self, config: Config) -> None:
        self.config = config

    def alternatives(self, example, span, avoid):  # type: ignore[no-untyped-def]
        return [w for w in self.config.words if w not in avoid]


class LexiconPlugin:
    @hookimpl
    def register_lexicons(self, register):  # type: ignore[no-untyped-def]
        register(TableLexicon)


def test_a_suggested_lexicon_offers_its_words_and_null_turns_it_off(run_registry, tmp_path) -> None:
    run_registry.add_plugin(LexiconPlugin(), "lexicon")
    run_registry.add_plugin(SuggestingPlugin({"lexicon": {"name": "table", "words": ["verify"]}}), "suggesting")
    config = config_for(tmp_path, n=3, iterations=1, **{"dataset.name": "suggesting"})
    config, applied = with_suggested_settings(config, run_registry)
    assert applied["lexicon"].name == "table" and applied["lexicon"].options == {"words": ["verify"]}
    execute(config, registry=run_registry)
    records = read_records(tmp_path / "out")
    assert records and all(r.constraints.prefer == ("verify",) for r in records)
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["config"]["lexicon"] == {"name": "table", "words": ["verify"]}
    # `--set lexicon=null` is a setting given: the suggestion does not apply.
    off = load_run_config(None, {"dataset.name": "suggesting"}, ["lexicon=null"])
    assert off.lexicon is None and with_suggested_settings(off, run_registry) == (off, {})


def test_the_lexicon_options_reach_the_manifest_and_resume_checks_them(run_registry, tmp_path) -> None:
    run_registry.add_plugin(LexiconPlugin(), "lexicon")
    execute(config_for(tmp_path, limit=2, iterations=1, lexicon="table"), registry=run_registry)
    options = json.loads((tmp_path / "out" / "manifest.json").read_text())["options"]
    assert options["lexicon"] == {"words": ["verify", "support"]}  # not set: the default is written down
    # As if an older spanaug's default had been this.
    rewrite_manifest(tmp_path, lambda manifest: manifest["options"]["lexicon"].update(words=["verify"]))
    with pytest.raises(RunStateError, match=r"differs in lexicon\.words \(lexicon\.words: the run had \['verify'\], now \['verify', 'support'\]\)"):
        execute(config_for(tmp_path, iterations=1, lexicon="table"), registry=run_registry, resume=True)
    resumed = config_for(tmp_path, iterations=1, lexicon={"name": "table", "words": ["verify"]})
    assert execute(resumed, registry=run_registry, resume=True).status == "completed"


def test_a_run_begun_with_the_pipeline_batch_size_resumes(run_registry, tmp_path) -> None:
    execute(config_for(tmp_path, limit=4), registry=run_registry)
    # The setting --batch-size set before the decoder's option took the flag.
    rewrite_manifest(tmp_path, lambda manifest: manifest["fingerprint"].update(batch_size=16))
    assert execute(config_for(tmp_path), registry=run_registry, resume=True).status == "completed"


def test_lexicon_options_without_a_name_go_to_the_suggested_lexicon_or_are_refused(run_registry, tmp_path) -> None:
    run_registry.add_plugin(LexiconPlugin(), "lexicon")
    with pytest.raises(ConfigError, match=r"lexicon options given without a lexicon to take them, and the jsonl dataset suggests none: name it too \(--lexicon NAME"):
        execute(config_for(tmp_path, **{"lexicon.words": "[a]"}), registry=run_registry)
    assert config_for(tmp_path, lexicon="table").lexicon.name == "table"
    run_registry.add_plugin(SuggestingPlugin({"lexicon": {"name": "table", "words": ["verify", "support"]}}), "suggesting")
    notes: list[str] = []
    config = config_for(tmp_path, n=3, iterations=1, **{"dataset.name": "suggesting", "lexicon.words": ["support"]})
    execute(config, registry=run_registry, note=notes.append)
    assert all(r.constraints.prefer == ("support",) for r in read_records(tmp_path / "out"))
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["config"]["lexicon"] == {"name": "table", "words": ["support"]}
    assert notes == ["lexicon = {'name': 'table', 'words': ['support']}: the suggesting dataset's suggestion (set lexicon to override it)"]
    execute(config, registry=run_registry, resume=True)  # the same command resumes



SURE = RunPreset(
    "sure", "fewer, surer records (a test's)", {"filters": ["copy", {"name": "max-iteration", "max_iteration": 1}], "top_m": 2,
                                                "iterations": 5, "decoder": {"beam_size": 3, "batch_size": 2}},
)


def test_a_preset_sets_what_the_run_leaves_unset_and_the_manifest_keeps_it(run_registry, tmp_path) -> None:
    run_registry.add_plugin(SuggestingPlugin({"skip_labels": ["G"]}, (SURE,)), "suggesting")
    notes: list[str] = []
    config = config_for(tmp_path, n=3, **{"dataset.name": "suggesting", "preset": "sure", "decoder.batch_size": 5})
    execute(config, registry=run_registry, note=notes.append)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())["config"]
    # config_for gives iterations: the run's own setting wins.
    assert manifest["preset"] == "sure" and manifest["top_m"] == 2 and manifest["iterations"] == 3 and manifest["skip_labels"] == ["G"]
    assert [f["name"] for f in manifest["filters"]] == ["copy", "max-iteration"]
    # A component's options one by one: the run's batch size, the preset's beam.
    assert manifest["decoder"] == {"name": "synonym", "beam_size": 3, "batch_size": 5}
    assert notes[0] == ("preset sure of the suggesting dataset: filters = ['copy', {'name': 'max-iteration', 'max_iteration': 1}], "
                        "top_m = 2, decoder = {'beam_size': 3} (an option you give wins over these)")
    execute(config, resume=True, registry=run_registry)  # the same command resumes
    with pytest.raises(RunStateError, match="differs in .*preset"):
        execute(config_for(tmp_path, n=3, **{"dataset.name": "suggesting", "decoder.batch_size": 5}), resume=True, registry=run_registry)


def test_a_list_the_run_gives_replaces_the_presets_and_an_unknown_preset_names_the_known(run_registry, tmp_path) -> None:
    run_registry.add_plugin(SuggestingPlugin({}, (SURE,)), "suggesting")
    config, applied = with_preset(config_for(tmp_path, n=3, **{"dataset.name": "suggesting", "preset": "sure", "filters": ["copy"]}), run_registry)
    assert [f.name for f in config.filters] == ["copy"] and "filters" not in applied and config.top_m == 2
    with pytest.raises(ConfigError, match=r"dataset 'suggesting' has no preset 'surer'; its presets: sure \(spanaug list presets\)"):
        with_preset(config_for(tmp_path, n=3, **{"dataset.name": "suggesting", "preset": "surer"}), run_registry)
    with pytest.raises(ConfigError, match="dataset 'jsonl' has no preset 'sure'; its presets: precise, more"):
        with_preset(config_for(tmp_path, n=3, preset="sure"), run_registry)


def test_every_builtin_preset_is_a_valid_run_config(installed_registry) -> None:
    from spanaug_core.config import RunConfig
    from spanaug_core.run import presets_of

    offered = {entry.name: presets_of(entry.name, installed_registry) for entry in installed_registry.entries("dataset")}
    assert {name for name, presets in offered.items() if set(presets) == {"precise", "more"}} >= {"framenet", "conll-srl", "conll-ner", "jsonl"}
    for name, presets in offered.items():
        for preset in presets.values():
            config, _ = with_preset(RunConfig(dataset={"name": name}, preset=preset.name), installed_registry)
            installed_registry.plan(config)  # every name and option validates (nothing is built)
            assert "docs/" in preset.description, f"{name} {preset.name} links no page that measured it"


class FileLexicon:
    """Offers the words of a file (one a line), which the dataset's input gives unless set."""

    name = "file"

    class Config(ComponentConfig):
        file: Path | None = None

    def __init__(self, config: Config) -> None:
        self.config = config

    def alternatives(self, example, span, avoid):  # type: ignore[no-untyped-def]
        words = self.config.file.read_text().split() if self.config.file else []
        return [w for w in words[:1] if w not in avoid]


class FileFilter:
    """Drops a record whose text is not in its file, which the dataset's input gives unless set."""

    name = "file-filter"

    class Config(ComponentConfig):
        file: Path | None = None

    def __init__(self, config: Config) -> None:
        self.config = config

    def check(self, record, context):  # type: ignore[no-untyped-def]
        return None if self.config.file and self.config.file.is_file() else "no file"


class InputPlugin:
    """A jsonl dataset whose input also gives the file lexicon's and the file filter's file (``input_options``)."""

    @hookimpl
    def register_datasets(self, register):  # type: ignore[no-untyped-def]
        register(type("Inputting", (JsonlDataset,), {
            "name": "inputting",
            "suggested_settings": {"lexicon": {"name": "file"}},
            "input_options": {("lexicon", "file"): "file", ("filter", "file-filter"): "file"},
        }))

    @hookimpl
    def register_lexicons(self, register):  # type: ignore[no-untyped-def]
        register(FileLexicon)

    @hookimpl
    def register_filters(self, register):  # type: ignore[no-untyped-def]
        register(FileFilter)


def test_the_input_gives_the_options_its_dataset_names_unless_the_run_sets_them(run_registry, tmp_path) -> None:
    run_registry.add_plugin(InputPlugin(), "input")
    notes: list[str] = []
    config = config_for(tmp_path, n=3, iterations=1, filters=["file-filter"], **{"dataset.name": "inputting"})
    given = str(tmp_path / "in.jsonl")
    summary = execute(config, registry=run_registry, note=notes.append)
    assert summary.counts["accepted"] > 0  # the filter found its file
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["config"]["lexicon"] == {"name": "file", "file": given} and manifest["config"]["filters"] == [{"name": "file-filter", "file": given}]
    assert manifest["options"]["lexicon"] == {"file": given}
    assert notes[1:] == [
        f"filters: file-filter.file = {given!r}: the inputting dataset's input "
        "(to read another: --set 'filters=[{name: file-filter, file: PATH}]' in place of --filter file-filter)",
        f"lexicon.file = {given!r}: the inputting dataset's input (to read another: --set lexicon.file=PATH)",
    ]
    assert all(r.constraints.prefer[:1] == ('{"id":',) for r in read_records(tmp_path / "out"))
    execute(config, registry=run_registry, resume=True)  # the same command resumes: the same input gives the same options

    # What the run sets wins; a resume checks the file the lexicon read.
    other = tmp_path / "words.txt"
    other.write_text("support\n")
    (tmp_path / "mine").mkdir()
    mine = config_for(tmp_path / "mine", n=3, iterations=1, filters=["file-filter"], **{"dataset.name": "inputting", "lexicon.file": str(other)})
    execute(mine, registry=run_registry)
    manifest = json.loads((tmp_path / "mine" / "out" / "manifest.json").read_text())
    assert manifest["config"]["lexicon"] == {"name": "file", "file": str(other)} and manifest["config"]["filters"][0]["file"] != str(other)
    assert all(r.constraints.prefer == ("support",) for r in read_records(tmp_path / "mine" / "out"))
    with pytest.raises(RunStateError, match=r"differs in .*lexicon\.file: the run had '.*words\.txt', now '.*in\.jsonl'"):
        execute(config_for(tmp_path / "mine", n=3, iterations=1, filters=["file-filter"], **{"dataset.name": "inputting"}), registry=run_registry, resume=True)


@pytest.mark.parametrize(("every_s", "due"), [(0, True), (3600, False)])
def test_a_commit_is_due_once_commit_every_s_has_passed(tmp_path, every_s, due) -> None:
    store = RunStore(tmp_path / "out", config_for(tmp_path, commit_every_s=every_s))
    store.open(resume=False)
    try:
        assert store.due() is due
    finally:
        store.finish("completed", {})
