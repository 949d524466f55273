"""Feeding a decoder: which waiting request goes next, and decoders without a stream.

The pipeline keeps its decode requests in a ``RequestQueue``. A decoder takes requests
from it whenever it has room (``take``); when too few wait, the queue asks the pipeline
for more input (``refill``), so examples are read only as fast as the decoder consumes
them. ``take`` serves the oldest request first (by its key: earlier examples, then their
spans, so examples finish roughly in input order) and fills the rest of the batch with
the waiting requests whose sentences are closest to it in length, among a window of the
oldest ones, so a batch pads little and no request waits long.

``stream_decode`` gives every decoder the streaming shape: a ``StreamingDecoder`` streams
itself; any other decoder is called with fixed batches of its ``batch_size``
(``DecoderConfig``) taken from the queue.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence

from spanaug_core.errors import SpanaugError
from spanaug_core.protocols import ConstrainedDecoder, DecoderConfig, RequestSource, StreamingDecoder
from spanaug_core.types import Candidate, DecodeRequest

Finished = list[tuple[int, list[Candidate]]]


class ListSource:
    """A fixed list of requests, keyed by position: ``decode`` on top of ``stream``."""

    def __init__(self, requests: Sequence[DecodeRequest]) -> None:
        self._requests = list(requests)
        self._next = 0

    def take(self, n: int) -> list[tuple[int, DecodeRequest]]:
        start = self._next
        self._next = min(start + max(n, 0), len(self._requests))
        return [(i, self._requests[i]) for i in range(start, self._next)]


class RequestQueue:
    """Waiting requests ordered by key, refilled on demand; see the module docstring.

    ``refill(n)`` is called when fewer than ``n`` requests wait; it should ``put`` at least
    one more if it can and return False once nothing more will ever come. A refill that
    puts nothing but returns True means "nothing now": ``take`` serves what waits and asks
    again next time.
    """

    def __init__(self, refill: Callable[[int], bool] | None = None, window: int = 2) -> None:
        self._heap: list[tuple[int, int, DecodeRequest]] = []
        self._refill = refill
        self._exhausted = refill is None
        self.window = window

    def __len__(self) -> int:
        return len(self._heap)

    def put(self, key: int, request: DecodeRequest) -> None:
        heapq.heappush(self._heap, (key, len(request.text), request))

    def take(self, n: int) -> list[tuple[int, DecodeRequest]]:
        if n <= 0:
            return []
        want = n * self.window
        while len(self._heap) < want and not self._exhausted:
            before = len(self._heap)
            if not self._refill(want - len(self._heap)):  # type: ignore[misc]
                self._exhausted = True
            elif len(self._heap) == before:
                break
        if not self._heap:
            return []
        pool = heapq.nsmallest(min(want, len(self._heap)), self._heap)
        oldest = pool[0]
        rest = sorted(pool[1:], key=lambda item: (abs(item[1] - oldest[1]), item[0]))[: n - 1]
        chosen = {oldest[0], *(item[0] for item in rest)}
        self._heap = [item for item in self._heap if item[0] not in chosen]
        heapq.heapify(self._heap)
        return [(key, request) for key, _, request in sorted([oldest, *rest])]


def stream_decode(decoder: ConstrainedDecoder, source: RequestSource, nbest: int) -> Iterator[Finished]:
    """Decode what ``source`` hands out: ``decoder.stream`` when it has one, else the decoder's
    ``batch_size`` requests per ``decode`` call (``DecoderConfig``'s default for a decoder without one)."""
    if isinstance(decoder, StreamingDecoder):
        yield from decoder.stream(source, nbest)
        return
    default = DecoderConfig.model_fields["batch_size"].default
    batch_size = int(getattr(getattr(decoder, "config", None), "batch_size", default))
    while batch := source.take(batch_size):
        results = decoder.decode([request for _, request in batch], nbest)
        if len(results) != len(batch):
            name = getattr(decoder, "name", type(decoder).__name__)
            raise SpanaugError(f"decoder '{name}' returned {len(results)} n-best lists for {len(batch)} requests")
        yield [(key, candidates) for (key, _), candidates in zip(batch, results, strict=True)]
