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

Side by side (``concurrent="ports"``, the default): ``2D`` collectives on a torus of ``D`` dimensions, each on
its own share of the vector, collective ``c`` starting in dimension ``c mod D`` and mirrored (``x - rho(s)``
for an even ``x``) for ``c >= D``, so that every port works in every step (the paper's multiport Swing).

Logical steps: ``2 sum_d ceil(log2 k'_d) + 2 o`` for an allreduce and ``sum_d ceil(log2 k'_d) + 2 o`` for a
reduce-scatter, ``k'_d`` the side rounded down to even and ``o`` the number of odd sides; transfers
between non-neighbours are relayed hop by hop (:func:`topocast.algorithms.embedding.embed`).
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule, ScheduleBuilder
from ..registry import Param
from ..topology.core import Topology
from .base import REDUCTION_RUN_PARAMS, register
from .grid import grid_shape, strides
from .reductions import CHUNKS, _check_chunks

#: the most nodes Swing plans for (it keeps, per node, which owners' blocks it holds: ``N^2`` booleans)
MAX_SWING_NODES = 4096


def swing_distance(s: int) -> int:
    """Give Swing's signed peer distance in step ``s`` of a dimension.

    ``rho(s) = sum_{i <= s} (-2)^i``: 1, -1, 3, -5, 11, ... (De Sensi et al. 2024).

    Parameters
    ----------
    s : int
        The step within a dimension, from 0.

    Returns
    -------
    int
        ``rho(s)``, in hops along the dimension: the peer of a node at an even coordinate ``x`` is
        ``x + rho(s)`` (mod the side).

    Examples
    --------
    >>> [swing_distance(s) for s in range(5)]
    [1, -1, 3, -5, 11]
    """
    return (1 - (-2) ** (s + 1)) // 3


def swing_steps(sizes: tuple[int, ...]) -> int:
    """Count the peer steps of one halving (or one doubling) on a torus of ``sizes``.

    ``sum_d ceil(log2 k'_d)``, ``k'_d`` the side rounded down to even.

    Parameters
    ----------
    sizes : tuple of int
        The sides of the ring or torus, first dimension most significant.

    Returns
    -------
    int
        The number of logical steps, not counting the hand-over steps of odd sides.
    """
    return sum(int(k - k % 2 - 1).bit_length() for k in sizes)


def swing_peers(sizes: tuple[int, ...], first_dim: int = 0, mirrored: bool = False) -> list[np.ndarray]:
    """Give every node's peer in each step (-1: a node idle in the steps, the last coordinate of an odd side).

    The steps take the dimensions in turn from ``first_dim``, ``ceil(log2 k'_d)`` of them in dimension ``d``
    (``k'_d = k_d`` rounded down to even); in step ``s`` of its dimension, a node at an even coordinate
    ``x`` pairs with ``x + rho(s)``, an odd one with ``x - rho(s)``, mod ``k'_d`` (the signs swapped when
    ``mirrored``).

    Parameters
    ----------
    sizes : tuple of int
        The sides of the ring or torus, first dimension most significant.
    first_dim : int, default 0
        The dimension of the first step.
    mirrored : bool, default False
        Swap the signs of the peer rule (an even coordinate pairs with ``x - rho(s)``).

    Returns
    -------
    list of numpy.ndarray
        One array per step, :func:`swing_steps` of them; entry ``v`` is node ``v``'s peer in that step, or
        -1 for an idle node.

    Raises
    ------
    TopocastError
        When a side is under 2.
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
    turn = [(first_dim + i) % len(sizes) for i in range(len(sizes))]
    out = []
    while any(done[d] < left[d] for d in range(len(sizes))):
        for d in turn:
            if done[d] == left[d]:
                continue
            x, k = coord[d], even[d]
            rho = -swing_distance(done[d]) if mirrored else swing_distance(done[d])
            shift = np.where(x % 2 == 0, rho, -rho)
            out.append(np.where(active, nodes + (((x + shift) % k) - x) * stride[d], -1))
            done[d] += 1
    return out


def hand_overs(sizes: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Give the hand-overs of the odd sides: the nodes that sit the Swing steps out and their neighbours.

    ``(idle, partner)`` per odd side, in dimension order: the nodes still active at coordinate ``k - 1``
    of that dimension and their neighbours at ``k - 2``.

    Parameters
    ----------
    sizes : tuple of int
        The sides of the ring or torus, first dimension most significant.

    Returns
    -------
    list of tuple of numpy.ndarray
        One ``(idle, partner)`` pair of node arrays of equal length per odd side; empty when every side is
        even.
    """
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
    """Cut each row of a ``rows x owners`` mask into runs of consecutive owners, as block ranges.

    Returns ``(ranges per row, first block, block count)``, ``chunks`` blocks per owner.
    """
    rows, n = mask.shape
    padded = np.zeros((rows, n + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    edge = np.diff(padded, axis=1)
    row, start = np.nonzero(edge == 1)
    _, stop = np.nonzero(edge == -1)
    return (np.bincount(row, minlength=rows).astype(np.int64), start.astype(np.int64) * chunks,
            (stop - start).astype(np.int64) * chunks)


def greedy_allgather(peers: list[np.ndarray], owners: np.ndarray) -> list[np.ndarray]:
    """Plan the greedy all-gather: in each doubling step, send the peer only the blocks it does not hold yet.

    Per step of the doubling (``peers`` in reverse order), what every node receives from its peer: the
    owners (columns) whose reduced blocks the peer holds and the node does not.

    Parameters
    ----------
    peers : list of numpy.ndarray
        Every node's peer per step of the halving, as from :func:`swing_peers` (-1: idle); the doubling
        takes them in reverse order.
    owners : numpy.ndarray
        ``N x N`` booleans: ``owners[v]``, the owners (columns) whose blocks node ``v`` starts with.

    Returns
    -------
    list of numpy.ndarray
        Per doubling step, an ``N x N`` boolean mask: row ``v`` names the owners whose reduced blocks node
        ``v`` receives from its peer in that step.

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


class _Steps:
    """Gather the transfers of each logical step from the collectives that run side by side.

    Merged per ``(src, dst)``: one transfer per pair and step, carrying the ranges of every collective.
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.parts: dict[tuple[int, bool], list] = {}

    def add(self, step: int, combine: bool, src, dst, nranges, first, count) -> None:
        self.parts.setdefault((step, combine), []).append(
            tuple(np.asarray(a, dtype=np.int64) for a in (src, dst, nranges, first, count)))

    def add_mask(self, step: int, combine: bool, src, dst, mask: np.ndarray, chunks: int, offset: int) -> None:
        """Add ``src[i] -> dst[i]`` carrying the blocks of the owners in ``mask[i]`` (empty rows dropped).

        Block ids start at ``offset``.
        """
        keep = mask.any(axis=1)
        if keep.any():
            nranges, first, count = _runs(mask[keep], chunks)
            self.add(step, combine, src[keep], dst[keep], nranges, first + offset, count)

    def emit(self, builder: ScheduleBuilder) -> None:
        for (step, combine), parts in sorted(self.parts.items()):
            src, dst, nranges, first, count = (np.concatenate(c) for c in zip(*parts, strict=True))
            key = src * self.n + dst
            pair, which = np.unique(key, return_inverse=True)
            order = np.argsort(np.repeat(which, nranges), kind="stable")
            merged = np.bincount(which, weights=nranges, minlength=len(pair)).astype(np.int64)
            builder.add_ranges(pair // self.n, pair % self.n, merged, first[order], count[order], step=step,
                               combine=combine)


#: how many Swing collectives run side by side
CONCURRENT = ("ports", "one")


def swing_schedule(topology: Topology, collective: str, message_bytes: float, chunks: int,
                   concurrent: str = "ports") -> Schedule:
    """Plan the logical Swing schedule (peers not necessarily linked; one step per logical round).

    ``concurrent="ports"``: ``2D`` collectives side by side on a torus of ``D`` dimensions, each on its own
    share of the vector, collective ``c`` starting in dimension ``c mod D`` with the peers mirrored for
    ``c >= D``, so that in a step every node talks over every port (De Sensi et al.'s multiport Swing);
    ``"one"``: one collective on the whole vector.  Block ``c N chunks + j chunks + i`` is chunk ``i`` of node
    ``j``'s share in collective ``c``.

    Parameters
    ----------
    topology : Topology
        A ring or torus, every side at least 2, of at most :data:`MAX_SWING_NODES` nodes.
    collective : str
        ``allreduce`` or ``reduce-scatter``.
    message_bytes : float
        Size of every node's vector in bytes.
    chunks : int
        Blocks per node's share of the vector (pipelining), in each collective.
    concurrent : str, default "ports"
        ``"ports"`` (``2D`` collectives side by side) or ``"one"`` (one collective); see :data:`CONCURRENT`.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step, between peers that need not be
        linked.

    Raises
    ------
    TopocastError
        A network that is not a ring or torus, a side under 2, more than :data:`MAX_SWING_NODES` nodes, an
        unknown ``concurrent``, a vector under one byte, or blocks smaller than a byte.
    """
    sizes, wraps = grid_shape(topology)
    if not all(wraps):
        raise TopocastError(f"algorithm: Swing needs rings in every dimension (a ring or torus), not {topology.spec}")
    if concurrent not in CONCURRENT:
        raise TopocastError(f"concurrent: must be one of {', '.join(CONCURRENT)}, got {concurrent!r}")
    n = topology.num_nodes
    if n > MAX_SWING_NODES:
        raise TopocastError(f"algorithm: Swing plans for at most {MAX_SWING_NODES} nodes, not {n}")
    orders = [(0, False)] if concurrent == "one" else \
        [(c % len(sizes), c >= len(sizes)) for c in range(2 * len(sizes))]
    share = n * chunks
    total = share * len(orders)
    if len(orders) > 1 and 0 < message_bytes < total:
        raise TopocastError(f"chunks: {total} blocks ({n} nodes x {chunks} chunks x {len(orders)} collectives side "
                            f"by side) of a {message_bytes:g}-byte vector would be smaller than a byte; set "
                            f"concurrent=one, lower chunks or raise message_bytes")
    _check_chunks(chunks, message_bytes, total)
    home = np.tile(np.repeat(np.arange(n, dtype=np.int64), chunks), len(orders))
    builder = ScheduleBuilder(n, origin=home, collective=collective,
                              targets="all" if collective == "allreduce" else home, message_bytes=message_bytes / total,
                              meta={"algorithm": "swing", "chunks": chunks, "collectives": len(orders)})
    nodes = np.arange(n, dtype=np.int64)
    handed = hand_overs(sizes)
    rep, history = nodes.copy(), []
    steps = _Steps(n)
    for j, (idle, partner) in enumerate(handed):      # pre-steps: the idle nodes add their vectors in
        history.append(rep.copy())
        steps.add(j, True, idle, partner, np.ones(len(idle)), np.zeros(len(idle)), np.full(len(idle), total))
        move = nodes.copy()
        move[idle] = partner
        rep = move[rep]
    first = len(handed)
    owners = np.zeros((n, n), dtype=bool)
    owners[rep, nodes] = True                          # node rep[o] stands for owner o in the Swing steps
    for c, (first_dim, mirrored) in enumerate(orders):
        peers = swing_peers(sizes, first_dim, mirrored)
        gathered = greedy_allgather(peers, owners)
        last = len(peers) - 1
        for j, peer in enumerate(peers):               # the halving: the all-gather's time reverse
            paired = np.flatnonzero(peer >= 0)
            steps.add_mask(first + j, True, paired, peer[paired], gathered[last - j][paired], chunks, c * share)
            if collective == "allreduce":              # the doubling: the greedy all-gather
                steps.add_mask(first + 2 * last + 1 - j, False, peer[paired], paired, gathered[last - j][paired],
                               chunks, c * share)
    after = first + len(peers) * (2 if collective == "allreduce" else 1)
    for j, ((idle, partner), before) in enumerate(zip(reversed(handed), reversed(history), strict=True)):
        if collective == "allreduce":                  # post-steps: the result back to the idle nodes
            steps.add(after + j, False, partner, idle, np.ones(len(idle)), np.zeros(len(idle)),
                      np.full(len(idle), total))
        else:                                          # the idle nodes' own blocks (and those they stood for)
            for c in range(len(orders)):
                steps.add_mask(after + j, False, partner, idle, before[None, :] == idle[:, None], chunks, c * share)
    steps.emit(builder)
    return builder.build()


def swing(topology: Topology, collective: str, message_bytes: float, chunks: int,
          concurrent: str = "ports") -> Schedule:
    """Plan Swing's reduce-scatter (and the all-gather back, for an allreduce) on a ring or torus.

    The logical schedule of :func:`swing_schedule`, its transfers between non-neighbours relayed hop by hop
    (:func:`topocast.algorithms.embedding.embed`), every relayed hop counted.

    Parameters
    ----------
    topology : Topology
        A ring or torus, every side at least 2, of at most :data:`MAX_SWING_NODES` nodes.
    collective : str
        ``allreduce`` or ``reduce-scatter``.
    message_bytes : float
        Size of every node's vector in bytes.
    chunks : int
        Blocks per node's share of the vector (pipelining), in each collective.
    concurrent : str, default "ports"
        ``"ports"`` (``2D`` collectives side by side) or ``"one"`` (one collective).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step, one hop each.

    Raises
    ------
    TopocastError
        A network that is not a ring or torus, a side under 2, more than :data:`MAX_SWING_NODES` nodes, an
        unknown ``concurrent``, a vector under one byte, or blocks smaller than a byte.
    """
    from .embedding import embed

    return embed(topology, swing_schedule(topology, collective, message_bytes, chunks, concurrent))


def swing_allreduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1,
                    concurrent: str = "ports") -> Schedule:
    """Plan the Swing allreduce (De Sensi et al., NSDI 2024): halving then doubling with closer peers.

    ``2 sum_d ceil(log2 k'_d)`` steps (+2 per odd side), peers at distance ``|rho(s)|``; ``2D`` collectives
    side by side (``concurrent="ports"``) or one.

    Parameters
    ----------
    topology : Topology
        A ring or torus, every side at least 2, of at most :data:`MAX_SWING_NODES` nodes.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector (pipelining), in each collective.
    concurrent : str, default "ports"
        ``"ports"`` (``2D`` collectives side by side) or ``"one"`` (one collective).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step, one hop each.

    Raises
    ------
    TopocastError
        A network that is not a ring or torus, a side under 2, more than :data:`MAX_SWING_NODES` nodes, an
        unknown ``concurrent``, a vector under one byte, or blocks smaller than a byte.
    """
    return swing(topology, "allreduce", message_bytes, chunks, concurrent)


def swing_reduce_scatter(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1,
                         concurrent: str = "ports") -> Schedule:
    """Plan the Swing reduce-scatter: halving steps with closer peers; node ``j`` ends with its blocks.

    ``sum_d ceil(log2 k'_d)`` steps (+2 per odd side); node ``j`` ends with its blocks (one share per
    concurrent collective).

    Parameters
    ----------
    topology : Topology
        A ring or torus, every side at least 2, of at most :data:`MAX_SWING_NODES` nodes.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector (pipelining), in each collective.
    concurrent : str, default "ports"
        ``"ports"`` (``2D`` collectives side by side) or ``"one"`` (one collective).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step, one hop each.

    Raises
    ------
    TopocastError
        A network that is not a ring or torus, a side under 2, more than :data:`MAX_SWING_NODES` nodes, an
        unknown ``concurrent``, a vector under one byte, or blocks smaller than a byte.
    """
    return swing(topology, "reduce-scatter", message_bytes, chunks, concurrent)


CONCURRENT_PARAM = Param("concurrent", "str", "ports",
                         "'ports': 2 Swing collectives per dimension side by side, each on a share of the vector "
                         "and starting in another dimension and direction (every port busy); 'one': one collective",
                         choices=CONCURRENT)

register("allreduce-swing", swing_allreduce, "allreduce",
         "Swing: halving and doubling with peers at distance 1, 1, 3, 5, 11, ... taking the dimensions in turn; "
         "any sides (each block sent along one route; an odd side's last node hands over to its neighbour); "
         "relayed hops counted", families=("ring", "torus"), params=(CHUNKS, CONCURRENT_PARAM),
         aliases=("swing",), paper="De Sensi et al. 2024",
         run_params=REDUCTION_RUN_PARAMS)
register("reduce-scatter-swing", swing_reduce_scatter, "reduce-scatter",
         "Swing reduce-scatter: halving steps with peers at distance 1, 1, 3, 5, 11, ...; any sides",
         families=("ring", "torus"), params=(CHUNKS, CONCURRENT_PARAM), paper="De Sensi et al. 2024",
         run_params=REDUCTION_RUN_PARAMS)
