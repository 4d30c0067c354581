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

Router model (wormhole engine, counted in cycles): :class:`RouterConfig`,
carried by :class:`Model` as ``router``; :func:`lone_tail_time` is its
closed-form timing of a worm alone in the network.

Plans, algorithms and engines all read these models, so they live here and
not in an engine: an algorithm imports this module, never an engine's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np
import numpy.typing as npt

from ..errors import TopocastError
from ..infra.validate import Normalised, choice, integer, number


@nb.njit(cache=True, inline="always")
def link_time(startup: float, per_byte: float, nbytes: float) -> float:
    """The one cost formula: how long a transfer of ``nbytes`` holds its link direction, start-up included.

    Compiled, so the engines' and the synthesiser's kernels call it as well as :class:`CostModel` (a transfer
    arrives ``per_hop`` after it leaves the link).
    """
    return startup + nbytes * per_byte


def _port_count(value: Any, name: str) -> int | None:
    return None if value is None else integer(value, name, minimum=1)


def _non_negative(value: Any, name: str) -> float:
    return number(value, name, minimum=0)


@dataclass(frozen=True)
class PortModel:
    ports: Normalised[int | None] = Normalised(_port_count, None)
    duplex: str = "full"

    def __post_init__(self) -> None:
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
    """The one cost model of every timed engine, bound and closed form (alpha-beta-gamma, plus hops).

    A transfer of ``m`` bytes holds its link for ``startup + per_byte * m``
    (:func:`link_time`), arrives ``per_hop`` later and, in a reduction step,
    is added to the receiver's partial in ``per_byte_reduce * m`` more.

    Parameters
    ----------
    startup : float
        Start-up time of a transfer (alpha, t_s), seconds.
    per_byte : float
        Time per byte on a link (beta, t_w; one over the bandwidth), seconds.
    per_hop : float
        Latency per hop (t_h), seconds.
    setup : float
        Set-up time of a circuit configuration, seconds.
    per_byte_reduce : float
        Time per byte to combine a received partial aggregate (gamma), seconds.
    """

    startup: Normalised[float] = Normalised(_non_negative, 1e-6)
    per_byte: Normalised[float] = Normalised(_non_negative, 1e-10)
    per_hop: Normalised[float] = Normalised(_non_negative, 0.0)
    setup: Normalised[float] = Normalised(_non_negative, 0.0)
    per_byte_reduce: Normalised[float] = Normalised(_non_negative, 0.0)

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

    def combine_time(self, nbytes: float) -> float:
        """Time a receiver takes to add ``nbytes`` of partial aggregates to its own (the gamma term)."""
        return self.per_byte_reduce * nbytes

    def circuit_time(self, nbytes: float, configurations: int) -> float:
        """``configurations`` circuit passes in sequence, each a set-up then one message."""
        return configurations * (self.setup + self.transfer_time(nbytes))


@dataclass(frozen=True)
class Model:
    """What a run is measured under: ports, costs and, for the wormhole engine, the router."""

    ports: PortModel = PortModel()
    cost: CostModel = CostModel()
    router: Any = None


#: when a VC can be allocated again: once the owning worm's tail has left its buffer, or once it was sent into it
VC_RELEASES = ("tail-left", "tail-sent")


def _cycles(value: Any, name: str) -> int:
    """A router parameter that may be 0 (start-up, delays, ejection channels)."""
    return integer(value, name, owner="wormhole", minimum=0)


def _count(value: Any, name: str) -> int:
    return integer(value, name, owner="wormhole", minimum=1)


def _optional_count(value: Any, name: str) -> int | None:
    return None if value is None else _count(value, name)


def _vc_release(value: Any, name: str) -> str:
    release: str = choice(value, name, VC_RELEASES, owner="wormhole")
    return release


@dataclass(frozen=True)
class RouterConfig:
    """The router's cycle parameters, the ``router`` of :class:`~topocast.sim.models.Model`.

    Start-up latency and message length in cycles and flits, injection and
    ejection channels per node, worms launched per start-up (default one per
    injection channel), whether intermediate destinations hold an ejection
    channel, and the deadlock watchdog in cycles (defaults: Al-Dubai et al.
    2003, section 4).  The network options: ``vcs`` virtual channels per
    link, ``buffer_depth`` flits of buffer per virtual channel,
    ``router_delay`` cycles a header spends in each router before it may
    leave, ``link_latency`` cycles per link traversal, ``credit_delay``
    cycles before freed buffer space is visible upstream, ``vc_release``
    when a VC can be allocated again (``tail-left``: once the owning worm's
    tail has left its buffer; ``tail-sent``: once the tail has been sent
    into it, BookSim2's default); their defaults (1, 1, 0, 1, 0,
    ``tail-left``) are the rigid worm of the paper.  ``vcs=None``: as many
    as the plan's ``path_vc`` uses (fixed when
    :func:`topocast.sim.wormhole.engine.simulate` starts).
    """

    startup: Normalised[int] = Normalised(_cycles, 33)
    flits: Normalised[int] = Normalised(_count, 32)
    injection_channels: Normalised[int] = Normalised(_count, 4)
    ejection_channels: Normalised[int] = Normalised(_cycles, 4)
    worms_per_startup: Normalised[int | None] = Normalised(_optional_count, None)
    intermediate_ejection: bool = True
    watchdog: Normalised[int] = Normalised(_count, 2000)
    vcs: Normalised[int | None] = Normalised(_optional_count, 1)
    buffer_depth: Normalised[int] = Normalised(_count, 1)
    router_delay: Normalised[int] = Normalised(_cycles, 0)
    link_latency: Normalised[int] = Normalised(_count, 1)
    credit_delay: Normalised[int] = Normalised(_cycles, 0)
    vc_release: Normalised[str] = Normalised(_vc_release, "tail-left")

    def __post_init__(self) -> None:
        quiet = self.router_delay + self.link_latency + self.credit_delay
        if self.watchdog < quiet:
            raise TopocastError(f"wormhole: parameter 'watchdog' must be >= router_delay + link_latency + "
                                f"credit_delay = {quiet} cycles, got {self.watchdog}")

    @property
    def batch(self) -> int:
        return int(self.worms_per_startup or self.injection_channels)

    @property
    def rigid(self) -> bool:
        """True when the network options are the defaults: the worm moves as a rigid train."""
        return (self.buffer_depth, self.router_delay, self.link_latency, self.credit_delay,
                self.vc_release) == (1, 0, 1, 0, "tail-left")

    @property
    def tail_sent(self) -> bool:
        """True when a VC can be allocated again once the owner's tail has been sent into it."""
        return self.vc_release == "tail-sent"


def lone_tail_time(hops: npt.ArrayLike, total_hops: npt.ArrayLike, config: RouterConfig) -> np.ndarray:
    """Cycles from the end of a worm's start-up to its tail leaving the router ``hops`` hops down its path.

    The worm is alone in the network and its path has ``total_hops`` hops;
    the answer is the cycle its tail passes that destination minus ``S``.
    Header: leaves router ``k`` in cycle ``S + 1 + r + k*(l + r)``; flit
    ``j`` cannot leave a router before the flit ahead of it has (``+1``),
    before it has crossed the link (``+l``), nor before the flit ``B``
    ahead of it has left the next buffer (``+c``, credits).  The longest
    chain of these constraints to the tail's departure from router ``q``
    runs along the header to router ``q + m`` and back down by ``m``
    credit steps: ``r + q*(l + r) + L + max_m [m*(l + r + c - B) -
    r*max(0, q + m - h)]`` over ``0 <= m <= floor((L - 1)/B)``, a concave
    function of ``m`` whose maximum is at ``0``, ``h - q`` or the top.

    Parameters
    ----------
    hops : int or array_like of int
        Hops down the path to the destination asked about (``q``).
    total_hops : int or array_like of int
        Hops of the whole path (``h``), broadcast with ``hops``.
    config : RouterConfig
        The router.

    Returns
    -------
    numpy.ndarray
        Cycles (int64), the broadcast shape of ``hops`` and ``total_hops``.

    >>> int(lone_tail_time(3, 3, RouterConfig()))  # the defaults: hops + flits
    35
    """
    q = np.asarray(hops, dtype=np.int64)
    h = np.asarray(total_hops, dtype=np.int64)
    L, B = config.flits, config.buffer_depth
    ll, r, c = config.link_latency, config.router_delay, config.credit_delay
    top = (L - 1) // B
    best = np.zeros(np.broadcast(q, h).shape, dtype=np.int64)
    for m in (np.minimum(top, np.maximum(h - q, 0)), np.full_like(best, top)):
        best = np.maximum(best, m * (ll + r + c - B) - r * np.maximum(0, q + m - h))
    # a path of no hops: the tail only waits for credits of the injection buffer
    best = np.where(h == 0, top * max(0, c + 1 - B), best)
    return r + q * (ll + r) + L + best
