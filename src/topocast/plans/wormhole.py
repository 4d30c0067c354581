"""The wormhole engine's plan: worms with explicit paths, the jobs that launch them, and a measurement window.

A :class:`WormPlan` is what a multicast or unicast algorithm hands to
the ``wormhole`` engine (Al-Dubai et al. 2003, section 4; Lin and Ni 1991):

* *jobs*: processor work at a node, ``prep`` cycles then one start-up per
  batch of worms, released at a cycle or by the delivery of a destination
  slot (a relay, e.g. a Qualified Groups leader);
* *worms*: each an explicit path of nodes and arcs, with the path positions
  where a destination absorbs its copy (*slots*);
* *multicasts*: the generation cycle, source, destination slots and jobs of
  every message;
* the measurement window: ``cycles`` simulated, the first ``warmup`` and the
  last ``drain`` cycles' multicasts not measured, ``batches`` for the
  batch-means interval, the offered ``load``.

How a router times the worms (start-up cycles, flits, channels, virtual
channels, buffers and delays) is the model's
:class:`~topocast.sim.models.RouterConfig`, not the plan; which
virtual channel a worm uses on each hop is the plan's (``path_vc``).
Paths name the topology's arcs, so a plan runs on any topology
(``docs/simulator.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

COLLECTIVES = ("multicast", "unicast")


@dataclass
class WormTraffic:
    """Jobs, worms and destination slots, all as flat numpy arrays (what the engine runs).

    Job ``j`` runs on ``job_node[j]``; it is released at cycle
    ``job_release[j]`` or, when that is -1, the cycle a slot ``s`` with
    ``slot_job[s] == j`` is delivered.  Its worms are
    ``job_worm_ptr[j] .. job_worm_ptr[j+1]-1``; worm ``w``'s path is
    ``path_*[path_ptr[w]:path_ptr[w+1]]``: ``path_node`` the nodes,
    ``path_arc[k]`` the arc entering position ``k`` (-1 at the start),
    ``path_slot[k]`` the destination slot absorbing a copy there (-1
    elsewhere).  ``slot_node[s]`` is the node of slot ``s``.
    ``path_vc`` (optional, aligned with ``path_node``): ``path_vc[k]`` is the
    virtual channel the worm uses on arc ``path_arc[k]`` entering position
    ``k`` (ignored at a start position); ``None`` means VC 0 everywhere.  The
    engine refuses a plan whose VCs do not fit the router's ``vcs``.
    ``path_alt`` (optional, shape ``(2, worms)``): worm ``w``'s *alternate*
    route is the path positions ``path_alt[0, w] .. path_alt[1, w] - 1``
    (-1: none), stored in the same ``path_*`` arrays after ``path_ptr[-1]``,
    with the same source, destination and slot; the worm's source takes it
    instead of the planned (minimal) route when the queues say so
    (``routing=ugal``: :func:`topocast.sim.wormhole.engine._choose_route`
    with ``alt_threshold``).  Slots are counted on the planned routes.
    """

    job_node: np.ndarray
    job_release: np.ndarray
    job_prep: np.ndarray
    job_worm_ptr: np.ndarray
    path_ptr: np.ndarray
    path_node: np.ndarray
    path_arc: np.ndarray
    path_slot: np.ndarray
    slot_node: np.ndarray
    slot_job: np.ndarray
    path_vc: np.ndarray | None = None
    path_alt: np.ndarray | None = None
    alt_threshold: int = 0

    @property
    def num_jobs(self) -> int:
        return len(self.job_node)

    @property
    def num_worms(self) -> int:
        return len(self.path_ptr) - 1

    @property
    def num_slots(self) -> int:
        return len(self.slot_node)

    @cached_property
    def slot_paths(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per slot: the worm whose path holds it (-1: none), its position on that path, and how many paths
        hold it (1 in a sound plan; with two, the later worm is named).  Computed once per plan."""
        on_path = np.flatnonzero(self.path_slot[:self.path_ptr[-1]] >= 0)   # (alternates after the planned)
        slots = self.path_slot[on_path]
        worm = np.full(self.num_slots, -1, dtype=np.int64)
        hops = np.zeros(self.num_slots, dtype=np.int64)
        worm[slots] = np.searchsorted(self.path_ptr, on_path, side="right") - 1
        hops[slots] = on_path - self.path_ptr[worm[slots]]
        return worm, hops, np.bincount(slots, minlength=self.num_slots)


@dataclass
class WormPlan:
    """Worms of many multicasts with their release dependencies, and the window they are measured in.

    Multicast ``m`` is generated at cycle ``generated[m]`` at node
    ``source[m]``; its destination slots are ``slot_ptr[m] .. slot_ptr[m+1]-1``
    and its jobs ``job_ptr[m] .. job_ptr[m+1]-1`` of :attr:`traffic`.
    ``cycles`` are simulated (all of them, or until every worm is done with
    ``stop_when_idle``); multicasts generated before ``warmup`` or from
    ``cycles - drain`` on are not measured, and the promise of the run covers
    every multicast generated before ``cycles - drain``.  ``flits`` is the
    message length the offered ``load`` (flits per node per cycle) was drawn
    with; the router must use the same.
    """

    traffic: WormTraffic
    generated: np.ndarray
    source: np.ndarray
    slot_ptr: np.ndarray
    job_ptr: np.ndarray
    cycles: int
    warmup: int
    drain: int
    batches: int
    flits: int
    load: float | None = None
    collective: str = "multicast"
    stop_when_idle: bool = False
    info: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        if self.collective not in COLLECTIVES:
            raise ValueError(f"WormPlan: collective must be one of {', '.join(COLLECTIVES)}, got {self.collective}")

    @property
    def num_multicasts(self) -> int:
        return len(self.generated)

    @property
    def drain_start(self) -> int:
        """First cycle of the drain window: multicasts generated from here on are not promised."""
        return self.cycles - self.drain

    def slot_multicast(self) -> np.ndarray:
        """The multicast of every destination slot."""
        return np.repeat(np.arange(self.num_multicasts, dtype=np.int64), np.diff(self.slot_ptr))

    def job_multicast(self) -> np.ndarray:
        """The multicast of every job."""
        return np.repeat(np.arange(self.num_multicasts, dtype=np.int64), np.diff(self.job_ptr))
