"""Run paper reproductions (``topocast reproduce``): one after another, or side by side when quick.

A full-size reproduction spreads its own independent points over the
cores (:mod:`topocast.sweep.points`) and the largest needs most of the
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

#: where a forked worker process says what it does: ``(index, words)``, set up before the fork
_STATUS = None


def _run(name: str, quick: bool, out: Path, progress):
    """Run the reproduction ``name``, write its tables and JSON into ``out``; its Report."""
    from .. import registry

    report = registry.experiment(name).run(quick=quick, out=out, progress=progress).attach_coverage()
    report.write(out)
    return report


def reproduce_one(args: tuple[int, str, bool, str]):
    """``(index, report, seconds)`` of :func:`_run` of ``(index, name, quick, out)`` in a worker process (no
    progress bar of its own; it says what it does, compiling included, through the status queue)."""
    from ..infra.progress import Progress, Stopwatch, watch_compiles

    index, name, quick, out = args
    clock = Stopwatch()
    say = _STATUS.put if _STATUS is not None else (lambda item: None)
    say((index, "running"))
    with watch_compiles(lambda kernel, starting: say(
            (index, f"compiling {kernel} (first run only)" if starting else "running"))):
        report = _run(name, quick, Path(out), Progress(enabled=False))
    return index, report, clock.elapsed


def side_by_side(count: int, quick: bool) -> int:
    """How many worker processes run ``count`` reproductions (1: here, one after another)."""
    import multiprocessing

    from ..sweep.grid import DEFAULTS

    if not quick or count < 2 or DEFAULTS["scheduler"] is not None:
        return 1
    if not sys.platform.startswith("linux") or "fork" not in multiprocessing.get_all_start_methods():
        return 1                      # (macOS: forking after numpy's Accelerate or matplotlib is unsafe)
    return max(1, min(count, DEFAULTS["workers"] or os.cpu_count() or 1))


def reproduce(names: list[str], quick: bool, out: Path, progress, done=None, workers: int | None = None,
              board=None) -> list:
    """The Reports of the reproductions ``names``, in that order.

    ``done(report, seconds)`` is called on each as soon as it and every reproduction before it are finished
    (when they run side by side, after all); ``board`` (a :class:`topocast.infra.progress.Board` with a row per
    name) shows each one's state from its first second, its kernels' first compilation included.
    ``progress`` is used when there is no board.  ``workers``: the processes to use (default
    :func:`side_by_side`).  ``out`` is created if missing (files are written only into existing directories).
    """
    from .. import registry
    from ..infra.progress import Board

    Path(out).mkdir(parents=True, exist_ok=True)
    board = board if board is not None else Board(names, enabled=False)
    workers = side_by_side(len(names), quick) if workers is None else workers
    if workers == 1:
        return _one_by_one(names, quick, out, progress, done, board)
    weights = [registry.experiment(name).weight for name in names]
    reports = _forked(names, quick, out, workers, sorted(range(len(names)), key=lambda i: -weights[i]), board)
    if reports is None:               # no worker processes here (no /dev/shm, a process limit): one by one
        return _one_by_one(names, quick, out, progress, done, board)
    for report, seconds in reports:
        if done is not None:
            done(report, seconds)
    return [report for report, _ in reports]


def _one_by_one(names: list[str], quick: bool, out: Path, progress, done, board) -> list:
    from ..infra.progress import Stopwatch

    reports = []
    for i, name in enumerate(names):
        clock = Stopwatch()
        board.start(i)
        job = board.job(i) if board.enabled else progress
        with board.doing(i, "running"):
            reports.append(_run(name, quick, out, job))
        board.finish(i, f"done in {clock.elapsed:.0f} s")
        if done is not None:
            done(reports[-1], clock.elapsed)
    return reports


def _forked(names: list[str], quick: bool, out: Path, workers: int, first: list[int], board) -> list | None:
    """``(Report, seconds)`` of ``names`` run on ``workers`` forked processes, submitted in the order ``first``
    (None when the processes cannot be started).  The workers' states reach ``board`` through a queue read by
    a thread here.  Leaving early (an error in one, an interrupt) ends the other processes at once."""
    import multiprocessing
    import threading

    global _STATUS
    context = multiprocessing.get_context("fork")
    status = _STATUS = context.SimpleQueue()
    try:
        pool = context.Pool(workers)
    except OSError:
        _STATUS = None
        return None
    started = set(first[:workers])
    for i in started:
        board.start(i, "starting")

    def relay() -> None:
        while True:
            item = status.get()
            if item is None:
                return
            board.state(*item)

    reader = threading.Thread(target=relay, daemon=True)
    reader.start()
    results = {}
    try:
        with pool:
            for index, report, seconds in pool.imap_unordered(reproduce_one,
                                                              [(i, names[i], quick, str(out)) for i in first]):
                board.finish(index, f"done in {seconds:.0f} s")
                results[index] = (report, seconds)
                for i in [i for i in first if i not in results][:workers]:
                    if i not in started:
                        started.add(i)
                        board.start(i, "running")
    finally:
        _STATUS.put(None)
        reader.join(timeout=2)
        _STATUS = None
    return [results[i] for i in range(len(names))]
