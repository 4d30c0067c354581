"""Spec strings: one token naming a topology, e.g. ``torus:8x8x8`` or ``ej:a=3,b=4,n=3``.

Grammar: ``FAMILY:BODY``.  ``BODY`` is ``key=value`` pairs separated by commas;
a family with a positional parameter also accepts a bare value first
(``mesh:16x16``, ``hypercube:10``, ``ring:64``).  A family may define its own
body grammar (``product:ring:3*ring:5``).
"""

from __future__ import annotations

from typing import Any

from . import registry
from .errors import TopocastError
from .memory import check_memory


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
        if p.name not in kwargs:
            if p.required:
                raise TopocastError(f"{fam.name}: parameter '{p.name}' is required ({p.doc})")
    return fam, kwargs


def build(spec: str, *, max_memory: float | None = None):
    """Build the topology named by ``spec``.

    >>> import topocast as tc
    >>> tc.build("torus:4x4").num_nodes
    16

    ``max_memory`` (bytes) refuses a build whose estimated size is larger;
    default half of the machine's RAM.
    """
    fam, kwargs = parse_spec(spec)
    if fam.estimate is not None:
        nodes, edges = fam.estimate(**kwargs)
        check_memory(spec, nodes, edges, max_memory)
    return fam.builder(**kwargs)
