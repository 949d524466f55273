"""The ``ray`` engine: the pipeline on Ray actors, the run folder written by the driver alone.

Each worker is an actor that builds the run's decoder, aligner and filters once (on the
CPUs or GPU it reserved) and augments *chunks* of consecutive examples with the ordinary
pipeline, which runs on in the actor from one chunk to the next. The driver, the
``spanaug run`` process, reads the input only as fast as the workers take chunks, keeps
every worker ``_DEPTH`` chunks deep so that none waits on it (nor its decoder's batch
drains at the end of a chunk), and yields a chunk's outcomes once every earlier chunk's are out: records come in input
order, exactly as a local run writes them (the pipeline's per-example barrier makes what
an example yields independent of which worker, batch or chunk it was in).

At a checkpoint the in-flight state is every chunk read but not yet yielded: the
examples of those still out and the outcomes of those that finished early, so that
``--resume`` re-dispatches only the unfinished ones. A worker that dies (a killed actor,
the OOM killer, a lost node) is replaced and its chunks go back to the queue, at most
``max_retries`` times each; an exception raised by the pipeline itself (bad data, a
missing model) ends the run as it would locally.
"""

from __future__ import annotations

import heapq
import itertools
import os
import queue
import signal
import socket
import sys
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from spanaug_core.errors import ConfigError, SpanaugError
from spanaug_core.flags import flag
from spanaug_core.jobs import Continued, input_from_state, input_state
from spanaug_core.outcomes import IDLE, Checkpoint, InOrder, Outcome, Rejection, RunStats, outcome_from_state, outcome_state
from spanaug_core.pipeline import Pipeline
from spanaug_core.protocols import ComponentConfig, ProgressCallback, ProgressEvent, RunPlan, devices
from spanaug_core.types import Augmented, Example

# Ray's switch that makes a cluster started here listen on 127.0.0.1 only: no other node
# joins a cluster the engine started for itself.
_LOCAL_ONLY_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
# Chunks queued per worker: one running, one waiting in the actor's mailbox.
_DEPTH = 2
# How long the driver waits for news before it reports that it is still waiting.
_WAIT_S = 30.0
# How long a cluster address may take to accept a connection.
_CONNECT_S = 10.0


class RayEngine:
    """Runs the pipeline on Ray workers: a local cluster, or the one at --ray-address."""

    name = "ray"

    class Config(ComponentConfig):
        address: str | None = Field(
            default=None,
            json_schema_extra=flag("--ray-address"),
            description="cluster to join (HOST:PORT of `ray start --head`, ray://HOST:10001, or auto); "
            "None starts a cluster of this machine alone",
        )
        workers: int | None = Field(
            default=None,
            ge=1,
            description="worker actors (None: as many as the cluster's CPUs, or GPUs, hold)",
            json_schema_extra=flag("--workers"),
        )
        cpus_per_worker: float = Field(
            default=1.0, gt=0, description="CPUs a worker reserves (and torch threads it uses)", json_schema_extra=flag("--cpus-per-worker")
        )
        gpus_per_worker: float = Field(
            default=0.0,
            ge=0,
            description="GPUs a worker reserves; set decoder.device=cuda to decode on it",
            json_schema_extra=flag("--gpus-per-worker"),
        )
        runtime_env: dict[str, Any] | None = Field(
            default=None,
            description="Ray runtime_env of the run's workers, e.g. {env_vars: {HF_HOME: /models}} or {py_modules: [...]}",
        )
        chunk_size: int = Field(default=16, ge=1, description="consecutive examples a worker augments per task")
        max_retries: int = Field(
            default=2, ge=0, description="times a chunk is re-run after the worker running it died, before the run fails"
        )

    def __init__(self, config: Config) -> None:
        self.config = config

    @contextmanager
    def start(self, plan: RunPlan, progress: ProgressCallback | None = None) -> Iterator[RayExecution]:
        _check_devices(self.config, plan)
        ray = _import_ray(local=self.config.address is None)
        started = _connect(ray, self.config.address, self.config.runtime_env)
        try:
            execution = RayExecution(ray, self.config, plan, progress)
            try:
                execution.start_workers()
                yield execution
            finally:
                execution.close()
        finally:
            if started:
                ray.shutdown()


def _import_ray(local: bool) -> Any:
    if local:
        os.environ.setdefault(_LOCAL_ONLY_ENV, "0")
    try:
        import ray
    except ImportError:
        raise ConfigError("the ray engine needs Ray: pip install -e \".[ray]\" (or pip install 'ray>=2.40')") from None
    return ray


def _connect(ray: Any, address: str | None, runtime_env: dict[str, Any] | None) -> bool:
    """Join (or start) a cluster unless this process already did; True when this call did."""
    if address is not None:
        _check_reachable(address)
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"logging_level": "WARNING", "log_to_driver": False, "runtime_env": runtime_env}
    if address is None:
        options["include_dashboard"] = False
    # ray.init replaces SIGTERM's handler with an exit; the run's own handler (commit, then
    # "interrupted") must stay, so the handlers in place before are put back.
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
        raise ConfigError(f"could not connect to {where}: {exc}") from None
    finally:
        if threading.current_thread() is threading.main_thread():
            for sig, handler in handlers.items():
                if handler is not None:
                    signal.signal(sig, handler)
    return True


def _check_reachable(address: str) -> None:
    """Refuse at once an address where nothing listens (``ray.init`` would retry without end)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if address == "auto" or not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=_CONNECT_S).close()
    except OSError as exc:
        raise ConfigError(
            f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one with `ray start --head` "
            "and pass the address it prints, or leave --ray-address out to start one on this machine"
        ) from None


def _check_devices(engine: RayEngine.Config, plan: RunPlan) -> None:
    """Refuse GPUs reserved for nothing, and CUDA components on workers that reserve no GPU."""
    configs = {kind: plan.one(kind).config for kind in ("decoder", "aligner")}
    on_gpu = [f"{kind}.device={d}" for kind, d in devices(configs).items() if d.startswith("cuda")]
    if engine.gpus_per_worker > 0 and not on_gpu:
        raise ConfigError(
            f"--gpus-per-worker {engine.gpus_per_worker:g} reserves GPUs that no component uses: "
            "add --set decoder.device=cuda (and aligner.device=cuda to align there too)"
        )
    if on_gpu and engine.gpus_per_worker == 0:
        raise ConfigError(
            f"{', '.join(on_gpu)} on the ray engine needs a GPU per worker: add --gpus-per-worker 1 "
            "(Ray hides the GPUs from workers that reserve none)"
        )


class PipelineWorker:
    """A Ray actor's state: one pipeline, built once, fed chunk after chunk without draining between.

    ``run(chunk)`` hands the chunk to the pipeline's own thread and waits for its outcomes.
    The driver keeps ``_DEPTH`` chunks at a worker (the actor runs its methods on several
    threads), so the next chunk's examples join the decoder's batch while the current
    chunk's last spans finish: the pipeline reads ``IDLE`` only when no chunk is waiting.
    A chunk's counts are the pipeline's counters since the previous chunk finished (their
    sum is the worker's total, though work on the next chunk's first examples may be
    counted with the previous chunk).
    """

    def __init__(self) -> None:
        self.pipeline: Pipeline | None = None
        self._inbox: queue.Queue[tuple[int, list[Example | Continued]]] = queue.Queue()
        self._tickets = itertools.count()
        self._done = threading.Condition()
        self._results: dict[int, tuple[list[Augmented | Rejection], dict[str, Any]]] = {}
        self._failure: BaseException | None = None

    def start(self, plan: RunPlan, threads: int) -> dict[str, Any]:
        """Build the pipeline (here, so a bad option or model fails as a task, with its own error)."""
        # Ray sets OMP_NUM_THREADS from num_cpus; say it for torch too in case it is loaded.
        os.environ["OMP_NUM_THREADS"] = str(threads)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(threads)
        self.pipeline = Pipeline.from_plan(plan)
        threading.Thread(target=self._serve, name="spanaug-pipeline", daemon=True).start()
        import ray

        return {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "gpus": [str(g) for g in ray.get_gpu_ids()],
            "threads": threads,
            **self.pipeline.devices(),
        }

    def run(self, examples: list[Example | Continued]) -> tuple[list[Augmented | Rejection], dict[str, Any]]:
        """The outcomes of ``examples`` in order, and the counts that came with them."""
        ticket = next(self._tickets)
        self._inbox.put((ticket, examples))
        with self._done:
            self._done.wait_for(lambda: ticket in self._results or self._failure is not None)
            if ticket in self._results:
                return self._results.pop(ticket)
            raise self._failure  # type: ignore[misc]

    def _serve(self) -> None:
        """The pipeline's thread: run while chunks come, sleep while none does."""
        assert self.pipeline is not None
        while True:
            first = self._inbox.get()
            open_chunks: deque[tuple[int, list[int], list[Augmented | Rejection]]] = deque()

            def feed(item: tuple[int, list[Example | Continued]] | None = first) -> Iterator[Example | Any]:
                while True:
                    if item is None:
                        try:
                            item = self._inbox.get_nowait()
                        except queue.Empty:
                            yield IDLE
                            continue
                    ticket, examples = item
                    open_chunks.append((ticket, [len(examples)], []))
                    yield from examples
                    item = None

            try:
                # Examples finish in input order, so the oldest open chunk owns what comes.
                for outcome in self.pipeline.outcomes(feed()):
                    if isinstance(outcome, Checkpoint) and not outcome.examples:
                        continue
                    ticket, left, found = open_chunks[0]
                    if not isinstance(outcome, Checkpoint):
                        found.append(outcome)
                        continue
                    left[0] -= outcome.examples
                    if left[0] == 0:
                        open_chunks.popleft()
                        counts, self.pipeline.stats = self.pipeline.stats.as_dict(), RunStats()
                        with self._done:
                            self._results[ticket] = (found, counts)
                            self._done.notify_all()
            except BaseException as exc:  # the driver re-raises it, as a local run would
                with self._done:
                    self._failure = exc
                    self._done.notify_all()
                return


@dataclass
class _Chunk:
    """Consecutive input examples sent to one worker; ``outcomes`` once a worker finished them."""

    seq: int
    examples: list[Example | Continued]
    outcomes: list[Augmented | Rejection] | None = None
    counts: dict[str, Any] = field(default_factory=dict)
    attempts: int = 0

    @property
    def ids(self) -> list[str]:
        """Its examples' ids: a unit of ``outcomes.InOrder``."""
        return [example.id for example in self.examples]

    def to_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {"seq": self.seq, "examples": [input_state(e) for e in self.examples]}
        if self.outcomes is not None:
            state["outcomes"] = [outcome_state(o) for o in self.outcomes]
            state["counts"] = self.counts
        return state

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> _Chunk:
        if "examples" not in data:
            raise SpanaugError(
                "cannot resume: the run's in-progress state is not a ray engine's (was it started with another engine?)"
            )
        done = data.get("outcomes")
        return cls(
            seq=data["seq"],
            examples=[input_from_state(e) for e in data["examples"]],
            outcomes=[outcome_from_state(o) for o in done] if done is not None else None,
            counts=data.get("counts", {}),
        )


@dataclass
class _Slot:
    """One worker place: its actor (replaced when it dies), whether it is ready, its chunks."""

    index: int
    actor: Any = None
    starting: Any = None  # the ObjectRef of start() while the pipeline builds
    info: dict[str, Any] = field(default_factory=dict)
    chunks: set[int] = field(default_factory=set)
    deaths: int = 0
    strikes: int = 0  # deaths since it last finished a chunk


class RayExecution:
    """The driver's side of a run on Ray (an ``Execution``): dispatch, collect in order, survive deaths."""

    def __init__(
        self, ray: Any, engine: RayEngine.Config, plan: RunPlan, progress: ProgressCallback | None
    ) -> None:
        self.ray = ray
        self.engine = engine
        self.plan = plan
        self.progress = progress or (lambda event: None)
        self.stats = RunStats()
        self.slots: list[_Slot] = []
        self._actor_class = ray.remote(
            num_cpus=engine.cpus_per_worker,
            num_gpus=engine.gpus_per_worker,
            max_restarts=0,
            max_task_retries=0,
            max_concurrency=_DEPTH + 1,  # the chunks it holds, and start()
        )(PipelineWorker)
        self._order: InOrder[_Chunk] = InOrder({})
        self._restored: list[_Chunk] = []

    # -- workers ----------------------------------------------------------------------
    def start_workers(self) -> None:
        """Create the worker actors and wait until one pipeline is built (its errors surface here).

        The others join the run as they start: a cluster that cannot place them all yet
        (busy, or still scaling up) runs on those it can.
        """
        for index in range(self._worker_count()):
            slot = _Slot(index)
            self.slots.append(slot)
            self._launch(slot)
        starting = {slot.starting: slot for slot in self.slots}
        while True:
            ready, _ = self.ray.wait(list(starting), num_returns=1, timeout=_WAIT_S)
            if ready:
                break
            self.progress(ProgressEvent("examples", 0, None, "waiting for the cluster to place a worker"))
        slot = starting[ready[0]]
        try:
            self._started(slot)
        except self.ray.exceptions.RayActorError as exc:
            raise SpanaugError(f"ray worker {slot.index} died while building the pipeline: {_first_line(exc)}") from None

    def _worker_count(self) -> int:
        resources = self.ray.cluster_resources()
        if self.engine.gpus_per_worker > 0:
            fit, unit = resources.get("GPU", 0) / self.engine.gpus_per_worker, "GPUs"
        else:
            fit, unit = resources.get("CPU", 0) / self.engine.cpus_per_worker, "CPUs"
        if fit < 1:
            raise ConfigError(f"the Ray cluster has too few {unit} for one worker ({resources}); lower the per-worker reservation")
        return self.engine.workers if self.engine.workers is not None else int(fit)

    def _launch(self, slot: _Slot) -> None:
        threads = max(1, int(self.engine.cpus_per_worker))
        slot.actor = self._actor_class.remote()
        slot.starting = slot.actor.start.remote(self.plan, threads)
        slot.chunks = set()

    def _started(self, slot: _Slot) -> None:
        """Collect a slot's start(): its description, or the pipeline's own error."""
        try:
            slot.info = self.ray.get(slot.starting)
        except self.ray.exceptions.RayTaskError as exc:
            raise _cause(exc) from None
        finally:
            slot.starting = None

    def close(self) -> None:
        for slot in self.slots:
            if slot.actor is not None:
                self.ray.kill(slot.actor)
        self.slots = []

    def resources(self) -> dict[str, Any]:
        """For the manifest: the cluster, the worker count and each worker's host and devices."""
        return {
            "address": self.engine.address or "local",
            "workers": len(self.slots),
            "cpus_per_worker": self.engine.cpus_per_worker,
            "gpus_per_worker": self.engine.gpus_per_worker,
            "devices": [slot.info for slot in self.slots if slot.info],
        }

    # -- the stream -------------------------------------------------------------------
    def in_flight(self) -> list[dict[str, Any]]:
        return [chunk.to_state() for _, chunk in sorted(self._order.held.items())]

    def restore(self, state: Sequence[dict[str, Any]]) -> None:
        self._restored = [_Chunk.from_state(data) for data in state]

    def outcomes(self, examples: Iterable[Example | Continued], total: int | None = None) -> Iterator[Outcome]:
        """Records and rejections in input order, a ``Checkpoint`` after each chunk's (``outcomes.InOrder``)."""
        order = self._order = InOrder({chunk.seq: chunk for chunk in self._restored})
        self._restored = []
        chunks = order.held
        source = iter(examples)
        waiting = [seq for seq, chunk in chunks.items() if chunk.outcomes is None]
        heapq.heapify(waiting)
        tasks: dict[Any, tuple[_Slot, int]] = {}
        exhausted = False

        def next_chunk() -> int | None:
            nonlocal exhausted
            if waiting:
                return heapq.heappop(waiting)
            batch = [] if exhausted else list(itertools.islice(source, self.engine.chunk_size))
            if not batch:
                exhausted = True
                return None
            return order.add(_Chunk(order.next_seq, batch))

        def dispatch() -> None:
            # Every ready worker gets a first chunk before any gets a second.
            for depth in range(1, _DEPTH + 1):
                for slot in self.slots:
                    if slot.starting is None and len(slot.chunks) < depth:
                        seq = next_chunk()
                        if seq is None:
                            return
                        tasks[slot.actor.run.remote(chunks[seq].examples)] = (slot, seq)
                        slot.chunks.add(seq)

        def lost(slot: _Slot, exc: Exception) -> None:
            """A worker died: its chunks go back to the queue and a new worker takes its place."""
            for ref in [ref for ref, (owner, _) in tasks.items() if owner is slot]:
                del tasks[ref]
            held = [chunks[seq] for seq in sorted(slot.chunks)]
            for chunk in held:
                chunk.attempts += 1
                heapq.heappush(waiting, chunk.seq)
            # Which of the chunks it held killed it is unknown: they all count a death.
            spent = [chunk for chunk in held if chunk.attempts > self.engine.max_retries]
            if spent:
                ids = f"{spent[0].examples[0].id} .. {spent[-1].examples[-1].id}"
                raise SpanaugError(
                    f"ray workers died {spent[0].attempts} times while holding examples {ids} (max_retries "
                    f"{self.engine.max_retries}); they may need more memory than a worker has. Last: {_first_line(exc)}"
                )
            slot.deaths += 1
            slot.strikes += 1
            if slot.strikes > self.engine.max_retries:
                raise SpanaugError(
                    f"ray worker {slot.index} died {slot.strikes} times in a row without finishing a chunk "
                    f"(max_retries {self.engine.max_retries}). Last: {_first_line(exc)}"
                )
            self.ray.kill(slot.actor)
            self._launch(slot)
            self.progress(ProgressEvent("examples", self.stats.examples, total, f"worker {slot.index} died; its chunks re-run"))

        def released(chunk: _Chunk) -> None:
            self.stats.add(chunk.counts)

        def report() -> None:
            self.progress(ProgressEvent("examples", self.stats.examples, total, self._status(tasks), self.stats.as_dict()))

        def finished_in_order() -> Iterator[Outcome]:
            return order.emit(lambda chunk: chunk.outcomes is not None, released, report)

        dispatch()
        while tasks or waiting or not exhausted:
            starting = {slot.starting: slot for slot in self.slots if slot.starting is not None}
            ready, _ = self.ray.wait([*tasks, *starting], num_returns=1, timeout=_WAIT_S)
            if not ready:
                self.progress(ProgressEvent("examples", self.stats.examples, total, "waiting for workers"))
                continue
            ref = ready[0]
            if ref in starting:
                slot = starting[ref]
                try:
                    self._started(slot)
                except self.ray.exceptions.RayActorError as exc:
                    lost(slot, exc)
            else:
                slot, seq = tasks.pop(ref)
                try:
                    chunks[seq].outcomes, chunks[seq].counts = self.ray.get(ref)
                    slot.chunks.discard(seq)
                    slot.strikes = 0
                except self.ray.exceptions.RayTaskError as exc:
                    raise _cause(exc) from None
                except self.ray.exceptions.RayActorError as exc:
                    lost(slot, exc)
            dispatch()
            yield from finished_in_order()
        yield from finished_in_order()

    def _status(self, tasks: dict[Any, tuple[_Slot, int]]) -> str:
        alive = sum(1 for slot in self.slots if slot.starting is None)
        deaths = sum(slot.deaths for slot in self.slots)
        return f"{alive}/{len(self.slots)} workers, {len(tasks)} chunks out" + (f", {deaths} restarts" if deaths else "")


def _cause(exc: Exception) -> BaseException:
    """The exception a worker's pipeline raised, as it would have been raised locally."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
