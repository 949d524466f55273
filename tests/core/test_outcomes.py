"""What a run yields: the counts the manifest keeps, and the in-order stream every engine emits."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import spanaug_core as sa
from spanaug_core.outcomes import Checkpoint, InOrder, Rejection, RunStats
from spanaug_core.types import Constraints


def test_run_stats_write_restore_and_add_every_count() -> None:
    stats = RunStats(examples=2, skipped_examples=1, stopped=Counter({"no-alignment": 1}), decode_s=1.23456)
    saved = stats.as_dict()
    assert list(saved) == list(RunStats.model_fields) and saved["decode_s"] == 1.235
    assert saved["stopped"] == {"no-alignment": 1}
    restored = RunStats()
    restored.restore(saved)
    assert restored.as_dict() == saved
    restored.add({"examples": 3, "stopped": {"no-alignment": 2, "no-candidates": 1}})  # counts it lacks are 0
    assert restored.examples == 5 and restored.skipped_examples == 1
    assert restored.stopped == {"no-alignment": 3, "no-candidates": 1}
    partial = RunStats()
    partial.restore({"accepted": 4})  # a manifest from before a count existed
    assert partial.accepted == 4 and partial.reused_nbest == 0


@dataclass
class _Unit:
    ids: list[str]
    outcomes: list[Rejection] | None = None


def _stop(source_id: str) -> Rejection:
    return Rejection(source_id, 0, 1, "no-candidates", Constraints())


def test_in_order_yields_each_finished_unit_once_every_earlier_one_has_been() -> None:
    order: InOrder[_Unit] = InOrder({})
    first, second = _Unit(["a", "b"]), _Unit(["c"])
    order.add(first)
    order.add(second)
    released: list[list[str]] = []
    reports: list[int] = []

    def emit() -> list[object]:
        return list(order.emit(lambda u: u.outcomes is not None, lambda u: released.append(u.ids), lambda: reports.append(1)))

    second.outcomes = [_stop("c")]
    assert emit() == [Checkpoint(0, None, pending=3, last_read_id="c")]  # "c" waits for "a", "b"
    first.outcomes = [_stop("a")]
    assert emit() == [_stop("a"), Checkpoint(2, "b", 1, "c"), _stop("c"), Checkpoint(1, "c", 0, None)]
    assert released == [["a", "b"], ["c"]] and reports == [1] and order.held == {}


def test_in_order_goes_on_after_restored_units() -> None:
    order = InOrder({4: _Unit(["x"])})
    assert order.add(_Unit(["y"])) == 5


def test_rejection_is_exported_from_the_package() -> None:
    assert sa.Rejection is Rejection
