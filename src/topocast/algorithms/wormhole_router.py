"""Run parameters of the wormhole router's network options, declared once for every wormhole algorithm.

:class:`~topocast.sim.wormhole.engine.RouterConfig` has, besides the
processor and channel counts of :data:`topocast.algorithms.mesh_multicast.ROUTER_PARAMS`,
the options of the router's network side (``docs/simulator.md``): virtual
channels, buffer depth, router pipeline delay, link latency and credit
delay.  Their defaults give the rigid one-flit-buffer worm every
reproduction was measured with.  An algorithm that runs on the ``wormhole``
engine adds :data:`NETWORK_PARAMS` to its ``run_params`` and passes
:func:`network_options` of its resolved parameters to ``RouterConfig``.
"""

from __future__ import annotations

from typing import Any

from ..registry import Param

#: the router's network options (:class:`~topocast.sim.wormhole.engine.RouterConfig` fields of the same names)
NETWORK_PARAMS: tuple[Param, ...] = (
    Param("vcs", "int", 1, "virtual channels per link (the plan's path_vc picks one per hop)", minimum=1),
    Param("buffer_depth", "int", 1, "flits of buffer per virtual channel at a link's head", minimum=1),
    Param("router_delay", "int", 0, "cycles a header spends in each router before it may leave (routing "
          "and allocation pipeline)", minimum=0),
    Param("link_latency", "int", 1, "cycles a flit takes to cross a link", minimum=1),
    Param("credit_delay", "int", 0, "cycles before a freed buffer slot is visible upstream", minimum=0),
)

NETWORK_KEYS: tuple[str, ...] = tuple(p.name for p in NETWORK_PARAMS)


def network_options(params: dict[str, Any]) -> dict[str, Any]:
    """The network options present in resolved run parameters, as ``RouterConfig`` keyword arguments."""
    return {k: params[k] for k in NETWORK_KEYS if k in params and params[k] is not None}
