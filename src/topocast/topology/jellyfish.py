"""Jellyfish: a random regular graph of switches (Singla, Hong, Popa, Godfrey, NSDI 2012).

``n`` switches, each with ``d`` ports to other switches (the paper's ``r``)
and ``p`` terminals (its ``k - r``), joined by a uniformly random simple
``d``-regular graph drawn from ``seed``.  Construction: the ``n d`` ports are
paired by a random permutation (the configuration model); the pairs that
would be a self-loop or a second link between two switches are then
repaired one at a time by a double-edge swap with a random good link (remove
``u - v`` and ``x - y``, add ``u - x`` and ``v - y``, when both are new), the
paper's own repair move.  A disconnected draw (rare for ``d >= 3``), or one
whose repair gets stuck (a dense graph), is drawn again with the next seed of
the stream; ``d = n - 1`` is the complete graph.  The same ``(n, d, seed)`` always
gives the same graph.
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .core import Topology

#: draws before a disconnected result is refused
_DRAWS = 20


def jellyfish_params(n: int, d: int, p: int, seed: int) -> tuple[int, int, int, int]:
    """Check the Jellyfish parameters.

    Parameters
    ----------
    n : int
        Switches, >= 2.
    d : int
        Network ports per switch, below ``n``, >= 2 when ``n > 2``.
    p : int
        Terminals per switch, >= 0.
    seed : int
        Seed of the random graph, in 0..2**63-1.

    Returns
    -------
    tuple of int
        ``(n, d, p, seed)``.

    Raises
    ------
    TopocastError
        A value out of range, ``d >= n``, or an odd ``n * d``.
    """
    owner = "jellyfish"
    n = integer(n, "n", owner=owner, minimum=2)
    d = integer(d, "d", owner=owner, minimum=1)
    p = integer(p, "p", owner=owner, minimum=0)
    seed = integer(seed, "seed", owner=owner, minimum=0, maximum=2**63 - 1)
    if d >= n:
        raise TopocastError(f"{owner}: parameter 'd' must be below n = {n} (a simple graph), got {d}")
    if (n * d) % 2:
        raise TopocastError(f"{owner}: parameters 'n' and 'd' must have an even product n*d (every link uses two "
                            f"ports), got n={n}, d={d}")
    if d < 2 and n > 2:
        raise TopocastError(f"{owner}: parameter 'd' must be >= 2 for a connected network of {n} switches, got {d}")
    return n, d, p, seed


def random_regular_links(n: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
    """Draw the links of a simple random d-regular graph.

    ``(u, v)`` with ``u < v``: the links of a simple ``d``-regular graph on ``n`` nodes (see the module), or
    None when the repair gets stuck (a dense graph: the caller draws again).  ``d = n - 1`` is the complete
    graph.

    Parameters
    ----------
    n : int
        Nodes.
    d : int
        Degree.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    tuple of numpy.ndarray or None
        ``(u, v)`` with ``u < v``, or None when the repair gets stuck.
    """
    if d == n - 1:
        u, v = np.triu_indices(n, 1)
        return u.astype(np.int64), v.astype(np.int64)
    stubs = rng.permutation(np.repeat(np.arange(n, dtype=np.int64), d))
    u, v = np.minimum(stubs[0::2], stubs[1::2]), np.maximum(stubs[0::2], stubs[1::2])
    key = u * n + v
    order = np.argsort(key, kind="stable")
    dup = np.zeros(len(key), dtype=bool)
    dup[order[1:]] = key[order[1:]] == key[order[:-1]]
    bad = np.flatnonzero((u == v) | dup)
    if len(bad) == 0:
        return u, v
    present: dict[int, int] = {}
    for k in key.tolist():
        present[k] = present.get(k, 0) + 1
    m = len(u)
    pending = bad.tolist()
    tries = 0
    while pending:
        tries += 1
        if tries > 1000 * (len(bad) + 10):
            return None
        e = pending[-1]
        f = int(rng.integers(m))
        a, b, x, y = int(u[e]), int(v[e]), int(u[f]), int(v[f])
        if f == e or (x == y) or present.get(x * n + y, 0) > 1:
            continue
        if rng.integers(2):
            x, y = y, x
        new1, new2 = (min(a, x), max(a, x)), (min(b, y), max(b, y))
        if a == x or b == y or new1 == new2 or present.get(new1[0] * n + new1[1], 0) or \
                present.get(new2[0] * n + new2[1], 0):
            continue
        for k in (a * n + b if a < b else b * n + a, min(x, y) * n + max(x, y)):
            present[k] -= 1
        for k in (new1[0] * n + new1[1], new2[0] * n + new2[1]):
            present[k] = 1
        u[e], v[e] = new1
        u[f], v[f] = new2
        pending.pop()
    return u, v


def jellyfish(n: int, d: int, p: int = 1, seed: int = 0) -> Topology:
    """Build a Jellyfish: a random regular graph of switches (Singla et al., NSDI 2012).

    Parameters
    ----------
    n : int
        Switches.
    d : int
        Network ports per switch (``r``).
    p : int, default 1
        Terminals per switch.
    seed : int, default 0
        Seed of the random graph; the same seed gives the same network.

    Returns
    -------
    Topology
        A connected ``d``-regular simple graph of ``n`` switches.

    Raises
    ------
    TopocastError
        As :func:`jellyfish_params`, or when every draw gave a disconnected graph.

    Examples
    --------
    >>> t = jellyfish(20, 4, seed=1)
    >>> t.num_nodes, t.num_edges, sorted(set(t.port_degree.tolist())), t.has_parallel_links
    (20, 40, [4], False)
    """
    from .metrics import is_connected

    n, d, p, seed = jellyfish_params(n, d, p, seed)
    streams = np.random.SeedSequence(seed).spawn(_DRAWS)
    for draw, stream in enumerate(streams):
        links = random_regular_links(n, d, np.random.default_rng(stream))
        if links is None:
            continue
        u, v = links
        topology = Topology.from_arcs(
            "jellyfish", {"n": n, "d": d, "p": p, "seed": seed}, n, np.concatenate([u, v]), np.concatenate([v, u]),
            meta={"spec": f"jellyfish:n={n},d={d},p={p},seed={seed}", "routers": n, "network_radix": d, "p": p,
                  "terminals": n * p, "radix": d + p, "draws": draw + 1,
                  "construction": "configuration model, self-loops and repeated links repaired by double-edge "
                                  "swaps; redrawn while disconnected"})
        if is_connected(topology):
            return topology
    raise TopocastError(f"jellyfish: {_DRAWS} draws of a {d}-regular graph on {n} switches were all disconnected "
                        f"or could not be made simple; change 'd' or 'seed'")


register_family(Family(
    name="jellyfish",
    builder=jellyfish,
    params=(Param("n", "int", doc="switches", minimum=2),
            Param("d", "int", doc="network ports per switch (the paper's r): the random graph's degree", minimum=1),
            Param("p", "int", 1, doc="terminals per switch (the paper's k - r)", minimum=0),
            Param("seed", "int", 0, doc="seed of the random graph", minimum=0)),
    doc="Jellyfish: a seeded random d-regular graph of n switches (Singla et al. NSDI 2012)",
    estimate=lambda n, d, p=1, seed=0: (n, n * d),
    example="jellyfish:n=20,d=4",
))
