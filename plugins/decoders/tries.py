"""Multi-state constraint tries (Hu et al. 2019, §3.1-3.2), as objects and as batch tensors.

Phrases are token-id sequences. Both tries share one structure: nodes numbered from the
root (0), each with outgoing arcs by token id and the constraints ending there. A
positive constraint may have several alternative token sequences (the tokenizations of
one text phrase: with or without a leading space...); reaching any of them meets it once.

A *positive* trie state tracks every suffix of the output that matches a trie path (the
set of *active* nodes) plus how many times each end node must still be reached. Tracking
all suffixes at once is what solves the corner cases of the paper's Fig. 1: a shared
prefix ("a cow" / "a horse") needs no guess, and completing "small cat" while tracking
"a small bird" is noticed because "small" started its own state. A node whose subtree
holds no unmet phrase is dead (the paper's pruning) and is neither tracked nor proposed.

A *negative* trie state tracks the same suffix set; the tokens that would end a banned
phrase from an active node (or from the root: single-token phrases) are *blocked*.

The object API (``PositiveTrie``/``NegativeTrie`` and their immutable states) is the
reference; ``TrieTable`` + ``PositiveBatchState``/``NegativeBatchState`` are the same
machines over tensors of hypotheses for the decoder's hot path (tests check they agree).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

ROOT = 0


class _Trie:
    """Arcs of a set of token-id phrases, with the constraint *groups* each node ends.

    A group is one constraint: a phrase, or several alternative token sequences of one
    phrase (with or without a leading space...) of which generating any one meets it.
    """

    def __init__(self, groups: Sequence[Sequence[Sequence[int]]]) -> None:
        self.children: list[dict[int, int]] = [{}]
        self.node_groups: list[list[int]] = [[]]  # groups ending at each node
        self.depth: list[int] = [0]
        for g, variants in enumerate(groups):
            for phrase in variants:
                if not phrase:
                    raise ValueError("a constraint phrase needs at least one token")
                node = ROOT
                for tok in phrase:
                    nxt = self.children[node].get(int(tok))
                    if nxt is None:
                        nxt = len(self.children)
                        self.children[node][int(tok)] = nxt
                        self.children.append({})
                        self.node_groups.append([])
                        self.depth.append(self.depth[node] + 1)
                    node = nxt
                if g not in self.node_groups[node]:
                    self.node_groups[node].append(g)
        self.num_groups = len(groups)

    def __len__(self) -> int:
        return len(self.children)

    def step(self, active: frozenset[int], token: int) -> list[int]:
        """Nodes reached by ``token`` from the root and from every active node."""
        out = []
        for node in active | {ROOT}:
            nxt = self.children[node].get(token)
            if nxt is not None:
                out.append(nxt)
        return out

    def groups_below(self) -> list[set[int]]:
        """For each node, the groups ending in its subtree (itself included)."""
        below: list[set[int]] = [set() for _ in self.children]
        # Children always have larger ids than their parent, so a reverse sweep sees them first.
        for node in reversed(range(len(self.children))):
            below[node].update(self.node_groups[node])
            for child in self.children[node].values():
                below[node] |= below[child]
        return below


class PositiveTrie(_Trie):
    """Phrases that must be generated, each as many times as it is listed.

    ``PositiveTrie(phrases)`` takes one token sequence per constraint;
    ``PositiveTrie.from_alternatives`` takes, per constraint, the token sequences any one
    of which meets it (the tokenizations of one text phrase).
    """

    def __init__(self, phrases: Sequence[Sequence[int]]) -> None:
        self._init_counted([[list(p)] for p in phrases])

    @classmethod
    def from_alternatives(cls, constraints: Sequence[Sequence[Sequence[int]]]) -> PositiveTrie:
        trie = cls.__new__(cls)
        trie._init_counted([[list(v) for v in alts] for alts in constraints])
        return trie

    def _init_counted(self, constraints: list[list[list[int]]]) -> None:
        # Identical constraints become one group whose count is their multiplicity.
        keys: dict[frozenset[tuple[int, ...]], int] = {}
        groups: list[list[list[int]]] = []
        self.counts: list[int] = []
        for alts in constraints:
            key = frozenset(tuple(v) for v in alts)
            if key not in keys:
                keys[key] = len(groups)
                groups.append(alts)
                self.counts.append(0)
            self.counts[keys[key]] += 1
        super().__init__(groups)
        self._below = self.groups_below()

    def start(self) -> PositiveState:
        """The state before any token: nothing generated, nothing active."""
        return PositiveState(self, frozenset(), tuple(self.counts))


@dataclass(frozen=True)
class PositiveState:
    """Active suffix nodes and the remaining count per constraint group (immutable)."""

    trie: PositiveTrie
    active: frozenset[int]
    remaining: tuple[int, ...]  # times each group must still be generated

    @property
    def unmet(self) -> int:
        """Constraints still to generate, repeats counted."""
        return sum(self.remaining)

    @property
    def finished(self) -> bool:
        return self.unmet == 0

    @property
    def progress(self) -> int:
        """Tokens of an unmet constraint already generated (the deepest active node)."""
        return max((self.trie.depth[n] for n in self.active), default=0)

    def _live(self, node: int) -> bool:
        return any(self.remaining[g] > 0 for g in self.trie._below[node])

    def advance(self, token_id: int) -> PositiveState:
        """The state after generating ``token_id``; ``self`` is left unchanged."""
        reached = self.trie.step(self.active, int(token_id))
        done = {g for node in reached for g in self.trie.node_groups[node]}
        # A group met by two of its variants in one step is still generated once.
        remaining = tuple(n - 1 if g in done and n > 0 else n for g, n in enumerate(self.remaining))
        after = PositiveState(self.trie, frozenset(), remaining)
        return PositiveState(self.trie, frozenset(n for n in reached if after._live(n)), remaining)

    def next_tokens(self) -> set[int]:
        """Token ids that advance some unmet constraint from the root or an active node."""
        return {
            tok
            for node in self.active | {ROOT}
            for tok, child in self.trie.children[node].items()
            if self._live(child)
        }


class NegativeTrie(_Trie):
    """Phrases that must never be generated."""

    def __init__(self, phrases: Sequence[Sequence[int]]) -> None:
        super().__init__([[p] for p in phrases])

    def start(self) -> NegativeState:
        return NegativeState(self, frozenset())


@dataclass(frozen=True)
class NegativeState:
    """Active suffix nodes of a negative trie (immutable)."""

    trie: NegativeTrie
    active: frozenset[int]

    def advance(self, token_id: int) -> NegativeState:
        """The state after ``token_id``; nodes without arcs cannot block anything and are dropped."""
        reached = self.trie.step(self.active, int(token_id))
        return NegativeState(self.trie, frozenset(n for n in reached if self.trie.children[n]))

    def blocked(self) -> set[int]:
        """Token ids that would complete a banned phrase now (single-token phrases: always)."""
        return {
            tok
            for node in self.active | {ROOT}
            for tok, child in self.trie.children[node].items()
            if self.trie.node_groups[child]
        }


# -- batch tensor forms ------------------------------------------------------------------


class TrieTable:
    """The arcs of one trie per example, padded into tensors.

    ``parent``, ``child``, ``token``: LongTensor [B, E] (arc e of example b goes from node
    ``parent[b, e]`` to ``child[b, e]`` on ``token[b, e]``); ``valid``: BoolTensor [B, E]
    (padding arcs are False); ``ends``: BoolTensor [B, N, G] (node n ends group g);
    ``below``: BoolTensor [B, N, G] (group g ends in the subtree of n); ``counts``:
    LongTensor [B, G] (times each group must be generated; 0 for negative tries and
    padding); ``has_children``: BoolTensor [B, N]; ``depth``: LongTensor [B, N]. N counts the root; an example without
    phrases has only the root and no valid arc.
    """

    _FIELDS = ("parent", "child", "token", "valid", "ends", "below", "counts", "has_children", "depth")

    def __init__(self, tries: Sequence[_Trie], device: torch.device | str = "cpu") -> None:
        import torch

        arrays = [_arrays(t) for t in tries]
        b = len(tries)
        n = max((len(t) for t in tries), default=1)
        e = max((len(t) - 1 for t in tries), default=0) or 1
        g = max((t.num_groups for t in tries), default=0) or 1
        self.parent = torch.zeros(b, e, dtype=torch.long)
        self.child = torch.zeros(b, e, dtype=torch.long)
        self.token = torch.zeros(b, e, dtype=torch.long)
        self.valid = torch.zeros(b, e, dtype=torch.bool)
        self.ends = torch.zeros(b, n, g, dtype=torch.bool)
        self.below = torch.zeros(b, n, g, dtype=torch.bool)
        self.counts = torch.zeros(b, g, dtype=torch.long)
        self.has_children = torch.zeros(b, n, dtype=torch.bool)
        self.depth = torch.zeros(b, n, dtype=torch.long)
        for i, a in enumerate(arrays):
            arcs, nodes, groups = a.parent.shape[0], a.depth.shape[0], a.counts.shape[0]
            for name in ("parent", "child", "token"):
                getattr(self, name)[i, :arcs] = getattr(a, name)
            self.valid[i, :arcs] = True
            self.ends[i, :nodes, :groups] = a.ends
            self.below[i, :nodes, :groups] = a.below
            self.counts[i, :groups] = a.counts
            self.has_children[i, :nodes] = a.has_children
            self.depth[i, :nodes] = a.depth
        for name in self._FIELDS:
            setattr(self, name, getattr(self, name).to(device))

    @classmethod
    def _of(cls, fields: dict[str, torch.Tensor]) -> TrieTable:
        table = cls.__new__(cls)
        for name, tensor in fields.items():
            setattr(table, name, tensor)
        return table

    def extended(self, tries: Sequence[_Trie]) -> TrieTable:
        """This table with rows for ``tries`` appended (row ``len(self)`` onwards); the rows
        already there keep their index, padded on the device where the new tries are larger,
        so the states of live hypotheses only need ``rebase``."""
        import torch

        new = TrieTable(tries, self.counts.device)
        fields = {}
        for name in self._FIELDS:
            old, more = getattr(self, name), getattr(new, name)
            shape = [max(a, b) for a, b in zip(old.shape[1:], more.shape[1:], strict=True)]
            fields[name] = torch.cat([_padded(old, shape), _padded(more, shape)])
        return TrieTable._of(fields)

    def selected(self, rows: torch.Tensor) -> TrieTable:
        """The table of rows ``rows`` (LongTensor) only, in that order."""
        return TrieTable._of({name: getattr(self, name)[rows] for name in self._FIELDS})

    def __len__(self) -> int:
        return self.counts.shape[0]

    @property
    def num_nodes(self) -> int:
        return self.ends.shape[1]


@dataclass(frozen=True)
class _TrieArrays:
    """One trie as unpadded tensors (see ``TrieTable``); made once per trie and cached on it."""

    parent: torch.Tensor  # [arcs]
    child: torch.Tensor
    token: torch.Tensor
    ends: torch.Tensor  # [nodes, groups]
    below: torch.Tensor
    counts: torch.Tensor  # [groups]
    has_children: torch.Tensor  # [nodes]
    depth: torch.Tensor


def _arrays(trie: _Trie) -> _TrieArrays:
    """The tensors of ``trie``; a decoder that admits sentences one by one rebuilds its table often."""
    import torch

    cached = trie.__dict__.get("_arrays")
    if cached is not None:
        return cached
    arcs = [(p, c, tok) for p, kids in enumerate(trie.children) for tok, c in kids.items()]
    nodes, groups = len(trie), trie.num_groups
    ends = torch.zeros(nodes, groups, dtype=torch.bool)
    below = torch.zeros(nodes, groups, dtype=torch.bool)
    for node, (ended, under) in enumerate(zip(trie.node_groups, trie.groups_below(), strict=True)):
        ends[node, ended] = True
        below[node, sorted(under)] = True
    counts = trie.counts if isinstance(trie, PositiveTrie) else [0] * groups
    out = _TrieArrays(
        parent=torch.tensor([a[0] for a in arcs], dtype=torch.long),
        child=torch.tensor([a[1] for a in arcs], dtype=torch.long),
        token=torch.tensor([a[2] for a in arcs], dtype=torch.long),
        ends=ends,
        below=below,
        counts=torch.tensor(counts, dtype=torch.long),
        has_children=torch.tensor([bool(kids) for kids in trie.children], dtype=torch.bool),
        depth=torch.tensor(trie.depth, dtype=torch.long),
    )
    trie.__dict__["_arrays"] = out
    return out


def _arcs_taken(table: TrieTable, example: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
    """Arcs leaving the root or an active node, per hypothesis: BoolTensor [H, E].

    ``example``: LongTensor [H] (the example of each hypothesis); ``active``: BoolTensor [H, N].
    """
    parent = table.parent[example]  # [H, E]
    from_active = active.gather(1, parent) | (parent == ROOT)
    return from_active & table.valid[example]


def _advance_active(table: TrieTable, example: torch.Tensor, active: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Nodes reached by ``tokens`` (LongTensor [H]) from the root and active nodes: BoolTensor [H, N]."""
    import torch

    taken = _arcs_taken(table, example, active) & (table.token[example] == tokens[:, None])
    reached = torch.zeros(active.shape, dtype=torch.long, device=active.device)
    reached.scatter_add_(1, table.child[example], taken.long())
    return reached > 0


def _fit(states: torch.Tensor, width: int) -> torch.Tensor:
    """``states`` [H, W] cut or zero-padded to [H, width]: columns past a trie's own nodes/groups are always 0."""
    import torch

    if states.shape[1] >= width:
        return states[:, :width]
    pad = torch.zeros(states.shape[0], width - states.shape[1], dtype=states.dtype, device=states.device)
    return torch.cat([states, pad], dim=1)


def _padded(table: torch.Tensor, shape: Sequence[int]) -> torch.Tensor:
    """``table`` [B, ...] zero-padded at the end of each dimension after the first to ``shape``."""
    import torch.nn.functional as F

    pad = [p for size, want in zip(reversed(table.shape[1:]), reversed(shape), strict=True) for p in (0, want - size)]
    return F.pad(table, pad) if any(pad) else table


@dataclass(frozen=True)
class PositiveBatchState:
    """Positive-trie states of H hypotheses.

    ``example``: LongTensor [H] (row of the TrieTable); ``active``: BoolTensor [H, N];
    ``remaining``: LongTensor [H, G] (times each constraint group must still be generated).
    """

    table: TrieTable
    example: torch.Tensor
    active: torch.Tensor
    remaining: torch.Tensor

    @classmethod
    def start(cls, table: TrieTable, example: torch.Tensor) -> PositiveBatchState:
        """Fresh states for hypotheses of the given examples (LongTensor [H])."""
        import torch

        active = torch.zeros(len(example), table.num_nodes, dtype=torch.bool, device=example.device)
        return cls(table, example, active, table.counts[example].clone())

    @property
    def unmet(self) -> torch.Tensor:
        """LongTensor [H]: constraints still to generate."""
        return self.remaining.sum(1)

    @property
    def progress(self) -> torch.Tensor:
        """LongTensor [H]: tokens of an unmet constraint already generated (the deepest active node)."""
        return (self.active.long() * self.table.depth[self.example]).max(1).values

    def _live(self) -> torch.Tensor:
        """BoolTensor [H, N]: nodes with an unmet end node in their subtree."""
        below = self.table.below[self.example]  # [H, N, G]
        return (below & (self.remaining > 0)[:, None, :]).any(2)

    def advance(self, tokens: torch.Tensor) -> PositiveBatchState:
        """States after each hypothesis generates its token (LongTensor [H])."""
        reached = _advance_active(self.table, self.example, self.active, tokens)
        # [H, G]: groups ended by a reached node; a group met twice in one step counts once.
        done = (reached[:, :, None] & self.table.ends[self.example]).any(1)
        remaining = self.remaining - (done & (self.remaining > 0)).long()
        after = PositiveBatchState(self.table, self.example, reached, remaining)
        return PositiveBatchState(self.table, self.example, reached & after._live(), remaining)

    def select(self, rows: torch.Tensor) -> PositiveBatchState:
        """The states of hypotheses ``rows`` (LongTensor [H']), e.g. after a beam reorder."""
        return PositiveBatchState(self.table, self.example[rows], self.active[rows], self.remaining[rows])

    def rebase(self, table: TrieTable, example: torch.Tensor) -> PositiveBatchState:
        """The same states over another table that holds each hypothesis' trie at row ``example[h]``."""
        return PositiveBatchState(table, example, _fit(self.active, table.num_nodes), _fit(self.remaining, table.counts.shape[1]))

    def next_tokens(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Tokens advancing an unmet constraint: (mask BoolTensor [H, E], tokens LongTensor [H, E])."""
        live_child = self._live().gather(1, self.table.child[self.example])
        return _arcs_taken(self.table, self.example, self.active) & live_child, self.table.token[self.example]


@dataclass(frozen=True)
class NegativeBatchState:
    """Negative-trie states of H hypotheses: ``example`` LongTensor [H], ``active`` BoolTensor [H, N]."""

    table: TrieTable
    example: torch.Tensor
    active: torch.Tensor

    @classmethod
    def start(cls, table: TrieTable, example: torch.Tensor) -> NegativeBatchState:
        import torch

        return cls(table, example, torch.zeros(len(example), table.num_nodes, dtype=torch.bool, device=example.device))

    def advance(self, tokens: torch.Tensor) -> NegativeBatchState:
        reached = _advance_active(self.table, self.example, self.active, tokens)
        return NegativeBatchState(self.table, self.example, reached & self.table.has_children[self.example])

    def select(self, rows: torch.Tensor) -> NegativeBatchState:
        return NegativeBatchState(self.table, self.example[rows], self.active[rows])

    def rebase(self, table: TrieTable, example: torch.Tensor) -> NegativeBatchState:
        """The same states over another table (see ``PositiveBatchState.rebase``)."""
        return NegativeBatchState(table, example, _fit(self.active, table.num_nodes))

    def blocked(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Tokens that would end a banned phrase: (mask BoolTensor [H, E], tokens LongTensor [H, E])."""
        child = self.table.child[self.example]
        ends_phrase = self.table.ends[self.example].any(2).gather(1, child)
        return _arcs_taken(self.table, self.example, self.active) & ends_phrase, self.table.token[self.example]

    def block(self, logprobs: torch.Tensor) -> None:
        """Set the blocked tokens of ``logprobs`` (FloatTensor [H, V]) to -inf, in place.

        A scatter-min rather than indexing by the mask: a mask's nonzero entries would have
        to be counted on the host, a synchronisation every step on a GPU.
        """
        import torch

        mask, tokens = self.blocked()
        if tokens.shape[1] == 0:
            return
        logprobs.scatter_reduce_(1, tokens, torch.where(mask, float("-inf"), float("inf")).to(logprobs.dtype), reduce="amin")
