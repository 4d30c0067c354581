"""Kautz and de Bruijn graphs (Kautz 1968; de Bruijn 1946), as undirected networks.

Both are shift-register digraphs on strings of length ``n``: the arc ``s_1
s_2 ... s_n -> s_2 ... s_n x`` shifts one symbol in.

* de Bruijn ``B(d, n)``: strings over ``d`` symbols, ``d^n`` vertices,
  out-degree ``d``, directed diameter ``n``;
* Kautz ``K(d, n)``: strings over ``d + 1`` symbols with no two consecutive
  symbols equal, ``(d + 1) d^(n-1)`` vertices, out-degree ``d``, directed
  diameter ``n``.

A network link carries both directions, so the topology is the *underlying
simple graph*: every arc becomes a link, self-loops (de Bruijn's constant
strings ``aa...a``) are dropped, and the arcs ``u -> v`` and ``v -> u`` (both
present for strings like ``abab..``) are merged into one link.  A node's
degree is therefore at most ``2d``; the undirected diameter is at most ``n``.
(This is networkx's ``to_undirected()`` of the digraph, self-loops removed.)

Numbering: de Bruijn string ``s`` is its base-``d`` value (``s_1`` most
significant); Kautz string ``s`` is ``s_1 d^(n-1) + sum_i e_i d^(n-i)`` with
``e_i = (s_i - s_{i-1} - 1) mod (d + 1)``.  Labels are the symbols.

Symmetry: a permutation of the symbols (applied to every position) and the
reversal of the strings map arcs to arcs (reversal turns ``u -> v`` into ``rev
v -> rev u``), so both are automorphisms of the undirected graph; their
orbits (checked on the built graph) are the families' ``orbits`` hook.
"""

from __future__ import annotations

import numpy as np

from ..infra.memory import power
from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .core import Codec, MixedRadixCodec, Topology


def _simple_links(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both arcs of every link of the underlying simple graph of the arcs ``src -> dst``."""
    keep = src != dst
    a, b = np.minimum(src[keep], dst[keep]), np.maximum(src[keep], dst[keep])
    key = np.unique(a * n + b)
    a, b = key // n, key % n
    return np.concatenate([a, b]), np.concatenate([b, a])


def de_bruijn_arcs(d: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """List the arcs of the de Bruijn digraph ``B(d, n)``: ``u -> (u d mod d^n) + x``.

    Parameters
    ----------
    d : int
        Alphabet size.
    n : int
        String length.

    Returns
    -------
    src, dst : numpy.ndarray
        Tail and head of every arc.
    """
    size = d ** n
    u = np.arange(size, dtype=np.int64)
    x = np.arange(d, dtype=np.int64)
    return np.repeat(u, d), ((u * d) % size)[:, None].repeat(d, axis=1).reshape(-1) + np.tile(x, size)


def kautz_digits(d: int, n: int, index: np.ndarray) -> np.ndarray:
    """Give the symbols of Kautz strings by index.

    Parameters
    ----------
    d : int
        Degree (letters ``0..d``).
    n : int
        String length.
    index : numpy.ndarray
        Vertex indices.

    Returns
    -------
    numpy.ndarray
        Symbols, shape ``(len(index), n)``.
    """
    index = np.asarray(index, dtype=np.int64)
    out = np.empty((len(index), n), dtype=np.int64)
    rest = index.copy()
    place = d ** (n - 1)
    out[:, 0] = rest // place
    rest %= place
    for i in range(1, n):
        place //= d
        e = rest // place
        rest %= place
        out[:, i] = (out[:, i - 1] + e + 1) % (d + 1)
    return out


def kautz_index(d: int, letters: np.ndarray) -> np.ndarray:
    """Give the indices of Kautz strings given as symbols (consecutive symbols distinct).

    Parameters
    ----------
    d : int
        Degree.
    letters : numpy.ndarray
        Symbols, shape ``(m, n)``.

    Returns
    -------
    numpy.ndarray
        Vertex indices.
    """
    letters = np.asarray(letters, dtype=np.int64)
    n = letters.shape[1]
    index = letters[:, 0].copy()
    for i in range(1, n):
        index = index * d + (letters[:, i] - letters[:, i - 1] - 1) % (d + 1)
    return index


def kautz_arcs(d: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """List the arcs of the Kautz digraph ``K(d, n)``: drop the first symbol, append any symbol but the last.

    Parameters
    ----------
    d : int
        Degree.
    n : int
        String length.

    Returns
    -------
    src, dst : numpy.ndarray
        Tail and head of every arc.
    """
    size = (d + 1) * d ** (n - 1)
    letters = kautz_digits(d, n, np.arange(size))
    src = np.repeat(np.arange(size, dtype=np.int64), d)
    shifted = np.repeat(letters[:, 1:], d, axis=0)
    last = np.repeat(letters[:, -1], d)
    new = (last + 1 + np.tile(np.arange(d, dtype=np.int64), size)) % (d + 1)
    return src, kautz_index(d, np.column_stack([shifted, new]))


class KautzCodec(Codec):
    """A Kautz vertex's label is its string of symbols ``0..d`` (consecutive symbols distinct)."""

    def __init__(self, d: int, n: int):
        self.d, self.n = d, n
        self.fields = tuple(f"s{i + 1}" for i in range(n))

    def decode(self, index: int) -> tuple:
        """Give the Kautz string of a vertex.

        Parameters
        ----------
        index : int
            Vertex index.

        Returns
        -------
        tuple of int
            Its symbols.
        """
        return tuple(int(v) for v in kautz_digits(self.d, self.n, np.array([index]))[0])

    def encode(self, label) -> int:
        """Give the vertex of a Kautz string.

        Parameters
        ----------
        label : sequence of int
            ``n`` symbols in ``0..d``, consecutive ones distinct.

        Returns
        -------
        int
            Vertex index.

        Raises
        ------
        TopocastError
            A wrong length, a symbol out of range, or two equal consecutive symbols.
        """
        from ..errors import TopocastError

        if len(label) != self.n:
            raise TopocastError(f"node: expected {self.n} symbols, got {len(label)}")
        letters = [integer(v, f"s{i + 1}", owner="node", minimum=0, maximum=self.d) for i, v in enumerate(label)]
        if any(a == b for a, b in zip(letters, letters[1:], strict=False)):
            raise TopocastError("node: consecutive symbols of a Kautz string must differ")
        return int(kautz_index(self.d, np.array([letters]))[0])


def _check(owner: str, d: int, n: int) -> tuple[int, int]:
    return integer(d, "d", owner=owner, minimum=1 if owner == "kautz" else 2), integer(n, "n", owner=owner, minimum=1)


def de_bruijn(d: int, n: int, p: int = 1) -> Topology:
    """Build the underlying simple graph of the de Bruijn digraph ``B(d, n)``: ``d^n`` routers.

    Parameters
    ----------
    d : int
        Alphabet size, >= 2.
    n : int
        String length, >= 1.
    p : int, default 1
        Terminals per router.

    Returns
    -------
    Topology
        The routers; self-loops and arc pairs merged into simple links.

    Raises
    ------
    TopocastError
        A parameter out of range (the size is checked by :func:`topocast.build`, not here).

    Examples
    --------
    >>> t = de_bruijn(2, 3)
    >>> t.num_nodes, t.num_edges, int(t.port_degree.max())
    (8, 13, 4)
    """
    d, n = _check("debruijn", d, n)
    p = integer(p, "p", owner="debruijn", minimum=0)
    size = d ** n
    src, dst = _simple_links(size, *de_bruijn_arcs(d, n))
    return Topology.from_arcs("debruijn", {"d": d, "n": n, "p": p}, size, src, dst,
                              codec=MixedRadixCodec([d] * n, tuple(f"s{i + 1}" for i in range(n))),
                              meta=_meta("debruijn", d, n, p, size, len(src) // 2))


def kautz(d: int, n: int, p: int = 1) -> Topology:
    """Build the underlying simple graph of the Kautz digraph ``K(d, n)``: ``(d + 1) d^(n-1)`` routers.

    Parameters
    ----------
    d : int
        Degree, >= 2.
    n : int
        String length, >= 1.
    p : int, default 1
        Terminals per router.

    Returns
    -------
    Topology
        The routers, codec the Kautz strings.

    Raises
    ------
    TopocastError
        A parameter out of range (the size is checked by :func:`topocast.build`, not here).

    Examples
    --------
    >>> t = kautz(2, 3)
    >>> t.num_nodes, t.num_edges, int(t.port_degree.max())
    (12, 21, 4)
    """
    d, n = _check("kautz", d, n)
    p = integer(p, "p", owner="kautz", minimum=0)
    size = (d + 1) * d ** (n - 1)
    src, dst = _simple_links(size, *kautz_arcs(d, n))
    return Topology.from_arcs("kautz", {"d": d, "n": n, "p": p}, size, src, dst, codec=KautzCodec(d, n),
                              meta=_meta("kautz", d, n, p, size, len(src) // 2))


def _meta(family: str, d: int, n: int, p: int, size: int, links: int) -> dict:
    return {"spec": f"{family}:d={d},n={n},p={p}", "routers": size, "out_degree": d, "string_length": n,
            "p": p, "terminals": size * p, "links": links, "directed_diameter": n,
            "undirected": "underlying simple graph: self-loops dropped, u->v and v->u merged into one link"}


def _letter_maps(symbols: int) -> list[np.ndarray]:
    """Give a transposition and a cycle of the symbols (they generate every permutation)."""
    a = np.arange(symbols, dtype=np.int64)
    return [np.where(a == 0, 1, np.where(a == 1, 0, a)), (a + 1) % symbols]


def shift_candidates(topology: Topology):
    """Generate symbol permutations and string reversal as permutations of the vertices.

    Parameters
    ----------
    topology : Topology
        A de Bruijn or Kautz network.

    Yields
    ------
    numpy.ndarray
        The image of every vertex under one map.
    """
    d, n = int(topology.params["d"]), int(topology.params["n"])
    idx = np.arange(topology.num_nodes, dtype=np.int64)
    if topology.family == "kautz":
        letters = kautz_digits(d, n, idx)
        for m in _letter_maps(d + 1):
            yield kautz_index(d, m[letters])
        yield kautz_index(d, letters[:, ::-1])
    else:
        codec = MixedRadixCodec([d] * n)
        letters = codec.decode_array(idx)
        for m in _letter_maps(d):
            yield codec.encode_array(m[letters])
        yield codec.encode_array(letters[:, ::-1])


def shift_orbits(topology: Topology) -> np.ndarray:
    """Label the vertices by orbit under the checked symbol permutations and reversal.

    The families' ``orbits`` hook.

    Parameters
    ----------
    topology : Topology
        A de Bruijn or Kautz network.

    Returns
    -------
    numpy.ndarray
        Orbit label of every vertex (cached on the topology).
    """
    from .symmetry import checked_orbits

    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "orbits" not in cache:
        cache["orbits"] = checked_orbits(topology, shift_candidates(topology))
    return cache["orbits"]


_PARAMS = (Param("n", "int", doc="string length (the digraph's diameter)", minimum=1),
           Param("p", "int", 1, doc="terminals per router", minimum=0))

register_family(Family(
    name="kautz", builder=kautz,
    params=(Param("d", "int", doc="out-degree of the digraph (d + 1 symbols)", minimum=1), *_PARAMS),
    doc="Kautz graph K(d,n), undirected: strings of n symbols of d+1, no two consecutive equal; (d+1)d^(n-1) "
        "routers",
    estimate=lambda d, n, p=1: ((d + 1) * power(d, n - 1), 2 * (d + 1) * power(d, n)),
    example="kautz:d=2,n=3", orbits=shift_orbits))

register_family(Family(
    name="debruijn", builder=de_bruijn,
    params=(Param("d", "int", doc="out-degree of the digraph (d symbols)", minimum=2), *_PARAMS),
    doc="de Bruijn graph B(d,n), undirected: strings of n symbols of d; d^n routers",
    aliases=("de-bruijn",),
    estimate=lambda d, n, p=1: (power(d, n), 2 * power(d, n + 1)),
    example="debruijn:d=2,n=4", orbits=shift_orbits))
