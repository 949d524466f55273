"""A linear-chain CRF over tag emissions, with hard transition constraints.

The score of tags ``y`` for emissions ``E`` (from the BiLSTM) is
``start[y0] + sum_t E[t, y_t] + sum_t trans[y_{t-1}, y_t] + end[y_last]``. Training
minimises ``log Z - score(gold)`` with ``log Z`` from the forward algorithm; decoding is
Viterbi. Both loop over time but are vectorised over the batch and the tags. Forbidden
transitions (``I-L`` after anything but ``B-L``/``I-L``, ``I-L`` first) get a fixed
large negative score added to the learned one, so neither training nor decoding ever
visits an ill-formed sequence. A finite penalty rather than ``-inf`` keeps every
``logsumexp`` free of NaN gradients; it is far below any reachable score.

This module imports torch at the top: import it only inside functions of light modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

FORBIDDEN = -10000.0


class LinearChainCRF(torch.nn.Module):
    """Transition scores between ``num_tags`` tags, the forward algorithm and Viterbi."""

    def __init__(self, num_tags: int, allowed_start: Sequence[bool] | None = None,
                 allowed: Sequence[Sequence[bool]] | None = None) -> None:
        super().__init__()
        self.num_tags = num_tags
        self.start = torch.nn.Parameter(torch.zeros(num_tags))
        self.end = torch.nn.Parameter(torch.zeros(num_tags))
        self.transitions = torch.nn.Parameter(torch.zeros(num_tags, num_tags))
        start_ok = torch.tensor(allowed_start if allowed_start is not None else [True] * num_tags)
        trans_ok = torch.tensor(allowed if allowed is not None else [[True] * num_tags] * num_tags)
        # Buffers, not parameters: the constraints are part of the model but never learned.
        self.register_buffer("start_penalty", torch.where(start_ok, 0.0, FORBIDDEN))
        self.register_buffer("transition_penalty", torch.where(trans_ok, 0.0, FORBIDDEN))

    def _scores(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.start + self.start_penalty, self.transitions + self.transition_penalty

    def score(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Score of given tag sequences: emissions (B, T, K), tags (B, T), mask (B, T) -> (B,).

        ``mask`` is True on real tokens; every sequence has at least one (position 0).
        """
        start, trans = self._scores()
        maskf = mask.to(emissions.dtype)
        emitted = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)
        total = start[tags[:, 0]] + (emitted * maskf).sum(1)
        total = total + (trans[tags[:, :-1], tags[:, 1:]] * maskf[:, 1:]).sum(1)
        last = tags.gather(1, (mask.sum(1) - 1).unsqueeze(1)).squeeze(1)
        return total + self.end[last]

    def log_partition(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``log Z`` of each sequence by the forward algorithm: (B, T, K), (B, T) -> (B,)."""
        start, trans = self._scores()
        alpha = start + emissions[:, 0]  # (B, K): log-sum of all prefixes ending in each tag
        for t in range(1, emissions.shape[1]):
            step = torch.logsumexp(alpha.unsqueeze(2) + trans.unsqueeze(0), dim=1) + emissions[:, t]
            alpha = torch.where(mask[:, t].unsqueeze(1), step, alpha)
        return torch.logsumexp(alpha + self.end, dim=1)

    def nll(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Negative log-likelihood of the gold tags, per sequence: (B, T, K), (B, T), (B, T) -> (B,)."""
        return self.log_partition(emissions, mask) - self.score(emissions, tags, mask)

    def decode(self, emissions: torch.Tensor, mask: torch.Tensor) -> list[list[int]]:
        """The best tag sequence of each sentence (Viterbi), cut to its length: (B, T, K), (B, T)."""
        start, trans = self._scores()
        best = start + emissions[:, 0]  # (B, K): best prefix score ending in each tag
        backpointers = []
        for t in range(1, emissions.shape[1]):
            step, previous = (best.unsqueeze(2) + trans.unsqueeze(0)).max(dim=1)
            keep = mask[:, t].unsqueeze(1)
            best = torch.where(keep, step + emissions[:, t], best)
            # Past a sentence's end the pointer is the identity, so backtracking passes through.
            identity = torch.arange(self.num_tags, device=emissions.device).expand_as(previous)
            backpointers.append(torch.where(keep, previous, identity))
        tag = (best + self.end).argmax(dim=1)
        path = [tag]
        for pointers in reversed(backpointers):
            tag = pointers.gather(1, tag.unsqueeze(1)).squeeze(1)
            path.append(tag)
        tags = torch.stack(path[::-1], dim=1).tolist()
        lengths = mask.sum(1).tolist()
        return [row[:n] for row, n in zip(tags, lengths)]
