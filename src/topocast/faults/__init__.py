"""Faults: what is broken in a network, as a property of its :class:`~topocast.topology.core.Topology`.

* :mod:`.spec`: the fault-spec grammar (``links=0.05,seed=3``, ``routers=5;9``, ``groups=1``);
* :mod:`.degrade`: the one transform, fault spec -> degraded topology (links removed, routers marked failed);
* :mod:`.connectivity`: what the degraded network still is (components, connected pairs, distances);
* :mod:`.plans`: how an algorithm runs on it, by its ``fault_mode`` (planned on the surviving graph; around
  the faults by the algorithm itself; or for the intact network with the transfers over failed parts
  dropped), and :mod:`.loss`: what a plan loses, against the intact plan.

``spec``, ``degrade`` and ``connectivity`` belong to the topology layer and import nothing above it
(``pyproject.toml``'s import contracts); ``plans`` and ``loss`` work on plans, beside the verifier.
"""

from __future__ import annotations

from .degrade import degrade
from .spec import Draw, FaultSpec, parse

__all__ = ["Draw", "FaultSpec", "degrade", "parse"]
