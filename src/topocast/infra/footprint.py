"""What this process holds, and the one guard of engines and verifiers: what it holds plus what the work adds.

A run's peak is the memory the process already holds (the topology, the
plan) plus the state the next stage allocates.  :func:`guard` refuses the
stage, before it allocates anything, when that sum is over the limit, through
the one guard :func:`topocast.infra.memory.check_need`, so that a run under
``--max-memory X`` either stops with one line or keeps its peak resident
size below ``X``.
"""

from __future__ import annotations

import os

from .memory import check_need, human_bytes

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int:
    """Resident size of this process now, in bytes (0 where ``/proc/self/statm`` cannot be read).

    >>> resident_bytes() > 0
    True
    """
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def guard(what: str, state: int | float, limit: float | None = None) -> None:
    """Refuse ``what`` (:class:`~topocast.errors.TopocastError`, one line) when the ``state`` bytes it adds
    on top of what this process already holds would pass ``limit`` (default: half of RAM).

    Parameters
    ----------
    what : str
        The work, in words (``"the event engine on 4,096 transfers"``).
    state : int or float
        Bytes the work allocates at its peak.
    limit : float, optional
        The limit in bytes; None: :func:`topocast.infra.memory.default_limit`.

    Raises
    ------
    TopocastError
        ``max-memory: WHAT (X of state on top of the Y this process holds) needs about Z, over the limit of L``.

    >>> guard("a test", 1000, 1e12)
    """
    held = resident_bytes()
    check_need(f"{what} ({human_bytes(state)} of state on top of the {human_bytes(held)} this process holds)",
               held + state, limit)


__all__ = ["guard", "resident_bytes"]
