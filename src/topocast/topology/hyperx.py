"""HyperX (Ahn, Binkert, Davis, McLaren, Schreiber, SC 2009).

An ``L``-dimensional HyperX has ``S_1 x ... x S_L`` switches at integer
coordinates; two switches are joined when their coordinates differ in exactly
one dimension, by ``K_i`` parallel links in dimension ``i`` (trunking).  It is
the Cartesian product of complete graphs (a Hamming graph) with multiplied
links, vertex-transitive, of diameter the number of dimensions with ``S_i >
1``.  Each switch has ``T`` terminals and radix ``R = T + sum (S_i - 1) K_i``.

Spec: ``hyperx:4x4`` (the widths ``S``), ``t=2`` or ``t=1x2`` the trunking
``K`` (one value for every dimension, or one per dimension; the spec's ``t``
is the paper's ``K``), ``p=`` the terminals per switch (the paper's ``T``;
default 1).  Arc labels ``d0, d1, ...`` name the dimension of a link.
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..infra.memory import product
from ..infra.validate import integer, integers
from ..registry import Family, Param, register_family
from .core import MixedRadixCodec, Topology


def hyperx_params(dims, t=(1,), p: int = 1) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """Check the HyperX parameters ``(S, K, T)``.

    Parameters
    ----------
    dims : sequence of int
        Width ``S`` of every dimension, each >= 2.
    t : int or sequence of int, default (1,)
        Trunking ``K`` (parallel links between two switches of a dimension), >= 1: one value or one per dimension.
    p : int, default 1
        Terminals per switch ``T``, >= 0.

    Returns
    -------
    tuple
        ``(dims, trunking per dimension, p)``.

    Raises
    ------
    TopocastError
        A width below 2, a trunking below 1 or a count of trunkings that is neither one nor one per dimension,
        or a negative ``p``.
    """
    dims = integers(dims, "dims", owner="hyperx", minimum=2)
    trunk = integers((t,) if isinstance(t, int) else t, "t", owner="hyperx", minimum=1)
    if len(trunk) == 1:
        trunk = trunk * len(dims)
    if len(trunk) != len(dims):
        raise TopocastError(f"hyperx: parameter 't' must give one trunking for every dimension or one per "
                            f"dimension ({len(dims)}), got {'x'.join(map(str, trunk))}")
    return dims, trunk, integer(p, "p", owner="hyperx", minimum=0)


def hyperx(dims, t=(1,), p: int = 1) -> Topology:
    """Build a HyperX: switches on a lattice, fully connected along every dimension (Ahn et al., SC 2009).

    Parameters
    ----------
    dims : sequence of int
        Width ``S`` of every dimension, each >= 2.
    t : int or sequence of int, default (1,)
        Trunking ``K``: parallel links between two switches of a dimension, one value or one per dimension.
    p : int, default 1
        Terminals per switch ``T``.

    Returns
    -------
    Topology
        The switch graph; ``meta`` holds the network radix and the bisection.

    Raises
    ------
    TopocastError
        As :func:`hyperx_params`.

    Examples
    --------
    >>> h = hyperx((4, 4), t=2)
    >>> h.num_nodes, h.num_edges, int(h.port_degree[0]), h.meta["network_radix"]
    (16, 96, 12, 12)
    """
    dims, trunk, p = hyperx_params(dims, t, p)
    codec = MixedRadixCodec(dims, tuple(f"x{i}" for i in range(len(dims))))
    n = int(np.prod(dims, dtype=np.int64))
    nodes = np.arange(n, dtype=np.int64)
    src, dst, lab = [], [], []
    for i, (size, stride, k) in enumerate(zip(dims, codec.strides, trunk, strict=True)):
        coord = (nodes // stride) % size
        other = np.arange(size, dtype=np.int64)
        heads = (nodes - coord * stride)[:, None] + other[None, :] * stride
        keep = other[None, :] != coord[:, None]
        heads = np.repeat(heads[keep], k)
        src.append(np.repeat(nodes, (size - 1) * k))
        dst.append(heads)
        lab.append(np.full(len(heads), i, dtype=np.int16))
    radix = sum((s - 1) * k for s, k in zip(dims, trunk, strict=True))
    links = n * radix // 2
    meta = {
        "spec": f"hyperx:{'x'.join(map(str, dims))},t={'x'.join(map(str, trunk))},p={p}",
        "routers": n, "L": len(dims), "S": list(dims), "K": list(trunk), "p": p, "terminals": n * p,
        "network_radix": radix, "radix": radix + p,
        "links_per_dimension": [n * (s - 1) * k // 2 for s, k in zip(dims, trunk, strict=True)],
        "bisection_links_closed_form": bisection_links(dims, trunk),
        "diameter_closed_form": len(dims),
    }
    assert links == sum(meta["links_per_dimension"])
    return Topology.from_arcs("hyperx", {"dims": dims, "t": trunk, "p": p}, n, np.concatenate(src),
                              np.concatenate(dst), np.concatenate(lab), tuple(f"d{i}" for i in range(len(dims))),
                              codec=codec, vertex_transitive=True, meta=meta)


def bisection_links(dims, trunk) -> int | None:
    """Count the links cut by halving one dimension of even width, the fewest over such dimensions.

    That is ``(S_i / 2)^2 K_i prod_{j != i} S_j``.

    Parameters
    ----------
    dims : sequence of int
        Widths ``S``.
    trunk : sequence of int
        Trunking ``K`` per dimension.

    Returns
    -------
    int or None
        The fewest links cut, None when no width is even.
    """
    n = int(np.prod(dims, dtype=np.int64))
    cuts = [(s // 2) ** 2 * k * (n // s) for s, k in zip(dims, trunk, strict=True) if s % 2 == 0]
    return min(cuts) if cuts else None


def _estimate(dims, t=(1,), p: int = 1) -> tuple[int | float, int | float]:
    n = product(dims)
    trunk = tuple(t) * (len(dims) if len(tuple(t)) == 1 else 1)
    radix = sum((s - 1) * k for s, k in zip(dims, trunk, strict=False))
    return n, n * radix


register_family(Family(
    name="hyperx",
    builder=hyperx,
    params=(Param("dims", "dims", doc="widths S of the dimensions, e.g. 4x4x8", minimum=2),
            Param("t", "dims", (1,), doc="trunking K: links between two switches of a dimension (one value or "
                  "one per dimension)", minimum=1),
            Param("p", "int", 1, doc="terminals per switch (the paper's T)", minimum=0)),
    doc="HyperX: switches at integer coordinates, all-to-all within each dimension, trunking t (Ahn et al. SC 2009)",
    positional="dims",
    estimate=_estimate,
    example="hyperx:4x4,t=2",
))
