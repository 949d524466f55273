"""The ray engine on a local 2-CPU cluster: the same output as a local run, and no loss when
a worker or the driver dies.

The pipeline runs on Ray actors with the scripted doubles (and once with a tiny random
Llama through the real VDBA decoder); the driver writes the run folder, which must equal
the local engine's byte for byte. Skipped when Ray (the ``ray`` extra) is not installed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from doubles import DoublesPlugin, write_examples

import spanaug_expanders
import spanaug_jsonl
from spanaug_core.config import load_run_config
from spanaug_core.errors import ConfigError, DataError, SpanaugError
from spanaug_core.outcomes import Checkpoint
from spanaug_core.plugins import Registry
from spanaug_core.run import execute
from spanaug_core.types import Augmented, Example

TESTS = Path(__file__).resolve().parents[2]
# Workers import the doubles as the driver does.
RUNTIME_ENV = {"env_vars": {"PYTHONPATH": str(TESTS)}}


def make_registry() -> Registry:
    registry = Registry(entry_points=False)
    for plugin, name in ((spanaug_jsonl, "jsonl"), (spanaug_expanders, "expanders"), (DoublesPlugin(), "doubles")):
        registry.add_plugin(plugin, name)
    # The ray engine's own plugin module, as its entry point would load it.
    import spanaug_ray

    registry.add_plugin(spanaug_ray, "ray")
    return registry


@pytest.fixture(scope="module")
def cluster() -> str:
    """A local 2-CPU Ray cluster on 127.0.0.1 for the module; its address, for drivers in subprocesses."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # listen on loopback only
    pytest.importorskip("ray.exceptions", reason="ray is not installed (pip install -e '.[ray]')")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR", runtime_env=RUNTIME_ENV)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()




def flags_for(tmp_path: Path, out: str, n: int = 10, **more: object) -> dict[str, object]:
    flags: dict[str, object] = {
        "dataset.name": "jsonl",
        "input": str(write_examples(tmp_path / "in.jsonl", n)),
        "decoder.name": "logged",
        "decoder.log": str(tmp_path / f"{out}.log"),
        "aligner.name": "diff",
        "output": str(tmp_path / out),
        "iterations": 3,
        "decoder.batch_size": 3,
        "commit_every_s": 0,
    }
    flags.update(more)
    return flags


def ray_flags(**more: object) -> dict[str, object]:
    return {"engine.name": "ray", "engine.workers": 2, "engine.chunk_size": 2, **more}


def files(out: Path) -> tuple[str, str]:
    return (out / "augmented.jsonl").read_text(), (out / "rejected.jsonl").read_text()


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> Path:
    """The reference: the same input through the local engine."""
    tmp = tmp_path_factory.mktemp("local")
    execute(load_run_config(None, flags_for(tmp, "out")), registry=make_registry())
    return tmp / "out"


def test_ray_writes_exactly_what_a_local_run_writes(cluster, local_run, tmp_path) -> None:
    summary = execute(load_run_config(None, flags_for(tmp_path, "out", **ray_flags())), registry=make_registry())
    out = tmp_path / "out"
    assert files(out) == files(local_run) and files(out)[0]
    manifest = json.loads((out / "manifest.json").read_text())
    local = json.loads((local_run / "manifest.json").read_text())
    assert manifest["status"] == "completed" and summary.status == "completed"
    for key in ("examples", "jobs", "accepted", "rejected", "stopped", "candidates"):
        assert manifest["counts"][key] == local["counts"][key], key
    engine = manifest["engine"]
    # The run starts once one worker is up; the other joins when it is (the run may end first).
    assert engine["name"] == "ray" and engine["workers"] == 2 and 1 <= len(engine["devices"]) <= 2
    assert all(d["host"] and d["gpus"] == [] and d["threads"] == 1 for d in engine["devices"])
    assert local["engine"] == {"name": "local", "workers": 1, "devices": [{}]}


def test_more_workers_than_the_cluster_holds_run_on_those_it_can_place(cluster, local_run, tmp_path) -> None:
    flags = flags_for(tmp_path, "out", **ray_flags(**{"engine.workers": 3}))  # 3 x 1 CPU on a 2-CPU cluster
    execute(load_run_config(None, flags), registry=make_registry())
    assert files(tmp_path / "out") == files(local_run)
    engine = json.loads((tmp_path / "out" / "manifest.json").read_text())["engine"]
    assert engine["workers"] == 3 and 1 <= len(engine["devices"]) <= 2


def test_a_worker_killed_mid_run_loses_nothing_and_writes_nothing_twice(cluster, local_run, tmp_path) -> None:
    import ray

    from spanaug_ray.engine import RayEngine

    config = load_run_config(None, flags_for(tmp_path, "out", **{"decoder.delay_s": 0.2}))
    examples = [Example.model_validate_json(line) for line in Path(config.input).read_text().splitlines()]
    engine = RayEngine(RayEngine.Config(workers=2, chunk_size=1))
    got: list[Augmented] = []
    with engine.start(make_registry().plan(config)) as execution:
        for outcome in execution.outcomes(examples):
            if isinstance(outcome, Augmented):
                if not got:
                    ray.kill(execution.slots[0].actor)  # what a lost node looks like to the driver
                got.append(outcome)
        restarts = sum(slot.deaths for slot in execution.slots)
    expected = [Augmented.model_validate_json(line) for line in files(local_run)[0].splitlines()]
    assert [r.id for r in got] == [r.id for r in expected] and got == expected
    assert restarts >= 1


def test_a_worker_process_that_dies_has_its_chunk_rerun(cluster, local_run, tmp_path) -> None:
    flags = flags_for(tmp_path, "out", **ray_flags(), **{"decoder.die_on": "date", "decoder.die_times": 2})
    execute(load_run_config(None, flags), registry=make_registry())
    assert files(tmp_path / "out") == files(local_run)
    assert (tmp_path / "out.deaths").read_text() == "xx"  # two workers died, the third try finished


def test_a_chunk_that_keeps_killing_workers_fails_the_run(cluster, tmp_path) -> None:
    more = {"decoder.die_on": "date", "decoder.die_times": 99, "engine.max_retries": 1}
    flags = flags_for(tmp_path, "out", n=4, **ray_flags(), **more)  # only s2 has "date"
    # The examples named are those the dying workers held: s2's chunk, with s0's if it was there too.
    with pytest.raises(SpanaugError, match=r"died 2 times while holding examples (s0|s2) \.\. s3"):
        execute(load_run_config(None, flags), registry=make_registry())
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["status"] == "failed"


def test_a_data_error_on_a_worker_fails_the_run_as_it_would_locally(cluster, tmp_path) -> None:
    flags = flags_for(tmp_path, "out", n=4, **ray_flags(), **{"decoder.fail_on": "date"})  # only s2 has "date"
    with pytest.raises(DataError, match="cannot paraphrase 'We will confirm the date.'"):
        execute(load_run_config(None, flags), registry=make_registry())
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "DataError" in manifest["error"]
    # Not retried: the failing sentence was decoded once.
    assert (tmp_path / "out.log").read_text().splitlines().count("We will confirm the date.") == 1


def test_resume_redispatches_only_the_chunks_not_finished(cluster, local_run, tmp_path) -> None:
    from spanaug_ray.engine import RayEngine, _Chunk

    config = load_run_config(None, flags_for(tmp_path, "out"))
    examples = [Example.model_validate_json(line) for line in Path(config.input).read_text().splitlines()]
    engine = RayEngine(RayEngine.Config(workers=1, chunk_size=2))
    with engine.start(make_registry().plan(config)) as execution:
        first = [o for o in execution.outcomes(examples[:2]) if not isinstance(o, Checkpoint)]
    # The state a driver commits while chunk 0 (s0, s1) is back but chunk 1 (s2, s3) is still out.
    state = [_Chunk(0, examples[:2], outcomes=first).to_state(), _Chunk(1, examples[2:4]).to_state()]
    state = json.loads(json.dumps(state))  # as the manifest holds it
    log = Path(config.decoder.options["log"])
    log.write_text("")
    with engine.start(make_registry().plan(config)) as execution:
        execution.restore(state)
        got = [o for o in execution.outcomes(examples[4:]) if isinstance(o, Augmented)]
    expected = [Augmented.model_validate_json(line) for line in files(local_run)[0].splitlines()]
    assert got == expected
    # s0 and s1 were not decoded again: their sentences recur in s4, s8 and s5, s9 only.
    decoded = Counter(log.read_text().splitlines())
    local = Counter((local_run.parent / "out.log").read_text().splitlines())
    for text in ("The panel will corroborate it.", "They buy bread quickly."):
        assert decoded[text] == local[text] * 2 // 3 > 0
    assert decoded["We will confirm the date."] == local["We will confirm the date."]  # s2 (with s6): redone


def test_a_run_taken_to_more_iterations_on_ray_writes_what_the_longer_local_run_writes(cluster, local_run, tmp_path) -> None:
    from spanaug_ray.engine import _Chunk

    from spanaug_core.jobs import Continued

    execute(load_run_config(None, flags_for(tmp_path, "out", iterations=1, **ray_flags())), registry=make_registry())
    execute(load_run_config(None, flags_for(tmp_path, "out", **ray_flags())), resume=True, registry=make_registry())
    got, expected = files(tmp_path / "out"), files(local_run)
    assert [sorted(text.splitlines()) for text in got] == [sorted(text.splitlines()) for text in expected]
    assert got[0] != expected[0]  # the new rounds' records come after the first round's
    # A chunk of such examples goes into a checkpoint and comes back whole.
    example = Example.model_validate_json(Path(flags_for(tmp_path, "again")["input"]).read_text().splitlines()[0])
    record = Augmented.model_validate_json(files(local_run)[0].splitlines()[0])
    chunk = _Chunk(0, [Continued(example, (record,), 1), example])
    assert _Chunk.from_state(json.loads(json.dumps(chunk.to_state()))).examples == chunk.examples


def tiny_llama_folder(folder: Path) -> Path:
    """A two-layer random Llama and a word-level tokenizer of the test sentences, saved as a model folder."""
    import torch
    from doubles import SENTENCES, SYNONYMS
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = sorted({w for text, _ in SENTENCES for w in text.split()} | {w for syns in SYNONYMS.values() for w in syns})
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(["<pad>", "</s>", "<unk>", *words])}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, max_position_embeddings=128, pad_token_id=0, eos_token_id=1, bos_token_id=1)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_vdba_over_a_tiny_llama_writes_on_ray_what_it_writes_locally(cluster, tmp_path) -> None:
    model = tiny_llama_folder(tmp_path / "llama")
    vdba = {"decoder.name": "vdba", "decoder.model": str(model), "decoder.dtype": "float32", "decoder.beam_size": 3,
            "decoder.max_length": 8, "decoder.examples": [], "decoder.repeat_ngram": 0, "decoder.fluency": False}
    import spanaug_decoders

    registry = make_registry()
    registry.add_plugin(spanaug_decoders, "decoders")
    runs = {}
    for name, engine in (("local", {}), ("ray", ray_flags())):
        flags = flags_for(tmp_path, name, n=6, **vdba, **engine)
        flags.pop("decoder.log")
        assert execute(load_run_config(None, flags), registry=registry).status == "completed"
        runs[name] = files(tmp_path / name)
    assert runs["ray"] == runs["local"] and runs["local"][1]
    assert json.loads((tmp_path / "ray" / "manifest.json").read_text())["engine"]["name"] == "ray"


DRIVER = """
import sys
sys.path[:0] = {paths!r}
from test_ray_engine import make_registry
from spanaug_core.config import load_run_config
from spanaug_core.run import execute

config = load_run_config(None, {flags!r})
print("ready", flush=True)
execute(config, resume=sys.argv[1] == "resume", registry=make_registry())
print("completed", flush=True)
"""


def examples_done(manifest: Path) -> int:
    """The examples the run folder's last commit had finished (-1: no manifest yet)."""
    try:
        return int(json.loads(manifest.read_text())["progress"]["examples_done"])
    except (OSError, ValueError, KeyError, TypeError):
        return -1


def logged(log: Path) -> int:
    """The sentences the decoder double has decoded so far, over every driver."""
    return len(log.read_text().splitlines()) if log.exists() else 0


def wait_until(ready: Callable[[], bool], child: subprocess.Popen[str], timeout_s: float = 120.0) -> bool:
    """Poll ``ready`` until it holds (True) or the driver has exited (False)."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        if child.poll() is not None:
            return False
        assert time.monotonic() < deadline, f"the driver made no progress in {timeout_s:.0f} s"
        time.sleep(0.02)
    return True


def kill_twice_then_finish(script: Path, manifest: Path, log: Path, rng: random.Random) -> bool:
    """Start the driver, SIGKILL it twice mid-run, resuming each time, then let it finish.

    The first kill comes after a commit, so that the resume restores real progress; the
    second while the resumed driver's workers decode, before it commits anything new.
    False when the run ended before a kill landed: on a loaded machine the workers can
    outpace this watcher.
    """
    for kill in range(2):
        done, decoded = max(examples_done(manifest), 0), logged(log)
        mode = "resume" if kill else "fresh"
        child = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        ready = (lambda: examples_done(manifest) > done) if kill == 0 else (lambda: logged(log) > decoded)
        landed = wait_until(ready, child)
        time.sleep(rng.uniform(0.0, 0.3))
        if landed and child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        _, stderr = child.communicate(timeout=240)
        if child.returncode != -signal.SIGKILL:
            assert child.returncode == 0, stderr[-3000:]
            return False
        if json.loads(manifest.read_text())["status"] != "running":
            return False  # killed after its last commit: nothing to resume
    child = subprocess.run([sys.executable, str(script), "resume"], capture_output=True, text=True, timeout=240)
    assert child.returncode == 0, child.stderr[-3000:]
    return True


def test_sigkill_of_the_driver_then_resume_gives_the_uninterrupted_output(cluster, local_run, tmp_path) -> None:
    flags = flags_for(
        tmp_path,
        "out",
        **ray_flags(**{"engine.address": cluster, "engine.runtime_env": RUNTIME_ENV}),
        commit_every_s=0.2,
        **{"decoder.delay_s": 0.15},  # slow enough to be killed mid-run
    )
    script = tmp_path / "driver.py"
    script.write_text(DRIVER.format(paths=[str(TESTS), str(Path(__file__).parent)], flags=flags))
    rng = random.Random(7)
    out, log = tmp_path / "out", tmp_path / "out.log"
    for _ in range(3):
        if kill_twice_then_finish(script, out / "manifest.json", log, rng):
            break
        shutil.rmtree(out)
        log.unlink(missing_ok=True)
    else:
        pytest.fail("in 3 tries the run always ended before a kill landed")
    assert files(out) == files(local_run)


def test_gpus_reserved_for_nothing_and_cuda_without_a_gpu_are_refused(tmp_path) -> None:
    registry = make_registry()
    with pytest.raises(ConfigError, match="reserves GPUs that no component uses"):
        execute(load_run_config(None, flags_for(tmp_path, "a", **ray_flags(**{"engine.gpus_per_worker": 1}))), registry=registry)
    flags = flags_for(tmp_path, "b", **ray_flags(), **{"decoder.name": "on-device", "decoder.device": "cuda"})
    flags.pop("decoder.log")
    with pytest.raises(ConfigError, match="decoder.device=cuda on the ray engine needs a GPU per worker"):
        execute(load_run_config(None, flags), registry=registry)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()  # refused before any output


def test_an_address_where_no_cluster_listens_is_refused_at_once(tmp_path) -> None:
    pytest.importorskip("ray.exceptions", reason="ray is not installed (pip install -e '.[ray]')")
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    flags = flags_for(tmp_path, "out", **ray_flags(**{"engine.address": address}))
    started = time.monotonic()
    with pytest.raises(ConfigError, match=f"no Ray cluster answers at {address}"):
        execute(load_run_config(None, flags), registry=make_registry())
    # ray.init alone would retry without end; a minute leaves room for a busy machine.
    assert time.monotonic() - started < 60 and not (tmp_path / "out").exists()
