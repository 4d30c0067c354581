"""Port and cost models shared by the engines.

Port model (synchronous rounds): ``ports`` is the number of transfers a node
may send, and separately receive, in one step (``None`` = all-port: one per
link); ``duplex="half"`` forbids using a link in both directions in one step
and, with a port limit, counts sends and receipts against one budget.

Cost model (event engine, store-and-forward, one message unit per transfer):
a transfer of ``b`` bytes occupies its link direction for
``startup + b * per_byte`` and arrives ``per_hop`` later.  Defaults: 1 us
start-up, 10 GB/s (0.1 ns per byte), no hop latency; times in seconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import TopocastError


@dataclass(frozen=True)
class PortModel:
    ports: int | None = None
    duplex: str = "full"

    def __post_init__(self):
        if self.ports is not None and self.ports < 1:
            raise TopocastError(f"ports: must be >= 1 or all, got {self.ports}")
        if self.duplex not in ("full", "half"):
            raise TopocastError(f"duplex: must be 'full' or 'half', got '{self.duplex}'")

    @classmethod
    def one_port(cls, duplex: str = "full") -> "PortModel":
        return cls(1, duplex)

    @classmethod
    def all_port(cls, duplex: str = "full") -> "PortModel":
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

    def __post_init__(self):
        for key, value in asdict(self).items():
            if value < 0:
                raise TopocastError(f"{key}: must be >= 0, got {value}")

    @classmethod
    def from_bandwidth(cls, bits_per_second: float, startup: float = 0.0, per_hop: float = 0.0) -> "CostModel":
        if bits_per_second <= 0:
            raise TopocastError(f"bandwidth: must be > 0, got {bits_per_second}")
        return cls(startup=startup, per_byte=8.0 / bits_per_second, per_hop=per_hop)

    def transfer_time(self, nbytes: float) -> float:
        """Time a transfer of ``nbytes`` holds its link (start-up included)."""
        return self.startup + nbytes * self.per_byte
