"""Memory guard: refuse a build that would not fit instead of swapping."""

from __future__ import annotations

import os

from .errors import TopocastError

# Peak while a builder sorts its arcs into CSR: per directed arc the int64
# source and target and int16 label, the int64 sort order, the sorted copies
# and the final int64 neighbour array (about 50 bytes); per node the int64
# indptr plus room for the distances and queue a metric needs.
BYTES_PER_NODE = 8 + 8 + 4
BYTES_PER_EDGE = 8 + 8 + 2 + 8 + 8 + 8 + 2 + 6


def total_ram() -> int:
    """Physical memory of this machine in bytes (8 GiB if it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def default_limit() -> int:
    return total_ram() // 2


def estimate_bytes(nodes: int, directed_edges: int) -> int:
    return int(nodes) * BYTES_PER_NODE + int(directed_edges) * BYTES_PER_EDGE


def check_memory(what: str, nodes: int, directed_edges: int, limit: float | None = None) -> None:
    """Raise :class:`TopocastError` if building ``what`` needs more than ``limit`` bytes."""
    limit = default_limit() if limit is None else limit
    need = estimate_bytes(nodes, directed_edges)
    if need > limit:
        raise TopocastError(
            f"max-memory: building {what} needs about {human_bytes(need)} "
            f"({nodes} nodes, {directed_edges // 2} links), over the limit of {human_bytes(limit)}"
        )


def human_bytes(value: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"
