"""Run parameters of the wormhole router's network options, declared once for every wormhole algorithm.

:class:`~topocast.sim.models.RouterConfig` has, besides the
processor and channel counts of :data:`topocast.algorithms.mesh_multicast.ROUTER_PARAMS`,
the options of the router's network side (``docs/simulator.md``): virtual
channels, buffer depth, router pipeline delay, link latency, credit
delay and when a VC can be allocated again.  Their defaults give the
rigid one-flit-buffer worm every reproduction was measured with.  An algorithm that runs on the ``wormhole``
engine adds :data:`NETWORK_PARAMS` to its ``run_params`` and passes
:func:`network_options` of its resolved parameters to ``RouterConfig``.
"""

from __future__ import annotations

from typing import Any

from ..registry import Param
from ..sim.models import VC_RELEASES

#: the router's network options (:class:`~topocast.sim.models.RouterConfig` fields of the same names)
NETWORK_PARAMS: tuple[Param, ...] = (
    Param("vcs", "int", 1, "virtual channels per link (the plan's path_vc picks one per hop)", minimum=1),
    Param("buffer_depth", "int", 1, "flits of buffer per virtual channel at a link's head", minimum=1),
    Param("router_delay", "int", 0, "cycles a header spends in each router before it may leave (routing "
          "and allocation pipeline)", minimum=0),
    Param("link_latency", "int", 1, "cycles a flit takes to cross a link", minimum=1),
    Param("credit_delay", "int", 0, "cycles before a freed buffer slot is visible upstream", minimum=0),
    Param("vc_release", "str", "tail-left", "when a VC can be allocated again: tail-left (once the owner's tail "
          "has left its buffer) or tail-sent (once the tail has been sent into it, so a buffer holds flits of "
          "several worms in order, as BookSim2's default)", choices=VC_RELEASES),
)

NETWORK_KEYS: tuple[str, ...] = tuple(p.name for p in NETWORK_PARAMS)


def network_options(params: dict[str, Any]) -> dict[str, Any]:
    """Pick the network options out of resolved run parameters.

    Parameters
    ----------
    params : dict
        Resolved run parameters.

    Returns
    -------
    dict
        ``RouterConfig`` keyword arguments for the options present and not None.
    """
    return {k: params[k] for k in NETWORK_KEYS if k in params and params[k] is not None}
