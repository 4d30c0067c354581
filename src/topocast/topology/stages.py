"""Multistage networks as switch stages and wires (thesis 1.1.6, 2.1): the data every circuit view shares.

A :class:`MultistageNetwork` is a sequence of switch stages.  Stage ``s`` has
``switches[s]`` switches with ``ins[s]`` inputs and ``outs[s]`` outputs each;
a port is named by its *flat* index ``switch * ins + port`` (or ``* outs``)
inside its stage, and by its *global* index (flat index plus the stage's
offset) inside the whole network.  ``next_in[g]`` takes the global output
``g`` of a stage to the global input of the next stage it is wired to (``-1``
where the wire leads nowhere; entries of the last stage are unused): the
outputs of the last stage lead to the network's outputs through ``net_out``;
network input ``i`` enters at global input ``net_in[i]``.

A *configuration* (a "route") is one int array over all global inputs: the
output port (``0 .. outs-1``) each switch input is connected to, or ``-1``
(not connected); :data:`ROUTE_DTYPE` is its element type.  The circuit
engine (:mod:`topocast.sim.circuit`) traces configurations through a network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..infra.validate import Normalised

ROUTE_DTYPE = np.int16


def _frozen_ints(value: Any, name: str) -> np.ndarray:
    """``value`` as a read-only contiguous int64 array."""
    arr = np.ascontiguousarray(value, dtype=np.int64)
    arr.setflags(write=False)
    return arr


def _offsets(sizes: np.ndarray) -> np.ndarray:
    out = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=out[1:])
    return out


@dataclass(frozen=True, eq=False)
class MultistageNetwork:
    """Switch stages and the wires between them (see the module docstring)."""

    name: str
    switches: Normalised[np.ndarray] = Normalised(_frozen_ints)
    ins: Normalised[np.ndarray] = Normalised(_frozen_ints)
    outs: Normalised[np.ndarray] = Normalised(_frozen_ints)
    next_in: Normalised[np.ndarray] = Normalised(_frozen_ints)
    net_in: Normalised[np.ndarray] = Normalised(_frozen_ints)
    net_out: Normalised[np.ndarray] = Normalised(_frozen_ints)
    stage_names: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Check that the arrays agree in length."""
        if len(self.next_in) != self.out_off[-1]:
            raise ValueError("next_in must have one entry per switch output")

    @cached_property
    def in_off(self) -> np.ndarray:
        """Per stage the global index of its first input (and the total at the end)."""
        return _offsets(self.switches * self.ins)

    @cached_property
    def out_off(self) -> np.ndarray:
        """Per stage the global index of its first output (and the total at the end)."""
        return _offsets(self.switches * self.outs)

    @property
    def num_stages(self) -> int:
        """Switch stages."""
        return len(self.switches)

    @property
    def num_inputs(self) -> int:
        """Network inputs."""
        return len(self.net_in)

    @property
    def num_outputs(self) -> int:
        """Network outputs."""
        return int(self.net_out.max()) + 1 if len(self.net_out) else 0

    @property
    def route_size(self) -> int:
        """Entries of a configuration: one per switch input over all stages."""
        return int(self.in_off[-1])

    def empty_route(self) -> np.ndarray:
        """Make a configuration with nothing connected.

        Returns
        -------
        numpy.ndarray
            One output port per switch input, all -1.
        """
        return np.full(self.route_size, -1, dtype=ROUTE_DTYPE)

    def stage_slice(self, stage: int) -> slice:
        """Give the part of a configuration that belongs to one stage.

        Parameters
        ----------
        stage : int
            The stage.

        Returns
        -------
        slice
            Its switch inputs in a configuration.
        """
        return slice(int(self.in_off[stage]), int(self.in_off[stage + 1]))

    def set_stage(self, route: np.ndarray, stage: int, table: np.ndarray) -> None:
        """Write a ``(switches, ins)`` table of output ports into a configuration.

        Parameters
        ----------
        route : numpy.ndarray
            The configuration, changed in place.
        stage : int
            The stage.
        table : numpy.ndarray
            Output port of every input of every switch of the stage (-1: not connected).

        Raises
        ------
        ValueError
            If the table's shape is not ``(switches, ins)`` of the stage.
        """
        table = np.asarray(table)
        shape = (int(self.switches[stage]), int(self.ins[stage]))
        if table.shape != shape:
            raise ValueError(f"stage {stage}: table of shape {table.shape}, expected {shape}")
        route[..., self.stage_slice(stage)] = table.reshape(-1)

    def describe_link(self, global_out: int) -> str:
        """Name a switch output in words, for messages.

        Parameters
        ----------
        global_out : int
            The output, numbered over all stages.

        Returns
        -------
        str
            ``"<stage> switch <s> output <p>"``.
        """
        stage = int(np.searchsorted(self.out_off, global_out, side="right") - 1)
        flat = global_out - int(self.out_off[stage])
        sw, port = divmod(flat, int(self.outs[stage]))
        name = self.stage_names[stage] if self.stage_names else f"stage {stage}"
        return f"{name} switch {sw} output {port}"


def stage_wiring(out_switches: int, outs: int, ins_next: int, target_switch: np.ndarray,
                 target_port: np.ndarray) -> np.ndarray:
    """Make the flat ``next_in`` block of one stage from the target switch and port of each output.

    Parameters
    ----------
    out_switches : int
        Switches of the stage.
    outs : int
        Outputs per switch.
    ins_next : int
        Inputs per switch of the next stage.
    target_switch, target_port : numpy.ndarray
        Switch and input port of the next stage each output is wired to.

    Returns
    -------
    numpy.ndarray
        Input of the next stage (switch times ``ins_next`` plus port) for every output.
    """
    target_switch = np.asarray(target_switch, dtype=np.int64).reshape(out_switches * outs)
    target_port = np.asarray(target_port, dtype=np.int64).reshape(out_switches * outs)
    return target_switch * ins_next + target_port


def path_counts(net: MultistageNetwork) -> np.ndarray:
    """Count the input-to-output paths through a multistage network.

    ``paths[i, j]``: input-to-output paths through the layered switch graph, whatever the switch
    settings (a banyan network has exactly one between every pair).

    Parameters
    ----------
    net : MultistageNetwork
        The network.

    Returns
    -------
    numpy.ndarray
        ``paths[i, j]`` for input ``i`` and output ``j``.

    Raises
    ------
    ValueError
        A network without stages (cannot happen: the constructor refuses it).
    """
    n = net.num_inputs
    counts = np.zeros((n, int(net.in_off[1])), dtype=np.int64)
    counts[np.arange(n), net.net_in] = 1
    for s in range(net.num_stages):
        ins, outs = int(net.ins[s]), int(net.outs[s])
        per_switch = counts.reshape(n, -1, ins).sum(axis=2)
        out_counts = np.repeat(per_switch, outs, axis=1)
        if s == net.num_stages - 1:
            result = np.zeros((n, net.num_outputs), dtype=np.int64)
            result[:, net.net_out] = out_counts
            return result
        nxt = np.zeros((n, int(net.in_off[s + 2] - net.in_off[s + 1])), dtype=np.int64)
        targets = net.next_in[net.out_off[s]:net.out_off[s + 1]] - net.in_off[s + 1]
        nxt[:, targets] = out_counts
        counts = nxt
    raise ValueError("a multistage network has at least one stage")  # unreachable: in_off[1] exists
