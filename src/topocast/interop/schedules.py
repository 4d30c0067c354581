"""Export a schedule topocast makes (a registered algorithm's plan, or a ``synthesize`` file) in another
tool's format: ``msccl-xml`` (:mod:`topocast.interop.msccl_write`), ``mscclpp-json``
(:mod:`topocast.interop.mscclpp_write`), ``chakra-et`` (:mod:`topocast.interop.chakra`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import TopocastError
from ..plans.schedule import Schedule

FORMATS = ("msccl-xml", "chakra-et", "mscclpp-json")


def schedule_for(spec, algorithm: str | None = None, schedule_file: str | Path | None = None,
                 params: dict[str, Any] | None = None, params_from_text: bool = False,
                 max_memory: float | None = None) -> tuple[Any, Schedule, str]:
    """``(topology, schedule, name)``: ``algorithm``'s plan on ``spec`` with ``params``, or the schedule of a
    ``topocast synthesize`` file."""
    from .. import api
    from ..infra.memory import resolve_limit

    if (algorithm is None) == (schedule_file is None):
        raise TopocastError("algorithm: give an algorithm name or --schedule FILE, not both and not neither")
    max_memory = resolve_limit(max_memory)
    if schedule_file is not None:
        if params:
            raise TopocastError("--set: a schedule file carries its own model; --set does not apply to --schedule")
        from ..spec import build
        from ..synthesis.fileformat import read

        topology = spec if not isinstance(spec, str) else build(spec, max_memory=max_memory)
        header, schedule = read(schedule_file, topology, max_memory)
        return topology, schedule, f"synthesized_{header['method']}"
    if algorithm is None:  # never: checked above
        raise TopocastError("algorithm: give an algorithm name or --schedule FILE")
    checked = api.prepare(spec, algorithm, None, 0, max_memory, params_from_text, **(params or {}))
    if checked.engine not in ("step", "event"):
        raise TopocastError(f"algorithm {algorithm}: runs on {checked.engine}, not on step/event schedules; "
                            "only schedules can be exported")
    plan = api.plan(checked.topology, checked.algorithm, checked.params, checked.engine, checked.seed,
                    checked.max_memory)
    if not isinstance(plan, Schedule):
        raise TopocastError(f"algorithm {algorithm}: made a {type(plan).__name__}, not a schedule; only schedules "
                            "can be exported")
    return checked.topology, plan, algorithm


def export_schedule(spec, out: str | Path, format: str, algorithm: str | None = None,
                    schedule_file: str | Path | None = None, form: str = "p2p",
                    params: dict[str, Any] | None = None, params_from_text: bool = False,
                    max_memory: float | None = None) -> list[Path]:
    """Write the schedule of ``algorithm`` on ``spec`` (or of ``schedule_file``) to ``out`` in ``format``.

    Parameters
    ----------
    spec : str or Topology
        The network.
    out : str or Path
        The file (``chakra-et``: ``OUT.R.et`` per rank ``R``, the suffix ``.et`` of ``out`` dropped).
    format : {"msccl-xml", "chakra-et", "mscclpp-json"}
        The format.
    algorithm, schedule_file
        One of them: a registered algorithm, or a schedule file from ``topocast synthesize``.
    form : {"p2p", "collective"}
        Chakra only: send/receive nodes, or one collective node per rank.
    params : dict, optional
        The algorithm's parameters.

    Returns
    -------
    list of Path
        The files written.
    """
    from ..infra.fileio import check_output_file

    if format not in FORMATS:
        raise TopocastError(f"format: must be one of {', '.join(FORMATS)}, got '{format}'")
    if format != "chakra-et" and form != "p2p":
        raise TopocastError("--form: chooses the Chakra trace form; it applies to chakra-et only")
    check_output_file(out, "--out")
    topology, schedule, name = schedule_for(spec, algorithm, schedule_file, params, params_from_text, max_memory)
    if schedule.part is not None:
        # every rank of these formats contributes its buffer: a switch's would be added to the sum
        left_out = int((schedule.part < 0).sum())
        raise TopocastError(f"format: {format} makes every rank a contributor; this {schedule.collective} sums over "
                            f"some nodes only ({left_out} take no part, e.g. a fat tree's switches) and cannot be "
                            f"written in it")
    if format == "msccl-xml":
        from .msccl_write import write

        return [write(schedule, out, name=name)]
    if format == "mscclpp-json":
        from .mscclpp_write import write as write_mscclpp

        return [write_mscclpp(schedule, out, name=name)]
    from .chakra import write as write_chakra

    return write_chakra(schedule, out, form)
