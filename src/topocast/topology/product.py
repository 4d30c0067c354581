"""Cartesian product of topologies (the construction behind tori, EJ^(n) and HDN bases).

Node ``(c_0, ..., c_{k-1})`` of the product has index ``sum c_i * stride_i``
with the first factor most significant; ``u ~ v`` when they differ in exactly
one coordinate ``i`` and those coordinates are adjacent in factor ``i``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import TopocastError
from ..registry import Family, Param, register_family
from .core import MixedRadixCodec, Topology

SIGN_LABELS = ("+", "-", "")


def product_label(label: str, dim: int) -> str:
    """Name a factor's arc label inside a product: ``+d0``, ``d1``, ``d2:+rho``.

    Parameters
    ----------
    label : str
        The label in the factor.
    dim : int
        The factor's place in the product.

    Returns
    -------
    str
        The label in the product.
    """
    return f"{label}d{dim}" if label in SIGN_LABELS else f"d{dim}:{label}"


def cartesian_product(factors: Sequence[Topology], family: str = "product",
                      params: dict | None = None, fields: Sequence[str] | None = None,
                      meta: dict | None = None) -> Topology:
    """Build the Cartesian product of networks; vertex-transitive when every factor is.

    Parameters
    ----------
    factors : sequence of Topology
        The factors, at least one; the first gives the most significant coordinate.
    family : str, default "product"
        Family name of the result.
    params : dict, optional
        Parameters recorded on the result (default: the factors' specs).
    fields : sequence of str, optional
        Coordinate field names for the codec.
    meta : dict, optional
        Extra metadata for the result.

    Returns
    -------
    Topology
        The product; arc labels named by :func:`product_label`.

    Raises
    ------
    TopocastError
        If ``factors`` is empty.

    Examples
    --------
    >>> from topocast.topology.classic import ring
    >>> cartesian_product([ring(3), ring(5)]).num_nodes
    15
    """
    if not factors:
        raise TopocastError("product: needs at least one factor")
    sizes = [f.num_nodes for f in factors]
    codec = MixedRadixCodec(sizes, fields)
    total = int(np.prod(sizes, dtype=np.int64))
    nodes = np.arange(total, dtype=np.int64)
    label_names: list[str] = []
    srcs, dsts, labs = [], [], []
    for dim, (fac, stride) in enumerate(zip(factors, codec.strides, strict=False)):
        coord = (nodes // stride) % fac.num_nodes
        deg = fac.port_degree[coord]
        src = np.repeat(nodes, deg)
        # arc positions of each node's coordinate inside the factor's CSR
        starts = np.repeat(fac.indptr[coord], deg)
        offsets = np.arange(len(src), dtype=np.int64) - np.repeat(np.cumsum(deg) - deg, deg)
        arcs = starts + offsets
        dst = src + (fac.indices[arcs] - np.repeat(coord, deg)) * stride
        base = len(label_names)
        label_names += [product_label(name, dim) for name in fac.label_names]
        srcs.append(src)
        dsts.append(dst)
        labs.append(fac.arc_labels[arcs].astype(np.int64) + base)
    if params is None:
        params = {"factors": tuple(f.spec for f in factors)}
        meta = dict(meta or {}, spec="product:" + "*".join(f.spec for f in factors))
    return Topology.from_arcs(
        family, params, total, np.concatenate(srcs), np.concatenate(dsts), np.concatenate(labs),
        label_names, codec=codec, vertex_transitive=all(f.vertex_transitive for f in factors),
        meta=meta,
    )


def split_factors(body: str) -> dict:
    """Split the body of a ``product:`` spec into its factor specs, not yet parsed.

    The spec layer (:mod:`topocast.spec`) parses, estimates and builds each
    factor and calls the builder with the built topologies.

    Parameters
    ----------
    body : str
        The spec after ``product:``, e.g. ``ring:3*ring:5``.

    Returns
    -------
    dict
        ``{"factors": ("ring:3", "ring:5")}``.

    Raises
    ------
    TopocastError
        With fewer than two factors, or a factor that is itself a product.
    """
    parts = tuple(p.strip() for p in body.split("*"))
    if any(not p for p in parts):
        raise TopocastError("product: write factors as SPEC*SPEC, e.g. product:ring:3*ring:5")
    if any(p.partition(":")[0].strip().lower() == "product" for p in parts):
        raise TopocastError("product: a factor cannot itself be a product; write every factor in one product, "
                            "e.g. product:ring:3*ring:5*path:4")
    return {"factors": parts}


def product_of(factors: Sequence[Topology]) -> Topology:
    """Build the ``product:`` family: the Cartesian product of built factor topologies.

    Parameters
    ----------
    factors : sequence of Topology
        The built factors.

    Returns
    -------
    Topology
        The product.
    """
    return cartesian_product(list(factors))


def product_estimate(factors: Sequence[tuple[int, int]]) -> tuple[int | float, int | float]:
    """Estimate the size of a product from the sizes of its factors.

    Parameters
    ----------
    factors : sequence of tuple of int
        ``(nodes, directed edges)`` of every factor.

    Returns
    -------
    tuple of int
        ``(nodes, directed edges)`` of the product (edges a float past 2**62).
    """
    from ..infra.memory import float_of, product

    nodes = product([n for n, _ in factors])
    arcs = sum(float_of(a) * (float_of(nodes) / max(float_of(n), 1.0)) for n, a in factors)
    return nodes, int(arcs) if arcs < 2**62 else arcs


register_family(Family(
    name="product",
    builder=product_of,
    params=(Param("factors", "str", doc="factor specs joined by '*'"),),
    doc="Cartesian product of any topologies",
    parse_body=split_factors,
    estimate=product_estimate,
    example="product:ring:3*ring:5",
))
