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
``status: "failed"``.  Rows land in a :class:`topocast.outputs.store.Store` as they finish,
keyed by :func:`run_key`; a run whose key is stored is never executed again,
so an interrupted sweep resumes where it stopped.  Dask reschedules the task of
a worker that dies; only the client writes rows, once per key.

:func:`executor` and :func:`as_done` are the same machinery for other
independent runs (the multicast reproduction's load points,
:mod:`topocast.sweep.points`).  Dask is imported only here, inside functions.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import TopocastError

SWEEP_KEYS = {"specs": "spec", "algorithms": "algorithm", "seeds": "seed", "engines": "engine", "faults": "fault"}

#: the most runs one grid may hold (a larger grid is refused before any work: split it)
MAX_RUNS = 1_000_000
#: memory one run of a grid takes before it runs (its task and its key), in bytes
BYTES_PER_RUN = 4096
#: the largest grid file read (a grid is a few lines of TOML)
MAX_GRID_BYTES = 16 << 20
#: memory of one local worker process with topocast loaded (measured about 180 MiB)
BYTES_PER_WORKER = 256 << 20
#: at most this many local worker processes per core (more only wait for a core)
WORKERS_PER_CORE = 4

#: executor settings for code that runs independent points without its own options (``reproduce``)
DEFAULTS: dict[str, Any] = {"scheduler": None, "workers": None}


def set_defaults(scheduler: str | None = None, workers: int | None = None) -> None:
    """The cluster that :mod:`topocast.sweep.points` uses (``reproduce --scheduler/--workers``)."""
    DEFAULTS["scheduler"] = scheduler
    DEFAULTS["workers"] = workers


def version() -> str:
    from .. import __version__

    return __version__


# -- grid --------------------------------------------------------------------------------------
def load_grid(source: str | Path | dict) -> dict:
    """The grid of a TOML file (a path) or of a dict in the same shape, checked:
    ``{"specs": [...], "algorithms": [...], "engines": [...], "seeds": [...], "params": {name: [...]}}``."""
    if isinstance(source, dict):
        data = dict(source)
        where = "grid"
    elif isinstance(source, (str, Path)):
        import tomllib

        from ..infra.fileio import check_input_file

        if isinstance(source, str) and not source.strip():
            raise TopocastError("sweep: give the grid as a TOML file name or a dict, got an empty string")
        path = Path(source)
        where = str(path)
        if path.is_dir():
            raise TopocastError(f"sweep: '{path}' is a directory; give a TOML file")
        check_input_file(path, "sweep: grid file", max_bytes=MAX_GRID_BYTES)
        try:
            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        except FileNotFoundError:
            raise TopocastError(f"sweep: grid file '{path}' does not exist") from None
        except UnicodeDecodeError:
            raise TopocastError(f"sweep: {path} is not valid TOML: not UTF-8 text") from None
        except tomllib.TOMLDecodeError as exc:
            raise TopocastError(f"sweep: {path} is not valid TOML: {exc}") from None
        except RecursionError:
            raise TopocastError(f"sweep: {path}: nested too deeply to be a grid") from None
    else:
        raise TopocastError(f"grid: must be a TOML file name or a dict of specs, algorithms, seeds and params, "
                            f"got {type(source).__name__}")
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
    from ..api import check_seed

    for seed in grid["seeds"]:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TopocastError(f"sweep: {where}: seeds must be integers, got {seed!r}")
        check_seed(seed)
    grid["engines"] = grid["engines"] or [None]
    grid["faults"] = _fault_specs(grid["faults"], where)
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


def _fault_specs(values: list, where: str) -> list:
    """The grid's fault specs, each checked (:func:`topocast.faults.parse`); ``[None]``: the intact networks."""
    from ..faults.spec import parse

    for value in values:
        if value is None:  # a grid loaded before: [None] stands for the intact networks
            continue
        if not isinstance(value, str):
            raise TopocastError(f"sweep: {where}: every entry of 'faults' must be a fault spec such as "
                                f"'links=0.05,seed=1', got {value!r}")
        try:
            parse(value)
        except TopocastError as exc:
            raise TopocastError(f"sweep: {where}: {exc}") from None
    return values or [None]


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
    from ..spec import parse_spec

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
            topocast_version: str | None = None, faults: str | None = None) -> str:
    """The store key of one run: a hash of the canonical spec, the algorithm's own name, the engine
    (its default filled), the parameters (resolved: defaults filled, aliases converted), the seed, the
    topocast version and the canonical fault spec when there is one (a run on the intact network keeps the
    key it had before faults existed).  Parameters the algorithm refuses enter as given (that run fails)."""
    from .. import registry
    from ..api import resolve_params

    alg = registry.algorithm(algorithm)
    try:
        resolved = resolve_params(alg, dict(params))
    except TopocastError:
        resolved = dict(params)
    payload = {"spec": canonical_spec(spec), "algorithm": alg.name, "engine": engine or alg.engines[0],
               "params": resolved, "seed": int(seed), "version": topocast_version or version()}
    if faults is not None:
        from ..faults.spec import parse

        spec_of_faults = parse(faults)
        payload["faults"] = spec_of_faults.text if spec_of_faults is not None else None
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=_plain)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def grid_size(grid: dict[str, Any]) -> int | float:
    """How many runs ``grid`` spells out (the product of its lists' lengths, repeats included)."""
    from ..infra.memory import product

    lengths = [len(grid[k]) for k in ("specs", "algorithms", "engines", "seeds")] + [len(grid.get("faults") or [0])]
    return product(lengths + [len(v) for v in grid["params"].values()])


def check_size(grid: dict, max_memory: float | None = None) -> int:
    """The number of runs of ``grid``, refused past :data:`MAX_RUNS` or when their tasks would not fit in
    ``max_memory`` (default: half of RAM), before any run is made."""
    from ..infra.memory import check_need, words

    runs = grid_size(grid)
    if runs > MAX_RUNS:
        raise TopocastError(f"sweep: the grid holds {words(runs, 'runs')}, more than the {MAX_RUNS:,} one sweep "
                            "may run; split it into several grids")
    check_need(f"planning the grid's {words(runs, 'runs')}", runs * BYTES_PER_RUN, max_memory)
    return int(runs)


def check_grid(grid: dict) -> None:
    """Refuse, before any run, what makes runs of ``grid`` invalid whatever their topology: an unknown
    algorithm, spec or engine, an algorithm on a family it does not run on, a parameter an algorithm does
    not take or a value it refuses."""
    from .. import registry
    from ..api import resolve_params
    from ..spec import parse_spec

    families = {spec: parse_spec(spec)[0].name for spec in grid["specs"]}
    for name in grid["algorithms"]:
        alg = registry.algorithm(name)
        for engine in grid["engines"]:
            if engine is not None and engine not in alg.engines:
                raise TopocastError(f"sweep: engine '{engine}' is not an engine of algorithm {alg.name} "
                                    f"(it runs on {', '.join(alg.engines)})")
        for spec, family in families.items():
            if alg.families and family not in alg.families:
                raise TopocastError(f"sweep: algorithm {alg.name} runs on {', '.join(alg.families)}, "
                                    f"not on '{spec}' (family {family})")
        for param, values in grid["params"].items():
            for value in values:
                try:
                    resolve_params(alg, {param: value}, from_text=False)
                except TopocastError as exc:
                    if "is required" in str(exc):
                        continue
                    raise TopocastError(f"sweep: {exc}" + (" (every algorithm of a grid takes every parameter "
                                                           "of its [params]; split the grid)"
                                                           if "unknown parameter" in str(exc) else "")) from None


def expand(grid: dict) -> list[dict]:
    """Every run of ``grid`` (the product of its lists), each a task dict with its ``key``; runs
    with the same key (the same run spelled twice) appear once."""
    grid = load_grid(grid) if "params" not in grid or "specs" not in grid else grid
    check_size(grid)
    ver = version()
    names = list(grid["params"])
    tasks: list[dict] = []
    seen: set[str] = set()
    for spec, faults, algorithm, engine in itertools.product(grid["specs"], grid.get("faults") or [None],
                                                             grid["algorithms"], grid["engines"]):
        for combo in itertools.product(*(grid["params"][n] for n in names)):
            params = dict(zip(names, combo, strict=True))
            for seed in grid["seeds"]:
                key = run_key(spec, algorithm, engine, params, seed, ver, faults)
                if key in seen:
                    continue
                seen.add(key)
                task = {"key": key, "spec": spec, "algorithm": algorithm, "engine": engine,
                        "seed": int(seed), "params": params, "version": ver}
                if faults is not None:
                    task["faults"] = faults
                tasks.append(task)
    return tasks


# -- the task ----------------------------------------------------------------------------------
def run_task(task: dict) -> dict:
    """One run on a worker: the store row (``status`` ok or failed, ``result`` the run's ``to_json()``)."""
    import socket

    from ..api import run
    from ..errors import TopocastError as Refused

    if task["version"] != version():
        raise RuntimeError(f"worker runs topocast {version()}, the sweep {task['version']}: "
                           "install the same version on every worker")
    row = {k: task[k] for k in ("key", "spec", "algorithm", "engine", "seed", "params", "version")}
    if task.get("faults") is not None:
        row["faults"] = task["faults"]
    start = time.perf_counter()
    try:
        result = run(task["spec"], task["algorithm"], engine=task["engine"], seed=task["seed"],
                     faults=task.get("faults"), **task["params"])
        row.update(status="ok", error=None, result=result.to_json())
    except Refused as exc:
        row.update(status="failed", error=str(exc), result=None)
    row["seconds"] = time.perf_counter() - start
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return row


# -- the executor ------------------------------------------------------------------------------
def check_workers(workers: Any, option: str = "--workers", max_memory: float | None = None) -> int | None:
    """``workers`` local worker processes checked: a whole number >= 1, at most :data:`WORKERS_PER_CORE` per
    core, and no more than fit in ``max_memory`` (default: half of RAM) at :data:`BYTES_PER_WORKER` each.

    Parameters
    ----------
    workers : int or None
        The number asked for (None: no local workers, nothing checked).
    option : str
        The option's name, for the message.
    max_memory : float, optional
        The limit in bytes; None: half of the machine's RAM.

    Returns
    -------
    int or None
        ``workers``.

    Raises
    ------
    TopocastError
        ``OPTION: ...`` when the number is not whole, exceeds the cores' share, or its memory
        (:func:`topocast.infra.memory.check_need`) is over the limit, saying how many fit.
    """
    from ..infra.memory import default_limit, over_limit

    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise TopocastError(f"{option}: must be a whole number of worker processes >= 1, got {workers!r}")
    cores = os.cpu_count() or 1
    if workers > WORKERS_PER_CORE * cores:
        raise TopocastError(f"{option}: {workers} worker processes on {cores} core{'s' if cores > 1 else ''}: at most "
                            f"{WORKERS_PER_CORE * cores} ({WORKERS_PER_CORE} per core; more only wait for a core)")
    refused = over_limit(f"running {workers} worker processes", workers * BYTES_PER_WORKER, max_memory)
    if refused is not None:  # the guard's words under the option's name, and how many would fit
        fit = max(1, int((default_limit() if max_memory is None else max_memory) // BYTES_PER_WORKER))
        raise TopocastError(f"{option}: {refused}; at most {fit} fit")
    return workers


def check_scheduler(scheduler: Any) -> str | None:
    """``scheduler`` (None or an address) checked for shape before any connection is tried."""
    return None if scheduler is None else _address(scheduler)


def _address(scheduler: Any) -> str:
    """A scheduler address checked for shape (``tcp://HOST:PORT``) before any connection is tried."""
    from urllib.parse import urlsplit

    if not isinstance(scheduler, str):
        raise TopocastError(f"--scheduler: must be an address such as tcp://127.0.0.1:8786, got "
                            f"{type(scheduler).__name__}")
    text = scheduler.strip()
    if not text:
        raise TopocastError("--scheduler: give an address such as tcp://127.0.0.1:8786")
    if "://" not in text:
        text = "tcp://" + text
    shape = f"--scheduler: expected tcp://HOST:PORT (or tls://), got '{scheduler}'"
    if not text.startswith(("tcp://", "tls://")):
        raise TopocastError(shape)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise TopocastError(shape) from None
    if not parts.hostname or port is None or not 0 < port < 65536 or parts.path not in ("", "/") \
            or parts.query or parts.fragment or any(c.isspace() for c in text):
        raise TopocastError(shape)
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
        if scheduler is not None:
            try:
                _address(scheduler)
            except TopocastError as exc:
                raise TopocastError(f"DASK_SCHEDULER_ADDRESS: {str(exc).split(': ', 1)[1]}") from None
    from distributed import Client, LocalCluster

    with _quiet_dask():
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
        # every listener on loopback, the HTTP server on a free port (never 8787's "already in use")
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0",
                               memory_limit=0, silence_logs=logging.CRITICAL)
        try:
            client = Client(cluster, set_as_default=False)
            try:
                yield client
            finally:
                client.close()
        finally:
            cluster.close()


@contextmanager
def _quiet_dask() -> Iterator[None]:
    """Dask's own log lines (a lost scheduler's reconnection tracebacks) stay out of the user's terminal;
    what happened reaches the user as the sweep's summary (``TOPOCAST_DEBUG=1`` shows them)."""
    logger = logging.getLogger("distributed")
    level = logger.level
    if os.environ.get("TOPOCAST_DEBUG", "").strip() in ("", "0"):
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)


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
                    yield i, None, _exception(value)
                future.release()
    finally:
        done.clear()


def _exception(value: Any) -> BaseException:
    """The exception of a failed future (``as_completed`` hands over ``(type, exception, traceback)``)."""
    if isinstance(value, BaseException):
        return value
    if isinstance(value, tuple) and len(value) == 3 and isinstance(value[1], BaseException):
        return value[1]
    return RuntimeError(str(value))


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
        if self._bar is not None and self._task is not None:
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
def describe(error: BaseException) -> str:
    """Why a task did not come back, in words (never a raw tuple of Dask's)."""
    name = type(error).__name__
    text = " ".join(str(error).split())
    if name == "KilledWorker":
        return "worker died while running it (every worker that tried it died: out of memory or killed)"
    if isinstance(error, MemoryError):
        return "out of memory"
    if isinstance(error, StoreWriteError):
        return f"the store could not be written ({error.strerror or 'write failed'}); the sweep stopped"
    if "worker runs topocast" in text:
        return text
    if isinstance(error, ModuleNotFoundError) and "topocast" in text:
        return "a worker cannot import topocast: install it on every worker"
    if name in ("CancelledError", "FutureCancelledError"):
        return "cancelled by the Dask scheduler (it was lost or restarted)"
    if name in ("CommClosedError", "StreamClosedError") or isinstance(error, (ConnectionError, TimeoutError)):
        return "lost the connection to the Dask scheduler"
    first = text if len(text) <= 200 else text[:197] + "..."
    return f"error in the run ({name}: {first})" if first else f"error in the run ({name})"


def _tally(reasons: dict[str, int]) -> str:
    """``'3 worker died ...; 1 out of memory'``, most frequent first."""
    return "; ".join(f"{n} {why}" for why, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))


def _task_text(task: dict) -> str:
    params = " ".join(f"{k}={v}" for k, v in task["params"].items())
    return f"{task['spec']} {task['algorithm']} seed {task['seed']}" + (f" {params}" if params else "")


def sweep(grid: str | Path | dict, store: str | Path | None = None, *, scheduler: str | None = None,
          workers: int | None = None, progress: bool | str | None = False, client=None,
          max_memory: float | str | None = None) -> dict:
    """Run every run of ``grid`` (a TOML file or a dict, :func:`load_grid`) not already in ``store``.

    Returns a summary: ``total`` runs in the grid; ``executed`` (runs finished by this call: stored, or
    kept in ``rows`` without a store); ``failed`` (of those, runs refused by topocast: stored with status
    ``failed``); ``not_stored`` (tasks that did not come back: a worker died or ran out of memory, the
    scheduler was lost; they run again next time); ``skipped`` (found in the store) and
    ``failed_earlier`` (of those, stored as failed); ``reasons`` (why, in words, with counts) and
    ``errors`` (one line per run that failed or was not stored); ``ok`` is True only when every run of the
    grid is stored as a success.  Everything that would make runs invalid whatever their topology (an
    unknown algorithm, engine or parameter, a grid too large) is refused before any run
    (:func:`check_grid`, :func:`check_size`).  ``progress``: ``True`` (bar or lines), ``"bar"``,
    ``"lines"``, ``False``.  ``client``: a Dask ``Client`` to use (then ``scheduler`` and ``workers`` are
    not used and the client stays open).

    >>> import topocast as tc
    >>> summary = tc.sweep({"specs": ["hypercube:3"], "algorithms": ["broadcast-binomial"], "seeds": [1, 2]},
    ...                    workers=1)
    >>> summary["total"], summary["executed"], summary["failed"], summary["ok"]
    (2, 2, 0, True)
    """
    from ..infra.memory import resolve_limit
    from ..outputs.store import Store, check_path

    if progress not in (True, False, None, "bar", "lines", "off"):
        raise TopocastError(f"progress: must be True, False, 'bar', 'lines' or 'off', got {progress!r}")
    started = time.perf_counter()
    limit = resolve_limit(max_memory)
    workers = check_workers(workers, "workers", limit)
    check_scheduler(scheduler)
    loaded = load_grid(grid)
    check_size(loaded, limit)
    check_grid(loaded)
    store_path = None if store is None else check_path(store, "store")
    book = None if store_path is None else Store(store_path)
    rows: list[dict] = []
    try:
        tasks = expand(loaded)
        summary = _empty_summary(len(tasks), store)
        if book is not None and book.scan.skipped_text():
            summary["store_skipped"] = book.scan.skipped_text()
        todo = [t for t in tasks if book is None or t["key"] not in book.keys]
        summary["skipped"] = len(tasks) - len(todo)
        if book is not None:
            earlier = {r["key"]: str(r.get("error")) for r in book.scan.rows if r["status"] != "ok"}
            for task in tasks:
                if task["key"] in earlier:
                    summary["failed_earlier"] += 1
                    why = earlier[task["key"]]
                    summary["reasons"][why] = summary["reasons"].get(why, 0) + 1
        _run_tasks(todo, summary, book, rows, client, scheduler, workers, progress)
    finally:
        if book is not None:
            book.close()
    summary["ok"] = summary["failed"] == summary["not_stored"] == summary["failed_earlier"] == 0
    summary["seconds"] = time.perf_counter() - started
    if store is None:
        summary["rows"] = rows
    return summary


def _empty_summary(total: int, store: Any) -> dict[str, Any]:
    return {"total": total, "executed": 0, "skipped": 0, "failed": 0, "not_stored": 0, "failed_earlier": 0,
            "store": None if store is None else str(store), "seconds": 0.0, "reasons": {}, "errors": []}


def _note_failure(summary: dict, task: dict, why: str, stored: bool) -> None:
    summary["failed" if stored else "not_stored"] += 1
    summary["reasons"][why] = summary["reasons"].get(why, 0) + 1
    summary["errors"].append(f"{_task_text(task)}: {why}" + ("" if stored else " (not stored: runs again next time)"))


def _run_tasks(todo: list[dict], summary: dict, book, rows: list[dict], client, scheduler, workers,
               progress) -> None:
    """Run ``todo`` on the executor, storing each row as it lands; count what failed and why."""
    if not todo:
        return
    mode = "off" if progress is False or progress is None else (None if progress is True else progress)
    reporter = Reporter(len(todo), mode)
    landed: set[int] = set()
    try:
        with _given(client) if client is not None else executor(scheduler, workers) as client:
            names = [f"topocast-run-{t['key']}" for t in todo]
            for i, row, error in as_done(client, run_task, todo, names):
                if error is not None:
                    landed.add(i)
                    _note_failure(summary, todo[i], describe(error), stored=False)
                else:
                    _keep(row, book, rows)
                    landed.add(i)
                    summary["executed"] += 1
                    if row["status"] != "ok":
                        _note_failure(summary, todo[i], row["error"], stored=True)
                reporter.advance(failed=error is not None or row["status"] != "ok")
    except (KeyboardInterrupt, TopocastError):
        raise
    except Exception as exc:  # the cluster went away under us, or the store cannot be written
        why = describe(exc)
        for i, task in enumerate(todo):
            if i not in landed:
                _note_failure(summary, task, why, stored=False)
    finally:
        reporter.close()


class StoreWriteError(OSError):
    """The store could not take a row (a full disk, a file system gone read-only)."""


def _keep(row: dict, book, rows: list[dict]) -> None:
    """Append ``row`` to the store (or to ``rows`` without one); a failed write is a :class:`StoreWriteError`."""
    if book is None:
        rows.append(row)
        return
    try:
        book.append(row)
    except OSError as exc:
        raise StoreWriteError(exc.errno, exc.strerror) from None


def failure_text(summary: dict) -> str:
    """One line on what went wrong in a sweep (empty when every run is stored as a success)."""
    parts = []
    if summary["failed"]:
        parts.append(f"{summary['failed']} run{'s' if summary['failed'] != 1 else ''} failed and stored as failed")
    if summary["not_stored"]:
        parts.append(f"{summary['not_stored']} run{'s' if summary['not_stored'] != 1 else ''} not stored "
                     "(they run again next time)")
    if summary["failed_earlier"]:
        parts.append(f"{summary['failed_earlier']} stored as failed by an earlier sweep")
    if not parts:
        return ""
    reasons = _tally(summary["reasons"])
    return "; ".join(parts) + (f": {reasons}" if reasons else "")
