"""MSCCL++ execution plans out: every written plan obeys the rules the executor's plan reader and kernel
apply (written here from reading them, MSCCL++ v0.10.0), and a symbolic run of the plan performs the
schedule's transfers and ends with what the collective needs."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from topocast.api import plan, prepare
from topocast.errors import TopocastError
from topocast.interop import mscclpp_write

#: operation names the plan reader knows (its getOpType); any other is an executor error
OP_NAMES = {"nop", "barrier", "put", "pws", "pwsf", "get", "copy", "signal", "wait", "flush", "re", "res", "rre",
            "rres", "ppkt", "rppkt", "respkt", "cpkt", "upkt", "repkt", "recpkt", "recspkt", "glres", "gstore",
            "gstorepkt", "rlxsignal", "rlxwait", "pipeline", "sem_acquire", "sem_release"}
CHANNEL_TYPES = {"memory", "port", "none", "switch"}
BUFFERS = {"i": "input_chunks", "o": "output_chunks", "s": "scratch_chunks"}
#: execution_common.hpp: operations per thread block, channels and remote buffers per thread block (per type),
#: channel ids per operation, buffer entries per operation (2 local + 8 channels)
MAX_OPERATION, MAX_CHANNEL, MAX_CHANNEL_PER_OPERATION, MAX_ENTRIES = 64, 16, 8, 10
DATA_OPS = {"put", "copy", "re"}
#: out-of-place sizes: output chunks per input chunk (the reader requires equal bytes per chunk)
OUT_PER_IN = {"allgather": lambda n: (1, n), "reducescatter": lambda n: (n, 1)}


def schedule_of(spec: str, algorithm: str):
    checked = prepare(spec, algorithm)
    return checked.topology, plan(checked.topology, checked.algorithm, checked.params, checked.engine, 0)


def _int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def check_plan(p: dict) -> None:
    """Assert what the executor needs of a plan to load it and run it without a hang."""
    assert isinstance(p["name"], str) and isinstance(p["collective"], str)
    assert p["protocol"] == "Simple"                       # LL switches the executor to packet buffers
    for key in ("inplace", "reuse_resources", "use_double_scratch_buffer"):
        assert isinstance(p.get(key, False), bool), key    # read as JSON booleans
    assert _int(p.get("num_threads_per_block", 1024)) and 0 < p.get("num_threads_per_block", 1024) <= 1024
    assert _int(p.get("buffer_alignment", 16)) and p.get("buffer_alignment", 16) > 0
    lo, hi = p.get("min_message_size", 0), p.get("max_message_size", (1 << 64) - 1)
    assert _int(lo) and _int(hi) and 0 <= lo <= hi < 1 << 64
    gpus = p["gpus"]
    n = len(gpus)
    channels = {}                                          # (rank, type) -> flattened connected peers
    for k, g in enumerate(gpus):
        assert g["id"] == k                                # gpus[rank]["id"] must equal rank
        for key in BUFFERS.values():
            assert _int(g[key]) and g[key] >= 0
        assert g["input_chunks"] or g["output_chunks"]
        if g["input_chunks"] and g["output_chunks"]:      # same bytes per chunk in input and output
            a, b = OUT_PER_IN.get(p["collective"], lambda n: (1, 1))(n)
            assert g["output_chunks"] * a == g["input_chunks"] * b
        for ch in g["channels"]:
            assert ch["channel_type"] in CHANNEL_TYPES and ch["channel_type"] != "switch"
            for peer in ch["connected_to"]:
                assert _int(peer) and 0 <= peer < n and peer != k
            channels.setdefault((k, ch["channel_type"]), []).extend(ch["connected_to"])
        for rb in g["remote_buffers"]:
            assert 0 <= rb["rank"] < n and rb["rank"] != k and rb["type"] in BUFFERS
            assert rb["access_channel_types"] and set(rb["access_channel_types"]) <= CHANNEL_TYPES
        for sem in g.get("semaphores", []):
            assert _int(sem["init_value"])
    for (k, kind), peers in channels.items():             # channels pair up by order per peer: counts agree
        for peer, count in Counter(peers).items():
            assert Counter(channels.get((peer, kind), []))[k] == count
    for g in gpus:
        for j, tb in enumerate(g["threadblocks"]):
            assert tb["id"] == j                           # operations are stored by position, channels by id
            _check_threadblock(g, tb, channels, gpus)


def _check_threadblock(g: dict, tb: dict, channels: dict, gpus: list) -> None:
    k = g["id"]
    tb_channels: dict[str, list[int]] = {}
    for ch in tb["channels"]:
        ids = ch["channel_ids"]
        assert all(0 <= i < len(channels.get((k, ch["channel_type"]), [])) for i in ids)
        tb_channels.setdefault(ch["channel_type"], []).extend(ids)
    assert all(len(ids) <= MAX_CHANNEL for ids in tb_channels.values())
    tb_buffers: dict[str, list[int]] = {}
    for ref in tb.get("remote_buffer_refs", []):
        kind = ref["access_channel_type"]
        for i in ref["remote_buffer_ids"]:
            assert 0 <= i < len(g["remote_buffers"]) and kind in g["remote_buffers"][i]["access_channel_types"]
        tb_buffers.setdefault(kind, []).extend(ref["remote_buffer_ids"])
    assert all(len(ids) <= MAX_CHANNEL for ids in tb_buffers.values())
    ops = tb["ops"]
    assert len(ops) <= MAX_OPERATION
    synced = True                  # every thread has finished the block's data operations
    waited = True                  # every thread has seen the waits (only some threads wait)
    for op in ops:
        name = op["name"]
        assert name in OP_NAMES and name not in ("pipeline",)
        kind = op.get("channel_type")
        ids = op.get("channel_ids", [])
        assert len(ids) <= MAX_CHANNEL_PER_OPERATION and all(0 <= i < len(tb_channels.get(kind, [])) for i in ids)
        for side in ("src_buff", "dst_buff"):
            entries = op.get(side, [])
            assert len(entries) <= MAX_ENTRIES
            for e in entries:
                assert _int(e["index"]) and _int(e["size"]) and e["index"] >= 0 and e["size"] > 0
                if "buffer_id" in e:
                    assert kind in ("memory", "port") and 0 <= e["buffer_id"] < len(tb_buffers.get(kind, []))
                    rb = g["remote_buffers"][tb_buffers[kind][e["buffer_id"]]]
                    size = gpus[rb["rank"]][BUFFERS[rb["type"]]]
                else:
                    size = g[BUFFERS[e["type"]]]
                assert e["index"] + e["size"] <= size, (k, op)
        for sid in op.get("semaphore_ids", []):
            assert 0 <= sid < len(g.get("semaphores", []))
        if name == "put":
            assert kind == "memory" and len(op["src_buff"]) == len(op["dst_buff"])
            assert len({e["type"] for e in op["src_buff"]}) == 1          # the kernel reads from entry 0's buffer
            assert [e["size"] for e in op["src_buff"]] == [e["size"] for e in op["dst_buff"]]
        if name in ("signal", "wait"):
            assert ids and len(set(ids)) == len(ids)    # one thread per channel: no channel twice
        if name in DATA_OPS:
            assert waited, f"rank {k}: {name} after a wait with no nop between"
            synced = False
        if name in ("signal", "sem_release"):
            assert synced, f"rank {k}: {name} after a data operation with no nop between"
        if name in ("wait", "sem_acquire"):
            waited = False
        if name == "nop":
            synced = waited = True


# -- a symbolic run of the plan ----------------------------------------------------------------------------
def initial_input(p: dict, rank: int):
    n, g = len(p["gpus"]), p["gpus"][rank]
    coll, size = p["collective"], g["input_chunks"]
    if coll == "allgather":
        return [("chunk", rank, j) for j in range(size)]
    if coll == "alltoall":
        c = size // n
        return [("chunk", rank, d, j) for d in range(n) for j in range(c)]
    if coll == "broadcast":
        return [("chunk", 0, j) if rank == 0 else None for j in range(size)]
    return [(b, frozenset([rank])) for b in range(size)]


def wanted_output(p: dict, rank: int):
    n, g = len(p["gpus"]), p["gpus"][rank]
    coll, size = p["collective"], g["output_chunks"]
    everyone = frozenset(range(n))
    if coll == "allgather":
        c = size // n
        return [("chunk", k // c, k % c) for k in range(size)]
    if coll == "alltoall":
        c = size // n
        return [("chunk", s, rank, j) for s in range(n) for j in range(c)]
    if coll == "broadcast":
        return [("chunk", 0, j) for j in range(size)]
    if coll == "allreduce":
        return [(b, everyone) for b in range(size)]
    return [(rank * size + j, everyone) for j in range(size)]


def first_signal_of_step(tb: dict, k: int) -> dict | None:
    """The signal operation at ``k`` if the operation before it is not a signal too (one step's signals)."""
    ops = tb["ops"]
    return ops[k] if k == 0 or ops[k - 1]["name"] != "signal" else None


def run_plan(p: dict, seed: int = 0):
    """Run every thread block of every rank, in a seeded interleaving, on symbolic buffers.  Returns
    (puts as (sender, receiver, values, how many steps of signals the sender had run before), final
    outputs).  Asserts that no step reads a
    slot nobody filled, that a put's data is read only after the wait for the signal that followed it, that
    a reduction adds partials of one block with no contribution twice, and that the plan never hangs."""
    rng = random.Random(seed)
    n = len(p["gpus"])
    mem = {}
    for r, g in enumerate(p["gpus"]):
        mem[(r, "i")] = initial_input(p, r)
        mem[(r, "o")] = [None] * g["output_chunks"]
        mem[(r, "s")] = [None] * g["scratch_chunks"]
    peers = {r: [x for ch in g["channels"] for x in ch["connected_to"]] for r, g in enumerate(p["gpus"])}
    signals, waits = Counter(), Counter()                  # (from, to) -> count
    guard = {}                                            # (rank, buf, idx) -> (writer, signal number needed)
    written_remote = set()
    sems = {r: [s["init_value"] for s in g.get("semaphores", [])] for r, g in enumerate(p["gpus"])}
    pc = {(r, tb["id"]): 0 for r, g in enumerate(p["gpus"]) for tb in g["threadblocks"]}
    puts = []
    epoch = Counter()                                     # rank -> signal operations it has run

    def tb_channel(r, tb, local):
        ids = [i for ch in tb["channels"] for i in ch["channel_ids"]]
        return peers[r][ids[local]]

    def tb_buffer(r, tb, local):
        ids = [i for ref in tb.get("remote_buffer_refs", []) for i in ref["remote_buffer_ids"]]
        rb = p["gpus"][r]["remote_buffers"][ids[local]]
        return rb["rank"], rb["type"]

    def read(r, buf, idx):
        value = mem[(r, buf)][idx]
        assert value is not None, f"rank {r} reads {buf}[{idx}] before anything fills it"
        if (r, buf, idx) in guard:
            writer, needed = guard[(r, buf, idx)]
            assert waits[(writer, r)] >= needed, f"rank {r} reads {buf}[{idx}] before waiting for rank {writer}"
        return value

    def add(a, b):
        assert a[0] == b[0], f"adds block {a[0]} to block {b[0]}"
        assert not (a[1] & b[1]), f"block {a[0]}: a contribution counted twice"
        return (a[0], a[1] | b[1])

    def runnable(r, tb):
        op = tb["ops"][pc[(r, tb["id"])]]
        if op["name"] == "wait":
            return all(signals[(tb_channel(r, tb, i), r)] > waits[(tb_channel(r, tb, i), r)]
                       for i in op["channel_ids"])
        if op["name"] == "sem_acquire":
            return all(sems[r][s] > 0 for s in op["semaphore_ids"])
        return True

    def execute(r, tb):
        op = tb["ops"][pc[(r, tb["id"])]]
        pc[(r, tb["id"])] += 1
        name = op["name"]
        if name == "put":
            for src, dst in zip(op["src_buff"], op["dst_buff"], strict=True):
                v, buf = tb_buffer(r, tb, dst["buffer_id"])
                values = [read(r, src["type"], src["index"] + k) for k in range(src["size"])]
                for k, value in enumerate(values):
                    slot = (v, buf, dst["index"] + k)
                    assert slot not in written_remote, f"rank {r} overwrites {slot} another put filled"
                    written_remote.add(slot)
                    mem[(v, buf)][dst["index"] + k] = value
                    guard[slot] = (r, signals[(r, v)] + 1)
                puts.append((r, v, values, epoch[r]))
        elif name == "signal":
            epoch[r] += 1 if op is first_signal_of_step(tb, pc[(r, tb["id"])] - 1) else 0
            for i in op["channel_ids"]:
                signals[(r, tb_channel(r, tb, i))] += 1
        elif name == "wait":
            for i in op["channel_ids"]:
                waits[(tb_channel(r, tb, i), r)] += 1
        elif name == "sem_acquire":
            for s in op["semaphore_ids"]:
                sems[r][s] -= 1
        elif name == "sem_release":
            for s in op["semaphore_ids"]:
                sems[r][s] += 1
        elif name in ("copy", "re"):
            src, dst = op["src_buff"], op["dst_buff"][0]
            for k in range(dst["size"]):
                value = read(r, src[0]["type"], src[0]["index"] + k)
                if name == "re":
                    value = add(value, read(r, src[1]["type"], src[1]["index"] + k))
                mem[(r, dst["type"])][dst["index"] + k] = value
                guard.pop((r, dst["type"], dst["index"] + k), None)
        else:
            assert name == "nop", name

    blocks = [(r, tb) for r, g in enumerate(p["gpus"]) for tb in g["threadblocks"]]
    while True:
        live = [(r, tb) for r, tb in blocks if pc[(r, tb["id"])] < len(tb["ops"])]
        if not live:
            break
        ready = [(r, tb) for r, tb in live if runnable(r, tb)]
        assert ready, "the plan hangs: every thread block waits"
        execute(*rng.choice(ready))
    assert all(s == w for (a, b), s in signals.items() for w in [waits[(a, b)]])
    return puts, [mem[(r, "o")] for r in range(n)]


def value_of(s, m: int):
    """The symbolic value of message ``m`` of ``s`` (as :func:`initial_input` names them): chunk ``j`` of
    its origin, ``j`` counted among the messages from that origin (all-to-all: to that target)."""
    origin = int(s.origin[m])
    if s.is_reduction:
        return m
    if s.collective == "allgather":
        return ("chunk", origin, int(np.sum(s.origin[:m] == origin)))
    if s.collective == "broadcast":
        return ("chunk", 0, m)
    target = int(s.targets[m])
    same = (s.origin[:m] == origin) & (np.asarray(s.targets)[:m] == target)
    return ("chunk", origin, target, int(np.sum(same)))


def sends_by_step(s) -> Counter:
    """(sender, its k-th step with sends, receiver, value) of every chunk the schedule sends."""
    out = Counter()
    for r in range(s.num_nodes):
        mine = np.flatnonzero(s.src == r)
        steps = sorted({int(s.step[t]) for t in mine})
        for t in mine.tolist():
            for m in s.messages_of(t).tolist():
                out[(r, steps.index(int(s.step[t])), int(s.dst[t]), value_of(s, m))] += 1
    return out


CASES = [("ring:8", "allgather-ring"), ("hypercube:3", "allgather-recursive-doubling"),
         ("torus:4x4", "allgather-mesh"), ("hypercube:3", "broadcast-binomial"),
         ("hypercube:3", "alltoall-hypercube"), ("torus:3x3", "alltoall-shortest-paths"),
         ("ring:8", "allreduce-ring"), ("hypercube:3", "allreduce-halving-doubling"),
         ("hypercube:3", "reduce-scatter-ring"), ("complete:5", "allreduce-double-binary-tree"),
         ("ring:6", "allreduce-halving-doubling"), ("ring:16", "allreduce-ring")]


@pytest.mark.parametrize("spec, algorithm", CASES)
def test_plans_obey_the_readers_rules_and_perform_the_schedule(spec, algorithm):
    _, s = schedule_of(spec, algorithm)
    p = mscclpp_write.to_plan(s, name=algorithm)
    check_plan(json.loads(json.dumps(p)))
    for seed in (0, 1):
        puts, outputs = run_plan(p, seed)
        for r, out in enumerate(outputs):
            assert out == wanted_output(p, r), f"rank {r}"
    # the puts are the schedule's transfers: each rank's k-th sending step sends the same chunks to the same
    # peers as in the schedule (a reduction: the same blocks)
    epochs = {u: sorted({k for a, _, _, k in puts if a == u}) for u in range(s.num_nodes)}
    got = Counter((u, epochs[u].index(k), v, x[0] if s.is_reduction else x) for u, v, values, k in puts
                  for x in values)
    assert got == sends_by_step(s)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(family=st.sampled_from(["ring", "complete", "path"]), n=st.integers(3, 9),
       algorithm=st.sampled_from(["allgather-ring", "allgather-bfs-trees", "allreduce-ring", "allreduce-bfs-tree",
                                  "allreduce-halving-doubling", "reduce-scatter-ring", "broadcast-binomial",
                                  "alltoall-shortest-paths"]),
       seed=st.integers(0, 3))
def test_any_plan_obeys_the_rules_and_ends_as_the_collective_needs(family, n, algorithm, seed):
    try:
        _, s = schedule_of(f"{family}:{n}", algorithm)
        p = mscclpp_write.to_plan(s)
    except TopocastError:
        assume(False)
    check_plan(p)
    puts, outputs = run_plan(p, seed)
    assert all(out == wanted_output(p, r) for r, out in enumerate(outputs))


def test_a_rank_sends_in_the_schedules_step_order():
    _, s = schedule_of("hypercube:3", "allreduce-halving-doubling")
    p = mscclpp_write.to_plan(s)
    ops = p["gpus"][0]["threadblocks"][0]["ops"]
    order = [op["dst_buff"][0]["buffer_id"] for op in ops if op["name"] == "put"]
    rbs = p["gpus"][0]["remote_buffers"]
    refs = p["gpus"][0]["threadblocks"][0]["remote_buffer_refs"][0]["remote_buffer_ids"]
    peers = [rbs[refs[i]]["rank"] for i in order]
    assert peers == [4, 2, 1, 1, 2, 4]                    # halving by distance 4, 2, 1, then doubling back


def test_a_long_schedule_is_a_chain_of_thread_blocks_within_the_limits():
    _, s = schedule_of("ring:24", "allreduce-ring")
    p = mscclpp_write.to_plan(s)
    check_plan(p)
    tbs = p["gpus"][3]["threadblocks"]
    assert len(tbs) > 2 and len(p["gpus"][3]["semaphores"]) == len(tbs) - 1
    assert tbs[1]["ops"][0] == {"name": "sem_acquire", "semaphore_ids": [0]}
    assert tbs[0]["ops"][-1] == {"name": "sem_release", "semaphore_ids": [0]}
    puts, outputs = run_plan(p, seed=3)
    assert outputs[5] == wanted_output(p, 5)


# -- the checker and the symbolic run catch what breaks a plan ----------------------------------------------
def ring_plan():
    _, s = schedule_of("ring:4", "allreduce-ring")
    return mscclpp_write.to_plan(s)


def first(ops, name):
    """The first operation ``name`` after the first put (the ones before only say a rank has started)."""
    start = next(k for k, op in enumerate(ops) if op["name"] == "put")
    return next(k for k, op in enumerate(ops) if op["name"] == name and k > start)


def test_the_checks_catch_broken_plans():
    p = ring_plan()
    ops = p["gpus"][1]["threadblocks"][0]["ops"]
    k = first(ops, "signal")
    del ops[k - 1]                                        # the nop between the put and its signal
    with pytest.raises(AssertionError, match="signal after a data operation"):
        check_plan(p)
    p = ring_plan()
    p["gpus"][2]["id"] = 3
    with pytest.raises(AssertionError):
        check_plan(p)
    p = ring_plan()
    ops = p["gpus"][1]["threadblocks"][0]["ops"]
    ops[first(ops, "put")]["dst_buff"][0]["index"] = p["gpus"][2]["scratch_chunks"]   # past the peer's scratch
    with pytest.raises(AssertionError):
        check_plan(p)
    p = ring_plan()
    ops = p["gpus"][1]["threadblocks"][0]["ops"]
    del ops[first(ops, "wait")]                           # a wait missing: signals outnumber waits
    with pytest.raises(AssertionError):
        run_plan(p)
    p = ring_plan()
    ops = p["gpus"][1]["threadblocks"][0]["ops"]
    re = ops[first(ops, "re")]
    re["src_buff"][0]["index"] = (re["src_buff"][0]["index"] + 1) % 4          # a wrong offset
    re["dst_buff"][0]["index"] = re["src_buff"][0]["index"]
    with pytest.raises(AssertionError, match="adds block"):
        run_plan(p)


def test_a_read_before_its_wait_is_caught():
    p = ring_plan()
    ops = p["gpus"][2]["threadblocks"][0]["ops"]
    k = first(ops, "wait")
    ops.insert(k + 3, ops.pop(k))                         # the wait after the reduction that reads the data
    with pytest.raises(AssertionError, match="before waiting|before anything fills"):
        for seed in range(4):
            run_plan(p, seed)


# -- refusals ------------------------------------------------------------------------------------------------
def test_collectives_without_a_form_are_refused():
    _, s = schedule_of("hypercube:3", "reduce-binomial")
    with pytest.raises(TopocastError, match="export mscclpp-json: a reduce has no MSCCL collective"):
        mscclpp_write.to_plan(s)


def test_a_schedule_past_the_thread_block_limit_is_refused(monkeypatch):
    _, s = schedule_of("ring:24", "allreduce-ring")
    monkeypatch.setattr(mscclpp_write, "MAX_THREAD_BLOCKS", 2)
    with pytest.raises(TopocastError, match="thread blocks of at most 64 operations, over the limit of 2"):
        mscclpp_write.to_plan(s)


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "topocast.cli", *args], capture_output=True, text=True, timeout=300)


def test_cli_writes_a_plan(tmp_path):
    out = tmp_path / "ar.json"
    done = cli("export-schedule", "ring:6", "allreduce-ring", "--format", "mscclpp-json", "--out", str(out))
    assert done.returncode == 0, done.stderr
    p = json.loads(out.read_text())
    check_plan(p)
    assert p["collective"] == "allreduce" and p["name"] == "allreduce-ring" and len(p["gpus"]) == 6
    done = cli("export-schedule", "ring:6", "allreduce-ring", "--format", "mscclpp-json", "--out", str(tmp_path))
    assert done.returncode == 2 and "--out" in done.stderr
    syn = tmp_path / "syn.json"
    done = cli("synthesize", "hypercube:3", "allgather", "--out", str(syn), "--budget", "2")
    assert done.returncode == 0, done.stderr
    done = cli("export-schedule", "hypercube:3", "--schedule", str(syn), "--format", "mscclpp-json", "--out",
               str(tmp_path / "syn_plan.json"))
    assert done.returncode == 0, done.stderr
    p = json.loads((tmp_path / "syn_plan.json").read_text())
    check_plan(p)
    _, outputs = run_plan(p)
    assert all(out == wanted_output(p, r) for r, out in enumerate(outputs))

