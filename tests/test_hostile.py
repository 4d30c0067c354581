"""Hostile input and failed work: no lost file, no silent acceptance, no hang, an exit status that tells the truth.

Each test builds the hostile situation for real (a FIFO, a device behind a symbolic link, a file of random
bytes, a killed process, a dead Dask worker or scheduler) and checks what topocast does against what must
hold: the file is untouched, the refusal is one line naming the parameter, the exit status is 1 for failed
work and 2 for bad input.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
import zlib
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from test_bad_input import assert_clean_error, run_in_process
from topocast.errors import TopocastError, TopocastWarning
from topocast.infra.fileio import atomic_write, remove_stale
from topocast.outputs.store import FORMAT, read_rows, scan
from topocast.synthesis import synthesize

GRID = '[sweep]\nspecs = ["hypercube:3"]\nalgorithms = ["broadcast-binomial"]\nseeds = [1, 2]\n'


def _grid(tmp_path: Path, text: str = GRID) -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(text)
    return path


# -- 1. no data loss ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("content", [
    "schedule",                                              # a schedule JSON passed as the store
    "random",                                                # random bytes
    "csv",                                                   # another tool's file
    "rows-without-marker",                                   # JSON lines that are not store rows
])
def test_sweep_refuses_a_store_that_is_not_one_and_leaves_it_untouched(tmp_path, content):
    store = tmp_path / "store.jsonl"
    if content == "schedule":
        synthesize("ring:6", "allgather", restarts=0).write(store)
    elif content == "random":
        store.write_bytes(np.random.default_rng(3).bytes(5000))
    elif content == "csv":
        store.write_text("spec,algorithm\nring:4,broadcast-ring\n")
    else:
        store.write_text('{"key": "00000000000000000000000000000000", "status": "ok"}\n')
    before = store.read_bytes()
    code, _, stderr, seconds = run_in_process(["sweep", str(_grid(tmp_path)), "--store", str(store), "--workers", "1"])
    assert_clean_error(code, stderr, seconds, "--store", 10)
    assert "not a topocast sweep store" in stderr and str(store.name) in stderr
    assert store.read_bytes() == before
    with pytest.raises(TopocastError, match="not a topocast sweep store"):
        tc.sweep(str(_grid(tmp_path)), store, workers=1)
    assert store.read_bytes() == before


def test_every_store_line_carries_the_marker_and_an_empty_file_is_a_store(tmp_path):
    store = tmp_path / "s.jsonl"
    store.write_bytes(b"")
    summary = tc.sweep(str(_grid(tmp_path)), store, workers=1)
    assert summary["ok"] and summary["executed"] == 2
    lines = store.read_bytes().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["format"] == FORMAT for line in lines)
    assert all(line.startswith(b'{"format":"' + FORMAT.encode() + b'",') for line in lines)


def test_a_junk_row_with_a_real_key_is_skipped_and_its_run_runs_again(tmp_path):
    store = tmp_path / "s.jsonl"
    tc.sweep(str(_grid(tmp_path)), store, workers=1)
    good = [json.loads(line) for line in store.read_text().splitlines()]
    junk = dict(good[0], result="not an object")
    store.write_text(json.dumps(junk) + "\n" + json.dumps(good[1]) + "\n")
    found = scan(store)
    assert [r["key"] for r in found.rows] == [good[1]["key"]]
    assert found.skipped == {"result is not an object": 1}
    summary = tc.sweep(str(_grid(tmp_path)), store, workers=1)
    assert summary["executed"] == 1 and summary["skipped"] == 1 and summary["ok"]
    assert "1 line: 1 result is not an object" in summary["store_skipped"]
    rows = read_rows(store)
    assert {r["key"] for r in rows} == {g["key"] for g in good} and all(isinstance(r["result"], dict) for r in rows)


def test_plot_says_what_it_skipped_and_never_averages_two_versions(tmp_path):
    store = tmp_path / "s.jsonl"
    tc.sweep({"specs": ["hypercube:3", "hypercube:4"], "algorithms": ["broadcast-binomial"], "seeds": [1, 2]},
             store, workers=1)
    rows = [json.loads(line) for line in store.read_text().splitlines()]
    other = [dict(r, key=r["key"][::-1], version="0.0.9", result=dict(r["result"], steps=99)) for r in rows]
    with open(store, "a") as handle:
        for row in other:
            handle.write(json.dumps(row) + "\n")
        handle.write(json.dumps(dict(rows[0], key="f" * 32, result=[1, 2])) + "\n")
        handle.write("this line is not JSON\n")
    from topocast.outputs.plot import plot, series

    with pytest.warns(TopocastWarning) as caught:
        plot(store, "N", "steps", out=tmp_path / "p.png")
    texts = [str(w.message) for w in caught]
    assert any("skipped 2 lines: 1 result is not an object, 1 not store rows" in t for t in texts), texts
    assert any("0.0.9" in t and tc.__version__ in t for t in texts), texts
    lines = series(read_rows(store), "N", "steps", "algorithm")
    assert all("version=" in label for label in lines)
    ours = {x: v for k, points in lines.items() if f"version={tc.__version__}" in k for x, v in points.items()}
    theirs = {x: v for k, points in lines.items() if "version=0.0.9" in k for x, v in points.items()}
    assert ours == {8: [3.0, 3.0], 16: [4.0, 4.0]}  # log2 N steps: the other version's 99 is not mixed in
    assert theirs == {8: [99.0, 99.0], 16: [99.0, 99.0]}
    code, _, stderr, _ = run_in_process(["plot", str(store), "--x", "N", "--y", "steps",
                                         "--out", str(tmp_path / "q.png")])
    assert code == 0 and "topocast: warning: plot: skipped 2 lines" in stderr


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_writes_never_replace_a_device_or_a_fifo(tmp_path, kind):
    target = tmp_path / "target"
    if kind == "device":
        target.symlink_to("/dev/null")   # a character device behind a name that looks like a file
    else:
        os.mkfifo(target)
    for argv in (["info", "ring:4", "--csv", "{}.csv"], ["run", "ring:4", "broadcast-ring", "--csv", "{}.csv"],
                 ["export", "ring:4", "{}.json"], ["synthesize", "ring:4", "allgather", "--out", "{}.json"]):
        link = tmp_path / ("x" + Path(argv[-1]).suffix)
        if link.exists() or link.is_symlink():
            link.unlink()
        link.symlink_to(target)
        code, _, stderr, seconds = run_in_process([a.replace("{}", str(tmp_path / "x")) for a in argv])
        assert_clean_error(code, stderr, seconds, "not a regular file", 10)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert (stat.S_ISCHR if kind == "device" else stat.S_ISFIFO)(os.stat(target).st_mode)
    with pytest.raises(TopocastError, match="not a regular file"):
        atomic_write(tmp_path / "x.csv", "a,b\n")


def test_the_api_creates_no_directory_the_cli_would_refuse(tmp_path):
    s = synthesize("ring:6", "allgather", restarts=0)
    with pytest.raises(TopocastError, match="does not exist"):
        s.write(tmp_path / "missing" / "dir" / "x.json")
    assert not (tmp_path / "missing").exists()
    code, _, stderr, seconds = run_in_process(["synthesize", "ring:6", "allgather", "--out",
                                               str(tmp_path / "missing" / "x.json")])
    assert_clean_error(code, stderr, seconds, "--out", 10)


def test_stale_temporaries_of_dead_processes_are_removed_and_live_ones_kept(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".x.json.{dead_pid}.0123abcd.tmp"
    live = tmp_path / f".x.json.{os.getppid()}.0123abcd.tmp"
    other = tmp_path / f".y.json.{dead_pid}.0123abcd.tmp"
    for path in (stale, live, other):
        path.write_text("half")
    atomic_write(tmp_path / "x.json", "{}\n")
    assert not stale.exists() and live.exists() and other.exists()
    assert (tmp_path / "x.json").read_text() == "{}\n"
    assert remove_stale(tmp_path / "y.json") == [str(other)]


def test_sigkill_while_writing_leaves_nothing_half_written(tmp_path):
    """The whole export process group is killed at several moments: the destination is absent or whole,
    and no temporary of any name is left beside it."""
    out = tmp_path / "net.graphml"
    whole = None
    for delay in (0.8, 1.2, 1.6, 2.0, 2.5, 3.0):
        proc = subprocess.Popen(["topocast", "export", "torus:36x36x36", str(out)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(0.2)
        assert [p.name for p in tmp_path.iterdir() if p.name != out.name] == []
        if out.exists():
            whole = whole or tc.build(f"graph:{out}")
            assert whole.num_nodes == 36**3 and whole.num_edges == 3 * 36**3
            out.unlink()


# -- 2. the exit status tells the truth ---------------------------------------------------------------------
def _tamper(path: Path, change) -> None:
    """Rewrite the schedule file at ``path`` with ``change(arrays)`` applied, checksums recomputed."""
    doc = json.loads(path.read_text())
    arrays = {k: np.frombuffer(zlib.decompress(base64.b64decode(v["data"])), dtype="<i8").copy()
              for k, v in doc["arrays"].items()}
    change(arrays)
    for name, a in arrays.items():
        raw = a.astype("<i8").tobytes()
        doc["arrays"][name] = {"dtype": "<i8", "shape": [len(a)], "sha256": hashlib.sha256(raw).hexdigest(),
                               "data": base64.b64encode(zlib.compress(raw)).decode()}
    path.write_text(json.dumps(doc))


def test_a_replayed_schedule_that_fails_verification_exits_1_with_the_violation(tmp_path):
    path = tmp_path / "s.json"
    synthesize("ring:6", "allgather", restarts=0).write(path)

    def sender_lacks_the_data(arrays):
        first = int(np.argmin(arrays["step"]))
        arrays["src"][first] = (arrays["src"][first] + 3) % 6   # a node that does not hold the message yet
        arrays["dst"][first] = (arrays["src"][first] + 1) % 6

    _tamper(path, sender_lacks_the_data)
    result = tc.synthesis.replay("ring:6", path)
    assert not result.verified and result.first_violation
    code, _, stderr, _ = run_in_process(["run", "ring:6", "--schedule", str(path)])
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert code == 1 and lines == [f"topocast: verification failed: {result.first_violation}"], stderr
    assert "unexpected" not in stderr and "Traceback" not in stderr


def test_a_sweep_whose_runs_all_fail_exits_1_and_says_why(tmp_path):
    grid = _grid(tmp_path, GRID + "[params]\nroot = [9]\n")
    code, out, stderr, _ = run_in_process(["sweep", str(grid), "--workers", "1"])
    assert code == 1, stderr
    assert "sweep incomplete: 2 runs failed and stored as failed: 2 root: must be a node index in 0..7, got 9" in stderr
    code, _, stderr, _ = run_in_process(["sweep", str(grid), "--workers", "1"])  # a rerun still says so
    assert code == 1 and "2 stored as failed by an earlier sweep" in stderr


def test_a_store_that_cannot_be_written_stops_the_sweep_and_says_so(tmp_path, monkeypatch):
    """A full disk after the first row: the rows written stay whole, the rest are not stored, the sweep says why
    and exits 1."""
    import errno

    from topocast.outputs.store import Store

    real = Store.append
    calls = {"n": 0}

    def full_after_one(self, row):
        calls["n"] += 1
        if calls["n"] > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, row)

    monkeypatch.setattr(Store, "append", full_after_one)
    store = tmp_path / "s.jsonl"
    grid = _grid(tmp_path, GRID.replace("[1, 2]", "[1, 2, 3, 4]"))
    code, _, stderr, _ = run_in_process(["sweep", str(grid), "--store", str(store), "--workers", "1"])
    assert code == 1
    assert "3 runs not stored (they run again next time): 3 the store could not be written (No space left on " \
           "device); the sweep stopped" in stderr, stderr
    assert len(read_rows(store)) == 1 and store.read_bytes().endswith(b"\n")


@pytest.mark.parametrize("extra, expect", [
    ('engine = "frontier"\n', "engine 'frontier' is not an engine of algorithm broadcast-binomial"),
    ('[params]\nzz = [1, 2]\n', "unknown parameter 'zz'"),
    ('[params]\nmessage_bytes = [-5]\n', "message_bytes"),
])
def test_options_that_make_every_run_invalid_are_refused_before_any_work(tmp_path, extra, expect):
    text = GRID.replace('seeds = [1, 2]\n', 'seeds = [1, 2]\n' + (extra if extra.startswith("engine") else ""))
    text += "" if extra.startswith("engine") else extra
    store = tmp_path / "s.jsonl"
    code, _, stderr, seconds = run_in_process(["sweep", str(_grid(tmp_path, text)), "--store", str(store)])
    assert_clean_error(code, stderr, seconds, expect, 10)
    assert not store.exists()


def test_worker_death_and_another_version_are_said_in_words():
    """A worker that dies in every attempt and a worker on another topocast version: the task does not land,
    and the reason is a sentence, never Dask's tuple."""
    import dask
    from distributed import Client, LocalCluster

    from topocast.sweep.grid import as_done, describe, expand, run_task

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                         dashboard_address="127.0.0.1:0", memory_limit=0) as cluster, \
            Client(cluster, set_as_default=False) as client:
        [(_, value, error)] = list(as_done(client, os._exit, [3]))
        assert value is None and describe(error).startswith("worker died while running it")
        deadline = time.monotonic() + 60
        while not client.run(lambda: setattr(__import__("topocast"), "__version__", "9.9.9")):
            assert time.monotonic() < deadline, "the nanny did not restart the worker"
            time.sleep(0.2)  # the nanny is starting a new worker
        [task] = expand({"specs": ["ring:4"], "algorithms": ["broadcast-ring"], "engines": [None], "seeds": [0],
                         "params": {}})
        [(_, value, error)] = list(as_done(client, run_task, [task]))
        assert describe(error) == (f"worker runs topocast 9.9.9, the sweep {tc.__version__}: install the same "
                                   "version on every worker")
        summary = tc.sweep({"specs": ["ring:4"], "algorithms": ["broadcast-ring"]}, client=client)
        assert not summary["ok"] and summary["not_stored"] == 1 and "worker runs topocast 9.9.9" in \
            summary["errors"][0]


# -- 3. no hang, no runaway ----------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, expect", [
    (["sweep", "{big}"], "1.0e+12 runs, more than the 1,000,000"),
    (["sweep", "{grid}", "--workers", "100000"], "--workers"),
    (["reproduce", "classic", "--workers", "100000"], "--workers"),
    (["synthesize", "hypercube:15", "allgather", "--out", "{tmp}/s.json"], "(node, message) pairs"),
    (["synthesize", "hypercube:14", "alltoall", "--out", "{tmp}/s.json"], "max-memory"),
    (["synthesize", "torus:16x16", "alltoall", "--out", "{tmp}/s.json", "--max-memory", "64M"], "max-memory"),
    (["info", "graph:{edges}", "--max-memory", "64M"], "max-memory: reading"),
    (["run", "torus:40x40x40", "allgather-bfs-trees", "--max-memory", "2G"], "max-memory"),
    (["export", "torus:100x100x100", "{tmp}/x.graphml", "--max-memory", "64M"], "max-memory"),
    (["run", "ring:4", "--schedule", "{fifo}"], "FIFO"),
    (["sweep", "{fifo}"], "FIFO"),
    (["plot", "{fifo}", "--x", "N", "--y", "steps"], "FIFO"),
    (["info", "graph:{fifo}"], "FIFO"),
])
def test_every_size_is_estimated_before_work(tmp_path, argv, expect):
    os.mkfifo(tmp_path / "fifo")
    values = ",".join(str(i) for i in range(1000))
    (tmp_path / "big.toml").write_text(f"{GRID}[params]\nmessage_bytes = [{values}]\nstartup = [{values}]\n"
                                       f"per_byte = [{values}]\nper_hop = [{values}]\n".replace("[1, 2]", "[1]"))
    rng = np.random.default_rng(0)
    with open(tmp_path / "big.edges", "w") as handle:
        handle.writelines(f"{u} {v}\n" for u, v in rng.integers(0, 10**6, (400_000, 2)).tolist())
    places = {"{big}": tmp_path / "big.toml", "{grid}": _grid(tmp_path), "{tmp}": tmp_path,
              "{edges}": tmp_path / "big.edges", "{fifo}": tmp_path / "fifo"}
    filled = []
    for arg in argv:
        for key, value in places.items():
            arg = arg.replace(key, str(value))
        filled.append(arg)
    code, _, stderr, seconds = run_in_process(filled)
    assert_clean_error(code, stderr, seconds, expect, 10)


# -- 4. malformed graph files are refused, not repaired -----------------------------------------------------
GRAPHML = ('<?xml version="1.0"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
           '{body}</graphml>\n')


@pytest.mark.parametrize("name, text, expect", [
    ("dup.graphml", GRAPHML.format(body='<graph edgedefault="undirected"><node id="a"/><node id="b"/>'
                                        '<node id="a"/><edge source="a" target="b"/></graph>'), "declared twice"),
    ("undeclared.graphml", GRAPHML.format(body='<graph edgedefault="undirected"><node id="a"/><node id="b"/>'
                                               '<edge source="a" target="b"/><edge source="b" target="c"/></graph>'),
     "not declared"),
    ("two.graphml", GRAPHML.format(body='<graph edgedefault="undirected"><node id="a"/><node id="b"/>'
                                        '<edge source="a" target="b"/></graph><graph edgedefault="undirected">'
                                        '<node id="x"/><node id="y"/><edge source="x" target="y"/></graph>'),
     "holds 2 graphs"),
    ("dup.json", '{"nodes": [{"id": "a"}, {"id": "b"}, {"id": "a"}], "links": [{"source": "a", "target": "b"}]}',
     "declared twice"),
    ("undeclared.json", '{"nodes": [{"id": "a"}, {"id": "b"}], "links": [{"source": "a", "target": "b"}, '
                        '{"source": "b", "target": "c"}]}', "not declared"),
    ("two.json", '[{"nodes": [{"id": "a"}], "links": []}, {"nodes": [{"id": "b"}], "links": []}]', "a list"),
    ("dup.gml", 'graph [\n node [ id 0 label "a" ]\n node [ id 0 label "b" ]\n]\n', "duplicated"),
    ("undeclared.gml", 'graph [\n node [ id 0 label "a" ]\n node [ id 1 label "b" ]\n edge [ source 0 target 1 ]\n'
                       ' edge [ source 1 target 2 ]\n]\n', "undefined target"),
    ("two.gml", 'graph [\n node [ id 0 label "a" ]\n]\ngraph [\n node [ id 0 label "b" ]\n]\n', "more than one"),
    ("onecol.edges", "a b\nb c\nd\nc a\n", "line 3 has one column"),
    ("nul.edges", "a b\nb c\x00x\nc a\n", "control character"),
    ("escape.edges", "a b\nb \x1b[31mc\nc a\n", "control character"),
    ("ctrl.json", '{"nodes": [{"id": "a\\u0007"}, {"id": "b"}], "links": [{"source": "a\\u0007", "target": "b"}]}',
     "control character"),
    ("latin1.edges", b"a b\nb \xe9\n".decode("latin-1"), "not UTF-8"),
])
def test_malformed_graph_files_are_refused(tmp_path, name, text, expect):
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1") if name.startswith("latin1") else text.encode())
    code, _, stderr, seconds = run_in_process(["info", f"graph:{path}", "--no-distances"])
    assert_clean_error(code, stderr, seconds, expect, 10)
    assert "\x1b" not in stderr and "\x00" not in stderr


@pytest.mark.parametrize("fmt", ["graphml", "gml", "json", "edgelist"])
def test_a_graph_behind_a_symlink_without_extension_is_read_by_its_content(tmp_path, fmt):
    from topocast.topology.export import export

    real = tmp_path / "real-file-without-extension"
    export(tc.build("torus:3x4"), fmt, real)
    link = tmp_path / "link"
    link.symlink_to(real)
    t = tc.build(f"graph:{link}")
    assert nx.is_isomorphic(t.to_networkx(), tc.build("torus:3x4").to_networkx())


# -- 5. every option settable and checked -------------------------------------------------------------------
def test_synthesize_takes_chunks_restarts_and_root_through_set(tmp_path):
    out = tmp_path / "s.json"
    code, stdout, stderr, _ = run_in_process(["synthesize", "ring:8", "broadcast", "--out", str(out), "--json",
                                              "--set", "chunks=2", "--set", "restarts=0", "--set", "root=3"])
    assert code == 0, stderr
    summary = json.loads(stdout)
    assert summary["chunks"] == 2 and all(c["chunks"] == 2 for c in summary["candidates"])
    origin = json.loads(out.read_text())
    assert origin["chunks"] == 2
    for argv, expect in ((["--root", "1", "--set", "root=2"], "root is given twice"),
                         (["--set", "chunks=x"], "'chunks' must be an integer"),
                         (["--set", "restarts=-1"], "restarts"),
                         (["--set", "seed=3"], "write --seed 3"),
                         (["--set", "budget=3"], "write --budget 3")):
        code, _, stderr, seconds = run_in_process(["synthesize", "ring:8", "broadcast", "--out", str(out), *argv])
        assert_clean_error(code, stderr, seconds, expect, 10)


@pytest.mark.parametrize("edit, expect", [
    (lambda d: d["model"].update(message_bytes="1024"), "model 'message_bytes' must be a number"),
    (lambda d: d.update(chunk_bytes="1024"), "'chunk_bytes' must be a finite number"),
    (lambda d: d.update(collective="broadcast"), "not those of a broadcast"),   # an all-gather relabelled
    (lambda d: d.update(collective="gossip"), "collective"),
    (lambda d: d.update(version="1"), 'format version "1" is not one this topocast reads'),
    (lambda d: d.update(version=True), "format version true"),
    (lambda d: d["model"].update(ports=0), "model 'ports'"),
    (lambda d: d["model"].update(startup=-1), "startup"),
    (lambda d: d["model"].update(duplex="quarter"), "duplex"),
    (lambda d: d.update(nodes=7), "'nodes' is 7"),
    (lambda d: d["arrays"]["src"].update(shape=[10**12]), "max-memory"),
    (lambda d: d["arrays"]["src"].update(dtype="<f8"), "corrupt"),
])
def test_a_schedule_file_is_validated_on_load(tmp_path, edit, expect):
    path = tmp_path / "s.json"
    synthesize("ring:6", "allgather", restarts=0).write(path)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    code, _, stderr, seconds = run_in_process(["run", "ring:6", "--schedule", str(path)])
    assert_clean_error(code, stderr, seconds, expect, 10)


@pytest.mark.parametrize("spec", ["complete:1", "path:1", "ring:1", "mesh:1x1", "torus:1", "hypercube:0",
                                  "product:complete:1*complete:1"])
def test_one_rule_for_one_node_networks(spec):
    with pytest.raises(TopocastError) as info:
        tc.build(spec)
    assert any(word in str(info.value) for word in ("at least 2 nodes", ">= 2", ">= 1")), str(info.value)


def test_batches_larger_than_the_measured_messages_are_noted():
    result = tc.run("mesh:8x8", "multicast-dp", load=0.001, cycles=2000, batches=500)
    assert result.metrics["ci95_latency"] is None or np.isnan(result.metrics["ci95_latency"])
    assert any(note.startswith("ci95_latency: not computed") for note in result.notes)


# -- 6. messages a person can act on ------------------------------------------------------------------------
def test_control_characters_in_echoed_input_are_escaped():
    code, _, stderr, seconds = run_in_process(["run", "ring:4", "broad\x1b[2Jcast\nx"])
    assert_clean_error(code, stderr, seconds, "\\x1b[2J", 10)
    assert "\x1b" not in stderr


API_CASES = [
    ("synthesize restarts=-1", lambda: synthesize("ring:6", "allgather", restarts=-1), "restarts"),
    ("synthesize chunks=2.5", lambda: synthesize("ring:6", "broadcast", chunks=2.5), "chunks"),
    ("synthesize engine=None", lambda: synthesize("ring:6", "allgather", engine=None), "engine"),
    ("synthesize collective=None", lambda: synthesize("ring:6", None), "collective"),
    ("Synthesis.write(None)", lambda: synthesize("ring:6", "broadcast").write(None), "path"),
    ("sweep(None)", lambda: tc.sweep(None), "grid"),
    ("sweep(5)", lambda: tc.sweep(5), "grid"),
    ("sweep scheduler=garbage", lambda: tc.sweep({"specs": ["ring:4"], "algorithms": ["broadcast-ring"]},
                                                 scheduler="garbage"), "--scheduler"),
    ("sweep scheduler=5", lambda: tc.sweep({"specs": ["ring:4"], "algorithms": ["broadcast-ring"]}, scheduler=5),
     "--scheduler"),
    ("sweep progress='x'", lambda: tc.sweep({"specs": ["ring:4"], "algorithms": ["broadcast-ring"]},
                                            progress="x"), "progress"),
    ("run ports=2.5", lambda: tc.run("ring:4", "broadcast-ring", ports=2.5), "ports"),
    ("info properties='x'", lambda: tc.info("ring:4", properties="x"), "properties"),
    ("export(None)", lambda: _export()(None, "json", "/tmp/x.json"), "topology"),
]


def _export():
    from topocast.topology.export import export

    return export


@pytest.mark.parametrize("call,expect", [(f, e) for _, f, e in API_CASES], ids=[n for n, _, _ in API_CASES])
def test_api_raises_topocast_error(call, expect):
    start = time.perf_counter()
    with pytest.raises(TopocastError) as info:
        call()
    assert "\n" not in str(info.value) and expect in str(info.value)
    assert time.perf_counter() - start < 5


# -- 8. loopback only ---------------------------------------------------------------------------------------
def _family(pid: int) -> set[int]:
    """``pid`` and every process descended from it (Dask's nannies and workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        found.add(p)
        todo.extend(children.get(p, []))
    return found


def _listening(pids: set[int]) -> list[str]:
    """The local addresses (hex, as /proc/net/tcp{,6} writes them) of every TCP socket the processes ``pids``
    listen on."""
    inodes = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                found.append(fields[1])
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_local_cluster_listens_on_loopback_only():
    from topocast.sweep.grid import executor

    with executor(workers=2) as client:
        assert len(client.run(os.getpid)) == 2
        addresses = _listening(_family(os.getpid()))
    assert len(addresses) >= 6   # the scheduler and its HTTP server, two nannies, two workers and theirs
    loopback = ("0100007F:", "00000000000000000000000001000000:")
    assert all(a.startswith(loopback) for a in addresses), addresses
