"""Flit-level wormhole engine: worms with explicit paths on any topology, cycle by cycle.

``engine`` holds :func:`simulate`, the router configuration
(:class:`RouterConfig`: channels, start-ups, and the network options virtual
channels, buffer depth, router delay, link latency, credit delay;
``docs/simulator.md``) and the trace.  Its input is the
:class:`~topocast.plans.wormhole.WormPlan`'s traffic arrays; routing and
workload generation build plans (:mod:`topocast.algorithms.mesh_routing`,
:mod:`topocast.algorithms.worm_traffic`), and the statistics and verification
of a run live in :mod:`topocast.measure.wormhole` and :mod:`topocast.verify.delivery`.

The numba kernels are split by stage: ``kernel`` (the flit-level cycle loop,
inject and the watchdog), ``allocate`` (route and allocate), ``flits`` and
``trains`` (traverse, every flit on its own or as trains), ``eject``,
``processors`` (jobs, start-ups, injection queues), ``knots`` (the deadlock
search), ``rigid`` (the default network's kernel); ``state`` names the groups
of state they pass and the worm record's fields.
"""

from .engine import RouterConfig, WormTrace, lone_tail_time, simulate

__all__ = ["RouterConfig", "WormTrace", "lone_tail_time", "simulate"]
