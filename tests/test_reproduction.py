"""Reproductions run side by side (quick, several, more than one core) give what one after another gives."""

from __future__ import annotations

import pytest

from topocast.experiments.reproduce import reproduce, side_by_side
from topocast.sweep.grid import set_defaults


@pytest.fixture
def defaults():
    yield set_defaults
    set_defaults()


@pytest.mark.parametrize("count,quick,workers,scheduler,expected", [
    (7, True, 2, None, 2),
    (7, True, 3, None, 3),
    (2, True, 4, None, 2),          # no more processes than reproductions
    (1, True, 2, None, 1),          # one reproduction: here
    (7, False, 2, None, 1),         # full size: one after another, each spreads its own points
    (7, True, 1, None, 1),
    (7, True, None, "tcp://127.0.0.1:1", 1),   # a remote cluster gets points, not reproductions
])
def test_side_by_side_rule(defaults, count, quick, workers, scheduler, expected):
    defaults(scheduler=scheduler, workers=workers)
    assert side_by_side(count, quick) == expected


def _tables(report) -> list:
    """The report's tables without their notes (which carry wall-clock timings)."""
    return [{k: v for k, v in t.as_json().items() if k != "notes"} for t in report.tables]


def test_side_by_side_reports_equal_sequential(defaults, tmp_path):
    names = ["fattree", "classic"]
    defaults(workers=1)
    alone = reproduce(names, True, tmp_path / "one", None)
    defaults(workers=2)
    seen = []
    both = reproduce(names, True, tmp_path / "two", None, done=lambda report, seconds: seen.append(report))
    assert [r.name for r in both] == names == [r.name for r in seen]
    for a, b in zip(alone, both, strict=True):
        assert _tables(a) == _tables(b)
        assert [c.as_json() for c in a.claims] == [c.as_json() for c in b.claims]
        assert a.summary_line() == b.summary_line()
    one = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert one and one == sorted(p.name for p in (tmp_path / "two").iterdir())
    for name in one:
        if name.endswith(".csv"):
            assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name


def _sleepy(quick, out, progress):
    import time

    time.sleep(60)


def _broken(quick, out, progress):
    from topocast.errors import TopocastError

    raise TopocastError("broken: on purpose")


@pytest.fixture
def test_experiments():
    from topocast import registry

    added = [registry.register_experiment(registry.Experiment(name, run, "a test reproduction", weight=weight))
             for name, run, weight in (("test-sleepy", _sleepy, 2.0), ("test-broken", _broken, 1.0))]
    yield [e.name for e in added]
    for e in added:
        registry._REG.experiments.pop(e.name)


def test_an_error_side_by_side_ends_the_run_at_once(defaults, test_experiments, tmp_path):
    """The broken reproduction's error comes back at once; the other process is ended, not waited for."""
    import time

    from topocast.errors import TopocastError

    defaults(workers=2)
    start = time.perf_counter()
    with pytest.raises(TopocastError, match="broken: on purpose"):
        reproduce(test_experiments, True, tmp_path, None)
    assert time.perf_counter() - start < 20


def test_without_worker_processes_they_run_one_by_one(defaults, tmp_path, monkeypatch):
    """Where no process pool can start (no /dev/shm, a process limit), the reproductions run here."""
    import concurrent.futures.process

    refused = []

    def refuse(self, *args, **kwargs):
        refused.append(args)
        raise OSError("no /dev/shm")

    monkeypatch.setattr(concurrent.futures.process.ProcessPoolExecutor, "__init__", refuse)
    defaults(workers=2)
    seen = []
    reports = reproduce(["fattree", "classic"], True, tmp_path, None, done=lambda report, seconds: seen.append(report))
    assert [r.name for r in reports] == ["fattree", "classic"] == [r.name for r in seen]
    assert refused == [(2,)]


_PARENT = []


def _dies_in_a_worker(quick, out, progress):
    """Ends its process without a word when run in a worker (as a library's abort would); here it reports."""
    import os

    if os.getpid() != _PARENT[0]:
        (out / f"died-{os.getpid()}").write_text("")
        os._exit(3)
    return _reported("test-dies")


def _reported(name):
    from topocast.outputs.report import Report

    return Report(name, "a test reproduction")


def test_a_worker_that_dies_does_not_hang_the_run(defaults, tmp_path):
    """A worker process that exits mid-reproduction breaks the pool: what did not finish runs here, no hang."""
    import os
    import time

    from topocast import registry

    _PARENT[:] = [os.getpid()]
    added = registry.register_experiment(registry.Experiment("test-dies", _dies_in_a_worker, "a test", weight=3.0))
    try:
        defaults(workers=2)
        start = time.perf_counter()
        reports = reproduce(["test-dies", "classic"], True, tmp_path, None)
        assert [r.name for r in reports] == ["test-dies", "classic"]
        assert time.perf_counter() - start < 120
        assert len(list(tmp_path.glob("died-*"))) == 1      # it did die in a worker, and ran here after
    finally:
        registry._REG.experiments.pop(added.name)
