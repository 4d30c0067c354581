"""Memory guard: refuse a build that would not fit instead of swapping.

Family size estimates may be ints or floats: :func:`power` and friends cap
their arithmetic (a float, or ``inf``, beyond 2**200), so an absurd spec such
as ``hypercube:2000`` or ``ej:a=3,b=4,n=99999999999`` is refused at once with
its size in words ("2.6e+57 nodes") instead of materialising a huge integer.
"""

from __future__ import annotations

import math
import os
from typing import Any

from ..errors import TopocastError

# Peak while a builder sorts its arcs into CSR: per directed arc the int64
# source and target and int16 label, the int64 sort order, the sorted copies
# and the final int64 neighbour array (about 50 bytes); per node the int64
# indptr plus room for the distances and queue a metric needs.
BYTES_PER_NODE = 8 + 8 + 4
BYTES_PER_EDGE = 8 + 8 + 2 + 8 + 8 + 8 + 2 + 6

#: beyond this many bits a size is not worth computing exactly: it is returned as inf
_EXACT_BITS = 1 << 16

_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}


def power(base: int | float, exponent: int | float) -> int | float:
    """``base ** exponent``, exact up to 2**65536 and ``inf`` beyond (never a huger integer)."""
    if base in (0, 1) or exponent <= 0:
        return base**exponent
    if exponent * math.log2(abs(base)) <= _EXACT_BITS:
        return base**exponent
    return math.inf


def product(values) -> int | float:
    """Product of ``values``, ``inf`` as soon as it passes 2**65536."""
    out: int | float = 1
    for value in values:
        out = out * value
        if isinstance(out, int) and out.bit_length() > _EXACT_BITS:
            return math.inf
    return out


def float_of(value: int | float) -> float:
    """``value`` as a float, ``inf`` when an int is too large for one."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def scientific(value: int | float) -> str:
    """``2.6e+57``, also for integers too large for a float (``1.1e+602``); ``inf`` as 'more than 1e+19728'."""
    if isinstance(value, float) and math.isinf(value):
        return "more than 1e+19728"
    if value <= 0:
        return f"{value:.2g}"
    exponent = math.floor(math.log10(value))
    mantissa = 10 ** (math.log10(value) - exponent)
    if mantissa >= 9.95:
        mantissa, exponent = 1.0, exponent + 1
    return f"{mantissa:.1f}e+{exponent:02d}"


def words(count: int | float, what: str = "nodes") -> str:
    """A count for a message: ``"4096 nodes"``, ``"2.6e+57 nodes"``."""
    if not (isinstance(count, float) and math.isinf(count)) and count < 1e9 and float(count).is_integer():
        return f"{int(count)} {what}"
    return f"{scientific(count)} {what}"


def total_ram() -> int:
    """Physical memory of this machine in bytes (8 GiB if it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def default_limit() -> int:
    """The default guard: half of the machine's RAM."""
    return total_ram() // 2


def parse_size(text: str, name: str = "max-memory") -> float:
    """``'8G'``, ``'512MiB'``, ``'1e9'`` -> bytes; a :class:`TopocastError` naming ``name`` otherwise."""
    raw = text.strip().lower()
    for suffix in ("ib", "b"):
        if raw.endswith(suffix) and len(raw) > len(suffix):
            raw = raw[: -len(suffix)]
            break
    unit = raw[-1] if raw and raw[-1] in _UNITS and raw[-1].isalpha() else ""
    number = raw[:-1] if unit else raw
    try:
        value = float(number) * _UNITS[unit]
    except ValueError:
        raise TopocastError(f"{name}: must be a size such as 512M or 8G, got '{text}'") from None
    return check_limit(value, name, shown=repr(text))


def check_limit(value: Any, name: str = "max-memory", shown: str | None = None) -> float:
    """A positive, finite byte count; NaN, infinities, zero, negatives and booleans are refused."""
    shown = shown if shown is not None else repr(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise TopocastError(f"{name}: must be a number of bytes or a size such as '8G', got {shown}")
    number = float_of(value)
    if not math.isfinite(number) or number <= 0:
        raise TopocastError(f"{name}: must be a finite size > 0 such as 512M or 8G, got {shown}")
    return number


def resolve_limit(max_memory: Any, name: str = "max_memory") -> float | None:
    """``max_memory`` of an API call checked: None (the default), a positive number or a size string."""
    if max_memory is None:
        return None
    if isinstance(max_memory, str):
        return parse_size(max_memory, name)
    return check_limit(max_memory, name)


def estimate_bytes(nodes: int | float, directed_edges: int | float) -> int | float:
    """Bytes a build of this size needs at its peak (a float when the sizes are floats)."""
    if isinstance(nodes, float) or isinstance(directed_edges, float):
        return float_of(nodes) * BYTES_PER_NODE + float_of(directed_edges) * BYTES_PER_EDGE
    return int(nodes) * BYTES_PER_NODE + int(directed_edges) * BYTES_PER_EDGE


def check_memory(what: str, nodes: int | float, directed_edges: int | float, limit: float | None = None) -> None:
    """Raise :class:`TopocastError` if building ``what`` needs more than ``limit`` bytes."""
    limit = default_limit() if limit is None else limit
    need = estimate_bytes(nodes, directed_edges)
    if need > limit:
        what = what if len(what) <= 60 else what[:57] + "..."
        links = directed_edges // 2 if isinstance(directed_edges, int) else float_of(directed_edges) / 2
        raise TopocastError(
            f"max-memory: {what} has {words(nodes)} and {words(links, 'links')}; building it needs about "
            f"{human_bytes(need)}, over the limit of {human_bytes(limit)}"
        )


def check_need(what: str, need: int | float, limit: float | None = None) -> None:
    """The one memory guard: raise :class:`TopocastError` (``max-memory: WHAT needs about X, over the limit of
    Y``) when ``need`` bytes exceed ``limit`` (default: :func:`default_limit`, half of RAM).

    Every engine, verifier, planner and reader that can be asked for more memory than the machine has
    estimates its peak before the work and calls this with a ``what`` naming the work in words.

    Parameters
    ----------
    what : str
        The work, e.g. ``"verifying 4096 messages on 4096 nodes"``.
    need : int or float
        Its estimated peak in bytes.
    limit : float, optional
        The limit in bytes; None: half of the machine's RAM.

    Raises
    ------
    TopocastError
        When ``need`` is over the limit.

    >>> check_need("a test", 10, 100)
    >>> check_need("a test", 2**31, 2**30)
    Traceback (most recent call last):
    ...
    topocast.errors.TopocastError: max-memory: a test needs about 2.0 GiB, over the limit of 1.0 GiB
    """
    refused = over_limit(what, need, limit)
    if refused is not None:
        raise TopocastError(f"max-memory: {refused}")


def over_limit(what: str, need: int | float, limit: float | None = None) -> str | None:
    """The words of :func:`check_need` without raising: ``WHAT needs about X, over the limit of Y``, or None
    when ``need`` fits.

    For a caller that turns a refusal into something else (a fallback plan with a note, an error under an
    option's name); every other caller raises through :func:`check_need`.

    Parameters
    ----------
    what : str
        The work, in words.
    need : int or float
        Its estimated peak in bytes.
    limit : float, optional
        The limit in bytes; None: half of the machine's RAM.

    Returns
    -------
    str or None
        Why it does not fit, or None.

    >>> over_limit("a test", 2**31, 2**30)
    'a test needs about 2.0 GiB, over the limit of 1.0 GiB'
    >>> over_limit("a test", 10, 100) is None
    True
    """
    limit = default_limit() if limit is None else limit
    if need > limit:
        return f"{what} needs about {human_bytes(need)}, over the limit of {human_bytes(limit)}"
    return None


def human_bytes(value: int | float) -> str:
    """``1536`` -> ``'1.5 KiB'``; huge values in powers of ten of bytes."""
    if value >= 2**60:
        return f"{scientific(value)} bytes"
    value = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"
