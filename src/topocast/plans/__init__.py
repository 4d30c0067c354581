"""Plans: what an algorithm produces, one type per engine family, independent of timing.

* :class:`~topocast.plans.schedule.Schedule` for the ``step`` and ``event`` engines;
* :class:`~topocast.plans.circuit.CircuitPlan` for the ``circuit`` engine (switch settings per pass);
* :class:`~topocast.plans.wormhole.WormPlan` for the ``wormhole`` engine (worms with paths and release
  dependencies);
* :class:`~topocast.plans.frontier.FrontierPlan` for the ``frontier`` engine (a per-step rule over bitmaps).

An algorithm returns one of them; :func:`topocast.execution.execute.execute` runs it.
"""
