"""Swing allreduce and reduce-scatter on rings and tori of any sides (De Sensi et al., NSDI 2024).

Swing is recursive halving and doubling with closer peers: in step ``s`` of a dimension of side ``k``, a
node at an even coordinate ``x`` pairs with ``x + rho(s)``, an odd one with ``x - rho(s)`` (mod ``k``),
``rho(s) = 1 - 2 + 4 - ... = sum_{i<=s} (-2)^i``, so the peers are 1, 1, 3, 5, 11, ... hops away instead of
1, 2, 4, 8, ...; the steps take the dimensions in turn, ``ceil(log2 k)`` steps in a dimension of side ``k``.

Sides that are not powers of two:

* **even** ``k``: the peer rule still pairs every even coordinate with an odd one (``rho(s)`` is odd), and
  ``ceil(log2 k)`` steps still connect every node to every other, but the nodes a peer brings are no longer
  disjoint halves: some are reached along two routes.  Each block is therefore sent along one route only.
  The all-gather half is the *greedy* one: in each step a node sends its peer exactly the reduced blocks the
  peer does not hold yet, so every node receives every block once; the reduce-scatter half is its time
  reverse (in the mirrored step a node sends its peer the partials of the blocks it received from that peer
  in the all-gather), so every contribution reaches its block's owner once, up the reversed broadcast tree.
  On power-of-two sides this is exactly the textbook halving and doubling (the halves are disjoint).
* **odd** ``k``: the node at coordinate ``k - 1`` first adds its whole vector into its neighbour at ``k - 2``
  (one step per odd dimension, in dimension order, the nodes still active on each line), the others run
  Swing on the even ring of ``k - 1`` (a wraparound then crosses the idle node, one hop more), and at the
  end the neighbour copies back the result (allreduce) or the idle node's own blocks (reduce-scatter): the
  pre- and post-step of Rabenseifner's halving-doubling, one per odd side.

Logical steps: ``2 sum_d ceil(log2 k'_d) + 2 o`` for an allreduce and ``sum_d ceil(log2 k'_d) + 2 o`` for a
reduce-scatter, ``k'_d`` the side rounded down to even and ``o`` the number of odd sides; transfers
between non-neighbours are relayed hop by hop (:func:`topocast.algorithms.embedding.embed`).
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..schedule import Schedule, ScheduleBuilder
from ..topology.core import Topology
from .base import REDUCTION_RUN_PARAMS, register
from .grid import grid_shape, strides
from .reductions import CHUNKS, _builder, _check_chunks

#: the most nodes Swing plans for (it keeps, per node, which owners' blocks it holds: ``N^2`` booleans)
MAX_SWING_NODES = 4096


def swing_distance(s: int) -> int:
    """``rho(s) = sum_{i <= s} (-2)^i``: 1, -1, 3, -5, 11, ... (De Sensi et al. 2024)."""
    return (1 - (-2) ** (s + 1)) // 3


def swing_steps(sizes: tuple[int, ...]) -> int:
    """The number of peer steps (one halving) on a torus of ``sizes``: ``sum_d ceil(log2 k'_d)``, ``k'_d`` the
    side rounded down to even."""
    return sum(int(k - k % 2 - 1).bit_length() for k in sizes)


def swing_peers(sizes: tuple[int, ...]) -> list[np.ndarray]:
    """Per step, every node's peer (-1: a node idle in the steps, the last coordinate of an odd side).

    The steps take the dimensions in turn, ``ceil(log2 k'_d)`` of them in dimension ``d``
    (``k'_d = k_d`` rounded down to even); in step ``s`` of its dimension, a node at an even coordinate
    ``x`` pairs with ``x + rho(s)``, an odd one with ``x - rho(s)``, mod ``k'_d``.
    """
    if any(k < 2 for k in sizes):
        raise TopocastError(f"algorithm: Swing needs every torus side at least 2, got {sizes}")
    stride = strides(sizes)
    nodes = np.arange(int(np.prod(sizes)), dtype=np.int64)
    even = [k - k % 2 for k in sizes]
    coord = [(nodes // stride[d]) % k for d, k in enumerate(sizes)]
    active = np.all([c < e for c, e in zip(coord, even, strict=True)], axis=0)
    left = [int(e - 1).bit_length() for e in even]
    done = [0] * len(sizes)
    out = []
    while any(done[d] < left[d] for d in range(len(sizes))):
        for d, k in enumerate(even):
            if done[d] == left[d]:
                continue
            x = coord[d]
            shift = np.where(x % 2 == 0, swing_distance(done[d]), -swing_distance(done[d]))
            out.append(np.where(active, nodes + (((x + shift) % k) - x) * stride[d], -1))
            done[d] += 1
    return out


def hand_overs(sizes: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(idle, partner)`` per odd side, in dimension order: the nodes still active at coordinate ``k - 1``
    of that dimension and their neighbours at ``k - 2``."""
    stride = strides(sizes)
    nodes = np.arange(int(np.prod(sizes)), dtype=np.int64)
    active = np.ones(len(nodes), dtype=bool)
    out = []
    for d, k in enumerate(sizes):
        if k % 2:
            idle = nodes[active & ((nodes // stride[d]) % k == k - 1)]
            out.append((idle, idle - stride[d]))
            active[idle] = False
    return out


def _runs(mask: np.ndarray, chunks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of the ``rows x owners`` mask, its runs of consecutive owners as block ranges:
    ``(ranges per row, first block, block count)``."""
    rows, n = mask.shape
    padded = np.zeros((rows, n + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    edge = np.diff(padded, axis=1)
    row, start = np.nonzero(edge == 1)
    _, stop = np.nonzero(edge == -1)
    return (np.bincount(row, minlength=rows).astype(np.int64), start.astype(np.int64) * chunks,
            (stop - start).astype(np.int64) * chunks)


def greedy_allgather(peers: list[np.ndarray], owners: np.ndarray) -> list[np.ndarray]:
    """Per step of the doubling (``peers`` in reverse order), what every node receives from its peer: the
    owners (columns) whose reduced blocks the peer holds and the node does not.  ``owners[v]``: the owners
    node ``v`` starts with.

    Raises
    ------
    TopocastError
        When the steps leave a node without some owner's blocks.
    """
    holds = owners.copy()
    out = []
    for peer in reversed(peers):
        paired = peer >= 0
        receive = np.zeros_like(holds)
        receive[paired] = holds[peer[paired]] & ~holds[paired]
        holds |= receive
        out.append(receive)
    if not holds[owners.any(axis=1)].all():
        raise TopocastError("algorithm: Swing's steps do not reach every node on this torus")
    return out


def _transfers(builder: ScheduleBuilder, src: np.ndarray, dst: np.ndarray, mask: np.ndarray, chunks: int,
               step: int, combine: bool) -> None:
    """One step: ``src[i] -> dst[i]`` carrying the blocks of the owners in ``mask[i]`` (empty rows dropped)."""
    keep = mask.any(axis=1)
    if keep.any():
        nranges, first, count = _runs(mask[keep], chunks)
        builder.add_ranges(src[keep], dst[keep], nranges, first, count, step=step, combine=combine)


def swing_schedule(topology: Topology, collective: str, message_bytes: float, chunks: int) -> Schedule:
    """The logical Swing schedule (peers not necessarily linked; one step per logical round)."""
    sizes, wraps = grid_shape(topology)
    if not all(wraps):
        raise TopocastError(f"algorithm: Swing needs rings in every dimension (a ring or torus), not {topology.spec}")
    n = topology.num_nodes
    if n > MAX_SWING_NODES:
        raise TopocastError(f"algorithm: Swing plans for at most {MAX_SWING_NODES} nodes, not {n}")
    _check_chunks(chunks, message_bytes, n * chunks)
    peers, handed = swing_peers(sizes), hand_overs(sizes)
    builder = _builder(topology, collective, message_bytes, chunks, "swing")
    nodes = np.arange(n, dtype=np.int64)
    rep, history = nodes.copy(), []
    step = 0
    for idle, partner in handed:                       # pre-steps: the idle nodes add their vectors in
        history.append(rep.copy())
        builder.add(src=idle, dst=partner, first=0, count=n * chunks, step=step, combine=True)
        move = nodes.copy()
        move[idle] = partner
        rep = move[rep]
        step += 1
    owners = np.zeros((n, n), dtype=bool)
    owners[rep, nodes] = True                          # node rep[o] stands for owner o in the Swing steps
    gathered = greedy_allgather(peers, owners)
    steps = len(peers)
    for j, peer in enumerate(peers):                   # the halving: the all-gather's time reverse
        receive = gathered[steps - 1 - j]
        paired = np.flatnonzero(peer >= 0)
        _transfers(builder, paired, peer[paired], receive[paired], chunks, step + j, True)
    step += steps
    if collective == "allreduce":
        for a, receive in enumerate(gathered):         # the doubling: the greedy all-gather
            peer = peers[steps - 1 - a]
            paired = np.flatnonzero(peer >= 0)
            _transfers(builder, peer[paired], paired, receive[paired], chunks, step + a, False)
        step += steps
    for (idle, partner), before in zip(reversed(handed), reversed(history), strict=True):
        if collective == "allreduce":                 # post-steps: the result back to the idle nodes
            builder.add(src=partner, dst=idle, first=0, count=n * chunks, step=step, combine=False)
        else:                                          # the idle nodes' own blocks (and those they stood for)
            _transfers(builder, partner, idle, before[None, :] == idle[:, None], chunks, step, False)
        step += 1
    return builder.build()


def swing(topology: Topology, collective: str, message_bytes: float, chunks: int) -> Schedule:
    """Swing's reduce-scatter (and all-gather back, for an allreduce) on a ring or torus, relayed hops
    counted."""
    from .embedding import embed

    return embed(topology, swing_schedule(topology, collective, message_bytes, chunks))


def swing_allreduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Swing allreduce (De Sensi et al., NSDI 2024): ``2 sum_d ceil(log2 k'_d)`` steps (+2 per odd side),
    peers at distance ``|rho(s)|``."""
    return swing(topology, "allreduce", message_bytes, chunks)


def swing_reduce_scatter(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Swing reduce-scatter: ``sum_d ceil(log2 k'_d)`` steps (+2 per odd side); node ``j`` ends with block
    ``j``."""
    return swing(topology, "reduce-scatter", message_bytes, chunks)


register("allreduce-swing", swing_allreduce, "allreduce",
         "Swing: halving and doubling with peers at distance 1, 1, 3, 5, 11, ... taking the dimensions in turn; "
         "any sides (each block sent along one route; an odd side's last node hands over to its neighbour); "
         "relayed hops counted", families=("ring", "torus"), params=(CHUNKS,),
         aliases=("swing",), paper="De Sensi et al. 2024",
         run_params=REDUCTION_RUN_PARAMS)
register("reduce-scatter-swing", swing_reduce_scatter, "reduce-scatter",
         "Swing reduce-scatter: halving steps with peers at distance 1, 1, 3, 5, 11, ...; any sides",
         families=("ring", "torus"), params=(CHUNKS,), paper="De Sensi et al. 2024",
         run_params=REDUCTION_RUN_PARAMS)
