"""Allreduce inside the network of a fat tree: the switches add what their children send (in-network reduction).

On a generalized fat tree GFT(h, m, w) (:mod:`topocast.topology.fattree`) the
processors contribute and must end with the sum; the switches add partial sums
as they pass, as switches with in-network aggregation do (SHARP-style), and
neither contribute nor keep a result (the schedule's ``part`` says so).

The vector is cut into ``w^h`` slices.  A level-``x`` switch whose local index
is ``l`` (``0 .. w^x - 1``, its place inside its subtree) owns slices
``l w^(h-x) .. (l + 1) w^(h-x) - 1``, and its up port ``p`` leads to the parent
of local index ``l w + p``, which owns the ``p``-th ``w``-th of that range: so

* step 0: every processor sends its whole vector to its level-0 switch, which adds;
* steps ``1 .. h``: every level-``x`` switch sends, up each port ``p``, the part
  of its range its parent there owns, which adds what its ``m`` children send;
  the ``w^h`` top switches end with one slice each, summed over every processor;
* steps ``h + 1 .. 2h``: the mirror, down: every switch copies its range to its children;
* step ``2h + 1``: every level-0 switch copies the whole vector to its processors.

``2h + 2`` steps; under the alpha-beta-gamma model with every switch port
working at once the time is ``2 (a + V b) + 2 sum_{x=1..h} (a + V b / w^x)``
(the up transfers of level ``x - 1`` carry ``V / w^x``) plus the adding,
``g V (w + m sum_{x=1..h} w^-x)`` (a receiver adds one partial at a time: a
leaf switch ``w`` vectors, a switch above ``m`` slices), which the tests check
to the last digit.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule, ScheduleBuilder
from ..registry import Param
from ..topology.core import Topology
from ..topology.fattree import GFTShape, up_targets
from .base import REDUCTION_RUN_PARAMS, register
from .reductions import _check_chunks


def in_network_allreduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Plan the allreduce of the processors' vectors on a fat tree, the switches adding on the way up.

    Parameters
    ----------
    topology : Topology
        A generalized fat tree (``gft:h=..,m=..,w=..``).
    message_bytes : float, default 1024.0
        Size of every processor's vector in bytes.
    chunks : int, default 1
        Pipeline stages: the vector is cut into this many pieces, piece ``c`` entering the tree at step ``c``
        (every link direction still carries one transfer a step: the stages use different levels, and up and
        down the two directions of a link).

    Returns
    -------
    Schedule
        The reduction: ``2h + 1 + chunks`` steps; ``part`` 0 for the processors, -1 for the switches.

    Raises
    ------
    TopocastError
        A network that is not a generalized fat tree, a vector under one byte, or more blocks (``chunks w^h``)
        than bytes or than :data:`~topocast.algorithms.reductions.MAX_BLOCKS`.
    """
    if topology.family != "gft":
        raise TopocastError(f"algorithm: the in-network allreduce needs a generalized fat tree (gft), not "
                            f"'{topology.family}'")
    h, m, w = (int(topology.params[k]) for k in ("h", "m", "w"))
    shape = GFTShape(h, m, w)
    slices = w ** h
    _check_chunks(chunks, message_bytes, slices * chunks)
    processors = shape.processors
    first = np.concatenate([[processors], processors + np.cumsum(shape.level_counts)]).astype(np.int64)
    builder = ScheduleBuilder(topology.num_nodes, origin=np.zeros(slices * chunks, dtype=np.int64),
                              collective="allreduce", targets="all", message_bytes=message_bytes / (slices * chunks),
                              meta={"algorithm": "in-network", "chunks": chunks})
    cpu = np.arange(processors, dtype=np.int64)
    leaf = first[0] + cpu // w
    links = [_up_links(shape, first, x) for x in range(h)]
    for c in range(chunks):                 # piece c: blocks c * slices .. (c + 1) * slices - 1, from step c
        base = c * slices
        builder.add(src=cpu, dst=leaf, first=base, count=slices, step=c, combine=True)
        for x, (child, parent, begin, width) in enumerate(links):
            builder.add(src=child, dst=parent, first=base + begin, count=width, step=c + 1 + x, combine=True)
            builder.add(src=parent, dst=child, first=base + begin, count=width, step=c + 2 * h - x, combine=False)
        builder.add(src=leaf, dst=cpu, first=base, count=slices, step=c + 2 * h + 1, combine=False)
    part = np.full(topology.num_nodes, -1, dtype=np.int64)
    part[:processors] = 0
    return replace(builder.build(), part=part)


def _up_links(shape: GFTShape, first: np.ndarray, x: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """List every (level-``x`` switch, up port) as arrays.

    The switch, its parent, the first slice the parent owns, and how many (``w^(h-x-1)``).
    """
    upper, _ = up_targets(shape, x)
    count, w = shape.level_count(x), shape.w
    local = np.arange(count, dtype=np.int64) % w ** x
    width = w ** (shape.h - x - 1)
    child = np.repeat(first[x] + np.arange(count, dtype=np.int64), w)
    parent = first[x + 1] + upper.reshape(-1)
    begin = ((local * w)[:, None] + np.arange(w, dtype=np.int64)[None, :]).reshape(-1) * width
    return child, parent, begin, width


def in_network_allreduce_time(h: int, m: int, w: int, size: float, alpha: float, beta: float,
                              gamma: float = 0.0) -> float:
    """Give the closed-form time of :func:`in_network_allreduce` under the alpha-beta-gamma model.

    Every switch port works at once and a receiver adds one partial at a time: the leaf switch adds its
    ``w`` processors' vectors, a switch above adds its ``m`` children's slices.

    Parameters
    ----------
    h, m, w : int
        The fat tree's height, children and parents per switch.
    size : float
        Vector size in bytes.
    alpha, beta : float
        Start-up time and time per byte of a transfer.
    gamma : float, default 0.0
        Time per byte to add a partial.

    Returns
    -------
    float
        ``2 (alpha + V beta) + 2 sum_{x=1..h} (alpha + V beta / w^x) + gamma V (w + m sum_{x=1..h} w^-x)``.
    """
    up = sum(size / w ** x for x in range(1, h + 1))
    return 2 * (alpha + size * beta) + 2 * (h * alpha + up * beta) + gamma * (w * size + m * up)


register("allreduce-in-network", in_network_allreduce, "allreduce",
         "fat trees: the switches add the processors' vectors slice by slice up the levels and copy the sums "
         "down (in-network reduction), pipelined in chunks; the processors contribute, the switches only aggregate",
         families=("gft",), aliases=("sharp",),
         params=(Param("chunks", "int", 1, "pipeline stages: the vector is cut into this many pieces", minimum=1),),
         run_params=REDUCTION_RUN_PARAMS)
