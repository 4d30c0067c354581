"""Spec strings: one token naming a topology, e.g. ``torus:8x8x8`` or ``ej:a=3,b=4,n=3``.

Grammar: ``FAMILY:BODY``.  ``BODY`` is ``key=value`` pairs separated by commas;
a family with a positional parameter also accepts a bare value first
(``mesh:16x16``, ``hypercube:10``, ``ring:64``).  A family may define its own
body grammar (``product:ring:3*ring:5``).

Nested specs: a parameter listed in :data:`NESTED` holds specs of other
topologies (the factors of ``product``).  This module parses each of them,
hands the family's ``estimate`` their ``(nodes, edges)`` estimates and its
builder the built topologies, so the topology layer never parses a spec.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from . import registry
from .errors import TopocastError
from .infra.memory import check_memory

#: family -> its parameter that holds a tuple of topology specs
NESTED = {"product": "factors"}


def split_pairs(body: str, owner: str) -> list[tuple[str | None, str]]:
    """Split ``a=1,b=2`` into pairs; a bare first item has key ``None``."""
    pairs: list[tuple[str | None, str]] = []
    if not body.strip():
        return pairs
    for index, item in enumerate(body.split(",")):
        item = item.strip()
        if not item:
            raise TopocastError(f"{owner}: empty item in '{body}'")
        if "=" in item:
            key, _, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if not key or not value:
                raise TopocastError(f"{owner}: malformed 'key=value' item '{item}'")
            pairs.append((key, value))
        elif index == 0:
            pairs.append((None, item))
        else:
            raise TopocastError(f"{owner}: item '{item}' must be written key=value")
    return pairs


def parse_spec(spec: str) -> tuple[registry.Family, dict[str, Any]]:
    """Parse a spec string into its family and checked keyword arguments."""
    if not isinstance(spec, str) or not spec.strip():
        raise TopocastError("spec: must be a non-empty string such as 'mesh:16x16'")
    if any(unicodedata.category(ch) == "Cc" for ch in spec):
        raise TopocastError(f"spec: {spec!r} holds a control character (a newline, a tab, an escape ...)")
    name, sep, body = spec.strip().partition(":")
    fam = registry.family(name.strip().lower())
    if fam.parse_body is not None:
        kwargs = fam.parse_body(body)
    else:
        kwargs = {}
        for key, text in split_pairs(body, fam.name):
            if key is None:
                if fam.positional is None:
                    raise TopocastError(f"{fam.name}: parameters must be written key=value, got '{text}'")
                key = fam.positional
            if key in kwargs:
                raise TopocastError(f"{fam.name}: parameter '{key}' given twice")
            kwargs[key] = fam.param(key).parse(text, fam.name)
    for p in fam.params:
        if p.name not in kwargs and p.required:
            raise TopocastError(f"{fam.name}: parameter '{p.name}' is required ({p.doc})")
    nested = NESTED.get(fam.name)
    for part in kwargs.get(nested, ()) if nested is not None else ():
        parse_spec(part)  # validates each factor now, with its own message
    return fam, kwargs


def _estimate(fam: registry.Family, kwargs: dict[str, Any]) -> tuple[int | float, int | float]:
    """The family's size estimate, nested specs replaced by their own estimates."""
    nested = NESTED.get(fam.name)
    if nested is not None:
        sizes = []
        for part in kwargs[nested]:
            sub, sub_kwargs = parse_spec(part)
            sizes.append(_estimate(sub, sub_kwargs) if sub.estimate else (0, 0))
        kwargs = {**kwargs, nested: tuple(sizes)}
    if fam.estimate is None:
        raise TopocastError(f"{fam.name}: the family has no size estimate")
    return fam.estimate(**kwargs)


def _builder_kwargs(fam: registry.Family, kwargs: dict[str, Any], max_memory: float | None) -> dict[str, Any]:
    """The builder's arguments: nested specs built first."""
    nested = NESTED.get(fam.name)
    if nested is None:
        return kwargs
    return {**kwargs, nested: tuple(build(part, max_memory=max_memory) for part in kwargs[nested])}


def build(spec: str, *, max_memory: float | None = None, faults=None):
    """Build the topology named by ``spec``, degraded by ``faults`` when given.

    >>> import topocast as tc
    >>> tc.build("torus:4x4").num_nodes
    16
    >>> tc.build("torus:4x4", faults="links=2,seed=1").num_edges
    30

    ``max_memory`` (bytes) refuses a build whose estimated size is larger;
    default half of the machine's RAM.  ``faults``: a fault spec
    (:mod:`topocast.faults`), checked before the build.
    """
    from .faults.spec import parse
    from .infra.memory import resolve_limit

    fault_spec = parse(faults)
    max_memory = resolve_limit(max_memory)
    fam, kwargs = parse_spec(spec)
    if fam.read_bytes is not None:
        check_read(*fam.read_bytes(**kwargs), max_memory)
    if fam.estimate is not None:
        nodes, edges = _estimate(fam, kwargs)
        check_memory(spec, nodes, edges, max_memory)
        check_nodes(spec, nodes)
    topology = fam.builder(**_builder_kwargs(fam, kwargs, max_memory))
    check_nodes(spec, topology.num_nodes)
    if fault_spec is not None:
        from .faults.degrade import degrade

        topology = degrade(topology, fault_spec)
    return topology


def check_nodes(spec: str, nodes: int | float) -> None:
    """One rule for every family: a network has at least two nodes."""
    if nodes < 2:
        raise TopocastError(f"nodes: a network needs at least 2 nodes; {spec} has {int(nodes)}")


def check_read(need: float, what: str, max_memory: float | None) -> None:
    """Refuse reading an input whose reader would need more than ``max_memory`` (:func:`.infra.memory.check_need`).

    Parameters
    ----------
    need : float
        The reader's estimated peak in bytes.
    what : str
        The reading, in words (``"reading FILE (N bytes)"``).
    max_memory : float, optional
        The limit in bytes; None: half of the machine's RAM.

    Raises
    ------
    TopocastError
        ``max-memory: WHAT needs about X, over the limit of Y``.
    """
    from .infra.memory import check_need

    check_need(what, need, max_memory)
