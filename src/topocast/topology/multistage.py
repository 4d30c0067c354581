"""Multistage interconnection networks: butterfly, Omega, baseline, Benes and Clos (thesis 1.1.6, 2.1).

Each family has a circuit view (:func:`multistage_network`, a
:class:`~topocast.topology.stages.MultistageNetwork` the circuit engine traces)
and a graph view (the registered builder: input terminals, switches stage by
stage, output terminals; labels ``(stage, index)``, inputs at stage -1 and
outputs at stage S).

d-ary networks on ``N = d^n`` lines use ``d x d`` switches; switch ``a`` of a
stage holds the lines at positions ``a d .. a d + d - 1``.  Between stages
the lines are permuted:

* **Omega**: a perfect d-shuffle (digits of the position rotated left)
  before every one of the ``n`` stages.
* **Butterfly**: stage ``s`` pairs the lines that differ in digit ``n-1-s``
  only (the destination's digits are set most significant first).
* **Baseline**: straight into stage 0; between stages ``s-1`` and ``s`` an
  inverse shuffle inside each block of ``d^(n-s+1)`` positions.
* **Benes**: a butterfly followed by its mirror sharing the middle stage,
  digits ``n-1 .. 0 .. n-1``, ``2n - 1`` stages; rearrangeable.

Clos C(n, m, r) (Clos 1953): ``r`` input switches ``n x m``, ``m`` middle
switches ``r x r``, ``r`` output switches ``m x n``; output ``b`` of input
switch ``a`` goes to input ``a`` of middle switch ``b``, output ``c`` of middle
switch ``b`` to input ``b`` of output switch ``c``.  Strictly non-blocking iff
``m >= 2n - 1`` (for ``r >= 2``; with ``r = 1`` ``m >= n`` is enough),
rearrangeable iff ``m >= n``.  With ``n2 > 0`` every middle switch is itself
a C(n2, m2, r / n2) (a 5-stage Clos; Benes on 8 lines is
``clos:n=2,m=2,r=4,n2=2``).
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .core import Codec, Topology
from .stages import MultistageNetwork

MIN_FAMILIES = ("butterfly", "omega", "baseline", "benes")


def _check_int(owner: str, name: str, value, low: int) -> int:
    return integer(value, name, owner=owner, minimum=low)


def _check_dary(owner: str, n: int, d: int) -> tuple[int, int]:
    n = _check_int(owner, "n", n, 1)
    d = _check_int(owner, "d", d, 2)
    if d ** n > 1 << 22:
        raise TopocastError(f"{owner}: d^n must be <= 2^22 lines, got {d}^{n}")
    return n, d


# -- line permutations -------------------------------------------------------------


def _digit_swap(positions: np.ndarray, d: int, j: int) -> np.ndarray:
    """Swap digit ``j`` with digit 0 (base ``d``)."""
    if j == 0:
        return positions.copy()
    dj = positions // d ** j % d
    d0 = positions % d
    return positions + (d0 - dj) * d ** j + (dj - d0)


def _shuffle(positions: np.ndarray, d: int, n: int) -> np.ndarray:
    """Perfect d-shuffle: digits rotated left."""
    size = d ** n
    return positions * d % size + positions // d ** (n - 1)


def _block_unshuffle(positions: np.ndarray, d: int, digits: int) -> np.ndarray:
    """Inverse shuffle of the low ``digits`` digits inside each block of ``d^digits``."""
    block = d ** digits
    hi, lo = positions // block, positions % block
    return hi * block + lo // d + (lo % d) * d ** (digits - 1)


def line_network(name: str, d: int, n: int, wires: list[np.ndarray], stage_names=()) -> MultistageNetwork:
    """Build a network of stages of ``d^(n-1)`` switches ``d x d`` joined by line permutations.

    ``wires[s]`` maps a position leaving stage ``s-1`` (the network input for ``s = 0``) to a position
    entering stage ``s``; ``wires[S]`` maps the last stage's output positions to network outputs.

    Parameters
    ----------
    name : str
        Name of the network, for messages.
    d : int
        Switch radix.
    n : int
        ``log_d`` of the number of lines.
    wires : list of numpy.ndarray
        One permutation of the ``d^n`` positions before every stage and one after the last.
    stage_names : sequence of str, optional
        Names of the stages.

    Returns
    -------
    MultistageNetwork
        The network.
    """
    size = d ** n
    stages = len(wires) - 1
    per = size // d
    in_off = np.arange(stages + 1) * size
    next_in = np.concatenate([wires[s + 1] + in_off[s + 1] for s in range(stages - 1)] +
                             [np.full(size, -1, dtype=np.int64)])
    return MultistageNetwork(
        name=name, switches=np.full(stages, per), ins=np.full(stages, d), outs=np.full(stages, d),
        next_in=next_in, net_in=wires[0], net_out=wires[-1], stage_names=tuple(stage_names),
        meta={"d": d, "n": n, "lines": size})


def _digit_network(name: str, d: int, n: int, digits: list[int]) -> MultistageNetwork:
    pos = np.arange(d ** n, dtype=np.int64)
    wires = [_digit_swap(pos, d, digits[0])]
    for prev, cur in zip(digits, digits[1:], strict=False):
        wires.append(_digit_swap(_digit_swap(pos, d, prev), d, cur))
    wires.append(_digit_swap(pos, d, digits[-1]))
    return line_network(name, d, n, wires, [f"stage {s} (digit {j})" for s, j in enumerate(digits)])


def butterfly_network(n: int, d: int = 2) -> MultistageNetwork:
    """Build the d-ary butterfly: ``n`` stages, stage ``s`` switches digit ``n - 1 - s``.

    Parameters
    ----------
    n : int
        ``log_d`` of the number of lines.
    d : int, default 2
        Switch radix.

    Returns
    -------
    MultistageNetwork
        The network (parameters checked by the family builder).
    """
    n, d = _check_dary("butterfly", n, d)
    return _digit_network(f"butterfly({d}^{n})", d, n, list(range(n - 1, -1, -1)))


def benes_network(n: int, d: int = 2) -> MultistageNetwork:
    """Build the d-ary Benes network: ``2n - 1`` stages (digits ``n-1 .. 0 .. n-1``).

    Parameters
    ----------
    n : int
        ``log_d`` of the number of lines.
    d : int, default 2
        Switch radix.

    Returns
    -------
    MultistageNetwork
        The network (parameters checked by the family builder).
    """
    n, d = _check_dary("benes", n, d)
    return _digit_network(f"benes({d}^{n})", d, n, list(range(n - 1, 0, -1)) + list(range(n)))


def omega_network(n: int, d: int = 2) -> MultistageNetwork:
    """Build the d-ary Omega network: a perfect shuffle before each of the ``n`` stages.

    Parameters
    ----------
    n : int
        ``log_d`` of the number of lines.
    d : int, default 2
        Switch radix.

    Returns
    -------
    MultistageNetwork
        The network (parameters checked by the family builder).
    """
    n, d = _check_dary("omega", n, d)
    pos = np.arange(d ** n, dtype=np.int64)
    wires = [_shuffle(pos, d, n) for _ in range(n)] + [pos]
    return line_network(f"omega({d}^{n})", d, n, wires, [f"stage {s}" for s in range(n)])


def baseline_network(n: int, d: int = 2) -> MultistageNetwork:
    """Build the d-ary baseline network: block inverse shuffles of shrinking size between stages.

    Parameters
    ----------
    n : int
        ``log_d`` of the number of lines.
    d : int, default 2
        Switch radix.

    Returns
    -------
    MultistageNetwork
        The network (parameters checked by the family builder).
    """
    n, d = _check_dary("baseline", n, d)
    pos = np.arange(d ** n, dtype=np.int64)
    wires = [pos] + [_block_unshuffle(pos, d, n - s + 1) for s in range(1, n)] + [pos]
    return line_network(f"baseline({d}^{n})", d, n, wires, [f"stage {s}" for s in range(n)])


# -- Clos ----------------------------------------------------------------------------------


def check_clos(n: int, m: int, r: int, n2: int = 0, m2: int | None = None) -> tuple[int, int, int, int, int]:
    """Check the parameters of a 3-stage or 5-stage Clos network.

    Parameters
    ----------
    n : int
        Terminals per input switch, >= 1.
    m : int
        Middle switches, >= 1.
    r : int
        Input (and output) switches, >= 1.
    n2 : int, default 0
        0 for 3 stages; else the inputs per switch of the inner Clos that replaces every middle switch (divides ``r``).
    m2 : int, optional
        Middle switches of the inner Clos (default ``n2``).

    Returns
    -------
    tuple of int
        ``(n, m, r, n2, m2)``.

    Raises
    ------
    TopocastError
        A value out of range, ``n2`` not dividing ``r``, or more than 2^20 terminals.
    """
    n = _check_int("clos", "n", n, 1)
    m = _check_int("clos", "m", m, 1)
    r = _check_int("clos", "r", r, 1)
    n2 = _check_int("clos", "n2", n2, 0)
    m2 = (0 if m2 is None else _check_int("clos", "m2", m2, 0)) or n2
    if n2 and r % n2:
        raise TopocastError(f"clos: parameter 'n2' must divide r (middle switches r x r become "
                            f"C(n2, m2, r/n2)), got r={r}, n2={n2}")
    if n * r > 1 << 20 or m * r * max(1, m2) > 1 << 22:
        raise TopocastError(f"clos: at most 2^20 terminals, got n*r={n * r}")
    return n, m, r, n2, m2


def clos_network(n: int, m: int, r: int, n2: int = 0, m2: int | None = None) -> MultistageNetwork:
    """Build the circuit view of the Clos network C(n, m, r), 5 stages when ``n2 > 0``.

    Parameters
    ----------
    n : int
        Terminals per input switch.
    m : int
        Middle switches.
    r : int
        Input (and output) switches.
    n2 : int, default 0
        Inputs per switch of the inner Clos (0: 3 stages).
    m2 : int, optional
        Middle switches of the inner Clos.

    Returns
    -------
    MultistageNetwork
        The stages and their wiring.

    Raises
    ------
    TopocastError
        As :func:`check_clos`.

    Examples
    --------
    >>> clos_network(2, 3, 4).num_stages
    3
    """
    n, m, r, n2, m2 = check_clos(n, m, r, n2, m2)
    if not n2:
        a, b = np.meshgrid(np.arange(r), np.arange(m), indexing="ij")      # input switch a, output b
        s0 = b * r + a                                                      # middle b, input a
        bb, c = np.meshgrid(np.arange(m), np.arange(r), indexing="ij")     # middle b, output c
        s1 = c * m + bb                                                     # output switch c, input b
        next_in = np.concatenate([s0.reshape(-1) + r * n, s1.reshape(-1) + r * n + m * r,
                                  np.full(r * n, -1)])
        return MultistageNetwork(
            name=f"C({n},{m},{r})", switches=np.array([r, m, r]), ins=np.array([n, r, m]),
            outs=np.array([m, r, n]), next_in=next_in, net_in=np.arange(n * r), net_out=np.arange(n * r),
            stage_names=("input", "middle", "output"), meta={"n": n, "m": m, "r": r})
    r2 = r // n2
    switches = np.array([r, m * r2, m * m2, m * r2, r])
    ins = np.array([n, n2, r2, m2, m])
    outs = np.array([m, m2, r2, n2, n])
    off = np.concatenate([[0], np.cumsum(switches * ins)])
    a, b = np.meshgrid(np.arange(r), np.arange(m), indexing="ij")
    w0 = (b * r2 + a // n2) * n2 + a % n2                                # into sub-network b, its input a
    sb, q, mid = np.meshgrid(np.arange(m), np.arange(r2), np.arange(m2), indexing="ij")
    w1 = (sb * m2 + mid) * r2 + q                                          # sub b: input switch q, output c
    sb, mid, q2 = np.meshgrid(np.arange(m), np.arange(m2), np.arange(r2), indexing="ij")
    w2 = (sb * r2 + q2) * m2 + mid                                        # sub b: middle c, output q2
    sb, q2, p = np.meshgrid(np.arange(m), np.arange(r2), np.arange(n2), indexing="ij")
    w3 = (q2 * n2 + p) * m + sb                                          # sub b output a' -> switch a', input b
    next_in = np.concatenate([w0.reshape(-1) + off[1], w1.reshape(-1) + off[2], w2.reshape(-1) + off[3],
                              w3.reshape(-1) + off[4], np.full(r * n, -1)])
    return MultistageNetwork(
        name=f"C({n},{m},{r}) with C({n2},{m2},{r2}) middles", switches=switches, ins=ins, outs=outs,
        next_in=next_in, net_in=np.arange(n * r), net_out=np.arange(n * r),
        stage_names=("input", "middle input", "middle middle", "middle output", "output"),
        meta={"n": n, "m": m, "r": r, "n2": n2, "m2": m2, "r2": r2})


def _strict(n: int, m: int, r: int) -> bool:
    """C(n, m, r) is strictly non-blocking: ``m >= 2n - 1`` (Clos 1953) when ``r >= 2``.

    With a single input and output switch (``r = 1``) every circuit holds one
    middle switch on both sides, so an idle pair sees at most ``n - 1`` busy
    middles and ``m >= n`` suffices (checked by brute force in the tests).
    """
    return m >= 2 * n - 1 or (r == 1 and m >= n)


def clos_properties(n: int, m: int, r: int, n2: int = 0, m2: int | None = None) -> dict:
    """Decide from the parameters whether a Clos network is strictly or rearrangeably non-blocking.

    The conditions of Clos (1953) and Benes (1962); for the 5-stage network both hold when they hold for the
    outer and the inner Clos (sufficient conditions).

    Parameters
    ----------
    n, m, r, n2, m2 : int
        As :func:`clos_network`.

    Returns
    -------
    dict
        ``strictly_nonblocking`` and ``rearrangeable`` (bool).

    Raises
    ------
    TopocastError
        As :func:`check_clos`.
    """
    n, m, r, n2, m2 = check_clos(n, m, r, n2, m2)
    strict = _strict(n, m, r) and (not n2 or _strict(n2, m2, r // n2))
    rearrangeable = m >= n and (not n2 or m2 >= n2)
    return {"strictly_nonblocking": bool(strict), "rearrangeable": bool(rearrangeable or strict),
            "blocking": not (strict or rearrangeable)}


# -- graph view ----------------------------------------------------------------------------


class StageCodec(Codec):
    """``(stage, index)``: stage -1 are the inputs, stage S the outputs."""

    fields = ("stage", "index")

    def __init__(self, sizes: list[int]):
        self.sizes = sizes
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    def decode(self, index: int) -> tuple:
        """Give the label ``(stage, index)`` of a node.

        Parameters
        ----------
        index : int
            Node index.

        Returns
        -------
        tuple of int
            ``(stage, index on the stage)``; stage -1 are the inputs, stage S the outputs.
        """
        k = int(np.searchsorted(self.offsets, index, side="right")) - 1
        return (k - 1, int(index - self.offsets[k]))

    def encode(self, label) -> int:
        """Give the node index of a label ``(stage, index)``.

        Parameters
        ----------
        label : tuple of int
            ``(stage, index on the stage)``.

        Returns
        -------
        int
            Node index.

        Raises
        ------
        TopocastError
            A stage or index out of range.
        """
        stage, idx = (int(v) for v in label)
        k = stage + 1
        if not 0 <= k < len(self.sizes):
            raise TopocastError(f"node: stage must be in -1..{len(self.sizes) - 2}, got {stage}")
        if not 0 <= idx < self.sizes[k]:
            raise TopocastError(f"node: index on stage {stage} must be in 0..{self.sizes[k] - 1}, got {idx}")
        return int(self.offsets[k] + idx)


def network_topology(net: MultistageNetwork, family: str, params: dict, meta: dict) -> Topology:
    """Make the graph of terminals and switches of a multistage network (links undirected).

    Parameters
    ----------
    net : MultistageNetwork
        The network.
    family : str
        Family name of the result.
    params : dict
        Its parameters.
    meta : dict
        Extra metadata.

    Returns
    -------
    Topology
        Inputs, switches stage by stage, then outputs; codec ``(stage, index)``.
    """
    stages = net.num_stages
    n_in, n_out = net.num_inputs, net.num_outputs
    sizes = [n_in] + [int(s) for s in net.switches] + [n_out]
    codec = StageCodec(sizes)
    off = codec.offsets
    src = [np.arange(n_in)]
    dst = [off[1] + net.net_in // net.ins[0]]
    for s in range(stages - 1):
        outs = np.arange(net.out_off[s], net.out_off[s + 1])
        target = net.next_in[outs]
        keep = target >= 0
        sw = (outs[keep] - net.out_off[s]) // net.outs[s]
        src.append(off[s + 1] + sw)
        dst.append(off[s + 2] + (target[keep] - net.in_off[s + 1]) // net.ins[s + 1])
    last = np.arange(net.switches[-1] * net.outs[-1])
    src.append(off[stages] + last // net.outs[-1])
    dst.append(off[stages + 1] + net.net_out)
    heads, tails = np.concatenate(src), np.concatenate(dst)
    labels = np.concatenate([np.zeros(len(heads), np.int16), np.ones(len(heads), np.int16)])
    meta = dict(meta, stages=stages, switches_per_stage=[int(v) for v in net.switches],
                switch_sizes=[f"{a}x{b}" for a, b in zip(net.ins, net.outs, strict=False)], terminals=n_in)
    return Topology.from_arcs(family, params, int(off[-1]), np.concatenate([heads, tails]),
                              np.concatenate([tails, heads]), labels, ("forward", "backward"), codec=codec, meta=meta)


_MIN_BUILDERS = {"butterfly": butterfly_network, "omega": omega_network, "baseline": baseline_network,
                 "benes": benes_network}


def multistage_network(family: str, **params) -> MultistageNetwork:
    """Build the circuit view of a registered multistage family (``gft``, a MIN or ``clos``).

    Parameters
    ----------
    family : str
        The family.
    **params
        Its parameters.

    Returns
    -------
    MultistageNetwork
        The stages and their wiring.

    Raises
    ------
    TopocastError
        If the family has no circuit view.
    """
    if family == "gft":
        from .fattree import GFTShape

        return GFTShape(int(params["h"]), int(params["m"]), int(params["w"])).network
    if family == "clos":
        return clos_network(**params)
    if family in _MIN_BUILDERS:
        return _MIN_BUILDERS[family](**params)
    raise TopocastError(f"family '{family}' has no multistage (circuit) view")


def network_of(topology: Topology) -> MultistageNetwork:
    """Build the circuit view of a multistage topology.

    Parameters
    ----------
    topology : Topology
        A network of a multistage family.

    Returns
    -------
    MultistageNetwork
        The stages and their wiring.

    Raises
    ------
    TopocastError
        If its family has no circuit view.
    """
    return multistage_network(topology.family, **dict(topology.params))


def _min_family(name: str, doc: str):
    def build(n: int, d: int = 2) -> Topology:
        n, d = _check_dary(name, n, d)
        net = _MIN_BUILDERS[name](n, d)
        return network_topology(net, name, {"n": n, "d": d},
                                {"spec": f"{name}:n={n},d={d}", "lines": d ** n})

    build.__doc__ = f"{doc} on d^n lines as a graph of terminals and switches."
    build.__name__ = name
    stages = (lambda n, d: 2 * n - 1) if name == "benes" else (lambda n, d: n)
    register_family(Family(
        name, build, (Param("n", "int", doc="log_d of the lines", minimum=1),
                      Param("d", "int", 2, "switch radix (d x d switches)", minimum=2)),
        doc, positional="n",
        estimate=lambda n, d=2: _min_estimate(n, d, stages(n, d)),
        example=f"{name}:n=3,d=2"))
    return build


butterfly = _min_family("butterfly", "d-ary butterfly, log_d N stages of d x d switches")
omega = _min_family("omega", "d-ary Omega network, log_d N shuffle stages")
baseline = _min_family("baseline", "d-ary baseline network, log_d N stages")
benes = _min_family("benes", "d-ary Benes network, 2 log_d N - 1 stages (rearrangeable)")


def _min_estimate(n: int, d: int, stages: int) -> tuple[int | float, int | float]:
    """``(nodes, directed arcs)`` of a multistage network on ``d^n`` lines, bounded arithmetic."""
    from ..infra.memory import power

    lines = power(d, n)
    return 2 * lines + stages * power(d, n - 1), 2 * lines * (stages + 1)


def clos(n: int, m: int, r: int, n2: int = 0, m2: int = 0) -> Topology:
    """Build the Clos network C(n, m, r) (5-stage when ``n2 > 0``) as a graph of terminals and switches.

    Parameters
    ----------
    n : int
        Terminals per input switch.
    m : int
        Middle switches.
    r : int
        Input (and output) switches.
    n2 : int, default 0
        Inputs per switch of the inner Clos (0: 3 stages).
    m2 : int, default 0
        Middle switches of the inner Clos (0: ``n2``).

    Returns
    -------
    Topology
        The graph; ``meta`` says whether it is strictly or rearrangeably non-blocking.

    Raises
    ------
    TopocastError
        As :func:`check_clos`.

    Examples
    --------
    >>> clos(2, 3, 4).meta["strictly_nonblocking"]
    True
    """
    n, m, r, n2, _ = check_clos(n, m, r, n2, m2)
    m2 = 0 if m2 is None else int(m2)
    net = clos_network(n, m, r, n2, m2)
    body = f"n={n},m={m},r={r}" + (f",n2={n2},m2={net.meta['m2']}" if n2 else "")
    return network_topology(net, "clos", {"n": n, "m": m, "r": r, "n2": n2, "m2": m2},
                            dict(clos_properties(n, m, r, n2, m2), spec=f"clos:{body}"))


def _clos_estimate(n, m, r, n2=0, m2=0):
    m2 = m2 or n2
    links = 2 * n * r + (2 * m * r if not n2 else 2 * m * r + 2 * m * (r // max(n2, 1)) * m2)
    return 2 * n * r + 2 * r + m * (1 + 2 * (r // max(n2, 1)) + m2), 2 * links


register_family(Family(
    "clos", clos,
    (Param("n", "int", doc="inputs per input switch", minimum=1),
     Param("m", "int", doc="middle switches", minimum=1),
     Param("r", "int", doc="input (and output) switches", minimum=1),
     Param("n2", "int", 0, "5-stage: inputs per switch of the inner Clos (0 = 3-stage)", minimum=0),
     Param("m2", "int", 0, "5-stage: middle switches of the inner Clos (0 = n2)", minimum=0)),
    "Clos network C(n,m,r), 3 or 5 stages", estimate=_clos_estimate, example="clos:n=2,m=3,r=4"))


# -- folding -------------------------------------------------------------------------------


def folded_graph(net: MultistageNetwork):
    """Fold a mirror-symmetric network with an odd number of stages at its middle stage.

    Stage ``s`` and stage ``S-1-s`` become one switch; the terminals hang on stage 0.

    Parameters
    ----------
    net : MultistageNetwork
        The network.

    Returns
    -------
    networkx.MultiGraph
        Nodes ``("p", i)`` (terminals) and ``(s, a)`` (switches).

    Raises
    ------
    TopocastError
        If the number of stages is even or the two halves are not mirror images.
    """
    import networkx as nx

    stages = net.num_stages
    if stages % 2 == 0:
        raise TopocastError("fold: the network needs an odd number of stages")
    mid = stages // 2

    def pairs(s):
        outs = np.arange(net.out_off[s], net.out_off[s + 1])
        target = net.next_in[outs]
        sw = (outs - net.out_off[s]) // net.outs[s]
        to = (target - net.in_off[s + 1]) // net.ins[s + 1]
        return sorted(zip(sw.tolist(), to.tolist(), strict=False))

    graph = nx.MultiGraph()
    for i in range(net.num_inputs):
        graph.add_edge(("p", i), (0, int(net.net_in[i] // net.ins[0])))
    for s in range(mid):
        first = pairs(s)
        mirror = sorted((b, a) for a, b in pairs(stages - 2 - s))
        if first != mirror:
            raise TopocastError(f"fold: stages {s}-{s + 1} and {stages - 2 - s}-{stages - 1 - s} are not mirror images")
        for a, b in first:
            graph.add_edge((s, a), (s + 1, b))
    return graph


def _is_isomorphism(g1, g2, mapping: dict) -> bool:
    """Tell whether a node mapping is an isomorphism of two multigraphs.

    Whether ``mapping`` is a bijection of the nodes of ``g1`` onto those of ``g2`` carrying every link of
    ``g1`` onto a link of ``g2`` with the same multiplicity (and no link of ``g2`` left over).
    """
    if len(mapping) != g1.number_of_nodes() or set(mapping) != set(g1) or set(mapping.values()) != set(g2):
        return False
    if g1.number_of_edges() != g2.number_of_edges():
        return False
    return all(g2.number_of_edges(mapping[u], mapping[v]) == g1.number_of_edges(u, v) for u, v in g1.edges())


def folded_clos_is_fat_tree(net: MultistageNetwork, tree: Topology) -> bool:
    """Tell whether a folded multistage network is a given generalized fat tree.

    Whether the folded network (links as a simple graph) and a GFT with its processors are isomorphic.

    networkx's VF2++ search (``vf2pp_isomorphism``, exhaustive: ``None`` means
    no isomorphism exists) finds a node mapping, which is then checked link by
    link.  (The plain VF2 test took seconds on the folded 3-ary Benes 27.)

    Parameters
    ----------
    net : MultistageNetwork
        The mirror-symmetric network to fold.
    tree : Topology
        A GFT with its processors.

    Returns
    -------
    bool
        True when the folded network (links as a simple graph) and the tree are isomorphic.
    """
    import networkx as nx

    folded, target = nx.Graph(folded_graph(net)), tree.to_networkx()
    if folded.number_of_nodes() != target.number_of_nodes() or folded.number_of_edges() != target.number_of_edges():
        return False
    mapping = nx.vf2pp_isomorphism(folded, target)
    return mapping is not None and _is_isomorphism(folded, target, mapping)
