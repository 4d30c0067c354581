"""The wormhole router's VC release rule: ``tail-left`` (default) and ``tail-sent`` (BookSim2's default).

Oracles: a pure-Python reference simulator of the router's rules written here (cycle by cycle, one flit
at a time, buffers as FIFO lists of flits; ``docs/simulator.md``, "The router model"), the unicast
zero-load closed form and ``lone_tail_time`` (a lone worm cannot tell the rules apart), a two-worm
timing derived by hand below, the delivery check of the adapter, and tail-left traces recorded with the
engine before the option existed.
"""

from __future__ import annotations

import dataclasses

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast import registry
from topocast.api import resolve_params
from topocast.execution.execute import execute
from topocast.plans.wormhole import WormTraffic
from topocast.sim.models import Model
from topocast.sim.wormhole import RouterConfig, simulate
from topocast.sim.wormhole.engine import lone_tail_time
from worm_builders import worm_traffic


def traffic(topology, paths, release, vcs=None, slots=None, job_of=None):
    """One worm per path (nodes), VC ``vcs[i][k]`` on hop ``k`` (VC 0 when None), a destination slot at each
    position of ``slots[i]`` (default: the last); worm i in job ``job_of[i]`` (default: its own job, released
    at ``release[job]``)."""
    worms = [(path, [len(path) - 1] if slots is None else slots[i]) for i, path in enumerate(paths)]
    vcs = None if vcs is None else [[0, *v[1:]] for v in vcs]
    return worm_traffic(topology, worms, release, vcs=vcs, job_of=job_of)


def run(topology, worms: WormTraffic, config, cycles=20_000):
    """The engine's trace of ``worms`` on ``topology``."""
    return simulate(topology.num_nodes, topology.num_arcs, worms, config, cycles)


# -- the reference: every rule of the router, one flit at a time ------------------------------------------------

@dataclasses.dataclass(eq=False)
class Flit:
    """One flit of the reference and where it is."""

    worm: int
    j: int
    pos: int = -1         # -1: at the processor, 0: injection channel, k: the buffer at the head of hop k
    arr: int = -1         # the cycle it arrived where it is
    entered: int = -1     # the cycle it entered the injection channel
    left: int = -1        # the cycle it left the injection channel


@dataclasses.dataclass
class Buffer:
    """One VC's input buffer: the flits sent into it, in order, and the cycle each left (None: still there)."""

    flits: list = dataclasses.field(default_factory=list)
    left: list = dataclasses.field(default_factory=list)
    owner: int | None = None
    free_from: int = 0

    def occupied(self, t, credit_delay):
        """Slots taken in cycle ``t``: a flit's slot is back ``credit_delay`` cycles after it left."""
        return sum(1 for d in self.left if d is None or d + credit_delay > t)

    def ahead(self, flit):
        """The cycle the flit sent in just before ``flit`` left (-1: none), None while it is still there."""
        i = self.flits.index(flit)
        return -1 if i == 0 else self.left[i - 1]


class Reference:
    """Injection and completion cycles of unicast worms, one per job (prep 0, ``startup >= 1``), straight from
    the rules of ``docs/simulator.md``, one flit at a time.

    Processors: a node serves its jobs in order of release, ``startup`` cycles each; then the worm queues
    for one of the node's injection channels (free again the cycle after the last tail in it left).  Each
    cycle the worms in flight (in order of injection; one injected this cycle waits) move their flits front
    to back, each flit at most one position.  A flit leaves its buffer when every flit sent in before it has
    left (in an earlier cycle) and it has spent one cycle at the front (the header ``router_delay`` more);
    unless it is ejected, its link must not have carried a flit yet this cycle and the next buffer must have
    a free slot (a slot comes back ``credit_delay`` cycles after its flit left).  A header also needs the
    next VC unowned and free, and at its destination an ejection channel.  The processor feeds the injection
    channel one flit a cycle.  A VC is released once the owner's tail has left its buffer (tail-left; free
    ``1 + credit_delay`` cycles later) or was sent into it (tail-sent; free the next cycle).
    """

    def __init__(self, topology, paths, vcs, release, config):
        self.topology, self.paths, self.vcs, self.config = topology, paths, vcs, config
        n = len(paths)
        self.ready = [0] * n                 # the cycle each worm's start-up ends
        end: dict = {}
        for w in sorted(range(n), key=lambda w: (release[w], w)):
            v = paths[w][0]
            self.ready[w] = max(release[w], end.get(v, 0)) + config.startup
            end[v] = self.ready[w]
        self.inj_free = [config.injection_channels] * topology.num_nodes
        self.ej_free = [config.ejection_channels] * topology.num_nodes
        self.buffers: dict = {}
        self.flits = [[Flit(w, j) for j in range(config.flits)] for w in range(n)]
        self.inject, self.done, self.order = [-1] * n, [-1] * n, []

    def run(self, cycles=20_000):
        """Run until every worm is done (or ``cycles``); the injection and completion cycles."""
        for t in range(cycles):
            if all(d >= 0 for d in self.done):
                break
            flying = [w for w in self.order if self.done[w] < 0]
            self.injection(t)
            used: set = set()
            for w in flying:
                for f in self.flits[w]:
                    if f.pos <= len(self.paths[w]) - 1:
                        self.move(f, t, used)
                    if f.pos == -1:      # flits behind it are at the processor too
                        break
        return self.inject, self.done

    def injection(self, t):
        """Processors, then injection channels: the worms whose start-up has ended, node by node."""
        queued = sorted((w for w in range(len(self.paths)) if self.inject[w] < 0 and self.ready[w] <= t),
                        key=lambda w: (self.paths[w][0], self.ready[w], w))
        for w in queued:
            v = self.paths[w][0]
            if self.inj_free[v] > 0:
                self.inj_free[v] -= 1
                self.inject[w] = t
                head = self.flits[w][0]
                head.pos, head.arr, head.entered = 0, t, t
                self.order.append(w)

    def buffer(self, w, k):
        """The buffer of worm ``w``'s hop ``k``."""
        path = self.paths[w]
        key = (self.topology.arc_index(path[k - 1], path[k]), self.vcs[w][k] if self.vcs else 0)
        return self.buffers.setdefault(key, Buffer())

    def move(self, f, t, used):
        """Flit ``f``'s move in cycle ``t`` if the rules let it (``used``: links that carried a flit)."""
        if f.pos == -1:
            self.feed(f, t)
        elif self.may_leave(f, t, used):
            self.leave(f, t, used)

    def feed(self, f, t):
        """The processor puts flit ``f`` into the injection channel if the flit ahead entered before and a slot
        is free."""
        c, mine = self.config.credit_delay, self.flits[f.worm]
        taken = sum(1 for g in mine if g.pos == 0 or (g.pos > 0 and g.left + c > t))
        if mine[f.j - 1].entered < t and taken < self.config.buffer_depth:
            f.pos, f.arr, f.entered = 0, t, t

    def may_leave(self, f, t, used):
        """Whether flit ``f`` may leave its buffer in cycle ``t``."""
        w, cfg = f.worm, self.config
        h = len(self.paths[w]) - 1
        if f.pos == 0:
            prev = self.flits[w][f.j - 1]
            ahead = -1 if f.j == 0 else (prev.left if prev.pos > 0 else None)
        else:
            ahead = self.buffer(w, f.pos).ahead(f)
        if ahead is None or max(f.arr, ahead) + 1 + (cfg.router_delay if f.j == 0 else 0) > t:
            return False
        x = f.pos + 1
        if x > h:
            return True
        nxt = self.buffer(w, x)
        if self.arc(w, x) in used or nxt.occupied(t, cfg.credit_delay) >= cfg.buffer_depth:
            return False
        if f.j > 0:
            return True
        if nxt.owner is not None or nxt.free_from > t:
            return False
        return x < h or cfg.ejection_channels == 0 or self.ej_free[self.paths[w][h]] > 0

    def arc(self, w, x):
        """The arc of worm ``w``'s hop ``x``."""
        return self.topology.arc_index(self.paths[w][x - 1], self.paths[w][x])

    def leave(self, f, t, used):
        """Flit ``f`` leaves its buffer: into the next one, or ejected."""
        w, cfg = f.worm, self.config
        h = len(self.paths[w]) - 1
        y, x = f.pos, f.pos + 1
        if y == 0:
            f.left = t
        else:
            here = self.buffer(w, y)
            here.left[here.flits.index(f)] = t
        if x <= h:
            nxt = self.buffer(w, x)
            used.add(self.arc(w, x))
            nxt.flits.append(f)
            nxt.left.append(None)
            if f.j == 0:
                nxt.owner = w
                if x == h and cfg.ejection_channels > 0:
                    self.ej_free[self.paths[w][h]] -= 1
        f.pos, f.arr = x, t + cfg.link_latency - 1
        if f.j == cfg.flits - 1:
            self.tail_moved(w, y, x, h, t)

    def tail_moved(self, w, y, x, h, t):
        """Worm ``w``'s tail went from position ``y`` to ``x``: VCs, channels and completion."""
        cfg = self.config
        if cfg.vc_release == "tail-sent" and x <= h:
            nxt = self.buffer(w, x)
            nxt.owner, nxt.free_from = None, t + 1
        if y == 0:
            self.inj_free[self.paths[w][0]] += 1
        elif cfg.vc_release == "tail-left":
            here = self.buffer(w, y)
            here.owner, here.free_from = None, t + 1 + cfg.credit_delay
        if y == h:
            self.done[w] = t
            if cfg.ejection_channels > 0:
                self.ej_free[self.paths[w][h]] += 1


def line_path(u, v):
    return list(range(u, v + 1)) if u <= v else list(range(u, v - 1, -1))


def dor_path(u, v, k=3):
    """Dimension order on a row-major k x k mesh: along the row to the destination's column, then the column."""
    (ur, uc), (vr, vc) = divmod(u, k), divmod(v, k)
    return [ur * k + c for c in line_path(uc, vc)] + [r * k + vc for r in line_path(ur, vr)[1:]]


def ring_path(u, hops, n=5):
    return [(u + i) % n for i in range(hops + 1)]


def dateline(path):
    """VC 0 up to the hop into node 0, VC 1 from there on (hop k at index k; index 0 unused)."""
    return [0] + [int(0 in path[1:k + 1]) for k in range(1, len(path))]


@st.composite
def scenarios(draw):
    """A deadlock-free network (a line, a 3x3 mesh with dimension-order routes, a ring with a dateline), a few
    worms released close together (they meet, follow each other, share links and buffers) and random options."""
    shape = draw(st.sampled_from(["path:5", "mesh:3x3", "ring:5"]))
    n = draw(st.integers(2, 8))
    paths = []
    for _ in range(n):
        if paths and draw(st.integers(0, 3)) == 0:          # a worm that follows an earlier one's route
            paths.append(list(draw(st.sampled_from(paths))))
        elif shape == "ring:5":
            paths.append(ring_path(draw(st.integers(0, 4)), draw(st.integers(1, 4))))
        else:
            u, v = draw(st.lists(st.integers(0, 4 if shape == "path:5" else 8), min_size=2, max_size=2,
                                 unique=True))
            paths.append(line_path(u, v) if shape == "path:5" else dor_path(u, v))
    two = shape == "ring:5" or draw(st.booleans())
    vcs = [dateline(p) for p in paths] if shape == "ring:5" else (
        [[0] + draw(st.lists(st.integers(0, 1), min_size=len(p) - 1, max_size=len(p) - 1)) for p in paths]
        if two else None)
    release = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
    config = RouterConfig(
        flits=draw(st.integers(1, 6)), buffer_depth=draw(st.integers(1, 4)), router_delay=draw(st.integers(0, 2)),
        link_latency=draw(st.integers(1, 3)), credit_delay=draw(st.integers(0, 2)), startup=draw(st.integers(1, 3)),
        injection_channels=draw(st.integers(1, 2)), ejection_channels=draw(st.integers(0, 2)),
        vcs=2 if two else 1, watchdog=500, vc_release=draw(st.sampled_from(["tail-sent", "tail-left"])))
    return tc.build(shape), paths, vcs, release, config


@given(scenarios())
@settings(max_examples=60, deadline=None)
def test_engine_follows_the_reference_rules_cycle_for_cycle(scenario):
    """Injection and delivery cycles of every worm, both release rules, against the reference simulator."""
    topology, paths, vcs, release, config = scenario
    trace = run(topology, traffic(topology, paths, release, vcs), config, cycles=5000)
    inject, done = Reference(topology, paths, vcs, release, config).run(5000)
    assert trace.deadlock is None
    assert trace.worm_inject.tolist() == inject
    assert trace.worm_done.tolist() == done
    assert trace.slot_time.tolist() == done and trace.slot_count.tolist() == [1] * len(paths)


def ring_deadlock_scenarios():
    """Worms on a ring of 5 nodes, one VC: knots can form."""
    return st.tuples(st.lists(st.tuples(st.integers(0, 4), st.integers(1, 4)), min_size=2, max_size=7),
                     st.integers(2, 8), st.integers(1, 3), st.integers(0, 2), st.data())


@given(ring_deadlock_scenarios())
@settings(max_examples=60, deadline=None)
def test_watchdog_is_sound_under_tail_sent(scenario):
    """On a ring with one VC the worms may knot (through owned VCs, or through full buffers and worms queued
    behind others' flits, which only the global watchdog sees).  Without a deadlock report the engine follows
    the reference; with one, every worm the engine finished finished at the same cycle in the reference (no
    watchdog, run far longer), and the worms it reports blocked for good never finish there."""
    worms, flits, depth, delay, data = scenario
    topology = tc.build("ring:5")
    paths = [ring_path(u, hops) for u, hops in worms]
    release = data.draw(st.lists(st.integers(0, 6), min_size=len(paths), max_size=len(paths)))
    config = RouterConfig(flits=flits, buffer_depth=depth, router_delay=delay, startup=1, watchdog=40,
                          ejection_channels=1, vc_release="tail-sent")
    trace = run(topology, traffic(topology, paths, release), config, cycles=3000)
    _, done = Reference(topology, paths, None, release, config).run(3000)
    finished = trace.worm_done >= 0
    assert np.array_equal(trace.worm_done[finished], np.asarray(done)[finished])
    if trace.deadlock is None:
        assert trace.worm_done.tolist() == done
    else:
        assert sum(d < 0 for d in done) >= trace.deadlocked_worms > 0
        if trace.deadlocked_worms == np.sum((trace.worm_inject >= 0) & ~finished):   # every worm in flight
            assert all(done[w] < 0 for w in np.flatnonzero((trace.worm_inject >= 0) & ~finished))


def closed_form(startup, flits, hops, router_delay=0, link_latency=1, credit_delay=0, depth=1):
    """Unicast zero-load latency of a lone worm: its header leaves the source router 1 + r cycles after its
    start-up and each later router l + r cycles after the previous one; the L - 1 flits behind it leave the
    destination one a cycle, unless B-flit buffers cannot cover the l + c credit loop, which costs l + c - B
    cycles per group of B flits."""
    stretch = (flits - 1) // depth * max(0, link_latency + credit_delay - depth)
    return startup + flits + hops * link_latency + (hops + 1) * router_delay + stretch


LONE = [dict(buffer_depth=5, router_delay=2),
        dict(buffer_depth=2, link_latency=3, credit_delay=1),                   # the credit loop stretches
        dict(buffer_depth=3, link_latency=2, router_delay=1, credit_delay=2, vcs=2),
        dict(buffer_depth=1, router_delay=2, flits=7)]


@pytest.mark.parametrize("options", LONE)
def test_lone_worm_latency_is_the_closed_form_under_tail_sent(options):
    """Every ordered pair of a 4x4 mesh, one worm at a time: a worm alone never meets a buffer another worm
    shares, so tail-sent gives the zero-load closed form, exactly as tail-left does."""
    topology = tc.build("mesh:4x4")
    graph = topology.to_networkx()
    pairs = [(u, v) for u in range(16) for v in range(16) if u != v]
    paths = [nx.shortest_path(graph, u, v) for u, v in pairs]
    gap = 300
    release = [gap * i for i in range(len(paths))]
    config = RouterConfig(startup=3, **{"flits": 12, **options}, vc_release="tail-sent")
    vcs = [[k % config.vcs for k in range(len(p))] for p in paths] if config.vcs > 1 else None
    trace = run(topology, traffic(topology, paths, release, vcs), config, cycles=gap * len(paths))
    expected = [closed_form(3, config.flits, len(p) - 1, config.router_delay, config.link_latency,
                            config.credit_delay, config.buffer_depth) for p in paths]
    assert (trace.slot_time - np.array(release)).tolist() == expected
    assert np.array_equal(trace.slot_time - release, 3 + lone_tail_time([len(p) - 1 for p in paths],
                                                                        [len(p) - 1 for p in paths], config))


@given(st.integers(1, 20), st.integers(1, 5), st.integers(0, 3), st.integers(1, 3), st.integers(0, 3), st.data())
@settings(max_examples=30, deadline=None)
def test_lone_multidestination_worm_under_tail_sent_is_lone_tail_time(flits, depth, delay, link, credit, data):
    """A path-based worm alone: each destination on its path gets the message when ``lone_tail_time`` says."""
    topology = tc.build("path:7")
    hops = data.draw(st.integers(1, 6))
    slots = sorted(set(data.draw(st.lists(st.integers(1, hops), max_size=hops))) | {hops})
    config = RouterConfig(startup=2, flits=flits, buffer_depth=depth, router_delay=delay, link_latency=link,
                          credit_delay=credit, vc_release="tail-sent")
    trace = run(topology, traffic(topology, [list(range(hops + 1))], [5], slots=[slots]), config)
    assert (trace.slot_time - 5 - 2).tolist() == lone_tail_time(slots, hops, config).tolist()
    assert trace.slot_count.tolist() == [1] * len(slots)


@pytest.mark.parametrize("flits,hops,delay,link,credit", [
    (4, 1, 0, 1, 0), (8, 3, 2, 1, 0), (6, 4, 1, 2, 1), (10, 2, 4, 1, 3), (5, 5, 0, 3, 2)])
def test_a_worm_following_another_gains_the_link_and_credit_delay(flits, hops, delay, link, credit):
    """Worms A and B of one job go from node 0 to node h of a line over the same VCs, B right behind A (two
    injection channels, unlimited ejection, buffers of 2L flits so credits never hold anything back).

    A alone: its tail leaves router k at T_k = S + L + r + k (l + r) (S the end of the start-up), so A is
    done at T_h.  B's header leaves router k at G_k:

    * tail-left: it may enter buffer k + 1 once A's tail has left it and the VC is free again,
      G_k = max(G_{k-1} + l + r, T_{k+1} + 1 + c) = T_{k+1} + 1 + c, and at the destination
      G_h = G_{h-1} + l + r = T_h + 1 + c + l + r;
    * tail-sent: it may enter buffer k + 1 the cycle after A's tail entered it, G_0 = T_0 + 1, but in
      buffer k >= 1 it waits behind A's tail and starts its router delay when that tail leaves:
      G_k = max(G_{k-1} + l + r, T_k + 1 + r) = T_k + 1 + r, so G_h = T_h + 1 + r.

    B's flits follow its header one a cycle, so B is done at G_h + L - 1: tail-sent delivers B l + c cycles
    earlier."""
    topology = tc.build(f"path:{hops + 1}")
    path = list(range(hops + 1))
    S = 3
    base = RouterConfig(startup=S, flits=flits, router_delay=delay, link_latency=link, credit_delay=credit,
                        buffer_depth=2 * flits, injection_channels=2, ejection_channels=0)
    worms = traffic(topology, [path, path], [0], job_of=[0, 0])
    T_h = S + flits + delay + hops * (link + delay)
    for rule, lag in (("tail-left", flits + link + delay + credit), ("tail-sent", flits + delay)):
        trace = run(topology, worms, dataclasses.replace(base, vc_release=rule))
        assert trace.worm_inject.tolist() == [S, S]
        assert trace.worm_done.tolist() == [T_h, T_h + lag], rule
        assert T_h == closed_form(S, flits, hops, delay, link, credit, 2 * flits)


@pytest.mark.parametrize("rule,depth,knotted", [("tail-left", 1, 2), ("tail-left", 3, 2), ("tail-left", 4, 0),
                                                ("tail-sent", 1, 2), ("tail-sent", 2, 0), ("tail-sent", 3, 0)])
def test_knot_owners_free_a_vc_when_their_tail_enters_it_under_tail_sent(rule, depth, knotted):
    """Two 4-flit worms on a 4-ring, tails still in their injection channels, each holding the VCs of its
    first two hops and waiting for the first the other holds.  An owner frees that VC when its tail leaves
    the buffer (tail-left: all 4 flits must fit in the one buffer ahead, depth >= 4) or enters it (tail-sent:
    in the two buffers from it on, depth >= 2); below that the pair is a knot."""
    from topocast.sim.wormhole.knots import _find_knot

    topology = tc.build("ring:4")
    paths = [[0, 1, 2, 3], [2, 3, 0, 1]]
    arc = {(u, v): topology.arc_index(u, v) for p in paths for u, v in zip(p, p[1:], strict=False)}
    path_arc = np.array([-1 if k == 0 else arc[(p[k - 1], p[k])] for p in paths for k in range(4)])
    owner = np.full(topology.num_arcs, -1)
    for w, p in enumerate(paths):
        owner[arc[(p[0], p[1])]] = owner[arc[(p[1], p[2])]] = w
    dead = np.zeros(2, np.bool_)
    found = _find_knot(np.arange(2), 2, np.array([2, 2]), np.array([0, 0]), np.array([arc[(2, 3)], arc[(0, 1)]]),
                       np.full(2, -1), 4, depth, 4, True, np.array([0, 4]), np.array([4, 8]),
                       np.array(paths[0] + paths[1]), path_arc, np.zeros(8, np.int64),
                       np.array([-1, -1, -1, 0, -1, -1, -1, 1]), 1, owner, 4, dead, int(rule == "tail-sent"))
    assert found == knotted == dead.sum()


def test_loaded_mesh_delivers_every_message_once_without_deadlock():
    """8x8 mesh, dimension-order routes, BookSim-like router, below and well beyond saturation: the adapter's
    delivery check passes (every receipt once, every message delivered below saturation), nothing deadlocks,
    and below saturation the network carries what is offered."""
    topology = tc.build("mesh:8x8")
    opts = dict(buffer_depth=5, router_delay=2, startup=2, injection_channels=1, ejection_channels=1)
    for load in (0.1, 0.4):
        plan = tc.run("mesh:8x8", "unicast", routing="dor", load=load, cycles=4000, seed=2, **opts).trace.plan
        m = execute(topology, plan, "wormhole", Model(router=RouterConfig(flits=32, vc_release="tail-sent",
                                                                            **opts))).metrics
        assert m["redundant_receipts"] == 0 and m["deadlocked_worms"] == 0 and m["receipts"] > 0
        if load < 0.2:
            assert m["verified"] and not m["saturated"] and m["unfinished_messages"] == 0
            assert m["accepted_load"] == pytest.approx(load, rel=0.1)
        else:
            assert m["saturated"] and m["unfinished_messages"] > 0 and m["accepted_load"] < 0.75 * load
    ecube = tc.run("mesh:8x8", "unicast-ecube", load=0.1, cycles=4000, seed=2, vc_release="tail-sent", **opts)
    assert ecube.verified and ecube.params["vc_release"] == "tail-sent"


#: tail-left traces of three unicast runs recorded with the engine before ``vc_release`` existed: (sum and
#: count of completion cycles, sum of delivery cycles, flit moves, advances, cycles, deadlocked worms,
#: deadlock cycle, wait-for cycle); trains (one VC), every flit (two VCs), and a deadlock
RECORDED = [
    ("mesh:6x6", dict(routing="dor", load=0.3), dict(buffer_depth=5, router_delay=2, startup=2),
     (1406858, 924, 1406858, 178133, 46275, 3000, 0, -1, [])),
    ("mesh:6x6", dict(routing="dor", load=0.3), dict(buffer_depth=5, router_delay=2, startup=2, vcs=2),
     (1406858, 924, 1406858, 178133, 46275, 3000, 0, -1, [])),
    ("torus:6x6", dict(routing="minimal", vc_scheme="single", load=0.4),
     dict(buffer_depth=2, link_latency=2, credit_delay=1, watchdog=300),
     (212720, 314, 212720, 50578, 17448, 1501, 56, 436, [(32, 26), (26, 25), (31, 1), (1, 2)])),
]


@pytest.mark.regression
@pytest.mark.parametrize("spec,kw,options,expected", RECORDED)
def test_default_is_tail_left_and_its_traces_are_unchanged(spec, kw, options, expected):
    plan = tc.run(spec, "unicast", cycles=3000, seed=5, **kw).trace.plan
    topology = tc.build(spec)
    default, named = RouterConfig(**options), RouterConfig(**options, vc_release="tail-left")
    assert default == named and default.vc_release == "tail-left"
    for config in (default, named):
        t = simulate(topology.num_nodes, topology.num_arcs, plan.traffic, config, plan.cycles, plan.stop_when_idle)
        done = t.worm_done[t.worm_done >= 0]
        assert (int(done.sum()), len(done), int(t.slot_time[t.slot_time >= 0].sum()), t.flit_moves, t.advances,
                t.cycles, t.deadlocked_worms, t.deadlock_cycle, t.wait_cycle) == expected


def test_tail_sent_is_never_the_rigid_train_and_bad_values_are_refused():
    config = RouterConfig(vc_release="tail-sent")
    assert RouterConfig().rigid and not config.rigid and config.tail_sent
    topology = tc.build("path:3")
    worms = traffic(topology, [[0, 1, 2]], [0])
    with pytest.raises(tc.TopocastError, match="rigid path"):
        simulate(3, topology.num_arcs, worms, config, 100, flit_level=False)
    for bad in ("bogus", "tail_sent", 1, None):
        with pytest.raises(tc.TopocastError, match="parameter 'vc_release' must be one of tail-left, tail-sent"):
            RouterConfig(vc_release=bad)


def test_cli_takes_vc_release_and_refuses_a_bad_one_in_one_line():
    from typer.testing import CliRunner

    from topocast.cli import app

    ok = CliRunner().invoke(app, ["run", "mesh:4x4", "unicast-ecube", "--set", "vc_release=tail-sent", "--set",
                                  "buffer_depth=3", "--set", "cycles=2000"])
    assert ok.exit_code == 0, ok.output
    out = CliRunner().invoke(app, ["run", "mesh:4x4", "unicast", "--set", "vc_release=bogus"])
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert out.exit_code == 2 and len(lines) == 1, out.output
    assert "vc_release" in lines[0] and "tail-left, tail-sent" in lines[0]


WORMHOLE = [a.name for a in sorted(registry.algorithms(), key=lambda a: a.name) if "wormhole" in a.engines]


@pytest.mark.parametrize("name", WORMHOLE)
def test_every_wormhole_algorithm_passes_vc_release_to_its_router(name):
    algorithm = registry.algorithm(name)
    assert algorithm.model(resolve_params(algorithm, {})).router.vc_release == "tail-left"
    model = algorithm.model(resolve_params(algorithm, {"vc_release": "tail-sent"}))
    assert model.router.vc_release == "tail-sent"


def test_tail_sent_trains_beyond_their_horizon_run_again_flit_by_flit(monkeypatch):
    """A train departure known further ahead than the kernel's horizon makes the run start again with every flit
    on its own: forced here with a horizon of 4 cycles, the trace is still the flit-by-flit one (two VCs)."""
    from topocast.sim.wormhole import engine

    plan = tc.run("mesh:6x6", "unicast", routing="dor", load=0.3, cycles=1500, seed=3).trace.plan
    topology = tc.build("mesh:6x6")
    config = RouterConfig(buffer_depth=4, router_delay=1, startup=2, vc_release="tail-sent")
    flits = simulate(36, topology.num_arcs, plan.traffic, dataclasses.replace(config, vcs=2), plan.cycles)
    trains = simulate(36, topology.num_arcs, plan.traffic, config, plan.cycles)
    assert (flits.kernel, trains.kernel) == ("flits", "trains")
    monkeypatch.setattr(engine, "_train_span", lambda config: 4)
    again = simulate(36, topology.num_arcs, plan.traffic, config, plan.cycles)
    assert again.kernel == "flits"
    for trace in (trains, again):
        assert trace.worm_done.tolist() == flits.worm_done.tolist() and trace.flit_moves == flits.flit_moves
    with pytest.raises(RuntimeError, match="horizon"):     # tail-left trains: a horizon too short is a bug
        simulate(36, topology.num_arcs, plan.traffic, dataclasses.replace(config, vc_release="tail-left"), 30)


def test_the_booksim_config_under_tail_sent_runs_as_trains():
    """The issue's 16x16 mesh config under BookSim's VC release stays within the trains' horizon (no rerun flit by
    flit) and keeps the trains' trace: its flit moves and deliveries equal every flit moved on its own."""
    plan = tc.run("mesh:16x16", "unicast", routing="dor", load=0.055, cycles=4000, seed=1).trace.plan
    topology = tc.build("mesh:16x16")
    config = RouterConfig(buffer_depth=5, router_delay=2, startup=2, injection_channels=1, ejection_channels=1,
                          vc_release="tail-sent")
    trains = simulate(256, topology.num_arcs, plan.traffic, config, plan.cycles, plan.stop_when_idle)
    flits = simulate(256, topology.num_arcs, plan.traffic, dataclasses.replace(config, vcs=2), plan.cycles,
                     plan.stop_when_idle)
    assert (trains.kernel, flits.kernel) == ("trains", "flits")
    assert trains.slot_time.tolist() == flits.slot_time.tolist() and trains.flit_moves == flits.flit_moves
    default = simulate(256, topology.num_arcs, plan.traffic, RouterConfig(), plan.cycles, plan.stop_when_idle)
    assert default.kernel == "rigid"
