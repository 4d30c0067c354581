"""Synthetic unicast traffic patterns: which node each message goes to.

Nodes are the topology's indices ``0 .. N-1`` (every node is a terminal).
Each pattern maps the source of every generated message to a destination;
the draws use the run's ``numpy.random.Generator`` and take time and memory
proportional to the messages drawn (never to messages times nodes).

``uniform``
    Uniform over the ``N - 1`` other nodes: an integer ``r`` in ``0 .. N-2``,
    destination ``r + (r >= source)``.
``transpose``
    The node index read as a position ``i = r * C + c`` of a row-major
    ``R x C`` matrix goes to the transposed position ``c * R + r``.  ``R = C
    = sqrt(N)`` when ``N`` is a perfect square (on a ``k x k`` mesh or torus
    that is ``(row, col) -> (col, row)``); otherwise ``N = 2^b`` must be a
    power of two, ``R = 2^ceil(b/2)`` and ``C = 2^floor(b/2)`` (the index's
    bits rotated left by ``ceil(b/2)``; for even ``b`` the two readings
    agree).  Any other ``N`` is refused.
``bit-reverse``
    ``N = 2^b``: the destination's ``b``-bit index is the source's read
    backwards.  Any other ``N`` is refused.
``random-permutation``
    One permutation drawn once per run, uniformly among the permutations
    without fixed points (a derangement: a uniform permutation is drawn until
    it has none, about ``e`` draws); every message of a source goes to its
    image.
``nearest-neighbour``
    Uniform over the source's distinct neighbours (parallel links count once).
``hot-spot``
    With probability ``hot_fraction`` the destination is uniform over the hot
    nodes other than the source, otherwise uniform over all other nodes; a
    source that is the only hot node always draws uniformly.  The hot nodes
    are ``hot_nodes``, a comma-separated list of node indices.
``group-shift``
    Dragonfly and Galaxyfly only: every node of group (supernode) ``i``
    sends to a node drawn uniformly among the ``a`` routers of group
    ``i + 1`` (mod the number of groups).  All of a group's traffic heads
    for one other group, so minimal routes crowd onto the few global links
    between the two: the adversarial pattern of Kim, Dally, Scott and Abts
    (2008) that Valiant routing is there for.  Any other family, or a
    network of one group, is refused.

The permutations (``transpose``, ``bit-reverse``) have fixed points (the
diagonal, the palindromes): those nodes would send to themselves, so they
send nothing (*idle*).  ``load`` is the offered traffic of every other node.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import TopocastError
from ..topology.core import Topology
from .unicast_routing import SUPERNODE_FAMILIES, supernode_size

PATTERNS = ("uniform", "transpose", "bit-reverse", "random-permutation", "nearest-neighbour", "hot-spot",
            "group-shift")
#: the patterns that need a network of groups (Dragonfly groups, Galaxyfly supernodes)
GROUP_PATTERNS = ("group-shift",)
#: the patterns that send every message of a source to one fixed node
PERMUTATIONS = ("transpose", "bit-reverse", "random-permutation")


def _power_of_two(n: int) -> int | None:
    """``b`` when ``n == 2**b``, else None."""
    return n.bit_length() - 1 if n >= 1 and n & (n - 1) == 0 else None


def transpose_shape(n: int) -> tuple[int, int]:
    """Give the shape ``(R, C)`` of the index matrix the transpose pattern reads.

    Parameters
    ----------
    n : int
        Nodes: a perfect square or a power of two.

    Returns
    -------
    tuple of int
        ``(R, C)``.

    Raises
    ------
    TopocastError
        If ``n`` is neither.
    """
    root = math.isqrt(n)
    if root * root == n:
        return root, root
    b = _power_of_two(n)
    if b is None:
        raise TopocastError(f"unicast: parameter 'traffic' transpose needs a node count that is a perfect "
                            f"square or a power of two, got {n} nodes")
    return 1 << ((b + 1) // 2), 1 << (b // 2)


def transpose_permutation(n: int) -> np.ndarray:
    """Give the destination of every node under ``transpose``: ``r * C + c -> c * R + r``.

    Parameters
    ----------
    n : int
        Nodes.

    Returns
    -------
    numpy.ndarray
        Destination per node.

    Raises
    ------
    TopocastError
        As :func:`transpose_shape`.

    Examples
    --------
    >>> transpose_permutation(4).tolist(), transpose_permutation(8).tolist()
    ([0, 2, 1, 3], [0, 4, 1, 5, 2, 6, 3, 7])
    """
    rows, cols = transpose_shape(n)
    r, c = np.divmod(np.arange(n, dtype=np.int64), cols)
    return c * rows + r


def bit_reverse_permutation(n: int) -> np.ndarray:
    """Give the destination of every node under ``bit-reverse``: its ``log2 N``-bit index read backwards.

    Parameters
    ----------
    n : int
        Nodes, a power of two.

    Returns
    -------
    numpy.ndarray
        Destination per node.

    Raises
    ------
    TopocastError
        If ``n`` is not a power of two.

    Examples
    --------
    >>> bit_reverse_permutation(8).tolist()
    [0, 4, 2, 6, 1, 5, 3, 7]
    """
    b = _power_of_two(n)
    if b is None:
        raise TopocastError(f"unicast: parameter 'traffic' bit-reverse needs a node count that is a power of "
                            f"two, got {n} nodes")
    x = np.arange(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    for i in range(b):
        out |= ((x >> i) & 1) << (b - 1 - i)
    return out


def random_derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """Draw a permutation of ``0 .. n-1`` without fixed points, uniform among them (about ``e`` draws).

    Parameters
    ----------
    n : int
        Nodes, >= 2.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    numpy.ndarray
        The permutation.

    Raises
    ------
    TopocastError
        For fewer than 2 nodes.
    """
    if n < 2:
        raise TopocastError(f"unicast: parameter 'traffic' random-permutation needs at least 2 nodes, got {n}")
    idx = np.arange(n, dtype=np.int64)
    while True:
        perm = rng.permutation(n).astype(np.int64)
        if not np.any(perm == idx):
            return perm


def parse_hot_nodes(text: str, n: int) -> np.ndarray:
    """Read the hot node set of ``hot_nodes``.

    Parameters
    ----------
    text : str
        Comma-separated node indices.
    n : int
        Nodes of the network.

    Returns
    -------
    numpy.ndarray
        The nodes, sorted.

    Raises
    ------
    TopocastError
        Naming ``hot_nodes``: not integers, out of range, or a node twice.
    """
    parts = [p.strip() for p in str(text).split(",")]
    try:
        nodes = [int(p) for p in parts]
    except ValueError:
        raise TopocastError(f"unicast: parameter 'hot_nodes' must be comma-separated node indices, "
                            f"got '{text}'") from None
    bad = [v for v in nodes if not 0 <= v < n]
    if bad:
        raise TopocastError(f"unicast: parameter 'hot_nodes' must be node indices in 0..{n - 1}, got {bad[0]}")
    if len(set(nodes)) != len(nodes):
        raise TopocastError(f"unicast: parameter 'hot_nodes' lists a node twice, got '{text}'")
    return np.array(sorted(nodes), dtype=np.int64)


def check_hot_fraction(value: float) -> float:
    """Check the share of messages sent to the hot nodes.

    Parameters
    ----------
    value : float
        The share, in [0, 1].

    Returns
    -------
    float
        The share.

    Raises
    ------
    TopocastError
        Outside [0, 1].
    """
    if not 0.0 <= value <= 1.0:
        raise TopocastError(f"unicast: parameter 'hot_fraction' must be between 0 and 1, got {value}")
    return float(value)


def distinct_neighbours(topology: Topology) -> tuple[np.ndarray, np.ndarray]:
    """Give every node's distinct neighbours, ascending (parallel links once).

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    ptr, nodes : numpy.ndarray
        CSR.
    """
    indptr, indices = topology.indptr, topology.indices
    keep = np.ones(len(indices), dtype=bool)
    keep[1:] = indices[1:] != indices[:-1]
    starts = indptr[:-1]
    keep[starts[starts < len(indices)]] = True  # a row's first arc always counts
    ptr = np.zeros(topology.num_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(topology.arc_sources[keep], minlength=topology.num_nodes), out=ptr[1:])
    return ptr, indices[keep].astype(np.int64)


def group_shape(topology: Topology) -> tuple[int, int]:
    """Give the routers per group and the groups of a Dragonfly or Galaxyfly, for ``group-shift``.

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    tuple of int
        ``(a, groups)``.

    Raises
    ------
    TopocastError
        Naming ``traffic``, on any other family or with fewer than two groups.
    """
    if topology.family not in SUPERNODE_FAMILIES:
        raise TopocastError(f"unicast: parameter 'traffic' group-shift needs a network of groups "
                            f"({', '.join(SUPERNODE_FAMILIES)}), not family '{topology.family}'")
    a = supernode_size(topology)
    groups = topology.num_nodes // a
    if groups < 2:
        raise TopocastError(f"unicast: parameter 'traffic' group-shift needs at least 2 groups, the network has "
                            f"{groups}")
    return a, groups


def group_shift_destinations(topology: Topology, sources: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw one destination per source: a router chosen uniformly in the next group (mod the groups).

    Parameters
    ----------
    topology : Topology
        A Dragonfly or Galaxyfly.
    sources : numpy.ndarray
        Source of every message.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    numpy.ndarray
        Destination per message.

    Raises
    ------
    TopocastError
        As :func:`group_shape`.

    Examples
    --------
    >>> import topocast as tc
    >>> t = tc.build("dragonfly:g=3,a=2")
    >>> (group_shift_destinations(t, np.array([0, 1, 2, 5]), np.random.default_rng(0)) // 2).tolist()
    [1, 1, 2, 0]
    """
    a, groups = group_shape(topology)
    sources = np.asarray(sources, dtype=np.int64)
    pick = rng.integers(0, a, size=len(sources), dtype=np.int64)
    return (sources // a + 1) % groups * a + pick


def pattern_permutation(pattern: str, n: int, rng: np.random.Generator) -> np.ndarray | None:
    """Give the destination of every node for a permutation pattern, None for the others.

    Parameters
    ----------
    pattern : str
        The traffic pattern.
    n : int
        Nodes.
    rng : numpy.random.Generator
        The random source (``random-permutation``).

    Returns
    -------
    numpy.ndarray or None
        Destination per node.

    Raises
    ------
    TopocastError
        When the node count does not suit the pattern.
    """
    if pattern == "transpose":
        return transpose_permutation(n)
    if pattern == "bit-reverse":
        return bit_reverse_permutation(n)
    if pattern == "random-permutation":
        return random_derangement(n, rng)
    return None


def uniform_destinations(n: int, sources: np.ndarray, rng: np.random.Generator,
                         partners: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
                         ) -> np.ndarray:
    """Draw one destination per source, uniform over the other ``n - 1`` nodes.

    Parameters
    ----------
    n : int
        Nodes.
    sources : numpy.ndarray
        Source of every message.
    rng : numpy.random.Generator
        The random source.
    partners : tuple of numpy.ndarray, optional
        A degraded network's :func:`topocast.faults.connectivity.partners`: the draw is then uniform over the
        other healthy nodes of the source's component (every source must have one).

    Returns
    -------
    numpy.ndarray
        Destination per message.
    """
    if partners is None:
        r = rng.integers(0, n - 1, size=len(sources), dtype=np.int64)
        return r + (r >= sources)
    members, start, size, pos = partners
    r = rng.integers(0, size[sources] - 1, dtype=np.int64) if len(sources) else np.zeros(0, np.int64)
    return members[start[sources] + r + (r >= pos[sources])]


def draw(pattern: str, topology: Topology, sources: np.ndarray, rng: np.random.Generator, *,
         permutation: np.ndarray | None = None, hot_fraction: float = 0.1,
         hot: np.ndarray | None = None,
         partners: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Draw the destination of every message under a traffic pattern.

    Parameters
    ----------
    pattern : str
        One of :data:`PATTERNS`.
    topology : Topology
        The network.
    sources : numpy.ndarray
        Source of every message.
    rng : numpy.random.Generator
        The random source.
    permutation : numpy.ndarray, optional
        :func:`pattern_permutation`'s array for the permutation patterns (a source mapped to itself must
        not be in ``sources``).
    hot_fraction : float, default 0.1
        Share of messages sent to the hot nodes (``hot-spot``).
    hot : numpy.ndarray, optional
        The sorted hot node set (``hot-spot``).
    partners : tuple of numpy.ndarray, optional
        A degraded network's :func:`topocast.faults.connectivity.partners`: the uniform draws (``uniform``,
        hot-spot's cold part) are then uniform over the source's healthy component instead of every node.

    Returns
    -------
    numpy.ndarray
        Destination per message.

    Raises
    ------
    TopocastError
        An unknown pattern, or a pattern the network does not support.
    """
    n = topology.num_nodes
    sources = np.asarray(sources, dtype=np.int64)
    if pattern == "uniform":
        return uniform_destinations(n, sources, rng, partners)
    if pattern in PERMUTATIONS:
        if permutation is None:
            raise TopocastError(f"unicast: traffic '{pattern}' needs its permutation")
        return permutation[sources]
    if pattern == "nearest-neighbour":
        ptr, nbrs = distinct_neighbours(topology)
        degree = np.diff(ptr)[sources]
        if len(sources) and degree.min() == 0:
            raise TopocastError(f"unicast: parameter 'traffic' nearest-neighbour needs every node to have a "
                                f"neighbour; node {int(sources[np.argmin(degree)])} has none")
        pick = rng.integers(0, np.maximum(degree, 1), dtype=np.int64) if len(sources) else np.zeros(0, np.int64)
        return nbrs[ptr[sources] + pick]
    if pattern == "hot-spot":
        hot = np.asarray(hot, dtype=np.int64)
        dst = uniform_destinations(n, sources, rng, partners)
        coin = rng.random(len(sources)) < hot_fraction
        pos = np.searchsorted(hot, sources)
        in_hot = (pos < len(hot)) & (hot[np.minimum(pos, len(hot) - 1)] == sources)
        choices = len(hot) - in_hot.astype(np.int64)
        take = np.flatnonzero(coin & (choices > 0))
        r = rng.integers(0, choices[take], dtype=np.int64) if len(take) else np.zeros(0, np.int64)
        r += in_hot[take] & (r >= pos[take])
        dst[take] = hot[r]
        return dst
    if pattern == "group-shift":
        return group_shift_destinations(topology, sources, rng)
    raise TopocastError(f"unicast: parameter 'traffic' must be one of {', '.join(PATTERNS)}, got '{pattern}'")


def pattern_law(pattern: str, topology: Topology, *, permutation: np.ndarray | None = None,
                hot_fraction: float = 0.1, hot: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Give the probability law of a message's destination given its source.

    The probability law of a message's destination given its source, as ``(src, dst, weight, dense)``.

    Source ``x`` sends to every other node with probability ``dense``, plus
    ``weight[i]`` to ``dst[i]`` for every explicit pair with ``src[i] == x``
    (the pairs of a permutation, of neighbours, hot-spot's hot part).  The
    weights of a sending node sum to one; an idle node has none.

    Parameters
    ----------
    pattern : str
        One of :data:`PATTERNS`.
    topology : Topology
        The network.
    permutation : numpy.ndarray, optional
        The destination of every node, for permutation patterns.
    hot_fraction : float, default 0.1
        Share of messages sent to the hot nodes.
    hot : numpy.ndarray, optional
        The hot nodes.

    Returns
    -------
    tuple
        ``(src, dst, weight, dense)``.

    Raises
    ------
    ValueError
        For an unknown pattern.
    """
    n = topology.num_nodes
    none = np.zeros(0, np.int64)
    if pattern == "uniform":
        return none, none, np.zeros(0), 1.0 / (n - 1)
    if pattern in PERMUTATIONS:
        if permutation is None:
            raise TopocastError(f"unicast: traffic '{pattern}' needs its permutation")
        src = np.flatnonzero(permutation != np.arange(n)).astype(np.int64)
        return src, permutation[src], np.ones(len(src)), 0.0
    if pattern == "nearest-neighbour":
        ptr, nbrs = distinct_neighbours(topology)
        degree = np.diff(ptr)
        src = np.repeat(np.arange(n, dtype=np.int64), degree)
        return src, nbrs, 1.0 / degree[src], 0.0
    if pattern == "hot-spot":
        hot = np.asarray(hot, dtype=np.int64)
        in_hot = np.zeros(n, dtype=bool)
        in_hot[hot] = True
        choices = len(hot) - in_hot.astype(np.int64)
        src = np.repeat(np.arange(n, dtype=np.int64), len(hot))
        dst = np.tile(hot, n)
        keep = (src != dst) & (choices[src] > 0)
        src, dst = src[keep], dst[keep]
        weight = hot_fraction / choices[src]
        lone = np.flatnonzero(choices == 0)  # the only hot node sends uniformly
        for x in lone.tolist():
            others = np.delete(np.arange(n, dtype=np.int64), x)
            src = np.concatenate([src, np.full(n - 1, x, np.int64)])
            dst = np.concatenate([dst, others])
            weight = np.concatenate([weight, np.full(n - 1, hot_fraction / (n - 1))])
        return src, dst, weight, (1.0 - hot_fraction) / (n - 1)
    if pattern == "group-shift":
        a, groups = group_shape(topology)
        src = np.repeat(np.arange(n, dtype=np.int64), a)
        dst = (src // a + 1) % groups * a + np.tile(np.arange(a, dtype=np.int64), n)
        return src, dst, np.full(len(src), 1.0 / a), 0.0
    raise ValueError(f"pattern_law: unknown pattern {pattern!r}")
