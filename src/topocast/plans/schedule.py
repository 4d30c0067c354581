"""Schedules: what an algorithm moves, in a structure of numpy arrays.

A schedule names ``M`` messages (ids ``0..M-1``), where each starts
(``origin``) and who must end holding it (``targets``), and ``T`` single-hop
transfers.  Transfer ``t`` goes ``src[t] -> dst[t]`` and carries the message
ids in the ranges ``range_first[k] .. range_first[k] + range_count[k] - 1``
for ``k`` in ``range_ptr[t] .. range_ptr[t+1]-1`` (ranges keep a recursive
doubling step on 65,536 nodes cheap).  Timing is either a ``step`` per
transfer (synchronous rounds) or ``after`` dependencies (CSR: transfer ``t``
waits for the transfers ``after_ids[after_ptr[t]:after_ptr[t+1]]``).

``targets`` is ``"all"`` (every node needs every message: broadcast,
all-gather), an ``int64[M]`` array (one destination per message: total
exchange, unicast), or a CSR pair ``(ptr, ids)`` (multicast).

Reductions (``allreduce``, ``reduce-scatter``, ``reduce``): the messages are
the *blocks* of a vector every node holds; every node contributes to every
block (``origin[b]`` is the node block ``b`` belongs to in a reduce-scatter).
A transfer carries the sender's current partial aggregate of each block it
names; ``combine[t]`` says what the receiver does with it: add it to its own
partial (True: a reduce step) or take it in place of its own (False: a copy,
as in an all-gather of reduced blocks).  ``targets``: ``"all"`` (allreduce),
``int64[M]`` (reduce-scatter: block ``b``'s node; reduce: the root for
every block).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from ..errors import TopocastError

#: collectives whose transfers carry partial aggregates that receivers combine (see the module docstring)
REDUCTIONS = ("allreduce", "reduce-scatter", "reduce")
#: ``"all"``, one destination per message, or a CSR pair ``(ptr, ids)`` (see the module docstring)
Targets: TypeAlias = str | np.ndarray | tuple[np.ndarray, np.ndarray]

COLLECTIVES = ("broadcast", "allgather", "alltoall", "multicast", "unicast", "permutation", "custom", *REDUCTIONS)


@dataclass(frozen=True, eq=False)
class Schedule:
    num_nodes: int
    origin: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    range_ptr: np.ndarray
    range_first: np.ndarray
    range_count: np.ndarray
    collective: str = "custom"
    targets: Targets = "all"
    step: np.ndarray | None = None
    after_ptr: np.ndarray | None = None
    after_ids: np.ndarray | None = None
    message_bytes: float = 1.0
    meta: dict[str, Any] = field(default_factory=dict)
    #: a group label per node (e.g. a Galaxyfly supernode): the event engine then also
    #: reports when each node holds every message that started in its group
    groups: np.ndarray | None = None
    #: facts the algorithm reports beside the engine's metrics (e.g. a paper's bound)
    info: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: reductions: per transfer, whether the receiver adds the carried partials to its own (True) or takes
    #: them in place of its own (False); None for the other collectives
    combine: np.ndarray | None = None
    #: relays: per transfer, the transfer whose payload it carries one hop further (-1: it carries its
    #: sender's own data); a transfer some other one forwards is a relay hop: its receiver passes the payload
    #: on and keeps none of it.  None: no relays.
    forward: np.ndarray | None = None
    #: reductions on a network in parts (failed routers, cut links): per node the part whose sum it must end
    #: with (its contribution counts only there); -1 for a node that neither contributes nor must hold anything
    #: (a failed router).  None: one part, every node.
    part: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.collective not in COLLECTIVES:
            raise TopocastError(f"collective: must be one of {', '.join(COLLECTIVES)}")
        if self.step is None and self.after_ptr is None:
            raise TopocastError("schedule: give a step per transfer or dependencies")
        if self.is_reduction and (self.combine is None or len(self.combine) != len(self.src)):
            raise TopocastError(f"schedule: a {self.collective} needs combine (add or copy) for every transfer")
        if not self.is_reduction and self.combine is not None:
            raise TopocastError(f"schedule: combine is for reductions, not a {self.collective}")
        if self.forward is not None:
            self._check_forward(self.forward)
        if self.part is not None:
            self._check_part(self.part)

    def _check_part(self, part: np.ndarray) -> None:
        if not self.is_reduction:
            raise TopocastError(f"schedule: parts are for reductions, not a {self.collective}")
        if len(part) != self.num_nodes or (len(part) and int(np.min(part)) < -1):
            raise TopocastError("schedule: part needs one label per node, each >= 0 (or -1: takes no part)")

    def _check_forward(self, forward: np.ndarray) -> None:
        if len(forward) != len(self.src):
            raise TopocastError("schedule: forward needs one entry per transfer")
        hops = np.flatnonzero(forward >= 0)
        prev = forward[hops]
        if len(hops) and (prev.max() >= len(self.src) or np.any(self.dst[prev] != self.src[hops])):
            raise TopocastError("schedule: a forwarding transfer must leave the node its payload arrived at")
        if len(hops) and np.any(np.bincount(prev, minlength=len(self.src)) > 1):
            raise TopocastError("schedule: a payload is forwarded by one transfer at most")

    @property
    def relay_hops(self) -> np.ndarray:
        """Per transfer, whether a later transfer forwards its payload (its receiver keeps none of it)."""
        out = np.zeros(len(self.src), dtype=bool)
        if self.forward is not None:
            out[self.forward[self.forward >= 0]] = True
        return out

    @property
    def is_reduction(self) -> bool:
        """Whether transfers carry partial aggregates (allreduce, reduce-scatter, reduce)."""
        return self.collective in REDUCTIONS

    @property
    def num_messages(self) -> int:
        return len(self.origin)

    @property
    def num_transfers(self) -> int:
        return len(self.src)

    @property
    def num_steps(self) -> int:
        if self.step is None or len(self.step) == 0:
            return 0
        return int(self.step.max()) + 1

    def subset(self, keep: npt.ArrayLike) -> Schedule:
        """The schedule of the transfers ``keep`` (ids, increasing): relays renumbered (a hop whose payload's
        hop is not kept carries its sender's own data), dependencies not kept (the subset runs in step order,
        or is checked by the times an engine recorded)."""
        from dataclasses import replace

        keep = np.asarray(keep, dtype=np.int64)
        counts = np.diff(self.range_ptr)[keep]
        ptr = np.zeros(len(keep) + 1, np.int64)
        np.cumsum(counts, out=ptr[1:])
        ranges = np.repeat(self.range_ptr[keep] - ptr[:-1], counts) + np.arange(int(ptr[-1]), dtype=np.int64)
        forward = None
        if self.forward is not None:
            new_id = np.full(self.num_transfers, -1, np.int64)
            new_id[keep] = np.arange(len(keep))
            old = self.forward[keep]
            forward = np.where(old >= 0, new_id[np.maximum(old, 0)], -1)
        return replace(self, src=self.src[keep], dst=self.dst[keep], range_ptr=ptr,
                       range_first=self.range_first[ranges], range_count=self.range_count[ranges],
                       step=None if self.step is None else self.step[keep], after_ptr=None, after_ids=None,
                       combine=None if self.combine is None else self.combine[keep], forward=forward)

    def messages_of(self, t: int) -> np.ndarray:
        """Message ids carried by transfer ``t``."""
        lo, hi = self.range_ptr[t], self.range_ptr[t + 1]
        return np.concatenate([np.arange(f, f + c) for f, c in
                               zip(self.range_first[lo:hi], self.range_count[lo:hi], strict=False)]) \
            if hi > lo else np.zeros(0, dtype=np.int64)

    def target_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """Targets of every message as CSR ``(ptr, ids)``."""
        m = self.num_messages
        if isinstance(self.targets, str):
            ptr = np.arange(m + 1, dtype=np.int64) * self.num_nodes
            ids = np.tile(np.arange(self.num_nodes, dtype=np.int64), m)
            return ptr, ids
        if isinstance(self.targets, tuple):
            return self.targets
        return np.arange(m + 1, dtype=np.int64), np.asarray(self.targets, dtype=np.int64)


#: the transfers each new transfer waits for: one list per transfer, or a CSR pair ``(ptr, ids)``
After: TypeAlias = Iterable[npt.ArrayLike] | tuple[npt.ArrayLike, npt.ArrayLike]


def by_step(step: np.ndarray) -> np.ndarray:
    """The transfers in step order, ties by id (a stable sort; no sort when they already are)."""
    step = np.asarray(step)
    if len(step) == 0 or np.all(step[1:] >= step[:-1]):
        return np.arange(len(step), dtype=np.int64)
    return np.argsort(step, kind="stable").astype(np.int64)


class ScheduleBuilder:
    """Collects transfers in vectorised batches and freezes them into a :class:`Schedule`.

    >>> b = ScheduleBuilder(2, origin=[0], collective="broadcast")
    >>> ids = b.add(step=0, src=[0], dst=[1], first=[0])
    >>> b.build().num_transfers
    1
    """

    def __init__(self, num_nodes: int, origin: npt.ArrayLike, collective: str = "custom", targets: Targets = "all",
                 message_bytes: float = 1.0, meta: dict[str, Any] | None = None) -> None:
        self.num_nodes = int(num_nodes)
        self.origin = np.asarray(origin, dtype=np.int64)
        self.collective = collective
        self.targets = targets
        self.message_bytes = float(message_bytes)
        self.meta = dict(meta or {})
        self._src: list[np.ndarray] = []
        self._dst: list[np.ndarray] = []
        self._nranges: list[np.ndarray] = []
        self._first: list[np.ndarray] = []
        self._count: list[np.ndarray] = []
        self._step: list[np.ndarray] = []
        self._after: list[tuple[np.ndarray, np.ndarray]] = []
        self._combine: list[np.ndarray] = []
        self._uses_after = False
        self._size = 0

    def add(self, src: npt.ArrayLike, dst: npt.ArrayLike, first: npt.ArrayLike, count: npt.ArrayLike = 1,
            step: int | np.ndarray | None = None, after: After | None = None,
            combine: npt.ArrayLike = False) -> np.ndarray:
        """Add transfers carrying one range each; returns their transfer ids.

        ``after`` (optional): the transfer ids each new transfer waits for,
        either a list with one list per transfer or a CSR pair ``(ptr, ids)``
        with ``ptr`` of length ``len(src) + 1``.  ``combine`` (reductions): the
        receiver adds the partials to its own (True) or takes them (False); one
        value or one per transfer.
        """
        src = np.atleast_1d(np.asarray(src, dtype=np.int64))
        n = len(src)
        dst = np.broadcast_to(np.asarray(dst, dtype=np.int64), (n,))
        first = np.broadcast_to(np.asarray(first, dtype=np.int64), (n,))
        count = np.broadcast_to(np.asarray(count, dtype=np.int64), (n,))
        return self._append(src, dst, np.ones(n, dtype=np.int64), first, count, step, after, combine)

    def add_ranges(self, src: npt.ArrayLike, dst: npt.ArrayLike, ranges_per_transfer: npt.ArrayLike,
                   first: npt.ArrayLike, count: npt.ArrayLike, step: int | np.ndarray | None = None,
                   after: After | None = None, combine: npt.ArrayLike = False) -> np.ndarray:
        """Add transfers carrying several ranges each (``ranges_per_transfer[i]`` of them)."""
        src = np.atleast_1d(np.asarray(src, dtype=np.int64))
        n = len(src)
        dst = np.broadcast_to(np.asarray(dst, dtype=np.int64), (n,))
        nranges = np.broadcast_to(np.asarray(ranges_per_transfer, dtype=np.int64), (n,))
        first = np.atleast_1d(np.asarray(first, dtype=np.int64))
        count = np.broadcast_to(np.asarray(count, dtype=np.int64), first.shape)
        if int(nranges.sum()) != len(first):
            raise ValueError("add_ranges: ranges_per_transfer must sum to the number of ranges")
        return self._append(src, dst, nranges, first, count, step, after, combine)

    def _append(self, src: np.ndarray, dst: np.ndarray, nranges: np.ndarray, first: np.ndarray, count: np.ndarray,
                step: int | np.ndarray | None, after: After | None, combine: npt.ArrayLike = False) -> np.ndarray:
        n = len(src)
        ids = np.arange(self._size, self._size + n, dtype=np.int64)
        self._combine.append(np.broadcast_to(np.asarray(combine, dtype=bool), (n,)).copy())
        self._src.append(src.copy())
        self._dst.append(np.array(dst))
        self._nranges.append(nranges)
        self._first.append(np.array(first))
        self._count.append(np.array(count))
        self._step.append(np.broadcast_to(np.asarray(-1 if step is None else step, dtype=np.int64), (n,)).copy())
        if after is not None:
            self._uses_after = True
            if (isinstance(after, tuple) and len(after) == 2 and np.ndim(after[0]) == 1
                    and np.shape(after[0])[0] == n + 1):
                ptr, dep_ids = (np.asarray(a, dtype=np.int64) for a in after)
                lengths = np.diff(ptr)
                dep_ids = dep_ids[ptr[0]:ptr[-1]]
            else:
                deps = [np.asarray(a, dtype=np.int64).ravel() for a in after]
                if len(deps) != n:
                    raise ValueError("after: one dependency list per transfer")
                lengths = np.array([len(d) for d in deps], dtype=np.int64)
                dep_ids = np.concatenate(deps) if deps else np.zeros(0, dtype=np.int64)
            self._after.append((lengths, dep_ids))
        else:
            self._after.append((np.zeros(n, dtype=np.int64), np.zeros(0, dtype=np.int64)))
        self._size += n
        return ids

    def build(self) -> Schedule:
        def cat(parts: Sequence[np.ndarray]) -> np.ndarray:
            return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

        nranges = cat(self._nranges)
        range_ptr = np.zeros(len(nranges) + 1, dtype=np.int64)
        np.cumsum(nranges, out=range_ptr[1:])
        steps = cat(self._step)
        step: np.ndarray | None = steps
        after_ptr: np.ndarray | None = None
        after_ids: np.ndarray | None = None
        if self._uses_after:
            lengths = cat([batch[0] for batch in self._after])
            after_ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=after_ptr[1:])
            after_ids = cat([batch[1] for batch in self._after])
        if np.any(steps < 0):
            if not self._uses_after:
                raise TopocastError("schedule: every transfer needs a step when there are no dependencies")
            step = None
        combine = None
        if self.collective in REDUCTIONS:
            combine = np.concatenate(self._combine) if self._combine else np.zeros(0, dtype=bool)
        return Schedule(
            num_nodes=self.num_nodes, origin=self.origin, src=cat(self._src), dst=cat(self._dst),
            range_ptr=range_ptr, range_first=cat(self._first), range_count=cat(self._count),
            collective=self.collective, targets=self.targets, step=step,
            after_ptr=after_ptr, after_ids=after_ids, message_bytes=self.message_bytes, meta=self.meta,
            combine=combine,
        )
