"""Grids of runs on Dask: ``topocast sweep FILE.toml`` and :func:`sweep`.

A grid is a small TOML file; every list in it is a dimension and the runs are
their product (docs/sweep.md)::

    [sweep]
    specs = ["mesh:8x8"]
    algorithms = ["multicast-dp", "multicast-cp"]
    seeds = [1, 2, 3]
    engine = "wormhole"          # optional (a list sweeps engines)
    [params]
    load = [0.001, 0.003]
    destinations = [6]
    cycles = 3000                # a single value is a list of one

Each run is one task, :func:`run_task`, on Dask distributed: a ``LocalCluster``
of one single-threaded worker process per core (``workers``), or the cluster
whose scheduler is at ``scheduler`` (``tcp://HOST:PORT``, or the environment's
``DASK_SCHEDULER_ADDRESS``).  The task goes through the normal run path,
``topocast.api.run(...).to_json()``; a :class:`TopocastError` becomes a row with
``status: "failed"``.  Rows land in a :class:`topocast.store.Store` as they finish,
keyed by :func:`run_key`; a run whose key is stored is never executed again,
so an interrupted sweep resumes where it stopped.  Dask reschedules the task of
a worker that dies; only the client writes rows, once per key.

:func:`executor` and :func:`as_done` are the same machinery for other
independent runs (the multicast reproduction's load points,
:mod:`topocast.sweep_points`).  Dask is imported only here, inside functions.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import TopocastError

SWEEP_KEYS = {"specs": "spec", "algorithms": "algorithm", "seeds": "seed", "engines": "engine"}

#: executor settings for code that runs independent points without its own options (``reproduce``)
DEFAULTS: dict[str, Any] = {"scheduler": None, "workers": None}


def set_defaults(scheduler: str | None = None, workers: int | None = None) -> None:
    """The cluster that :mod:`topocast.sweep_points` uses (``reproduce --scheduler/--workers``)."""
    DEFAULTS["scheduler"] = scheduler
    DEFAULTS["workers"] = workers


def version() -> str:
    from . import __version__

    return __version__


# -- grid --------------------------------------------------------------------------------------
def load_grid(source: str | Path | dict) -> dict:
    """The grid of a TOML file (a path) or of a dict in the same shape, checked:
    ``{"specs": [...], "algorithms": [...], "engines": [...], "seeds": [...], "params": {name: [...]}}``."""
    if isinstance(source, dict):
        data = dict(source)
        where = "grid"
    else:
        import tomllib

        path = Path(source)
        where = str(path)
        try:
            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        except FileNotFoundError:
            raise TopocastError(f"sweep: grid file '{path}' does not exist") from None
        except IsADirectoryError:
            raise TopocastError(f"sweep: '{path}' is a directory; give a TOML file") from None
        except tomllib.TOMLDecodeError as exc:
            raise TopocastError(f"sweep: {path} is not valid TOML: {exc}") from None
    if "sweep" in data:  # the TOML shape: [sweep] and [params]
        extra = set(data) - {"sweep", "params"}
        if extra:
            raise TopocastError(f"sweep: {where}: unknown table(s) {', '.join(sorted(extra))}; "
                                "use [sweep] and [params]")
        body = data["sweep"]
        if not isinstance(body, dict):
            raise TopocastError(f"sweep: {where}: [sweep] must be a table")
        body = dict(body, params=data.get("params", {}))
    else:
        body = data
    grid: dict[str, Any] = {}
    for plural, single in SWEEP_KEYS.items():
        if plural in body and single in body:
            raise TopocastError(f"sweep: {where}: give '{plural}' or '{single}', not both")
        value = body.get(plural, body.get(single))
        grid[plural] = _values(value, plural, where)
    unknown = set(body) - set(SWEEP_KEYS) - set(SWEEP_KEYS.values()) - {"params"}
    if unknown:
        raise TopocastError(f"sweep: {where}: unknown key(s) {', '.join(sorted(unknown))} in [sweep] "
                            f"(known: {', '.join(SWEEP_KEYS)}; algorithm parameters go in [params])")
    for plural in ("specs", "algorithms"):
        if not grid[plural]:
            raise TopocastError(f"sweep: {where}: '{plural}' is required, e.g. {plural} = "
                                + ('["mesh:8x8"]' if plural == "specs" else '["multicast-dp"]'))
        for value in grid[plural]:
            if not isinstance(value, str) or not value.strip():
                raise TopocastError(f"sweep: {where}: every entry of '{plural}' must be a name, got {value!r}")
    grid["seeds"] = grid["seeds"] or [0]
    from .api import check_seed

    for seed in grid["seeds"]:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TopocastError(f"sweep: {where}: seeds must be integers, got {seed!r}")
        check_seed(seed)
    grid["engines"] = grid["engines"] or [None]
    for engine in grid["engines"]:
        if engine is not None and not isinstance(engine, str):
            raise TopocastError(f"sweep: {where}: engine must be a name, got {engine!r}")
    params = body.get("params") or {}
    if not isinstance(params, dict):
        raise TopocastError(f"sweep: {where}: [params] must be a table of name = value or [values]")
    grid["params"] = {str(k): _values(v, f"params.{k}", where) for k, v in params.items()}
    for name, values in grid["params"].items():
        if not values:
            raise TopocastError(f"sweep: {where}: parameter '{name}' has an empty list of values")
    return grid


def _values(value: Any, name: str, where: str) -> list:
    if value is None:
        return []
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    for v in values:
        if isinstance(v, (dict, list, tuple)):
            raise TopocastError(f"sweep: {where}: '{name}' must be a value or a list of values, got {v!r}")
    return values


def canonical_spec(spec: str) -> str:
    """``spec`` in one spelling per topology: family and every parameter (defaults filled), as text."""
    from .spec import parse_spec

    fam, kwargs = parse_spec(spec)
    merged = {p.name: p.default for p in fam.params if not p.required}
    merged.update(kwargs)
    return fam.name + ":" + json.dumps(merged, sort_keys=True, default=_plain)


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)


def run_key(spec: str, algorithm: str, engine: str | None, params: dict, seed: int,
            topocast_version: str | None = None) -> str:
    """The store key of one run: a hash of the canonical spec, the algorithm's own name, the engine
    (its default filled), the parameters (resolved: defaults filled, aliases converted), the seed and
    the topocast version.  Parameters the algorithm refuses enter as given (that run fails)."""
    from . import registry
    from .api import resolve_params

    alg = registry.algorithm(algorithm)
    try:
        resolved = resolve_params(alg, dict(params))
    except TopocastError:
        resolved = dict(params)
    payload = {"spec": canonical_spec(spec), "algorithm": alg.name, "engine": engine or alg.engines[0],
               "params": resolved, "seed": int(seed), "version": topocast_version or version()}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=_plain)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def expand(grid: dict) -> list[dict]:
    """Every run of ``grid`` (the product of its lists), each a task dict with its ``key``; runs
    with the same key (the same run spelled twice) appear once."""
    grid = load_grid(grid) if "params" not in grid or "specs" not in grid else grid
    ver = version()
    names = list(grid["params"])
    tasks: list[dict] = []
    seen: set[str] = set()
    for spec, algorithm, engine in itertools.product(grid["specs"], grid["algorithms"], grid["engines"]):
        for combo in itertools.product(*(grid["params"][n] for n in names)):
            params = dict(zip(names, combo, strict=True))
            for seed in grid["seeds"]:
                key = run_key(spec, algorithm, engine, params, seed, ver)
                if key in seen:
                    continue
                seen.add(key)
                tasks.append({"key": key, "spec": spec, "algorithm": algorithm, "engine": engine,
                              "seed": int(seed), "params": params, "version": ver})
    return tasks


# -- the task ----------------------------------------------------------------------------------
def run_task(task: dict) -> dict:
    """One run on a worker: the store row (``status`` ok or failed, ``result`` the run's ``to_json()``)."""
    import socket

    from .api import run
    from .errors import TopocastError as Refused

    if task["version"] != version():
        raise RuntimeError(f"worker runs topocast {version()}, the sweep {task['version']}: "
                           "install the same version on every worker")
    row = {k: task[k] for k in ("key", "spec", "algorithm", "engine", "seed", "params", "version")}
    start = time.perf_counter()
    try:
        result = run(task["spec"], task["algorithm"], engine=task["engine"], seed=task["seed"], **task["params"])
        row.update(status="ok", error=None, result=result.to_json())
    except Refused as exc:
        row.update(status="failed", error=str(exc), result=None)
    row["seconds"] = time.perf_counter() - start
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return row


# -- the executor ------------------------------------------------------------------------------
def check_workers(workers: Any, option: str = "--workers") -> int | None:
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise TopocastError(f"{option}: must be a whole number of worker processes >= 1, got {workers!r}")
    return workers


def _address(scheduler: str) -> str:
    text = scheduler.strip()
    if not text:
        raise TopocastError("--scheduler: give an address such as tcp://127.0.0.1:8786")
    if "://" not in text:
        text = "tcp://" + text
    if not text.startswith(("tcp://", "tls://", "inproc://", "ucx://", "ws://", "wss://")):
        raise TopocastError(f"--scheduler: expected tcp://HOST:PORT, got '{scheduler}'")
    return text


@contextmanager
def executor(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A Dask ``Client``: on the cluster at ``scheduler``; else, when ``workers`` is not given, on the
    cluster at ``$DASK_SCHEDULER_ADDRESS``; else on a ``LocalCluster`` of ``workers`` (default: one per
    core) single-threaded worker processes on 127.0.0.1, no dashboard.  Closed (local workers ended)
    on leaving, also on an error or an interrupt."""
    workers = check_workers(workers)
    if scheduler is not None and workers is not None:
        raise TopocastError("--workers: sets the size of a local cluster; the cluster at --scheduler has its own "
                            "workers (give one of the two)")
    if scheduler is None and workers is None:
        scheduler = os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    import logging

    from distributed import Client, LocalCluster

    if scheduler is not None:
        address = _address(scheduler)
        try:
            client = Client(address, timeout="10s", set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise TopocastError(f"--scheduler: cannot reach the Dask scheduler at {address}: {exc}") from None
        try:
            yield client
        finally:
            client.close()
        return
    n = workers or os.cpu_count() or 1
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, memory_limit=0, silence_logs=logging.ERROR)
    try:
        client = Client(cluster, set_as_default=False)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


def as_done(client, function: Callable[[Any], Any], items: Sequence[Any],
            names: Sequence[str] | None = None) -> Iterator[tuple[int, Any, BaseException | None]]:
    """Run ``function(item)`` for every item on ``client``; yield ``(index, value, None)`` or
    ``(index, None, error)`` as each finishes.  A task whose worker dies is rerun elsewhere by Dask
    (up to ``distributed.scheduler.allowed-failures`` times, then its error is ``KilledWorker``)."""
    from distributed import as_completed

    if names is None:
        tag = os.urandom(6).hex()
        names = [f"topocast-{tag}-{i}" for i in range(len(items))]
    futures = client.map(function, list(items), key=list(names), pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    done = as_completed(futures, loop=client.loop, with_results=True, raise_errors=False)
    del futures
    try:
        for batch in done.batches():
            for future, value in batch:
                i = index[future.key]
                if future.status == "finished":
                    yield i, value, None
                else:
                    yield i, None, value if isinstance(value, BaseException) else RuntimeError(str(value))
                future.release()
    finally:
        done.clear()


# -- progress ----------------------------------------------------------------------------------
class Reporter:
    """Runs done out of total: a rich bar with the time left on a terminal, else a plain line on stderr
    every ``interval`` seconds (``mode``: ``"bar"``, ``"lines"`` or ``"off"``)."""

    def __init__(self, total: int, mode: str | None = None, interval: float = 5.0, stream=None):
        self.total, self.done, self.failed = total, 0, 0
        self.stream = stream or sys.stderr
        self.mode = mode or ("bar" if self.stream.isatty() else "lines")
        self.interval = interval
        self.start = self.last = time.monotonic()
        self._bar = self._task = None
        if self.mode == "bar" and total:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("runs, {task.fields[failed]} failed"), TimeElapsedColumn(),
                                 TextColumn("left"), TimeRemainingColumn(),
                                 console=Console(file=self.stream), transient=True)
            self._task = self._bar.add_task("sweep", total=total, failed=0)
            self._bar.start()

    def advance(self, failed: bool = False) -> None:
        self.done += 1
        self.failed += bool(failed)
        if self._bar is not None:
            self._bar.update(self._task, advance=1, failed=self.failed)
        elif self.mode == "lines" and time.monotonic() - self.last >= self.interval:
            self.last = time.monotonic()
            self._line()

    def _line(self) -> None:
        elapsed = time.monotonic() - self.start
        left = elapsed / self.done * (self.total - self.done) if self.done else float("nan")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        self.stream.write(f"sweep: {self.done}/{self.total} runs ({pct:.0f}%), {self.failed} failed, "
                          f"{elapsed:.0f} s elapsed, about {left:.0f} s left\n")
        self.stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


@contextmanager
def _given(client) -> Iterator[Any]:
    yield client


# -- the sweep ---------------------------------------------------------------------------------
def sweep(grid: str | Path | dict, store: str | Path | None = None, *, scheduler: str | None = None,
          workers: int | None = None, progress: bool | str | None = False, client=None) -> dict:
    """Run every run of ``grid`` (a TOML file or a dict, :func:`load_grid`) not already in ``store``.

    Returns ``{"total", "executed", "skipped", "failed", "store", "seconds", "errors"}`` (and ``rows``,
    every row of this call, when there is no store).  ``executed`` counts the runs finished by this
    call, ``failed`` those of them that failed (a refused run is stored as a failed row; a task Dask
    gave up on, ``errors``, is not stored and runs again next time), ``skipped`` the runs found in the
    store.  ``progress``: ``True`` (bar or lines), ``"bar"``, ``"lines"``, ``False``.  ``client``: a Dask
    ``Client`` to use (then ``scheduler`` and ``workers`` are not used and the client stays open).

    >>> import topocast as tc
    >>> summary = tc.sweep({"specs": ["hypercube:3"], "algorithms": ["broadcast-binomial"], "seeds": [1, 2]},
    ...                    workers=1)
    >>> summary["total"], summary["executed"], summary["failed"]
    (2, 2, 0)
    """
    from .store import Store, check_path

    started = time.perf_counter()
    tasks = expand(load_grid(grid))
    rows: list[dict] = []
    book = None if store is None else Store(check_path(store))
    summary: dict[str, Any] = {"total": len(tasks), "executed": 0, "skipped": 0, "failed": 0,
                               "store": None if store is None else str(store), "seconds": 0.0, "errors": []}
    try:
        todo = [t for t in tasks if book is None or t["key"] not in book.keys]
        summary["skipped"] = len(tasks) - len(todo)
        mode = "off" if progress is False or progress is None else (None if progress is True else progress)
        reporter = Reporter(len(todo), mode)
        try:
            if todo:
                with _given(client) if client is not None else executor(scheduler, workers) as client:
                    names = [f"topocast-run-{t['key']}" for t in todo]
                    for i, row, error in as_done(client, run_task, todo, names):
                        summary["executed"] += 1
                        if error is not None:
                            t = todo[i]
                            summary["failed"] += 1
                            summary["errors"].append(f"{t['spec']} {t['algorithm']} seed {t['seed']} "
                                                     f"{t['params']}: {type(error).__name__}: {error}")
                        else:
                            summary["failed"] += row["status"] != "ok"
                            if book is not None:
                                book.append(row)
                            else:
                                rows.append(row)
                        reporter.advance(failed=error is not None or row["status"] != "ok")
        finally:
            reporter.close()
    finally:
        if book is not None:
            book.close()
    summary["seconds"] = time.perf_counter() - started
    if store is None:
        summary["rows"] = rows
    return summary
