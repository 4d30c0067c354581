"""Sweeps on real Dask: grid and keys, a LocalCluster, a scheduler with two workers (one killed), resume, plot."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

import topocast as tc
from topocast.errors import TopocastError
from topocast.outputs.store import Store, read_rows
from topocast.sweep.grid import expand, load_grid, run_key

SCHEMA = json.loads((Path(tc.__file__).parent / "schemas" / "run.schema.json").read_text())

ISSUE_GRID = """
[sweep]
specs = ["mesh:8x8"]
algorithms = ["multicast-dp", "multicast-cp"]
seeds = [1, 2, 3]
engine = "wormhole"
[params]
load = [0.001, 0.003]
destinations = [6]
cycles = [3000]
"""

#: runs of about 0.2 s each (16 x 16 mesh, many cycles), long enough to interrupt a sweep in the middle
SLOW_GRID = """
[sweep]
specs = ["mesh:16x16"]
algorithms = ["multicast-dp"]
seeds = [1, 2, 3, 4, 5, 6, 7, 8]
[params]
load = [0.003, 0.004]
destinations = [10]
cycles = [80000]
"""


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _assert_once(path: Path, total: int) -> list[dict]:
    rows = _lines(path)
    counts = Counter(r["key"] for r in rows)
    assert len(rows) == total and len(counts) == total, (len(rows), len(counts), total)
    return rows


def test_grid_is_the_product_of_its_lists(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(ISSUE_GRID)
    tasks = expand(load_grid(path))
    assert len(tasks) == 2 * 3 * 2
    assert len({t["key"] for t in tasks}) == 12
    assert {t["engine"] for t in tasks} == {"wormhole"}
    assert [t["key"] for t in expand(load_grid(path))] == [t["key"] for t in tasks]  # stable
    base = dict(spec="mesh:8x8", algorithm="multicast-dp", engine=None, params={"load": 0.001}, seed=1)
    key = run_key(**base)
    assert run_key(**dict(base, engine="wormhole")) == key  # the default engine filled in
    assert run_key(**dict(base, params={"load": 0.001, "cycles": 20000})) == key  # the default value filled in
    assert run_key(**dict(base, seed=2)) != key
    assert run_key(**base, topocast_version="9.9") != key
    assert run_key(**dict(base, params={"load": 0.002})) != key
    # the same run spelled twice is one run
    assert len(expand({"specs": ["hypercube:3"], "algorithms": ["broadcast-binomial"], "seeds": [1, 1]})) == 1


@pytest.mark.parametrize("text,message", [
    ("[sweep]\nalgorithms = ['broadcast-binomial']\n", "'specs' is required"),
    ("[sweep]\nspecs = ['hypercube:3']\nalgorithms = ['x']\ncolour = 1\n", "unknown key"),
    ("[sweep\n", "not valid TOML"),
    ("[sweep]\nspecs = ['hypercube:3']\nalgorithms = ['broadcast-binomial']\nseeds = [-1]\n", "seed"),
    ("[sweep]\nspecs = ['nosuch:3']\nalgorithms = ['broadcast-binomial']\n", "nosuch"),
])
def test_bad_grid_is_refused(tmp_path, text, message):
    path = tmp_path / "grid.toml"
    path.write_text(text)
    with pytest.raises(TopocastError, match=message):
        expand(load_grid(path))


def _row(key: str, **fields) -> dict:
    """A well-formed store row of key ``key`` (32 hex digits made of its character)."""
    row = {"key": key * 32, "status": "ok", "error": None, "spec": "ring:4", "algorithm": "broadcast-ring",
           "engine": None, "seed": 0, "params": {}, "version": tc.__version__, "result": {"steps": 2}}
    row.update(fields)
    return row


def test_store_appends_each_key_once_and_cuts_a_torn_line(tmp_path):
    path = tmp_path / "s.jsonl"
    a, b, c = "a" * 32, "b" * 32, "c" * 32
    with Store(path) as store:
        assert store.append(_row("a"))
        assert not store.append(_row("a"))
        assert store.append(_row("b"))
        with pytest.raises(TopocastError, match="another sweep"):
            Store(path)
    with open(path, "ab") as handle:
        handle.write(path.read_bytes().splitlines()[0][:40])  # a crash in the middle of a write
    assert [r["key"] for r in read_rows(path)] == [a, b]
    with Store(path) as store:
        assert store.keys == {a, b}
        store.append(_row("c"))
    assert [r["key"] for r in _lines(path)] == [a, b, c]
    assert all(line.startswith(b'{"format":"topocast-store/1",') for line in path.read_bytes().splitlines())
    with pytest.raises(TopocastError, match="JSON lines"):
        tc.sweep({"specs": ["hypercube:3"], "algorithms": ["broadcast-binomial"]}, tmp_path / "s.parquet")


def test_local_cluster_sweep_rows_and_rerun(tmp_path):
    store = tmp_path / "runs.jsonl"
    wrong = {"specs": ["hypercube:3", "ring:8"], "algorithms": ["broadcast-binomial"]}
    with pytest.raises(TopocastError, match="runs on hypercube, not on 'ring:8'"):
        tc.sweep(wrong, store, workers=2)  # refused before any run: every ring:8 point would fail
    assert not store.exists()
    grid = {"specs": ["hypercube:3", "hypercube:2"], "algorithms": ["broadcast-binomial"], "seeds": [1, 2],
            "params": {"message_bytes": [1024, 4096], "root": [5]}}
    summary = tc.sweep(grid, store, workers=2)
    assert summary["total"] == 8 and summary["executed"] == 8 and summary["skipped"] == 0
    # hypercube:2 has no node 5: 4 runs refused by the algorithm, stored as failed rows
    assert summary["failed"] == 4 and summary["not_stored"] == 0 and not summary["ok"]
    assert summary["reasons"] == {"root: must be a node index in 0..3, got 5": 4}
    rows = _assert_once(store, 8)
    import jsonschema

    for row in rows:
        if row["spec"] == "hypercube:2":
            assert row["status"] == "failed" and "0..3, got 5" in row["error"] and row["result"] is None
            continue
        assert row["status"] == "ok" and row["version"] == tc.__version__
        jsonschema.validate(row["result"], SCHEMA)
        direct = tc.run(row["spec"], row["algorithm"], seed=row["seed"], **row["params"]).to_json()
        assert row["result"] == json.loads(json.dumps(direct))  # the normal run path, the normal schema
    again = tc.sweep(grid, store, workers=2)
    assert (again["executed"], again["skipped"], again["failed"], again["failed_earlier"]) == (0, 8, 0, 4)
    assert not again["ok"]
    _assert_once(store, 8)


def test_cli_sweep_json_and_plot(tmp_path, capsys):
    from topocast.cli import main

    grid = tmp_path / "grid.toml"
    grid.write_text('[sweep]\nspecs = ["hypercube:3", "hypercube:4"]\nalgorithms = ["broadcast-binomial", '
                    '"allgather-recursive-doubling"]\nseeds = [1, 2, 3]\n[params]\nmessage_bytes = [512, 2048]\n')
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", str(grid), "--workers", "1", "--json"])
    assert exit_info.value.code == 0
    summary = json.loads(capsys.readouterr().out)
    assert {k: summary[k] for k in ("total", "executed", "skipped", "failed")} == \
        {"total": 24, "executed": 24, "skipped": 0, "failed": 0}
    store = tmp_path / "grid.jsonl"  # the default store: beside the grid
    _assert_once(store, 24)
    png = tmp_path / "time.png"
    with pytest.raises(SystemExit) as exit_info:
        main(["plot", str(store), "--x", "N", "--y", "steps", "--hue", "algorithm", "--out", str(png)])
    assert exit_info.value.code == 0, capsys.readouterr().err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit) as exit_info:
        main(["plot", str(store), "--x", "N", "--y", "no_such_metric"])
    assert exit_info.value.code == 2
    assert "no column 'no_such_metric'" in capsys.readouterr().err


def test_plot_series_mean_and_band():
    from topocast.outputs.plot import band, series

    rows = [{"status": "ok", "spec": "mesh:8x8", "algorithm": a, "seed": s, "params": {"load": x},
             "result": {"mean_latency": 10 * x + s + (a == "b")}} for a in "ab" for x in (1, 2) for s in (1, 2, 3)]
    lines = series(rows, "load", "mean_latency", "algorithm")
    assert set(lines) == {"a", "b"} and lines["a"][1] == [11.0, 12.0, 13.0]
    mean, half = band([11.0, 12.0, 13.0])
    assert mean == 12.0 and abs(half - 4.302653 * 1 / 3**0.5) < 1e-5


def _topocast(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from topocast.cli import main; main(sys.argv[1:])", *args]


def test_interrupted_sweep_resumes_without_running_anything_twice(tmp_path):
    grid = tmp_path / "slow.toml"
    grid.write_text(SLOW_GRID)
    store = tmp_path / "slow.jsonl"
    proc = subprocess.Popen(["topocast", "sweep", str(grid), "--store", str(store), "--workers", "2", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not store.exists() or len(store.read_bytes().splitlines()) < 3):
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, stderr
    first = _lines(store)
    assert 3 <= len(first) < 16, len(first)
    again = subprocess.run(["topocast", "sweep", str(grid), "--store", str(store), "--workers", "2", "--json"],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["total"] == 16 and summary["skipped"] == len(first)
    assert summary["executed"] == 16 - len(first) and summary["failed"] == 0
    rows = _assert_once(store, 16)
    assert rows[:len(first)] == first  # appended, never rewritten
    assert not {r["key"] for r in first} & {r["key"] for r in rows[len(first):]}  # nothing executed twice


#: every listener of a test's Dask process on loopback: ``--no-dashboard`` alone still serves HTTP on 0.0.0.0:8787
LOOPBACK = ["--host", "127.0.0.1", "--no-dashboard", "--dashboard-address", "127.0.0.1:0"]


def _start(argv: list[str], log: Path) -> subprocess.Popen:
    handle = open(log, "w")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)


def test_scheduler_two_workers_one_killed_mid_sweep(tmp_path):
    from distributed import Client

    dask = ["dask"]
    scheduler_file = tmp_path / "scheduler.json"
    procs = [_start([*dask, "scheduler", *LOOPBACK, "--port", "0", "--scheduler-file", str(scheduler_file)],
                    tmp_path / "scheduler.log")]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        for i in range(2):
            procs.append(_start([*dask, "worker", address, *LOOPBACK, "--nthreads", "1", "--no-nanny",
                                 "--death-timeout", "60"], tmp_path / f"worker{i}.log"))
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
            pids = client.run(os.getpid)  # worker address -> pid
        # reproduce's load points through the same executor: identical to running them here, in order
        from topocast.sweep.grid import set_defaults
        from topocast.sweep.points import measure_point, point_seed, run_points

        jobs = [("mesh:6x6", "multicast-qg", {"load": load, "destinations": 4, "cycles": 3000}, point_seed(3, i))
                for i, load in enumerate((0.002, 0.004, 0.006))]
        set_defaults(scheduler=address)
        try:
            remote = run_points(jobs)
        finally:
            set_defaults()
        local = [measure_point(job) for job in jobs]
        assert json.dumps(remote, sort_keys=True) == json.dumps(local, sort_keys=True)  # NaN == NaN here
        grid = tmp_path / "slow.toml"
        grid.write_text(SLOW_GRID)
        store = tmp_path / "runs.jsonl"
        result: dict = {}
        thread = threading.Thread(target=lambda: result.update(tc.sweep(grid, store, scheduler=address)))
        thread.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not store.exists() or len(store.read_bytes().splitlines()) < 3):
            time.sleep(0.02)
        victim = procs[1]
        assert victim.pid in pids.values()
        victim.kill()  # SIGKILL in the middle of the sweep
        victim.wait()
        at_kill = len(_lines(store))
        thread.join(timeout=180)
        assert not thread.is_alive()
        assert result["total"] == 16 and result["executed"] == 16 and result["errors"] == [], result
        rows = _assert_once(store, 16)
        assert at_kill < 16
        assert all(r["status"] == "ok" for r in rows)
        assert any(r["worker"].endswith(f":{victim.pid}") for r in rows)  # the victim had been running runs
        survivor = f":{procs[2].pid}"
        assert all(r["worker"].endswith(survivor) for r in rows[at_kill + 1:])
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
