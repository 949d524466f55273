"""The request queue: oldest first, similar lengths together, input read only on demand."""

from __future__ import annotations

from spanaug_core.protocols import DecoderConfig
from spanaug_core.scheduling import ListSource, RequestQueue, stream_decode
from spanaug_core.types import Constraints, DecodeRequest


def req(n: int) -> DecodeRequest:
    return DecodeRequest(text="x" * n, constraints=Constraints())


def test_take_serves_the_oldest_then_the_closest_lengths_in_a_window() -> None:
    queue = RequestQueue()
    for key, length in enumerate([10, 50, 12, 48, 11, 90, 10]):
        queue.put(key, req(length))
    # Window of 2 x 2 = 4 oldest (keys 0-3): key 0, then the length closest to 10 among 1-3.
    assert [k for k, _ in queue.take(2)] == [0, 2]
    assert [k for k, _ in queue.take(2)] == [1, 3]  # 50 and 48
    assert [k for k, _ in queue.take(3)] == [4, 5, 6]
    assert queue.take(2) == [] and len(queue) == 0


def test_refill_is_asked_only_for_what_take_needs() -> None:
    asked: list[int] = []
    supply = iter(range(100))

    def refill(wanted: int) -> bool:
        asked.append(wanted)
        key = next(supply, None)
        if key is None or key >= 5:
            return False
        queue.put(key, req(10))
        return True

    queue = RequestQueue(refill)
    assert [k for k, _ in queue.take(1)] == [0]  # reads keys 0 and 1: a window of 2
    assert asked == [2, 1]
    assert [k for k, _ in queue.take(3)] == [1, 2, 3]
    assert [k for k, _ in queue.take(3)] == [4] and queue.take(3) == []


def test_a_decoder_without_stream_gets_fixed_batches() -> None:
    class Echo:
        name = "echo"

        def __init__(self) -> None:
            self.config = DecoderConfig(batch_size=3)
            self.sizes: list[int] = []

        def decode(self, requests, nbest):
            self.sizes.append(len(requests))
            return [[] for _ in requests]

    echo = Echo()
    finished = [key for batch in stream_decode(echo, ListSource([req(3)] * 7), 2) for key, _ in batch]
    assert finished == list(range(7)) and echo.sizes == [3, 3, 1]
