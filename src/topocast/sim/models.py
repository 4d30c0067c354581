"""The one model every engine reads: ports, costs, and (for the wormhole engine) the router.

Port model (synchronous rounds): ``ports`` is the number of transfers a node
may send, and separately receive, in one step (``None`` = all-port: one per
link); ``duplex="half"`` forbids using a link in both directions in one step
and, with a port limit, counts sends and receipts against one budget.

Cost model (event and circuit engines, store-and-forward, one message unit
per transfer): a transfer of ``b`` bytes occupies its link direction for
:meth:`CostModel.transfer_time` ``= startup + b * per_byte`` and arrives
``per_hop`` later; a circuit-switched pass first spends ``setup`` setting its
switches.  Defaults: 1 us start-up, 10 GB/s (0.1 ns per byte), no hop
latency, no set-up; times in seconds.

The wormhole engine counts in cycles; its parameters live in its router
configuration (:class:`topocast.sim.wormhole.engine.RouterConfig`), carried
by :class:`Model` as ``router``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numba as nb

from ..errors import TopocastError
from ..validate import integer, number


@nb.njit(cache=True, inline="always")
def link_time(startup: float, per_byte: float, nbytes: float) -> float:
    """The one cost formula: how long a transfer of ``nbytes`` holds its link direction, start-up included.

    Compiled, so the engines' and the synthesiser's kernels call it as well as :class:`CostModel` (a transfer
    arrives ``per_hop`` after it leaves the link).
    """
    return startup + nbytes * per_byte


@dataclass(frozen=True)
class PortModel:
    ports: int | None = None
    duplex: str = "full"

    def __post_init__(self):
        if self.ports is not None:
            object.__setattr__(self, "ports", integer(self.ports, "ports", minimum=1))
        if self.duplex not in ("full", "half"):
            raise TopocastError(f"duplex: must be 'full' or 'half', got '{self.duplex}'")

    @classmethod
    def one_port(cls, duplex: str = "full") -> PortModel:
        return cls(1, duplex)

    @classmethod
    def all_port(cls, duplex: str = "full") -> PortModel:
        return cls(None, duplex)

    @property
    def name(self) -> str:
        ports = "all-port" if self.ports is None else ("one-port" if self.ports == 1 else f"{self.ports}-port")
        return f"{ports}, {self.duplex}-duplex"


@dataclass(frozen=True)
class CostModel:
    startup: float = 1e-6
    per_byte: float = 1e-10
    per_hop: float = 0.0
    setup: float = 0.0

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, number(getattr(self, f.name), f.name, minimum=0))

    @classmethod
    def from_bandwidth(cls, bits_per_second: float, startup: float = 0.0, per_hop: float = 0.0) -> CostModel:
        bits_per_second = number(bits_per_second, "bandwidth", minimum=0)
        if bits_per_second <= 0:
            raise TopocastError(f"bandwidth: must be > 0, got {bits_per_second}")
        return cls(startup=startup, per_byte=8.0 / bits_per_second, per_hop=per_hop)

    def transfer_time(self, nbytes: float) -> float:
        """Time a transfer of ``nbytes`` holds its link (start-up included): :func:`link_time`."""
        return float(link_time.py_func(self.startup, self.per_byte, nbytes))

    def hop_time(self, nbytes: float) -> float:
        """Time one message takes over one hop: the transfer plus the hop latency."""
        return self.transfer_time(nbytes) + self.per_hop

    def circuit_time(self, nbytes: float, configurations: int) -> float:
        """``configurations`` circuit passes in sequence, each a set-up then one message."""
        return configurations * (self.setup + self.transfer_time(nbytes))


@dataclass(frozen=True)
class Model:
    """What a run is measured under: ports, costs and, for the wormhole engine, the router."""

    ports: PortModel = PortModel()
    cost: CostModel = CostModel()
    router: Any = None

