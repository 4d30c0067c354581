"""Run paper reproductions (``topocast reproduce``): one after another, or side by side when quick.

A full-size reproduction spreads its own independent points over the
cores (:mod:`topocast.sweep_points`) and the largest needs most of the
memory budget, so full-size reproductions run one after another in this
process.  Quick ones are small and mostly start-up and first-use
compilation, which one process does on one core: with several of them and
more than one core they run side by side in processes forked from this one
(one per core, or ``reproduce --workers``), heaviest first.  Forked, not
the sweep executor's Dask workers: a forked process starts with every
module this one imported, where a Dask worker imports them again (about
half the CPU time of the quick job on 2 cores, measured).  Each
reproduction writes its own files; the reports come back in the order
asked for.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _run(name: str, quick: bool, out: Path, progress):
    """Run the reproduction ``name``, write its tables and JSON into ``out``; its Report."""
    from . import registry

    report = registry.experiment(name).run(quick=quick, out=out, progress=progress).attach_coverage()
    report.write(out)
    return report


def reproduce_one(args: tuple[int, str, bool, str]):
    """``(index, report)`` of :func:`_run` of ``(index, name, quick, out)`` in a worker process (no progress
    bar of its own)."""
    from .progress import Progress

    index, name, quick, out = args
    return index, _run(name, quick, Path(out), Progress(enabled=False))


def side_by_side(count: int, quick: bool) -> int:
    """How many worker processes run ``count`` reproductions (1: here, one after another)."""
    import multiprocessing

    from .sweep import DEFAULTS

    if not quick or count < 2 or DEFAULTS["scheduler"] is not None:
        return 1
    if not sys.platform.startswith("linux") or "fork" not in multiprocessing.get_all_start_methods():
        return 1                      # (macOS: forking after numpy's Accelerate or matplotlib is unsafe)
    return max(1, min(count, DEFAULTS["workers"] or os.cpu_count() or 1))


def reproduce(names: list[str], quick: bool, out: Path, progress, done=None, workers: int | None = None) -> list:
    """The Reports of the reproductions ``names``, in that order; ``done(report)`` is called on each as
    soon as it and every reproduction before it are finished (when they run side by side, after all).
    ``workers``: the processes to use (default :func:`side_by_side`).  ``out`` is created if missing (files are
    written only into existing directories)."""
    from . import registry

    Path(out).mkdir(parents=True, exist_ok=True)
    workers = side_by_side(len(names), quick) if workers is None else workers
    if workers == 1:
        reports = []
        for name in names:
            reports.append(_run(name, quick, out, progress))
            if done is not None:
                done(reports[-1])
        return reports
    weights = [registry.experiment(name).weight for name in names]
    reports = _forked(names, quick, out, workers, sorted(range(len(names)), key=lambda i: -weights[i]), progress)
    if reports is None:               # no worker processes here (no /dev/shm, a process limit): one by one
        return reproduce(names, quick, out, progress, done, workers=1)
    for report in reports:
        if done is not None:
            done(report)
    return reports


def _forked(names: list[str], quick: bool, out: Path, workers: int, first: list[int], progress) -> list:
    """The Reports of ``names`` run on ``workers`` forked processes, submitted in the order ``first`` (None
    when the processes cannot be started).  Leaving early (an error in one, an interrupt) ends the other
    processes at once."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    try:
        pool = context.Pool(workers)
    except OSError:
        return None
    with pool:
        # one at a time, in the order ``first``; each result (or error) as soon as it is done
        finished = pool.imap_unordered(reproduce_one, [(i, names[i], quick, str(out)) for i in first])
        if progress is not None:
            finished = progress.track(finished, "reproductions", total=len(names))
        reports = dict(finished)
    return [reports[i] for i in range(len(names))]
