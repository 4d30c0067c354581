"""FrontierPlan: a per-step rule over bitmaps, for the ``frontier`` engine (:mod:`topocast.sim.frontier`).

A frontier plan does not list transfers.  It names a *rule*: given the
bitmap of the nodes that send in a step (the frontier), the rule computes
from each node's coordinates alone where it sends, and marks the receivers.
The engine keeps a bit or two per node (:mod:`topocast.sim.frontier`), so a
broadcast on billions of nodes runs without the topology's arrays.  The same
rule with ``record`` on writes out every transfer, which is how an algorithm
turns it into a :class:`~topocast.plans.schedule.Schedule` for the step and event
engines at small sizes.

The rule is an object with ``labels`` (the number of link labels it reports
transfers under: the most transfers one sender makes in a step) and one of

* ``expand_compact(held, mark, arg, stats, label_counts, record, workers)``:
  one step over the engine's two bitmaps (held, and a mark bit: four states
  per node), running its own kernels on the engine's threads; the EJ rule
  (:mod:`topocast.algorithms.ej_frontier`), or
* ``expand(front, held, fresh, w_lo, w_hi, arg, stats, label_counts, record,
  rec_src, rec_dst, rec_lab, nrec) -> nrec``: apply the sending rule to the
  frontier nodes in bitmap words ``[w_lo, w_hi)`` of three bitmaps (held,
  frontier, next frontier) under the phase argument ``arg``.

Either accumulates into ``stats`` (columns :data:`~topocast.sim.frontier.STATS`)
and ``label_counts`` (transfers per label) and, when ``record``, keeps the
transfers.

A plan is a sequence of :class:`Phase`; a phase that ``restart`` s puts every
holder in the frontier at its first step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .schedule import COLLECTIVES


@dataclass(frozen=True)
class Phase:
    """Consecutive steps under one rule argument; ``restart``: every holder sends at the first step."""

    name: str
    steps: int
    restart: bool
    arg: tuple[int, ...] = ()


@dataclass(frozen=True, eq=False)
class FrontierPlan:
    """A rule, its phases and what the run promises.

    ``collective`` ``broadcast``: the message of ``source`` must reach every
    node.  ``allgather`` with ``symmetric``: the topology is a Cayley graph
    and every node runs the same pattern shifted by its label, so the engine
    runs the message of ``source`` and every figure is that of all ``nodes``
    messages (a link's load is the transfers under its label).
    ``label_reverse[l]`` is the label of the opposite direction of label
    ``l``: with half-duplex links under symmetry no step may use a label and
    its reverse.  ``lower_bound`` (steps) is the algorithm's hint, used when
    the topology is not built.
    """

    nodes: int
    rule: Any
    phases: tuple[Phase, ...]
    collective: str = "broadcast"
    source: int = 0
    symmetric: bool = False
    label_reverse: np.ndarray | None = None
    lower_bound: int | None = None
    info: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        if self.collective not in COLLECTIVES:
            raise ValueError(f"collective: must be one of {', '.join(COLLECTIVES)}")
        if self.symmetric and self.collective != "allgather":
            raise ValueError("frontier plan: only an allgather runs by translation symmetry")

    @property
    def steps(self) -> int:
        return sum(p.steps for p in self.phases)

    @property
    def origin(self) -> np.ndarray:
        """Where the simulated message starts (the shape :mod:`topocast.measure.bounds` reads)."""
        return np.array([self.source], dtype=np.int64)


__all__ = ["FrontierPlan", "Phase"]
