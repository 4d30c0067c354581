"""Run paper reproductions (``topocast reproduce``): one after another, or side by side when quick.

A full-size reproduction spreads its own independent points over the
cores (:mod:`topocast.sweep_points`) and the largest needs most of the
memory budget, so full-size reproductions run one after another in this
process.  Quick ones are small and mostly start-up and first-use
compilation, which one process does on one core: with several of them and
more than one core they run side by side on the sweep executor's local
worker processes (one per core, or ``reproduce --workers``), costliest
first.  Either way each reproduction writes its own files and the reports
come back in the order asked for.
"""

from __future__ import annotations

import os
from pathlib import Path


def reproduce_one(args: tuple[str, bool, str]):
    """Run the reproduction ``name`` (``quick``), write its tables and JSON into ``out``; its Report."""
    from . import registry
    from .progress import Progress

    name, quick, out = args
    report = registry.experiment(name).run(quick=quick, out=Path(out), progress=Progress(enabled=False))
    report.attach_coverage()
    report.write(Path(out))
    return report


def side_by_side(count: int, quick: bool) -> int:
    """How many worker processes run ``count`` reproductions (1: here, one after another)."""
    from .sweep import DEFAULTS

    if not quick or count < 2 or DEFAULTS["scheduler"] is not None:
        return 1
    return max(1, min(count, DEFAULTS["workers"] or os.cpu_count() or 1))


def reproduce(names: list[str], quick: bool, out: Path, progress, done=None) -> list:
    """The Reports of the reproductions ``names``, in that order; ``done(report)`` is called on each as
    soon as it and every reproduction before it are finished (when they run side by side, after all)."""
    from . import registry

    workers = side_by_side(len(names), quick)
    if workers == 1:
        reports = []
        for name in names:
            report = registry.experiment(name).run(quick=quick, out=out, progress=progress).attach_coverage()
            report.write(out)
            reports.append(report)
            if done is not None:
                done(report)
        return reports
    from .sweep_points import map_ordered

    weights = [registry.experiment(name).weight for name in names]
    first = sorted(range(len(names)), key=lambda i: -weights[i])
    reports = map_ordered(reproduce_one, [(name, quick, str(out)) for name in names], workers, progress,
                          "reproductions", first=first)
    for report in reports:
        if done is not None:
            done(report)
    return reports
