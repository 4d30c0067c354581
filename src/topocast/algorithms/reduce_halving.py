"""Rabenseifner's reduce: recursive halving (a reduce-scatter), then a binomial gather of the shares to the root.

The reduced shares are gathered to the root (Rabenseifner 2004; Thakur, Rabenseifner and Gropp 2005).

The vector is cut into ``p * chunks`` blocks, ``p`` the largest power of two <= ``N``.  The ``p`` ranks run
recursive halving over the hypercube of their virtual ranks (virtual rank ``i`` is ``ranks[i ^ r]``, ``r``
the position of the root, so the root is virtual rank 0); rank ``i`` then holds the full sums of its share.
The gather mirrors the halving toward the root: in step ``d`` (``d = 0 .. log2 p - 1``) every virtual rank
whose lowest set bit is ``d`` sends the range it kept at halving step ``d`` (its own share and those gathered
from below) to the rank ``2^d`` below, which takes it in place of its partial (a copy).  Time on a hypercube,
one hop per transfer: ``2 log2 N alpha + 2 (N-1)/N m beta + (N-1)/N m gamma``, the bandwidth-optimal reduce
for long vectors (the binomial tree moves ``log2 N m``).

``N`` not a power of two: the extra nodes first add their vectors into a partner (Rabenseifner's pre-step);
a root among them gets the result from its partner in one more step.  Relayed off hypercubes and complete
graphs, as :func:`topocast.algorithms.reductions.halving_doubling`.
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule, ScheduleBuilder
from ..topology.core import Topology
from .base import REDUCTION_RUN_PARAMS, register
from .reductions import CHUNKS, ROOT, _check_chunks, _power_of_two_ranks


def _kept_ranges(p: int, blocks: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Give the block range every virtual rank keeps in each halving step.

    Per halving step (dimension ``d = log2 p - 1`` down to 0), the range ``[lo, hi)`` every virtual rank
    keeps, as in :func:`topocast.algorithms.reductions._halving_doubling`; indexed by ``d``.
    """
    lo, hi = np.zeros(p, dtype=np.int64), np.full(p, blocks, dtype=np.int64)
    i = np.arange(p, dtype=np.int64)
    kept: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for d in reversed(range(p.bit_length() - 1)):
        mid = (lo + hi) // 2
        upper = (i >> d) & 1
        lo, hi = np.where(upper == 1, mid, lo), np.where(upper == 1, hi, mid)
        kept[d] = (lo, hi)
    return [kept[d] for d in range(p.bit_length() - 1)]


def reduce_halving(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1, root: int = 0) -> Schedule:
    """Plan recursive halving, then the binomial gather of the reduced shares to ``root``.

    ``2 log2 N`` steps on ``N`` a power of two; otherwise the extra nodes first add their vectors into a
    partner, and a root among them gets the result from its partner in one more step.  Native on hypercubes
    and complete graphs, relayed over shortest paths elsewhere.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per rank's share of the vector (pipelining): ``p * chunks`` blocks, ``p`` the largest power of
        two <= ``N``.
    root : int, default 0
        The node that ends with the reduced vector.

    Returns
    -------
    Schedule
        The reduce: transfers that combine (reduce) or copy, step by step; every block ends at ``root``.

    Raises
    ------
    TopocastError
        A root that is not a node index, a vector under one byte, blocks smaller than a byte, or a network
        that is not connected.
    """
    from .embedding import embed
    from .reductions import _halving_doubling

    n = topology.num_nodes
    if not 0 <= root < n:
        raise TopocastError(f"root: must be a node index in 0..{n - 1}, got {root}")
    ranks, extra, partner = _power_of_two_ranks(topology)
    p = len(ranks)
    blocks = p * chunks
    _check_chunks(chunks, message_bytes, blocks)
    stand_in = int(partner[np.flatnonzero(extra == root)[0]]) if root in set(extra.tolist()) else root
    virtual = ranks[np.arange(p) ^ int(np.flatnonzero(ranks == stand_in)[0])]
    native = topology.family in ("hypercube", "complete")
    home = np.full(blocks, root, dtype=np.int64)
    builder = ScheduleBuilder(n, origin=home, collective="reduce", targets=home, message_bytes=message_bytes / blocks,
                              meta={"algorithm": "halving reduce" if native else "halving reduce (relayed)",
                                    "chunks": chunks})
    step = 0
    if len(extra):
        builder.add(src=extra, dst=partner, first=0, count=blocks, step=0, combine=True)
        step = 1
    step = _halving_doubling(builder, virtual, blocks, False, step)
    i = np.arange(p, dtype=np.int64)
    for d, (lo, hi) in enumerate(_kept_ranges(p, blocks)):
        senders = i[(i & ((1 << (d + 1)) - 1)) == (1 << d)]
        builder.add(src=virtual[senders], dst=virtual[senders ^ (1 << d)], first=lo[senders],
                    count=hi[senders] - lo[senders], step=step, combine=False)
        step += 1
    if stand_in != root:
        builder.add(src=[stand_in], dst=[root], first=0, count=blocks, step=step, combine=False)
    logical = builder.build()
    return logical if native else embed(topology, logical)


register("reduce-halving", reduce_halving, "reduce",
         "recursive halving then a binomial gather of the reduced shares to the root (Rabenseifner's reduce); "
         "any N; relayed off hypercubes and complete graphs", params=(CHUNKS, ROOT),
         aliases=("rabenseifner reduce",), paper="Thakur, Rabenseifner and Gropp 2005",
         run_params=REDUCTION_RUN_PARAMS)
