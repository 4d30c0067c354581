"""Workloads for the wormhole engine: Poisson generators, destination draws, plans into arrays.

A multicast algorithm describes one multicast as a *plan*: a list of jobs
``(node, after, prep, worms)``.  ``after`` is -1 for a job the source starts
when the multicast is generated, or the destination node whose receipt of
the whole message releases the job (a relay, e.g. a Qualified Groups
leader).  ``worms`` is a list of ``(routing, destinations)`` with
``routing`` one of :data:`ECUBE`, :data:`HIGH`, :data:`LOW` and the
destinations in path order.  :class:`TrafficBuilder` turns many plans into
the flat arrays of :class:`WormTraffic`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import TopocastError, VerificationError
from ...topology.core import Topology
from .engine import WormTraffic
from .routing import expand_paths

Plan = list  # list of (node, after, prep, [(routing, [dest, ...]), ...])


class TrafficBuilder:
    """Collect multicast (or unicast) plans, then :meth:`build` the engine's arrays."""

    def __init__(self, topology: Topology):
        self.topology = topology
        self.mc_gen: list[int] = []
        self.mc_source: list[int] = []
        self.mc_slot_ptr: list[int] = [0]
        self.mc_startups: list[int] = []
        self.mc_steps: list[int] = []
        self.mc_worms: list[int] = []
        self.slot_node: list[int] = []
        self.slot_job: list[int] = []
        self.job_node: list[int] = []
        self.job_release: list[int] = []
        self.job_prep: list[int] = []
        self.job_worm_ptr: list[int] = [0]
        self.worm_kind: list[int] = []
        self.worm_start: list[int] = []
        self.dest_ptr: list[int] = [0]
        self.dests: list[int] = []
        self.dest_slot: list[int] = []

    def add(self, source: int, generated: int, destinations: Sequence[int], plan: Plan, batch: int) -> None:
        """Add one multicast generated at cycle ``generated`` with its plan.

        The plan must list every destination exactly once among its worms'
        destinations (raises :class:`VerificationError` otherwise), so that
        exactly-once delivery is checked statically even for multicasts a
        saturated run never finishes; the engine then checks it dynamically.

        ``batch`` (worms per start-up) only feeds the counts: a job with ``w``
        worms takes ``ceil(w / batch)`` sequential start-ups, and a relay's
        chain adds to the chain of the job that served it.  ``startups`` of a
        multicast is the longest such chain to a destination; ``steps`` the
        longest chain of jobs (message-passing steps, Theorem 1's count).
        """
        slot0 = len(self.slot_node)
        slot_of = {}
        for i, d in enumerate(destinations):
            slot_of[int(d)] = slot0 + i
            self.slot_node.append(int(d))
            self.slot_job.append(-1)
        # the plan must name every destination exactly once, as a worm's destination
        planned = [int(d) for _, _, _, job_worms in plan for _, seq in job_worms for d in seq]
        if len(planned) != len(slot_of) or set(planned) != set(slot_of):
            missing = sorted(set(slot_of) - set(planned))
            extra = sorted(d for d in set(planned) if planned.count(d) > 1 or d not in slot_of)
            raise VerificationError(f"plan of the multicast from node {source}: destinations {missing[:5]} "
                                    f"not served, {extra[:5]} served twice or not destinations")
        depth_at = {int(source): 0}
        step_at = {int(source): 0}
        worms = 0
        deepest = 0
        steps = 0
        for node, after, prep, job_worms in plan:
            job = len(self.job_node)
            self.job_node.append(int(node))
            self.job_prep.append(int(prep))
            if after < 0:
                self.job_release.append(int(generated))
                base = 0
                step = 1
            else:
                self.job_release.append(-1)
                slot = slot_of[int(after)]
                if self.slot_job[slot] >= 0:
                    raise TopocastError(f"plan: destination {after} releases two jobs")
                self.slot_job[slot] = job
                base = depth_at[int(after)]
                step = step_at[int(after)] + 1
            startups = -(-len(job_worms) // batch)
            for b, (kind, seq) in enumerate(job_worms):
                self.worm_kind.append(int(kind))
                self.worm_start.append(int(node))
                level = base + b // batch + 1
                for d in seq:
                    self.dests.append(int(d))
                    self.dest_slot.append(slot_of[int(d)])
                    depth_at[int(d)] = level
                    step_at[int(d)] = step
                self.dest_ptr.append(len(self.dests))
            deepest = max(deepest, base + startups)
            steps = max(steps, step)
            worms += len(job_worms)
            self.job_worm_ptr.append(len(self.worm_kind))
        self.mc_gen.append(int(generated))
        self.mc_source.append(int(source))
        self.mc_slot_ptr.append(len(self.slot_node))
        self.mc_startups.append(deepest)
        self.mc_steps.append(steps)
        self.mc_worms.append(worms)

    def build(self) -> tuple[WormTraffic, dict]:
        """The engine's arrays and the per-multicast bookkeeping (generation, slots, start-ups)."""
        i64 = lambda xs: np.asarray(xs, dtype=np.int64)  # noqa: E731
        path_ptr, path_node, path_arc, path_slot = expand_paths(
            self.topology, i64(self.worm_kind), i64(self.worm_start), i64(self.dest_ptr),
            i64(self.dests), i64(self.dest_slot))
        traffic = WormTraffic(
            job_node=i64(self.job_node), job_release=i64(self.job_release), job_prep=i64(self.job_prep),
            job_worm_ptr=i64(self.job_worm_ptr), path_ptr=path_ptr, path_node=path_node,
            path_arc=path_arc, path_slot=path_slot, slot_node=i64(self.slot_node), slot_job=i64(self.slot_job))
        book = {"gen": i64(self.mc_gen), "source": i64(self.mc_source), "slot_ptr": i64(self.mc_slot_ptr),
                "startups": i64(self.mc_startups), "steps": i64(self.mc_steps), "worms": i64(self.mc_worms),
                "worm_kind": i64(self.worm_kind)}
        return traffic, book


def poisson_arrivals(num_nodes: int, rate: float, cycles: int, rng: np.random.Generator
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Every node generates at exponential inter-arrival times of mean ``1/rate`` cycles.

    Returns ``(cycle, source)`` sorted by cycle (ties by node); a message
    generated at real time ``x`` is handed to its processor at cycle ``ceil(x)``.
    """
    if rate <= 0:
        raise TopocastError(f"traffic: parameter 'load' must be > 0, got rate {rate}")
    expect = rate * cycles
    width = int(expect + 6 * np.sqrt(expect) + 10)
    times = np.cumsum(rng.exponential(1.0 / rate, size=(num_nodes, width)), axis=1)
    while np.any(times[:, -1] < cycles):  # rare: extend the rows that ran short
        more = np.cumsum(rng.exponential(1.0 / rate, size=(num_nodes, width)), axis=1) + times[:, -1:]
        times = np.concatenate([times, more], axis=1)
    node, _ = np.nonzero(times < cycles)
    cycle = np.ceil(times[times < cycles]).astype(np.int64)
    order = np.lexsort((node, cycle))
    return cycle[order], node[order].astype(np.int64)


def draw_destinations(num_nodes: int, sources: np.ndarray, counts: np.ndarray, rng: np.random.Generator
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Destinations drawn uniformly without replacement among the other nodes.

    Returns CSR ``(ptr, ids)``; ``counts[i]`` destinations for source ``sources[i]``.
    """
    sources = np.asarray(sources, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    if np.any(counts > num_nodes - 1) or np.any(counts < 1):
        bad = int(counts[(counts > num_nodes - 1) | (counts < 1)][0])
        raise TopocastError(f"traffic: parameter 'destinations' must be in 1..{num_nodes - 1} "
                            f"(nodes - 1), got {bad}")
    ptr = np.zeros(len(sources) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    ids = np.empty(int(ptr[-1]), dtype=np.int64)
    kmax = int(counts.max(initial=1))
    chunk = max(1, (1 << 22) // max(num_nodes, 1))
    for lo in range(0, len(sources), chunk):
        hi = min(lo + chunk, len(sources))
        keys = rng.random((hi - lo, num_nodes - 1))
        pick = np.argpartition(keys, kmax - 1, axis=1)[:, :kmax] if kmax < num_nodes - 1 \
            else np.argsort(keys, axis=1)
        # a random-key order: the first k of each row are a uniform k-subset of the others
        pick = np.take_along_axis(pick, np.argsort(np.take_along_axis(keys, pick, axis=1), axis=1), axis=1)
        src = sources[lo:hi, None]
        nodes = pick + (pick >= src)           # skip the source
        for i in range(hi - lo):
            ids[ptr[lo + i]:ptr[lo + i + 1]] = nodes[i, :counts[lo + i]]
    return ptr, ids
