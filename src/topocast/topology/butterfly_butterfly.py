"""The Butterfly-Butterfly: two butterflies concatenated on a shared stage (thesis 3.2.4.2).

A *double MIN* joins two ``log_d N``-stage networks by laying the last stage of
the first on the first stage of the second, giving ``2n - 1`` stages
(``n = log_d N``) numbered ``0 .. 2n-2``; stage ``n - 1`` is the shared middle.
The Butterfly-Butterfly of Izzi and Massini (2020) does this with two copies of
the textbook butterfly (thesis Figures 1.7 and 3.8):

* every stage has ``N / d`` switches ``d x d``; switch ``j`` holds the lines at
  positions ``j d .. j d + d - 1``, so input ``i`` enters stage 0 on switch
  ``i // d``, port ``i mod d``, and the last stage's output ``j d + p`` is
  network output ``j d + p``;
* between stages ``t`` and ``t + 1`` of each butterfly (``t = 0 .. n-2``) the
  wires swap digit 0 of the position with digit ``n - 1 - t``: output ``p`` of
  switch ``j`` goes to the switch whose index has digit ``n - 2 - t`` replaced
  by ``p`` (the "straight" and "cross" edges of the drawing).

So, within each butterfly, the output port chosen at its stage ``t`` becomes
digit ``n - 1 - t`` of the position leaving that butterfly (destination-tag
routing, most significant digit first).  With stage 0 straight the even
inputs reach the first half of the middle stage and the odd ones the second
half, which is what the thesis's first rotation relies on.

It differs from the Benes network of :mod:`topocast.topology.multistage`
(a butterfly followed by its mirror image) in the order of the second half;
both have ``d^(n-1)`` paths between any input and output.

The graph view (``topocast info butterfly-butterfly:n=3``) is the one shared by
the multistage families: input terminals, switches stage by stage, output
terminals, labels ``(stage, index)``.
"""

from __future__ import annotations

import numpy as np

from ..registry import Family, Param, register_family
from .core import Topology
from .multistage import _check_dary, _digit_swap, line_network, network_topology
from .stages import MultistageNetwork

FAMILY = "butterfly-butterfly"


def butterfly_digit(stage: int, n: int) -> int:
    """Give the digit of the final position a stage of the Butterfly-Butterfly sets.

    Digit of the final position set by ``stage``: ``n - 1 - t`` where ``t`` is its place in its butterfly.

    The shared middle stage ``n - 1`` ends the first butterfly (digit 0); for
    the second butterfly it is the first stage and would set digit ``n - 1``.

    Parameters
    ----------
    stage : int
        The stage, ``0 .. 2n - 2``.
    n : int
        Stages of one butterfly.

    Returns
    -------
    int
        ``n - 1 - t`` where ``t`` is the stage's place in its butterfly.
    """
    t = stage if stage < n else stage - (n - 1)
    return n - 1 - t


def butterfly_butterfly_network(n: int, d: int = 2) -> MultistageNetwork:
    """Build the circuit view of the Butterfly-Butterfly: two butterflies sharing their middle stage.

    ``2n - 1`` stages of ``d^(n-1)`` switches ``d x d`` on ``N = d^n`` lines.

    Parameters
    ----------
    n : int
        ``log_d`` of the number of lines (``n >= 1``).
    d : int, default 2
        Switch radix.

    Returns
    -------
    MultistageNetwork
        The stages and their wiring.

    Raises
    ------
    TopocastError
        If ``n < 1``, ``d < 2`` or ``d^n > 2^22``.

    Examples
    --------
    >>> net = butterfly_butterfly_network(3)
    >>> net.num_stages, net.num_inputs, int(net.switches[0])
    (5, 8, 4)
    """
    n, d = _check_dary(FAMILY, n, d)
    pos = np.arange(d ** n, dtype=np.int64)
    wires = [pos]
    for stage in range(1, 2 * n - 1):
        t = stage - 1 if stage < n else stage - n       # the gap after stage t of its butterfly
        wires.append(_digit_swap(pos, d, n - 1 - t))
    wires.append(pos)
    names = [f"stage {s} ({'first' if s < n - 1 else 'middle' if s == n - 1 else 'second'} butterfly)"
             for s in range(2 * n - 1)]
    net = line_network(f"butterfly-butterfly({d}^{n})", d, n, wires, names)
    net.meta.update(stages=2 * n - 1, middle_stage=n - 1)
    return net


def butterfly_butterfly(n: int, d: int = 2) -> Topology:
    """Build the Butterfly-Butterfly on ``d^n`` lines as a graph of terminals and switches.

    Parameters
    ----------
    n : int
        ``log_d`` of the number of lines (``n >= 1``; ``d^n <= 2^22``).
    d : int, default 2
        Switch radix (``d x d`` switches).

    Returns
    -------
    Topology
        ``2 d^n`` terminals and ``(2n - 1) d^(n-1)`` switches; ``meta`` holds the
        stage count and the middle stage.

    Raises
    ------
    TopocastError
        If ``n < 1``, ``d < 2`` or ``d^n > 2^22``.

    Examples
    --------
    >>> butterfly_butterfly(3).meta["stages"]
    5
    """
    n, d = _check_dary(FAMILY, n, d)
    net = butterfly_butterfly_network(n, d)
    return network_topology(net, FAMILY, {"n": n, "d": d},
                            {"spec": f"{FAMILY}:n={n},d={d}", "lines": d ** n, "middle_stage": n - 1})


def _estimate(n: int, d: int = 2) -> tuple[int | float, int | float]:
    from ..infra.memory import power

    stages = 2 * n - 1
    lines = power(d, n)
    return 2 * lines + stages * power(d, n - 1), 2 * lines * (stages + 1)


register_family(Family(
    FAMILY, butterfly_butterfly,
    (Param("n", "int", doc="log_d of the lines", minimum=1),
     Param("d", "int", 2, "switch radix (d x d switches)", minimum=2)),
    "Butterfly-Butterfly: two butterflies sharing their middle stage, 2 log_d N - 1 stages "
    "(Izzi and Massini 2020)",
    aliases=("double-butterfly",), positional="n", estimate=_estimate, example=f"{FAMILY}:n=3"))
