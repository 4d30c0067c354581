"""Circuit engine adapter: a :class:`CircuitPlan` traced row by row and pass by pass (:mod:`topocast.sim.circuit`).

The engine's public results, for questions no registered run asks (whole
Latin squares, every configuration of a small network; the reproductions'
:mod:`topocast.experiments.traces`): :func:`check_square` (a plan traced
and checked, memory guarded), :func:`trace` (one configuration) and
:func:`trace_many` (a batch of configurations).

Time (thesis 4.3, 5.3): a circuit-switched exchange sets the switches, then
sends one message through every circuit, once per configuration in sequence:
:meth:`~topocast.sim.models.CostModel.circuit_time` over ``(rows - 1) *
passes`` configurations for a total exchange (the identity row stays home)
and ``rows * passes`` for permutation routing.  Lower bound: every input
takes its messages in through its one link -- one start-up, then ``N - 1``
messages (total exchange) or ``rows`` messages (one per permutation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..execution.execute import Outcome
from ..infra.progress import Progress
from ..plans.circuit import CircuitPlan
from ..sim.circuit import CircuitTrace, trace, trace_many, trace_plan
from ..sim.models import CostModel, Model
from ..verify.delivery import SquareCheck

if TYPE_CHECKING:
    from ..topology.core import Topology

PLAN = CircuitPlan

UNITS = {"time": "s", "lower_bound": "s"}

#: bytes per (row, input) cell the check needs at its peak (merged rows, pass counts, Latin-square counts)
CHECK_BYTES_PER_CELL = 42


def measure(topology: Topology, plan: CircuitPlan, model: Model, max_bytes: float,
            links: bool = False) -> Outcome:
    """Trace and check every row of ``plan``; its time under ``model.cost`` and the exchange's lower bound."""
    check = check_square(plan, max_bytes=max_bytes)
    time = model.cost.circuit_time(plan.message_bytes, configurations(plan))
    bound = exchange_lower_bound(model.cost, plan.message_bytes, messages_per_input(plan))
    notes: list[str] = []
    if plan.passes > plan.pass_lower_bound:
        notes.append(f"{plan.passes} passes per permutation against a bound of {plan.pass_lower_bound:g}")
    return Outcome(check.verification, metrics(plan, check, time), dict(UNITS), time, bound, notes=notes,
                   trace=check)


def metrics(plan: CircuitPlan, check: SquareCheck, time: float) -> dict[str, Any]:
    """The circuit engine's metrics, each under one name."""
    out: dict[str, Any] = {"permutations": plan.rows, "passes": plan.passes, "pass_lower_bound": plan.pass_lower_bound,
           "conflicts": check.conflicts, "dropped_circuits": check.dropped}
    if plan.collective == "alltoall":
        out["latin_square"] = check.latin_square
    if plan.expected is not None:
        out["rows_match_plan"] = check.wrong_rows == 0
    out.update({"inputs": plan.inputs, "stages": plan.network.num_stages, "time": time})
    return out


def configurations(plan: CircuitPlan) -> int:
    """Configurations set one after the other: a total exchange skips the identity row."""
    rows = plan.rows - 1 if plan.collective == "alltoall" else plan.rows
    return rows * plan.passes


def messages_per_input(plan: CircuitPlan) -> int:
    """Messages each input sends: ``N - 1`` in a total exchange, one per row in permutation routing."""
    return plan.inputs - 1 if plan.collective == "alltoall" else plan.rows


def exchange_lower_bound(cost: CostModel, message_bytes: float, messages: int) -> float:
    """Every input takes its ``messages`` messages in through its one link: one start-up, then the bytes."""
    return cost.transfer_time(messages * message_bytes)


def check_square_memory(rows: int, inputs: int, max_bytes: float | None, owner: str) -> None:
    """Refuse a check whose ``rows x inputs`` matrices (merged rows, counts, Latin square) would not fit.

    Parameters
    ----------
    rows, inputs : int
        Rows of the plan and inputs of its network.
    max_bytes : float, optional
        The memory limit in bytes; None: half of the machine's RAM.
    owner : str
        Who asks, for the message.

    Raises
    ------
    TopocastError
        ``max-memory: OWNER on N inputs checks R x N permutations and needs about ...``.
    """
    from ..infra.memory import check_need

    check_need(f"{owner} on {inputs} inputs checks {rows} x {inputs} permutations and",
               rows * inputs * CHECK_BYTES_PER_CELL, max_bytes)


def check_square(plan: CircuitPlan, progress: Progress | None = None, max_bytes: float | None = None) -> SquareCheck:
    """Every row of ``plan`` traced in every pass and checked by the one circuit check.

    Parameters
    ----------
    plan : CircuitPlan
        The rows of configurations and what they promise.
    progress : Progress, optional
        Shows the chunks as they are traced.
    max_bytes : float, optional
        The memory limit of the check in bytes; None: half of the machine's RAM.

    Returns
    -------
    SquareCheck
        The merged rows (``perms``), conflicts, dropped circuits, Latin square and wrong rows.

    Raises
    ------
    TopocastError
        When the check's ``rows x inputs`` matrices would not fit.
    """
    check_square_memory(plan.rows, plan.inputs, max_bytes, plan.owner)
    return trace_plan(plan, progress)


__all__ = ["PLAN", "CircuitTrace", "check_square", "check_square_memory", "configurations", "exchange_lower_bound",
           "measure", "messages_per_input", "metrics", "trace", "trace_many"]
