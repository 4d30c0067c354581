"""CircuitPlan: switch configurations of a multistage network, row by row and pass by pass (thesis 3.2.4, 4, 5).

A circuit-switched collective routes ``rows`` permutations, each in
``passes`` configurations of the network's switches (one pass unless a
slimmed fat tree forwards only some of its inputs at a time, thesis 4.2).
The plan holds no Python object per circuit: ``routes(rows, pass_index)``
produces the configurations of a chunk of rows for one pass (``int16[k,
route_size]``, :data:`~topocast.topology.stages.ROUTE_DTYPE`), so a square of
millions of circuits is traced a chunk at a time.

``collective`` says what the rows promise:

* ``"alltoall"``: the rows, merged over their passes, form a Latin square --
  every (input, output) pair exactly once (total exchange);
* ``"permutation"``: row ``r`` realises its requested permutation ``expected(r)``.

``expected(rows) -> int[k, N]`` (or an array ``(rows, N)``) is the
permutation each row must realise when the algorithm promises one (the
rotation ``i -> i + k``, ``i XOR x``, a requested permutation); ``None``
when any Latin square will do.  The circuit engine
(:func:`topocast.sim.circuit.trace_plan`) traces the plan and the one
circuit check (:class:`topocast.verify.delivery.CircuitSquare`) judges it.

Switch states of a family become route blocks here, where algorithms build
them: :func:`shift_route`, :func:`xor_route`, :func:`window_route` and
:func:`table_route`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..infra.validate import Normalised
from ..topology.stages import ROUTE_DTYPE, MultistageNetwork

CIRCUIT_COLLECTIVES = ("alltoall", "permutation")

Expected = Callable[[np.ndarray], np.ndarray] | np.ndarray | None


def _whole(value: Any, name: str) -> int:
    return int(value)


def _texts(value: Any, name: str) -> tuple[str, ...]:
    return tuple(value)


@dataclass(frozen=True, eq=False)
class CircuitPlan:
    """Rows of circuit configurations on ``network`` and what they must deliver (see the module docstring)."""

    network: MultistageNetwork
    rows: Normalised[int] = Normalised(_whole)
    passes: Normalised[int] = Normalised(_whole)
    # required (a Normalised field without a default has none at run time; mypy's dataclass plugin assumes one)
    routes: Callable[[np.ndarray, int], np.ndarray]  # type: ignore[misc]
    message_bytes: float  # type: ignore[misc]
    collective: str = "alltoall"
    expected: Expected = None
    pass_lower_bound: float = 1.0
    owner: str = "circuit plan"
    info: dict[str, Any] = field(default_factory=dict)
    notes: Normalised[tuple[str, ...]] = Normalised(_texts, ())
    chunk: Normalised[int] = Normalised(_whole, 256)

    def __post_init__(self) -> None:
        if self.collective not in CIRCUIT_COLLECTIVES:
            raise TopocastError(f"{self.owner}: a circuit plan's collective must be one of "
                                f"{', '.join(CIRCUIT_COLLECTIVES)}, got '{self.collective}'")
        for name in ("rows", "passes", "chunk"):
            value = getattr(self, name)
            if value < 1:
                raise TopocastError(f"{self.owner}: a circuit plan needs {name} >= 1, got {value}")

    @property
    def inputs(self) -> int:
        return self.network.num_inputs

    def expected_rows(self, rows: np.ndarray) -> np.ndarray | None:
        """The permutations rows ``rows`` must realise, shape ``(len(rows), N)``, or None."""
        if self.expected is None:
            return None
        if callable(self.expected):
            return np.asarray(self.expected(rows))
        return np.asarray(self.expected)[rows]


# -- switch states ---------------------------------------------------------------


def shift_route(ins: int, outs: int, states) -> np.ndarray:
    """Shift states: input ``u`` -> output ``(u + state) mod outs`` (``ins <= outs``).

    This is the ``k``-shift of Liu et al. (2007); the thesis's LLS states
    (sections 4.1.1 and 4.2.1) are the same switch settings numbered the
    other way round (state ``i`` there is ``-i`` here).

    Parameters
    ----------
    ins, outs : int
        Inputs and outputs of each switch.
    states : array_like of int
        One state per switch, any leading batch shape.

    Returns
    -------
    numpy.ndarray
        Route entries of shape ``states.shape + (ins,)``
        (:data:`~topocast.topology.stages.ROUTE_DTYPE`).

    >>> shift_route(2, 2, [0, 1]).tolist()
    [[0, 1], [1, 0]]
    """
    states = np.asarray(states, dtype=np.int64)
    u = np.arange(ins, dtype=np.int64)
    return ((u + states[..., None]) % outs).astype(ROUTE_DTYPE)


def xor_route(ins: int, outs: int, states) -> np.ndarray:
    """XOR states: input ``u`` -> output ``u XOR state`` (``-1`` if that is not a port).

    Parameters
    ----------
    ins, outs : int
        Inputs and outputs of each switch.
    states : array_like of int
        One state per switch, any leading batch shape.

    Returns
    -------
    numpy.ndarray
        Route entries of shape ``states.shape + (ins,)``.

    >>> xor_route(2, 2, [1]).tolist()
    [[1, 0]]
    """
    states = np.asarray(states, dtype=np.int64)
    u = np.arange(ins, dtype=np.int64)
    out = u ^ states[..., None]
    return np.where(out < outs, out, -1).astype(ROUTE_DTYPE)


def window_route(ins: int, outs: int, offsets) -> np.ndarray:
    """Window states of a concentrating switch: inputs ``offset .. offset+outs-1`` -> outputs ``0..outs-1``.

    The other inputs are not connected (``-1``).  Offset 0 is "straight".

    Parameters
    ----------
    ins, outs : int
        Inputs and outputs of each switch (``outs <= ins``).
    offsets : array_like of int
        One offset per switch, any leading batch shape.

    Returns
    -------
    numpy.ndarray
        Route entries of shape ``offsets.shape + (ins,)``.

    >>> window_route(4, 2, [1]).tolist()
    [[-1, 0, 1, -1]]
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    u = np.arange(ins, dtype=np.int64)
    out = u - offsets[..., None]
    return np.where((out >= 0) & (out < outs), out, -1).astype(ROUTE_DTYPE)


def table_route(tables) -> np.ndarray:
    """Explicit tables as a route block.

    Parameters
    ----------
    tables : array_like of int
        Output ports, any shape ending in the switches' input count.

    Returns
    -------
    numpy.ndarray
        The same entries as :data:`~topocast.topology.stages.ROUTE_DTYPE`.
    """
    return np.asarray(tables, dtype=ROUTE_DTYPE)
