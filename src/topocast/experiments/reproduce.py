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
    a thread here.  An error in one ends the other processes at once and is raised here; a worker that dies
    (killed, or ended by a library without an error) breaks the pool, and the reproductions not finished run
    here, one after another, instead of being waited for."""
    import multiprocessing
    import threading
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    global _STATUS
    context = multiprocessing.get_context("fork")
    try:
        status = _STATUS = context.SimpleQueue()
        pool = ProcessPoolExecutor(workers, mp_context=context)
        # forking starts at the first submission, before the status reader's thread exists
        futures = {pool.submit(reproduce_one, (i, names[i], quick, str(out))): i for i in first}
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
    results: dict[int, tuple] = {}
    broken = False
    try:
        pending = set(futures)
        while pending and not broken:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    index, report, seconds = future.result()
                except BrokenProcessPool:
                    broken = True
                    continue
                board.finish(index, f"done in {seconds:.0f} s")
                results[index] = (report, seconds)
            for i in [i for i in first if i not in results][:workers]:
                if i not in started:
                    started.add(i)
                    board.start(i, "running")
    finally:
        _end(pool)
        _STATUS.put(None)
        reader.join(timeout=2)
        _STATUS = None
    if broken:                        # a worker died: the rest run here (the pool cannot be trusted again)
        from ..infra.progress import Progress, Stopwatch

        for i in [i for i in first if i not in results]:
            clock = Stopwatch()
            board.start(i, "running here (a worker process died)")
            results[i] = (_run(names[i], quick, out, Progress(enabled=False)), clock.elapsed)
            board.finish(i, f"done in {results[i][1]:.0f} s")
    return [results[i] for i in range(len(names))]


def _end(pool) -> None:
    """Shut ``pool`` down without waiting for what it still runs: its processes are killed."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(timeout=5)
