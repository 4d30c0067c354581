"""Generalized fat trees GFT(h, m, w) (thesis section 2.2.3; Ohring et al. 1995).

Construction.  GFT(0, m, w) is one switch.  GFT(h+1, m, w) takes ``m`` copies
GFT^j(h, m, w) and adds ``w^(h+1)`` switches on level ``h+1``.  A level-``x``
switch is labelled ``(x, a)``; in copy ``j`` the level-``h`` switch with
local index ``a`` becomes ``a + j * w^h``, and ``(h, a)`` is joined to
``(h+1, b)`` iff ``a mod w^h == floor(b / w)``.  Unrolled:

* level ``x`` holds ``m^(h-x) * w^x`` switches; switch ``a = l + w^x * q`` has
  local index ``l`` (``0 .. w^x-1``) inside group ``q``;
* its up port ``p`` (``0 .. w-1``) leads to level ``x+1`` switch
  ``l*w + p + w^(x+1) * (q // m)``, arriving there on down port ``q mod m``;
* ``w`` processors hang below every level-0 switch: processor ``P`` on
  switch ``P // w``, port ``P mod w``; there are ``w * m^h`` of them.

Switch sizes (thesis 4.1.1): top ``m x m``, level 0 ``w x w``, levels between
``m x w`` (``m`` down ports, ``w`` up ports).  ``m == w`` is a plain fat tree,
``m > w`` slimmed, ``m < w`` fattened.

Graph view (:func:`gft`): nodes ``0 .. N-1`` are the processors (label
``(-1, P)``), then the switches level by level (label ``(x, a)``).

Opened view (:func:`gft_network`): the ``2h + 1`` switch stages the thesis
draws left to right -- up levels ``0 .. h-1``, the top, down levels
``h-1 .. 0`` -- as a :class:`~topocast.topology.stages.MultistageNetwork`:

* stage ``x`` (``x < h``) is up level ``x``: level 0 has inputs = processor
  ports ``t``, outputs = up ports; level ``x >= 1`` has inputs = down ports
  (the child's copy digit), outputs = up ports;
* stage ``h`` is the top: inputs = down ports, outputs = down ports;
* stage ``2h - x`` is down level ``x``: inputs = up ports (which parent the
  circuit came from), outputs = down ports (which child), or processor ports
  on level 0;
* wires follow the links above, so a circuit climbing and descending the
  tree crosses each link once in each direction, and down level ``x`` is
  wired from the level above exactly as up level ``x`` is wired to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import TopocastError
from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .core import Codec, Topology
from .stages import MultistageNetwork


def check_gft_params(h: int, m: int, w: int, powers_of_two: bool = False,
                     owner: str = "gft") -> tuple[int, int, int]:
    """Check the parameters of a generalized fat tree GFT(h, m, w).

    Parameters
    ----------
    h : int
        Height, >= 1.
    m : int
        Children per switch, >= 2.
    w : int
        Parents per switch, >= 1.
    powers_of_two : bool, default False
        Also require ``m`` and ``w`` to be powers of two.
    owner : str, default "gft"
        Name for the error message.

    Returns
    -------
    tuple of int
        ``(h, m, w)``.

    Raises
    ------
    TopocastError
        Unless ``h >= 1``, ``m >= 2``, ``w >= 1`` (and powers of two when asked).
    """
    h = integer(h, "h", owner=owner, minimum=1)
    m = integer(m, "m", owner=owner, minimum=2)
    w = integer(w, "w", owner=owner, minimum=1)
    if powers_of_two:
        for name, value in (("m", m), ("w", w)):
            if value & (value - 1):
                raise TopocastError(f"{owner}: parameter '{name}' must be a power of two, got {name}={value}")
    return h, m, w


@dataclass(frozen=True)
class GFTShape:
    """Sizes of GFT(h, m, w) and the stage layout of its opened view."""

    h: int
    m: int
    w: int

    def __post_init__(self):
        """Check the parameters (:func:`check_gft_params`)."""
        check_gft_params(self.h, self.m, self.w)

    @property
    def processors(self) -> int:
        """Processors (``w * m^h``)."""
        return self.w * self.m ** self.h

    def level_count(self, x: int) -> int:
        """Count the switches on level ``x``: ``m^(h-x) * w^x``.

        Parameters
        ----------
        x : int
            Level, 0 (leaves) .. h.

        Returns
        -------
        int
            Switches on that level.
        """
        return self.m ** (self.h - x) * self.w ** x

    @property
    def level_counts(self) -> list[int]:
        """Switches on every level, 0..h."""
        return [self.level_count(x) for x in range(self.h + 1)]

    def switch_size(self, x: int) -> tuple[int, int]:
        """Give the ports of a level-``x`` switch; the top's are (m, m).

        Parameters
        ----------
        x : int
            Level.

        Returns
        -------
        tuple of int
            (down ports, up ports).
        """
        if x == self.h:
            return (self.m, self.m)
        if x == 0:
            return (self.w, self.w)
        return (self.m, self.w)

    @property
    def kind(self) -> str:
        """``plain`` (``m == w``), ``slimmed`` (``m > w``) or ``fattened``."""
        return "plain" if self.m == self.w else ("slimmed" if self.m > self.w else "fattened")

    def up_stage(self, x: int) -> int:
        """Give the stage index of up level ``x`` in the opened view.

        Parameters
        ----------
        x : int
            Level.

        Returns
        -------
        int
            The stage (``x``).
        """
        return x

    def down_stage(self, x: int) -> int:
        """Give the stage index of down level ``x`` in the opened view (the top is ``h``).

        Parameters
        ----------
        x : int
            Level.

        Returns
        -------
        int
            The stage (``2h - x``).
        """
        return 2 * self.h - x

    @cached_property
    def network(self) -> MultistageNetwork:
        """The opened multistage view (:func:`gft_network`)."""
        return gft_network(self.h, self.m, self.w)


def up_targets(shape: GFTShape, x: int) -> tuple[np.ndarray, np.ndarray]:
    """Give the level-``x+1`` switch and down port reached by each (switch, up port) of level ``x``.

    Parameters
    ----------
    shape : GFTShape
        The fat tree's sizes.
    x : int
        Level, 0 .. h-1.

    Returns
    -------
    upper, port : numpy.ndarray
        ``(switches on level x, w)`` arrays: the parent's index on level ``x+1`` and the down port it arrives on.
    """
    w, m = shape.w, shape.m
    count = shape.level_count(x)
    a = np.arange(count, dtype=np.int64)
    local, group = a % w ** x, a // w ** x
    p = np.arange(w, dtype=np.int64)
    upper = (local * w)[:, None] + p[None, :] + (w ** (x + 1) * (group // m))[:, None]
    port = np.broadcast_to((group % m)[:, None], upper.shape)
    return upper, port


def _down_target(shape: GFTShape, x: int) -> tuple[np.ndarray, np.ndarray]:
    """Level-``x-1`` switch and up port reached by each (switch, down port) of level ``x``."""
    w, m = shape.w, shape.m
    count = shape.level_count(x)
    b = np.arange(count, dtype=np.int64)
    local, group = b % w ** x, b // w ** x
    j = np.arange(m, dtype=np.int64)
    lower = (local // w)[:, None] + w ** (x - 1) * (j[None, :] + m * group[:, None])
    port = np.broadcast_to((local % w)[:, None], lower.shape)
    return lower, port


def _stage(switches: list, ins: list, outs: list, names: list, count: int, n_in: int, n_out: int, name: str):
    """Append one stage of ``count`` switches ``n_in x n_out``."""
    switches.append(count)
    ins.append(n_in)
    outs.append(n_out)
    names.append(name)


def gft_network(h: int, m: int, w: int) -> MultistageNetwork:
    """Build the opened GFT(h, m, w): ``2h + 1`` switch stages (see the module docstring).

    Parameters
    ----------
    h : int
        Height, >= 1.
    m : int
        Children per switch, >= 2.
    w : int
        Parents per switch, >= 1.

    Returns
    -------
    MultistageNetwork
        The stages and the wiring between them.

    Raises
    ------
    TopocastError
        As :func:`check_gft_params`.

    Examples
    --------
    >>> net = gft_network(2, 2, 2)
    >>> net.num_stages, net.num_inputs, net.switches.tolist()
    (5, 8, [4, 4, 4, 4, 4])
    """
    h, m, w = check_gft_params(h, m, w)
    shape = GFTShape(h, m, w)
    switches: list[int] = []
    ins: list[int] = []
    outs: list[int] = []
    names: list[str] = []
    for x in range(h):
        down, up = shape.switch_size(x)
        _stage(switches, ins, outs, names, shape.level_count(x), down, up, f"up level {x}")
    _stage(switches, ins, outs, names, shape.level_count(h), m, m, f"top level {h}")
    for x in range(h - 1, -1, -1):
        down, up = shape.switch_size(x)
        _stage(switches, ins, outs, names, shape.level_count(x), up, down, f"down level {x}")
    blocks = []
    for x in range(h):  # up level x -> level x+1 (up, or the top)
        upper, port = up_targets(shape, x)
        blocks.append(upper * ins[x + 1] + port)
    for x in range(h, 0, -1):  # level x (top or down) -> down level x-1
        lower, port = _down_target(shape, x)
        stage_next = shape.down_stage(x - 1)
        blocks.append(lower * ins[stage_next] + port)
    in_off = np.concatenate([[0], np.cumsum(np.array(switches) * np.array(ins))])
    next_in = []
    for s, block in enumerate(blocks):
        next_in.append(block.reshape(-1) + in_off[s + 1])
    n = shape.processors
    next_in.append(np.full(n, -1, dtype=np.int64))  # down level 0 leads to the processors (net_out)
    return MultistageNetwork(
        name=f"opened GFT({h},{m},{w})", switches=np.array(switches), ins=np.array(ins), outs=np.array(outs),
        next_in=np.concatenate(next_in), net_in=np.arange(n), net_out=np.arange(n), stage_names=tuple(names),
        meta={"h": h, "m": m, "w": w})


class GFTCodec(Codec):
    """``(level, index)``; processors are level -1."""

    fields = ("level", "index")

    def __init__(self, shape: GFTShape):
        self.shape = shape
        self.offsets = np.concatenate([[0, shape.processors],
                                       shape.processors + np.cumsum(shape.level_counts)]).astype(np.int64)

    def decode(self, index: int) -> tuple:
        """Give the label ``(level, index)`` of a node; processors are level -1.

        Parameters
        ----------
        index : int
            Node index.

        Returns
        -------
        tuple of int
            ``(level, index on the level)``.
        """
        level = int(np.searchsorted(self.offsets, index, side="right")) - 2
        return (level, int(index - self.offsets[level + 1]))

    def encode(self, label) -> int:
        """Give the node index of a label ``(level, index)``.

        Parameters
        ----------
        label : tuple of int
            ``(level, index on the level)``, level -1 for processors.

        Returns
        -------
        int
            Node index.

        Raises
        ------
        TopocastError
            A level outside -1..h or an index outside its level.
        """
        level, idx = (int(v) for v in label)
        if not -1 <= level <= self.shape.h:
            raise TopocastError(f"node: level must be in -1..{self.shape.h}, got {level}")
        size = self.offsets[level + 2] - self.offsets[level + 1]
        if not 0 <= idx < size:
            raise TopocastError(f"node: index on level {level} must be in 0..{size - 1}, got {idx}")
        return int(self.offsets[level + 1] + idx)


def gft(h: int, m: int, w: int) -> Topology:
    """Build the generalized fat tree GFT(h, m, w) (Öhring et al.) with its processors.

    Parameters
    ----------
    h : int
        Height, >= 1.
    m : int
        Children per switch, >= 2.
    w : int
        Parents per switch, >= 1 (``w < m`` slims the tree, ``w > m`` fattens it).

    Returns
    -------
    Topology
        The first ``w * m^h`` nodes are the processors; ``meta`` holds the switches per level, switch sizes
        and kind.

    Raises
    ------
    TopocastError
        For ``h < 1``, ``m < 2`` or ``w < 1``.

    Examples
    --------
    >>> t = gft(2, 2, 2)
    >>> t.num_nodes, t.meta["level_counts"]
    (20, [4, 4, 4])
    """
    h, m, w = check_gft_params(h, m, w)
    shape = GFTShape(h, m, w)
    codec = GFTCodec(shape)
    off = codec.offsets
    n = shape.processors
    src = [np.arange(n)]
    dst = [off[1] + np.arange(n) // w]
    for x in range(h):
        upper, _ = up_targets(shape, x)
        lower = np.repeat(np.arange(shape.level_count(x)), w)
        src.append(off[x + 1] + lower)
        dst.append(off[x + 2] + upper.reshape(-1))
    s, d = np.concatenate(src), np.concatenate(dst)
    labels = np.concatenate([np.zeros(len(s), np.int16), np.ones(len(s), np.int16)])
    sizes = [f"{a}x{b}" for a, b in (shape.switch_size(x) for x in range(h + 1))]
    return Topology.from_arcs(
        "gft", {"h": h, "m": m, "w": w}, int(off[-1]), np.concatenate([s, d]), np.concatenate([d, s]), labels,
        ("up", "down"), codec=codec,
        meta={"spec": f"gft:h={h},m={m},w={w}", "processors": n, "level_counts": shape.level_counts,
              "switch_sizes": sizes, "kind": shape.kind, "opened_stages": 2 * h + 1})


def _estimate(h: int, m: int, w: int) -> tuple[int | float, int | float]:
    from ..infra.memory import power

    n = w * power(max(m, w), h)
    if isinstance(n, float):  # astronomically large: a bounded figure is enough to refuse it
        return n * (h + 2), n * (h + 1) * 2
    n = w * m ** h
    nodes = n + sum(m ** (h - x) * w ** x for x in range(h + 1))
    links = n + sum(m ** (h - x) * w ** (x + 1) for x in range(h))
    return nodes, 2 * links


register_family(Family(
    "gft", gft,
    (Param("h", "int", doc="height (>= 1)", minimum=1), Param("m", "int", doc="children per switch", minimum=2),
     Param("w", "int", doc="parents per switch", minimum=1)),
    "generalized fat tree GFT(h,m,w): w*m^h processors; m=w plain, m>w slimmed, m<w fattened",
    estimate=_estimate, example="gft:h=2,m=4,w=2"))
