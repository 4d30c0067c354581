"""Unicast traffic on any topology: one load point of synthetic traffic on the wormhole engine.

Every node generates ``flits``-flit messages at exponential inter-arrival
times (``load`` flits per node per cycle, see
:mod:`topocast.algorithms.worm_traffic`); each message goes to a destination
of the ``traffic`` pattern (:mod:`topocast.algorithms.unicast_traffic`) as
one worm on the route of ``routing`` (:mod:`topocast.algorithms.unicast_routing`),
on virtual channels that keep the routing deadlock-free.  The router's
options (``vcs``, ``buffer_depth``, ``router_delay``, ``link_latency``,
``credit_delay``, ``flits``, ``startup``, injection and ejection channels)
are run parameters passed to :class:`~topocast.sim.models.RouterConfig`.

Virtual channels: ``vc_scheme=auto`` (default) uses the routing's own
deadlock-free scheme: one VC for ``dor`` on a mesh, path or hypercube, the
dateline pair on a torus or ring, the phase scheme for ``valiant`` on those
families, hop classes (VC ``i`` on hop ``i``) for ``minimal`` and for
``valiant`` elsewhere; ``hop`` forces hop classes; ``single`` puts every
worm on VC 0, which can deadlock (the engine's watchdog then stops the run
and names a cycle of waiting channels): it is there to study deadlock.
``vcs`` defaults to what the scheme needs; a smaller ``vcs`` is refused.
A larger one holds ``vcs // need`` copies of the scheme's VCs and every
worm keeps to one copy drawn uniformly (from the seed): the copies share
the links but no channel dependency crosses between them, so the run stays
deadlock-free and more worms can be in flight on a link at once.

``info``: ``mean_hops`` of the drawn routes; ``zero_load_latency``, the mean
over the drawn messages of the engine's closed form for a worm alone
(``startup + L + h*l + (h + 1)*r + ...``, :func:`topocast.sim.models.lone_tail_time`);
``throughput_bound``, the channel-load bound of :mod:`topocast.algorithms.unicast_bounds`
in flits per node per cycle (None where it is not cheap);
``vc_scheme_used`` and ``vcs_needed``; ``idle_nodes`` for the permutations
(their fixed points send nothing).  With ``routing=ugal`` ``mean_hops`` and
``zero_load_latency`` are the minimal routes' (what UGAL takes on an empty
network), ``throughput_bound`` is None, and the run's metric
``alternate_routes`` is the fraction of the measured messages that took
their Valiant route.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..registry import Algorithm, Param, register_algorithm
from ..sim.models import Model, RouterConfig, lone_tail_time
from ..topology.core import Topology
from ..topology.kernels import bfs_from_set
from .mesh_multicast import ROUTER_PARAMS, WORKLOAD_PARAMS
from .unicast_bounds import BOUND_WORK, channel_loads, throughput_bound, tree_loads
from .unicast_routing import (
    DOR_FAMILIES,
    ROUTINGS,
    SUPERNODE_FAMILIES,
    TIES,
    VC_SCHEMES,
    WRAP_FAMILIES,
    Routes,
    check_surviving,
    check_ugal,
    lattice,
    route,
    unicast_worm_plan,
)
from .unicast_traffic import (
    PATTERNS,
    check_hot_fraction,
    draw,
    parse_hot_nodes,
    pattern_permutation,
)
from .worm_traffic import poisson_arrivals, window
from .wormhole_router import NETWORK_KEYS
from .wormhole_router import NETWORK_PARAMS as ROUTER_NETWORK_PARAMS

NAME = "unicast"

#: the algorithm's own parameters
UNICAST_PARAMS: tuple[Param, ...] = (
    Param("traffic", "str", "uniform", "destination pattern: uniform, transpose, bit-reverse, random-permutation, "
          "nearest-neighbour, hot-spot or group-shift (Dragonfly/Galaxyfly adversarial: group i to group i+1; "
          "docs/unicast.md)", choices=PATTERNS),
    Param("routing", "str", "minimal", "minimal (shortest paths, lowest arc first), dor (dimension order: mesh, "
          "torus, ring, path, hypercube), valiant (random intermediate) or ugal (Dragonfly/Galaxyfly: the source "
          "router picks minimal or Valiant per message from its queues, UGAL-L)", choices=ROUTINGS),
    Param("ugal_threshold", "int", 0, "routing=ugal: the Valiant route is taken when H_min*q_min > H_val*q_val "
          "+ ugal_threshold (hops times flits queued on the route's first link; negative favours Valiant)"),
    Param("vc_scheme", "str", "auto", "virtual channels: auto (the routing's deadlock-free scheme), hop (VC i on "
          "hop i), single (VC 0 everywhere: deadlock possible) or ring (dor on a torus: one VC per ring, 1 when "
          "the destination's coordinate is below the source's, as BookSim2)", choices=VC_SCHEMES),
    Param("ties", "str", "plus", "dor on a torus or ring when both ways are k/2 hops: plus (always +) or random "
          "(a fair coin per message and dimension, as BookSim2)", choices=TIES),
    Param("hot_fraction", "float", 0.1, "hot-spot: probability that a message goes to a hot node", minimum=0),
    Param("hot_nodes", "str", "0", "hot-spot: the hot nodes, comma-separated indices"),
)

#: the router's network options (wormhole_router.NETWORK_PARAMS), ``vcs`` defaulting to the VC scheme's need
NETWORK_PARAMS: tuple[Param, ...] = tuple(
    Param("vcs", "int", None, "virtual channels per link (default: what the routing's VC scheme needs)", minimum=1)
    if p.name == "vcs" else p for p in ROUTER_NETWORK_PARAMS)

_NETWORK_NAMES = {p.name for p in NETWORK_PARAMS}
#: the load point: offered traffic and the measurement window
RUN_PARAMS: tuple[Param, ...] = (
    (Param("load", "float", 0.02, "offered traffic: flits per node per cycle"),)
    + tuple(p for p in WORKLOAD_PARAMS if p.name not in ("destinations", "spread", "load"))
    + tuple(p for p in ROUTER_PARAMS
            if p.name not in ("worms_per_startup", "intermediate_ejection") and p.name not in _NETWORK_NAMES)
    + NETWORK_PARAMS
)
ROUTER_FIELDS = ("startup", "flits", "injection_channels", "ejection_channels", "watchdog") + tuple(
    k for k in NETWORK_KEYS if k != "vcs")


def router_config(params: dict, vcs: int | None) -> RouterConfig:
    """Make the :class:`RouterConfig` of resolved run parameters.

    Parameters
    ----------
    params : dict
        Resolved run parameters (the router fields).
    vcs : int or None
        Virtual channels; None: as many as the plan's routes use (the VC scheme's need).

    Returns
    -------
    RouterConfig
        The wormhole router's configuration.
    """
    return RouterConfig(vcs=vcs, **{k: params[k] for k in ROUTER_FIELDS})


def unicast_model(params: dict) -> Model:
    """Make the model of a unicast run: the router, with ``vcs`` the parameter or what the plan uses.

    Parameters
    ----------
    params : dict
        Resolved run parameters.

    Returns
    -------
    Model
        The wormhole router's model.
    """
    return Model(router=router_config(params, params.get("vcs")))


def check_workload(topology: Topology, params: dict) -> None:
    """Refuse, with one line, the parameters a unicast plan cannot start with.

    Parameters
    ----------
    topology : Topology
        The network.
    params : dict
        Resolved parameters (``load``, ``traffic``, ``routing``, ``hot_fraction``, ...).

    Raises
    ------
    TopocastError
        Fewer than 2 nodes, a load outside (0, 1], a bad ``hot_fraction``, or a routing the network does
        not support (UGAL needs supernodes).
    """
    n = topology.num_nodes
    if n < 2:
        raise TopocastError(f"{NAME}: needs at least 2 nodes, the network has {n}")
    load = params["load"]
    if not (0 < load <= 1):
        raise TopocastError(f"{NAME}: parameter 'load' must be in (0, 1] flits per node per cycle (a node injects "
                            f"at most one flit per cycle), got {load}")
    check_hot_fraction(params["hot_fraction"])
    routing = params["routing"]
    check_surviving(topology, routing, params["vc_scheme"])
    if routing == "dor":
        lattice(topology)
    if routing == "ugal":
        check_ugal(topology)


def expected_hops(topology: Topology, routing: str) -> float:
    """Estimate generously the mean route length, for the memory guard (no search over all pairs).

    On an intact mesh, torus or hypercube the mean of dimension-order (and so of any minimal) routes, closed
    form (Valiant's: twice it); elsewhere the eccentricity of one node (Valiant's twice, UGAL's three times:
    it stores both routes).

    Parameters
    ----------
    topology : Topology
        The network.
    routing : str
        The routing (``valiant`` and ``ugal`` take longer routes).

    Returns
    -------
    float
        Hops.
    """
    if topology.family in DOR_FAMILIES and (routing in ("dor", "valiant") or
                                            (routing == "minimal" and topology.faults is None)):
        lat = lattice(topology)
        ring = lat.wrap
        mean = sum((k * k // 4) / k if ring else (k * k - 1) / (3 * k) for k in lat.dims.tolist())
        return mean * (2 if routing == "valiant" else 1) + 1
    dist = np.full(topology.num_nodes, -1, dtype=np.int64)
    seed = np.zeros(1, np.int64)
    if topology.faults is not None:  # a healthy node of the largest component
        from ..faults.connectivity import partners

        members, start, size, _ = partners(topology)
        seed[0] = members[np.argmax(size[members])] if len(members) else 0
    bfs_from_set(topology.indptr, topology.indices, seed, dist, np.empty(topology.num_nodes, np.int64))
    ecc = int(dist.max())
    # ugal stores both routes of a message
    return {"valiant": 2 * ecc, "ugal": 3 * ecc}.get(routing, ecc) + 1


#: bytes the wormhole engine keeps per path position, at most (see :func:`guard_memory`)
PATH_POSITION_BYTES = 40


def guard_memory(topology: Topology, params: dict, max_memory: float | None) -> None:
    """Refuse a load point whose worms and paths would not fit (:func:`topocast.infra.memory.check_need`).

    Parameters
    ----------
    topology : Topology
        The network.
    params : dict
        The load point: ``cycles``, ``load``, ``flits``, ``routing``.
    max_memory : float, optional
        The limit in bytes; None: half of the machine's RAM.

    Raises
    ------
    TopocastError
        ``max-memory: unicast with M messages needs about X, over the limit of Y``.
    """
    from ..infra.memory import check_need

    messages = topology.num_nodes * params["cycles"] * params["load"] / params["flits"]
    # per path position its node, arc, VC and slot (int64) and, on the flit-level path, the header's index in
    # its channel (measured peaks: 24.5 bytes per position on the rigid path, mesh:512x512 and 1024x1024 with
    # dor; 32.7 on the flit-level path, mesh:512x512 with valiant); per message 128
    need = messages * (expected_hops(topology, params["routing"]) * PATH_POSITION_BYTES + 128)
    check_need(f"{NAME} with {messages:.3g} messages", need, max_memory)


def resolve_vcs(routing: str, scheme: str, need: int, vcs: int | None) -> int:
    """Choose the router's virtual-channel count: ``vcs``, or when None the VC scheme's need.

    Parameters
    ----------
    routing : str
        The routing, for the message.
    scheme : str
        The VC scheme, for the message.
    need : int
        Virtual channels the routes use.
    vcs : int or None
        The count asked for.

    Returns
    -------
    int
        The count.

    Raises
    ------
    TopocastError
        When ``vcs`` is below ``need``.
    """
    if vcs is None:
        return need
    if vcs < need:
        why = {"hop": "one per hop of the longest route", "dateline": "the dateline pair",
               "phase": "one set per phase"}.get(scheme, "")
        raise TopocastError(f"{NAME}: parameter 'vcs' must be >= {need} for routing {routing} with {scheme} "
                            f"virtual channels ({why}), got {vcs}; vc_scheme=single runs every worm on VC 0 "
                            f"(deadlock possible)")
    return int(vcs)


class Survivors:
    """Unicast traffic on a degraded network (``topology.faults``): who may send, to whom, and its bound.

    A failed router neither sends nor receives; a healthy node sends when its component has another healthy
    node.  Uniform destinations (and hot-spot's cold part) are drawn over the source's component; any
    other pattern keeps its intact destination, and a message whose destination failed or is cut off from
    its source is not sent (``messages_unroutable``).
    """

    def __init__(self, topology: Topology):
        from ..faults.connectivity import components, healthy, partners

        self.topology = topology
        self.partners = partners(topology)
        self.healthy = healthy(topology)
        self.components = components(topology)
        if not np.any(self.partners[2] >= 2):
            raise TopocastError(f"faults: no two healthy nodes of {topology.spec} ({topology.faults}) are still "
                                f"connected; unicast has no traffic to send")

    def may_send(self, src: np.ndarray) -> np.ndarray:
        """Say which sources have another healthy node in their component.

        Parameters
        ----------
        src : numpy.ndarray
            Source nodes.

        Returns
        -------
        numpy.ndarray
            True where the source may send.
        """
        return self.partners[2][src] >= 2

    def routable(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Say which messages join two distinct healthy nodes of one component.

        Parameters
        ----------
        src : numpy.ndarray
            Source of every message.
        dst : numpy.ndarray
            Destination of every message.

        Returns
        -------
        numpy.ndarray
            True where the message can be routed.
        """
        return self.healthy[dst] & (self.components[dst] == self.components[src]) & (src != dst)

    def info(self, unroutable: int) -> dict[str, Any]:
        """Give what the plan reports about the faults: the promise, the failed parts and who stays silent.

        Parameters
        ----------
        unroutable : int
            Messages drawn to a failed or cut-off node, not sent.

        Returns
        -------
        dict of str to Any
            The plan's ``info`` entries of the degraded run.
        """
        t = self.topology
        return {"faults": t.faults, "fault_mode": "native",
                "fault_promise": "every message between healthy connected nodes, over surviving links only",
                "failed_routers": int(t.meta.get("failed_routers", 0)),
                "failed_links": int(t.meta.get("failed_links", 0)),
                "silent_nodes": int((~self.may_send(np.arange(t.num_nodes))).sum()),
                "messages_unroutable": unroutable}

    def loads(self, routing: str, traffic: str) -> np.ndarray | None:
        """Give the channel loads of minimal routes under uniform traffic over every component.

        Each sending node spreads its messages evenly over the other healthy nodes of its component.

        Parameters
        ----------
        routing : str
            The routing; only ``minimal`` has a bound here.
        traffic : str
            The traffic pattern; only ``uniform`` has a bound here.

        Returns
        -------
        numpy.ndarray or None
            ``gamma`` per channel, or None (another routing or pattern, or too much work).
        """
        if routing != "minimal" or traffic != "uniform":
            return None
        t = self.topology
        if float(t.num_nodes) * (t.num_nodes + t.num_arcs) > BOUND_WORK:
            return None
        size = self.partners[2].astype(np.float64)
        sends = size >= 2
        beta = np.where(sends, 1.0 / np.maximum(size - 1, 1), 0.0)
        return tree_loads(t, sends.astype(np.float64), beta)


def unicast_plan(topology: Topology, seed: int = 0, max_memory: float | None = None, **params: Any):
    """Plan one load point of unicast traffic: one worm per message, one job per worm.

    Parameters
    ----------
    topology : Topology
        The network.
    seed : int, default 0
        Seed of the workload and of the routing's random choices.
    max_memory : float, optional
        Memory limit in bytes; None: half of the RAM.
    **params
        The traffic pattern, routing, VC scheme, load point and router parameters.

    Returns
    -------
    WormPlan
        The workload for the wormhole engine; ``info`` holds the throughput bound where it is cheap.

    Raises
    ------
    TopocastError
        As :func:`check_workload`, a ``vcs`` below the routes' need, or a workload over the memory limit.
    """
    check_workload(topology, params)
    guard_memory(topology, params, max_memory)
    cycles, flits, load = params["cycles"], params["flits"], params["load"]
    warmup, drain = window(cycles, params["warmup"], params["batches"], "unicast")
    n = topology.num_nodes
    traffic, routing = params["traffic"], params["routing"]
    hot = parse_hot_nodes(params["hot_nodes"], n)
    rng = np.random.default_rng(seed)
    gen, src = poisson_arrivals(n, load / flits, cycles, rng)
    perm = pattern_permutation(traffic, n, rng)
    notes = []
    info: dict[str, Any] = {}
    if perm is not None:
        idle = perm == np.arange(n)
        keep = ~idle[src]
        gen, src = gen[keep], src[keep]
        info["idle_nodes"] = int(idle.sum())
        if idle.any():
            notes.append(f"{int(idle.sum())} of {n} nodes are fixed points of {traffic} and send nothing")
    survivors = None
    if topology.faults is not None:
        survivors = Survivors(topology)
        gen, src = gen[survivors.may_send(src)], src[survivors.may_send(src)]
    dst = draw(traffic, topology, src, rng, permutation=perm, hot_fraction=params["hot_fraction"], hot=hot,
               partners=None if survivors is None else survivors.partners)
    if survivors is not None:
        keep = survivors.routable(src, dst)
        gen, src, dst = gen[keep], src[keep], dst[keep]
        info.update(survivors.info(int((~keep).sum())))
        if not keep.all():
            notes.append(f"faults: {int((~keep).sum())} messages not sent, their destination failed or cut off "
                         f"from their source")
    routes = route(topology, routing, src, dst, rng, params["vc_scheme"], params["ties"])
    vcs = resolve_vcs(routing, routes.scheme, routes.need, params["vcs"])
    vc = routes.vc
    copies = vcs // routes.need
    if copies > 1:
        pick = rng.integers(0, copies, size=len(src), dtype=np.int64) * routes.need

        def in_copy(r: Routes) -> np.ndarray:      # every worm's VCs moved to its copy (its alternate's too)
            return np.repeat(pick, np.diff(r.ptr)) + (0 if r.vc is None else r.vc)

        vc = in_copy(routes)
        if routes.alt is not None:
            routes.alt = replace(routes.alt, vc=in_copy(routes.alt))
        notes.append(f"{vcs} virtual channels hold {copies} copies of the {routes.scheme} scheme's "
                     f"{routes.need}; each worm keeps to one copy drawn at random")
    if routing in ("valiant", "ugal") and topology.family in SUPERNODE_FAMILIES and n // int(
            topology.meta["routers_per_supernode"]) < 3:
        notes.append(f"{routing}: fewer than three supernodes, so no intermediate supernode: routes are minimal")
    hops = routes.hops
    config = router_config(params, vcs)
    zero = params["startup"] + lone_tail_time(hops, hops, config) if len(hops) else np.zeros(0)
    # (an adaptive routing's channel loads depend on the run: no cheap bound)
    if survivors is not None:
        loads = survivors.loads(routing, traffic)
    else:
        loads = None if routing == "ugal" else channel_loads(topology, routing, traffic, permutation=perm,
                                                             hot_fraction=params["hot_fraction"], hot=hot,
                                                             ties=params["ties"])
    info.update({
        "mean_hops": float(hops.mean()) if len(hops) else 0.0,
        "zero_load_latency": float(zero.mean()) if len(hops) else None,
        "throughput_bound": throughput_bound(loads),
        "vc_scheme_used": routes.scheme,
        "vcs_needed": int(routes.need),
    })
    if routes.scheme == "single" and params["vc_scheme"] == "single" and (
            routing != "dor" or topology.family in WRAP_FAMILIES):
        notes.append("vc_scheme=single: every worm on one VC set, the routing is not deadlock-free on it")
    return unicast_worm_plan(gen, src, dst, routes.ptr, routes.node, routes.arc, vc, cycles=cycles, warmup=warmup,
                             drain=drain, batches=params["batches"], flits=flits, load=float(load), info=info,
                             notes=tuple(notes), alt=routes.alt, alt_threshold=params["ugal_threshold"])


#: the startup is the router's (in cycles), but the plan needs it too for the zero-load latency: no
#: parameter of this algorithm is withheld from the plan (``model_params`` empty)
register_algorithm(Algorithm(
    name=NAME, plan=unicast_plan, collective="unicast",
    doc="synthetic unicast traffic (uniform, transpose, bit-reverse, random-permutation, nearest-neighbour, "
        "hot-spot, group-shift) routed minimal, dor or valiant, on the wormhole engine, one load point",
    families=(), params=UNICAST_PARAMS + RUN_PARAMS, aliases=(), engines=("wormhole",),
    paper="Dally and Towles, ch. 3, 8, 9, 14 (traffic patterns, routing, deadlock avoidance)",
    model=unicast_model, model_params=(), fault_mode="native"))
