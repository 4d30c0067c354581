"""All-to-all personalized exchange on the Butterfly-Butterfly by the right Latin square (thesis 3.2.4.2).

Izzi and Massini (2020), as the thesis summarises them: route the identity and
its ``N - 1`` rotations (the *right Latin square*, RLS) on the
Butterfly-Butterfly (:mod:`topocast.topology.butterfly_butterfly`), one circuit
configuration per rotation, ``2 x 2`` switches.

* **The involution pi** (``pi(pi(x)) = x``): even inputs of the first half keep
  their place; even inputs of the second half go to the odd outputs of the
  first half in reverse order (``N - 2 - 2j -> 1 + 2j``); odd inputs of the first
  half go to the even outputs of the second half in reverse order
  (``N/2 - 1 - 2j -> N/2 + 2j``); odd inputs of the second half keep their
  place.  It sends every even input to the first half and every odd one to
  the second, so a butterfly realises it with its first stage straight.
* **Identity**: the first butterfly (stages ``0 .. n-1``) realises ``pi``; the
  second (stages ``n .. 2n-2``, the shared middle stage counting as straight
  for it) realises ``pi`` again on the positions the first one left.
* **Rotation k**: the second butterfly keeps the identity's settings when
  ``k`` is even and complements every switch of stage ``n`` (``log2 N``, the
  one after the middle) when ``k`` is odd; the first butterfly realises the
  *intermediate permutation* that the fixed second half turns into the
  rotation.  For ``k = 1`` the thesis gives it as ``pi(N/2 - i)``; traced, the
  complemented second half undoes it into ``i -> i - 1``.  In general
  (derived from the two fixed second halves, both checked by the engine)::

      even k:  F_k(i) = pi((i - k) mod N)
      odd k:   F_k(i) = pi((N/2 - 1 + k - i) mod N)

  and the first butterfly is set by destination tags (stage ``t`` sends each
  circuit out on bit ``n - 1 - t`` of ``F_k(i)``).  Its first stage is straight
  for every ``k``, as the thesis says of the first rotation.

Direction.  The thesis's formula for the first rotation gives the map
``i -> i - 1`` (listing the images of ``0 .. N-1`` gives ``N-1, 0, 1, ..``: the
row rotated *right*, hence the name).  So configuration ``k`` here realises
``i -> (i - k) mod N``; the fat-tree LLS's rotation ``k`` (``i -> i + k``) is our
configuration ``N - k``.  Both sets are the same ``N`` permutations.

Everything is checked by the circuit engine, never assumed: every row traced,
compared with the rotation, links counted, the rows tested for a Latin square.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..infra.parallel import twin
from ..plans.circuit import CircuitPlan
from ..topology.butterfly_butterfly import FAMILY, butterfly_butterfly_network
from ..topology.core import Topology
from ..topology.stages import ROUTE_DTYPE, MultistageNetwork
from .base import register
from .fattree_alltoall import CIRCUIT_PARAMS

NAME = "all-to-all-personalized-rls"


def check_lines(n_lines: int, owner: str = f"algorithm {NAME}") -> int:
    """Check the number of lines of the RLS: ``N = 2^n`` with ``N >= 4`` (pi splits the lines into four quarters).

    Parameters
    ----------
    n_lines : int
        The number of lines.
    owner : str, optional
        Name for the message.

    Returns
    -------
    int
        ``n_lines``.

    Raises
    ------
    TopocastError
        Unless ``N`` is a power of two >= 4.
    """
    n_lines = int(n_lines)
    if n_lines < 4 or n_lines & (n_lines - 1):
        raise TopocastError(f"{owner}: the number of lines N must be a power of two >= 4 "
                            f"(parameter 'n' >= 2 with d = 2), got N={n_lines}")
    return n_lines


def involution(n_lines: int) -> np.ndarray:
    """Give the thesis's involution ``pi`` on ``N`` lines: ``pi[x]`` is the output of input ``x``.

    ``pi[pi]`` is the identity.

    Parameters
    ----------
    n_lines : int
        The number of lines, a power of two >= 4.

    Returns
    -------
    numpy.ndarray
        The permutation.

    Raises
    ------
    TopocastError
        As :func:`check_lines`.

    Examples
    --------
    >>> involution(8).tolist()
    [0, 6, 2, 4, 3, 5, 1, 7]
    """
    n = check_lines(n_lines, "involution")
    half, j = n // 2, np.arange(n // 4, dtype=np.int64)
    pi = np.empty(n, dtype=np.int64)
    pi[2 * j] = 2 * j                          # even, first half: in place
    pi[n - 2 - 2 * j] = 1 + 2 * j              # even, second half -> odd, first half, reversed
    pi[half - 1 - 2 * j] = half + 2 * j        # odd, first half -> even, second half, reversed
    pi[half + 1 + 2 * j] = half + 1 + 2 * j    # odd, second half: in place
    return pi


def rotation(n_lines: int, ks) -> np.ndarray:
    """Give the rotations ``i -> (i - k) mod N`` (the RLS, thesis direction).

    Parameters
    ----------
    n_lines : int
        The number of lines.
    ks : array_like of int
        Rotations.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(ks), N)``.
    """
    i = np.arange(n_lines, dtype=np.int64)
    return (i[None, :] - np.asarray(ks, dtype=np.int64)[:, None]) % n_lines


def intermediate(n_lines: int, ks) -> np.ndarray:
    """Give what the first butterfly realises for rotation ``k``: ``F_k`` (see the module docstring).

    Parameters
    ----------
    n_lines : int
        The number of lines.
    ks : array_like of int
        Rotations.

    Returns
    -------
    numpy.ndarray
        One permutation per rotation.

    Raises
    ------
    TopocastError
        As :func:`check_lines`.
    """
    n = check_lines(n_lines)
    pi = involution(n)
    ks = np.asarray(ks, dtype=np.int64)[:, None]
    i = np.arange(n, dtype=np.int64)[None, :]
    arg = np.where(ks % 2 == 0, i - ks, n // 2 - 1 + ks - i) % n
    return pi[arg]


@nb.njit(cache=True)
def _destination_tags(next_in, in_off, out_off, first, count, starts, targets, states):
    k, lines = starts.shape
    reached = np.empty_like(starts)
    for c in nb.prange(k):
        for i in range(lines):
            pos = starts[c, i]
            for t in range(count):
                stage = first + t
                bit = (targets[c, i] >> (count - 1 - t)) & 1
                switch = pos >> 1
                states[c, t, switch] = (pos & 1) ^ bit
                out = switch * 2 + bit
                pos = next_in[out_off[stage] + out] - in_off[stage + 1] if t < count - 1 else out
            reached[c, i] = pos
    return reached


#: circuits x stages from which the parallel build runs (:mod:`topocast.infra.parallel`)
PARALLEL_WORK = 1 << 20
_destination_tags_parallel = twin(_destination_tags, "_destination_tags_parallel")


def destination_tag_states(net: MultistageNetwork, first: int, count: int, start: np.ndarray,
                           targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Set consecutive butterfly stages by destination tags.

    Set ``count`` consecutive butterfly stages from ``first`` by destination tags.

    ``start[c, i]`` is the position at which circuit ``i`` of configuration ``c``
    enters stage ``first``; it should leave the run at position ``targets[c, i]``.
    Stage ``first + t`` sends each circuit out on bit ``count - 1 - t`` of its
    target.  Returns the XOR states ``(K, count, N/2)`` (int8) and the positions
    reached.  Where two circuits of a switch want different states the later
    one wins: the permutation is then not routable, and tracing shows it.

    Parameters
    ----------
    net : MultistageNetwork
        The network.
    first : int
        The first stage set.
    count : int
        Stages set.
    start : numpy.ndarray
        ``(K, N)`` entry positions.
    targets : numpy.ndarray
        ``(K, N)`` exit positions.

    Returns
    -------
    states, reached : numpy.ndarray
        XOR states ``(K, count, N/2)`` (int8) and the positions reached.
    """
    starts = np.ascontiguousarray(start, dtype=np.int64)
    targets = np.ascontiguousarray(np.broadcast_to(targets, starts.shape), dtype=np.int64)
    states = np.zeros((starts.shape[0], count, starts.shape[1] // 2), dtype=np.int8)
    kernel = _destination_tags_parallel if starts.size * count >= PARALLEL_WORK else _destination_tags
    reached = kernel(net.next_in, net.in_off, net.out_off, first, count, starts, targets, states)
    return states, reached


@dataclass(frozen=True)
class RLSPlan:
    """The fixed second halves and the network: everything rotation-independent."""

    n: int
    network: MultistageNetwork
    pi: np.ndarray
    second_even: np.ndarray      # (n - 1, N/2) int8 XOR states of stages n .. 2n-2 (the identity's)
    second_odd: np.ndarray       # the same with stage n complemented

    @property
    def lines(self) -> int:
        """Number of lines, ``2^n``."""
        return 2 ** self.n


def rls_plan(n: int) -> RLSPlan:
    """Set up the network and the second butterfly for the RLS on ``N = 2^n`` lines.

    Parameters
    ----------
    n : int
        ``log2`` of the lines, >= 2.

    Returns
    -------
    RLSPlan
        The rotation-independent part.

    Raises
    ------
    TopocastError
        As :func:`check_lines`.
    AssertionError
        If pi is not routable by the second butterfly (a construction error).
    """
    check_lines(2 ** int(n) if int(n) >= 1 else 0)
    net = butterfly_butterfly_network(n, 2)
    pi = involution(2 ** n)
    # the second butterfly routes pi from the middle stage's outputs; its first (shared) stage
    # must then be straight, which pi allows (even positions to the first half)
    states, reached = destination_tag_states(net, n - 1, n, np.arange(2 ** n)[None, :], pi[None, :])
    if states[0, 0].any() or not np.array_equal(reached[0], pi):
        raise AssertionError("pi is not routable by the second butterfly with a straight first stage")
    even = states[0, 1:]
    odd = even.copy()
    odd[0] ^= 1
    return RLSPlan(n, net, pi, even, odd)


def rls_states(plan: RLSPlan, ks) -> np.ndarray:
    """Give the XOR states of the configurations of rotations ``ks``, stage by stage.

    Parameters
    ----------
    plan : RLSPlan
        The network and second-butterfly settings.
    ks : array_like of int
        Rotations.

    Returns
    -------
    numpy.ndarray
        ``(K, 2n - 1, N/2)`` int8.
    """
    ks = np.asarray(ks, dtype=np.int64) % plan.lines
    n, lines = plan.n, plan.lines
    out = np.empty((len(ks), 2 * n - 1, lines // 2), dtype=np.int8)
    start = np.broadcast_to(np.arange(lines, dtype=np.int64), (len(ks), lines))
    out[:, :n], _ = destination_tag_states(plan.network, 0, n, start, intermediate(lines, ks))
    odd = ks % 2 == 1
    out[~odd, n:] = plan.second_even
    out[odd, n:] = plan.second_odd
    return out


def states_to_routes(states: np.ndarray) -> np.ndarray:
    """Turn XOR states of ``2 x 2`` switches into circuit configurations: input ``u`` -> output ``u XOR state``.

    Parameters
    ----------
    states : numpy.ndarray
        ``(K, stages, N/2)`` XOR states.

    Returns
    -------
    numpy.ndarray
        One configuration per row.
    """
    routes = np.empty(states.shape + (2,), dtype=ROUTE_DTYPE)
    routes[..., 0] = states
    routes[..., 1] = states ^ 1
    return routes.reshape(len(states), -1)


def rls_routes(plan: RLSPlan, ks) -> np.ndarray:
    """Give the circuit configurations (one row per rotation) for the circuit engine.

    Parameters
    ----------
    plan : RLSPlan
        The network and second-butterfly settings.
    ks : array_like of int
        Rotations.

    Returns
    -------
    numpy.ndarray
        Configurations.
    """
    return states_to_routes(rls_states(plan, ks))


def first_stage_straight(plan: RLSPlan, ks: np.ndarray, chunk: int = 256) -> bool:
    """Tell whether stage 0 is straight in the configurations of some rotations.

    Whether stage 0 is straight in the configurations of rotations ``ks``.

    Destination tags set switch ``i // 2`` of stage 0 to ``(i mod 2) XOR`` the
    top bit of ``F_k(i)``: straight when every circuit leaves on its own port.

    Parameters
    ----------
    plan : RLSPlan
        The network and second-butterfly settings.
    ks : numpy.ndarray
        Rotations.
    chunk : int, default 256
        Rotations checked at a time.

    Returns
    -------
    bool
        True when every switch of stage 0 is straight.
    """
    i = np.arange(plan.lines, dtype=np.int64)
    for lo in range(0, len(ks), chunk):
        top = intermediate(plan.lines, ks[lo:lo + chunk]) >> (plan.n - 1) & 1
        if np.any(top != (i & 1)[None, :]):
            return False
    return True


def rls_circuit_plan(plan: RLSPlan, ks=None, *, message_bytes: float = 1024.0, chunk: int = 256) -> CircuitPlan:
    """Make the circuit plan of rotations promising ``i -> (i - k) mod N`` (thesis 3.2.4.2).

    Parameters
    ----------
    plan : RLSPlan
        The network and second-butterfly settings.
    ks : array_like of int, optional
        Rotations (default all ``N``).
    message_bytes : float, default 1024.0
        Size of every message in bytes.
    chunk : int, default 256
        Configurations made at a time.

    Returns
    -------
    CircuitPlan
        The plan.
    """
    lines = plan.lines
    ks = np.arange(lines, dtype=np.int64) if ks is None else np.asarray(ks, dtype=np.int64)
    stages = plan.network.num_stages
    return CircuitPlan(plan.network, len(ks), 1, lambda idx, p: rls_routes(plan, ks[idx]), message_bytes,
                       "alltoall", lambda idx: rotation(lines, ks[idx]), owner=f"algorithm {NAME}",
                       info={"pipeline_stage_times": lines + stages - 1},
                       notes=("configuration k realises i -> (i - k) mod N (the thesis's direction)",), chunk=chunk)


def _plan(topology: Topology, *, message_bytes: float = 1024.0) -> CircuitPlan:
    """all-to-all-personalized-rls on ``butterfly-butterfly:n`` (``d = 2``, ``N = 2^n >= 4``)."""
    d, n = int(topology.params["d"]), int(topology.params["n"])
    if d != 2:
        raise TopocastError(f"algorithm {NAME}: parameter 'd' must be 2 (2 x 2 switches), got d={d}")
    check_lines(2 ** n)
    return rls_circuit_plan(rls_plan(n), message_bytes=message_bytes)


register(
    NAME, _plan, "alltoall",
    "total exchange on the Butterfly-Butterfly: the identity and its N - 1 rotations i -> i - k "
    "(right Latin square) via the involution pi, one circuit configuration each",
    families=(FAMILY,), aliases=("rls", "right-latin-square", "izzi-massini"), engines=("circuit",),
    paper="Izzi and Massini 2020; thesis 3.2.4.2", run_params=CIRCUIT_PARAMS)
