"""Every bad input gets one clear line and exit status 2, never a traceback or a hang.

The command-line corpus lives in ``tests/data/bad_inputs.toml`` (add a case
there); most cases run in process through :func:`topocast.cli.main`, a sample
as real subprocesses of the ``topocast`` script.  API cases are below, and
hypothesis throws generated specs and ``--set`` values at the same invariant:
a clean error or a valid result.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.cli import main
from topocast.execution.routing import route

CORPUS = tomllib.loads((Path(__file__).parent / "data" / "bad_inputs.toml").read_text())["case"]


@pytest.fixture
def places(tmp_path):
    """The placeholders of the corpus: a fresh directory, a directory, a regular file, an XML file cut short,
    an empty file and a FIFO in it."""
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("x")
    (tmp_path / "cut.xml").write_text('<algo name="x" nchunksperloop="1" nchannels="1" ngpus="2"')
    (tmp_path / "empty").write_text("")
    os.mkfifo(tmp_path / "fifo")
    return {"{tmp}": str(tmp_path), "{dir}": str(tmp_path / "d"), "{file}": str(tmp_path / "f"),
            "{cut}": str(tmp_path / "cut.xml"), "{empty}": str(tmp_path / "empty"), "{fifo}": str(tmp_path / "fifo")}


def _fill(argv: list[str], places: dict[str, str]) -> list[str]:
    out = []
    for arg in argv:
        for key, value in places.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return out


def run_in_process(argv: list[str]) -> tuple[int, str, str, float]:
    """``topocast argv`` in this process: exit status, stdout, stderr, seconds."""
    stdout, stderr = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            main(list(argv))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
    return code, stdout.getvalue(), stderr.getvalue(), time.perf_counter() - start


def assert_clean_error(code: int, stderr: str, seconds: float, expect: str, timeout: float) -> None:
    """Exit 2, one non-empty stderr line naming ``expect``, no traceback, within ``timeout``."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr, stderr
    assert code == 2, (code, stderr)
    assert len(lines) == 1, stderr
    assert lines[0].startswith("topocast: error: "), lines[0]
    assert expect in lines[0], (expect, lines[0])
    assert seconds < timeout, seconds


def _case_id(case: dict) -> str:
    return f"{case['kind']}:{' '.join(case['argv'])[:60]}"


def test_corpus_is_large_and_varied():
    kinds = {case["kind"] for case in CORPUS}
    assert len(CORPUS) >= 150
    assert {"spec", "param", "file", "seed", "engine", "route", "reproduce", "usage", "memory"} <= kinds
    commands = {case["argv"][0] for case in CORPUS}
    assert {"info", "run", "route", "reproduce", "list"} <= commands


@pytest.mark.parametrize("case", CORPUS, ids=_case_id)
def test_bad_input_in_process(case, places):
    code, _, stderr, seconds = run_in_process(_fill(case["argv"], places))
    assert_clean_error(code, stderr, seconds, case["expect"], case.get("timeout", 10))


SAMPLE = [case for i, case in enumerate(CORPUS) if i % 12 == 0]


@pytest.mark.parametrize("case", SAMPLE, ids=_case_id)
def test_bad_input_subprocess(case, places):
    """A sample through the real script: start-up, the supervisor process and stderr included."""
    argv = _fill(case["argv"], places)
    start = time.perf_counter()
    proc = subprocess.run(["topocast", *argv], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "200"})
    assert_clean_error(proc.returncode, proc.stderr, time.perf_counter() - start, case["expect"],
                       case.get("timeout", 10) + 20)


def test_debug_shows_the_traceback(tmp_path):
    proc = subprocess.run(["topocast", "info", "ring:1", "--debug"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" in proc.stderr and "TopocastError" in proc.stderr
    proc = subprocess.run(["topocast", "info", "ring:1"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TOPOCAST_DEBUG": "1"})
    assert "Traceback" in proc.stderr


def test_output_checked_before_the_work(tmp_path):
    """--out naming a file is refused at once, not after the whole reproduction."""
    (tmp_path / "f").write_text("x")
    code, _, stderr, seconds = run_in_process(["reproduce", "all", "--out", str(tmp_path / "f")])
    assert_clean_error(code, stderr, seconds, "--out", 3)


def test_files_get_the_umask_mode(tmp_path):
    old = os.umask(0o022)
    try:
        code, _, stderr, _ = run_in_process(["info", "torus:4x4", "--csv", str(tmp_path / "d.csv")])
    finally:
        os.umask(old)
    assert code == 0, stderr
    assert (tmp_path / "d.csv").stat().st_mode & 0o777 == 0o644
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


def test_seed_is_echoed_and_the_largest_accepted():
    for spec, alg in [("hypercube:3", "broadcast-binomial"), ("clos:n=2,m=3,r=4", "clos-permutation-routing")]:
        code, out, stderr, _ = run_in_process(["run", spec, alg, "--seed", str(2**63 - 1), "--json"])
        assert code == 0, stderr
        assert f'"seed": {2**63 - 1}' in out


def test_route_on_every_family_and_labels():
    for spec in ("gft:h=2,m=4,w=2", "clos:n=2,m=3,r=4", "butterfly:n=3", "ring:8", "torus:4x4"):
        data = route(spec, 0, 5)
        assert data["path_indices"][0] == 0 and data["path_indices"][-1] == 5
    assert route("torus:4x4", "1,2", "3,3")["to"] == [3, 3]
    assert "no routing function" in route("gft:h=2,m=4,w=2", "0", "5")["note"]
    code, out, stderr, _ = run_in_process(["route", "clos:n=2,m=3,r=4", "--from", "0", "--to", "5"])
    assert code == 0 and "no routing function" in out, stderr


# -- the Python API --------------------------------------------------------------------------------------

API_CASES = [
    ("root='3'", lambda: tc.run("hypercube:3", "broadcast-binomial", root="3"), "root"),
    ("root=1.5", lambda: tc.run("hypercube:3", "broadcast-binomial", root=1.5), "root"),
    ("root=True", lambda: tc.run("hypercube:3", "broadcast-binomial", root=True), "root"),
    ("root=99", lambda: tc.run("hypercube:3", "broadcast-binomial", root=99), "root"),
    ("seed=1.5", lambda: tc.run("hypercube:3", "broadcast-binomial", seed=1.5), "seed"),
    ("seed=-1", lambda: tc.run("hypercube:3", "broadcast-binomial", seed=-1), "seed"),
    ("seed='1'", lambda: tc.run("hypercube:3", "broadcast-binomial", seed="1"), "seed"),
    ("seed=True", lambda: tc.run("hypercube:3", "broadcast-binomial", seed=True), "seed"),
    ("seed=2**63", lambda: tc.run("hypercube:3", "broadcast-binomial", seed=2**63), "seed"),
    ("max_memory='8X'", lambda: tc.run("hypercube:3", "broadcast-binomial", max_memory="8X"), "max_memory"),
    ("max_memory=nan", lambda: tc.info("hypercube:3", max_memory=math.nan), "max_memory"),
    ("max_memory=inf", lambda: tc.build("hypercube:3", max_memory=math.inf), "max_memory"),
    ("max_memory=-1", lambda: tc.build("hypercube:3", max_memory=-1), "max_memory"),
    ("max_memory=True", lambda: tc.build("hypercube:3", max_memory=True), "max_memory"),
    ("max_memory=[]", lambda: tc.build("hypercube:3", max_memory=[]), "max_memory"),
    ("from_networkx('x')", lambda: tc.Topology.from_networkx("x"), "graph"),
    ("from_networkx(None)", lambda: tc.Topology.from_networkx(None), "graph"),
    ("build(3)", lambda: tc.build(3), "spec"),
    ("build(None)", lambda: tc.build(None), "spec"),
    ("build(hypercube:2000)", lambda: tc.build("hypercube:2000"), "nodes"),
    ("info(3)", lambda: tc.info(3), "spec"),
    ("info distances='x'", lambda: tc.info("ring:4", distances="x"), "distances"),
    ("run algorithm=3", lambda: tc.run("ring:4", 3), "algorithm"),
    ("run algorithm=[]", lambda: tc.run("ring:4", []), "algorithm"),
    ("run engine=3", lambda: tc.run("ring:4", "broadcast-ring", engine=3), "engine"),
    ("run engine='x'", lambda: tc.run("ring:4", "broadcast-ring", engine="x"), "engine"),
    ("run unknown param", lambda: tc.run("ring:4", "broadcast-ring", zz=1), "zz"),
    ("run ports=-1", lambda: tc.run("hypercube:3", "broadcast-binomial", ports=-1), "ports"),
    ("run message_bytes=True", lambda: tc.run("hypercube:3", "broadcast-binomial", message_bytes=True),
     "message_bytes"),
    ("run startup=nan", lambda: tc.run("hypercube:3", "broadcast-binomial", startup=math.nan), "startup"),
    ("run load=5", lambda: tc.run("mesh:8x8", "multicast-dp", load=5), "load"),
    ("run load=nan", lambda: tc.run("mesh:8x8", "unicast-ecube", load=math.nan), "load"),
    ("run wrong family", lambda: tc.run(tc.build("ring:4"), "broadcast-binomial"), "hypercube"),
    ("execute(None)", lambda: tc.execute(None, None, "step"), "engine"),
    ("execute bad engine", lambda: tc.execute(tc.build("ring:4"), None, "zzz"), "engine"),
    ("route to 9", lambda: route("ring:4", 0, 9), "target"),
    ("route from -1", lambda: route("ring:4", -1, 2), "source"),
    ("route from True", lambda: route("ring:4", True, 2), "source"),
    ("route from 1.5", lambda: route("ring:4", 1.5, 2), "source"),
    ("route from None", lambda: route("ring:4", None, 2), "source"),
    ("route to 'x'", lambda: route("torus:4x4", 0, "x"), "target"),
    ("route max_memory=nan", lambda: route("ring:4", 0, 1, max_memory=math.nan), "max_memory"),
    ("parse_spec(5)", lambda: tc.parse_spec(5), "spec"),
]


@pytest.mark.parametrize("call,expect", [(f, e) for _, f, e in API_CASES], ids=[n for n, _, _ in API_CASES])
def test_api_bad_input(call, expect):
    start = time.perf_counter()
    with pytest.raises(tc.TopocastError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and expect in message, message
    assert time.perf_counter() - start < 10


# -- generated inputs ------------------------------------------------------------------------------------

FAMILIES = ["ring", "path", "complete", "mesh", "torus", "hypercube", "ej", "gft", "galaxy", "galaxyfly", "dragonfly",
            "hdn", "rdn", "dualcube", "ccc", "clos", "butterfly", "benes", "omega", "baseline", "butterfly-butterfly",
            "product", "zz"]
KEYS = ["n", "a", "b", "h", "m", "w", "q", "g", "d", "k", "r", "s", "p", "base", "dims", "n2", "m2"]
VALUES = st.one_of(st.integers(-3, 40).map(str), st.sampled_from(["nan", "inf", "-inf", "1e400", "1.5", "", "x",
                                                                  "2x3", "Q3", "6/15", "true", "99999999999999"]),
                   st.text(alphabet="0123456789x,=:/*.-eQK", max_size=8))


@st.composite
def spec_strings(draw):
    family = draw(st.sampled_from(FAMILIES))
    items = draw(st.lists(st.tuples(st.one_of(st.none(), st.sampled_from(KEYS)), VALUES), max_size=3))
    body = ",".join(value if key is None else f"{key}={value}" for key, value in items)
    return f"{family}:{body}" if draw(st.booleans()) or body else family


def _clean_or_valid(argv: list[str]) -> None:
    code, _, stderr, seconds = run_in_process(argv)
    assert "Traceback" not in stderr, (argv, stderr)
    assert code in (0, 1, 2), (argv, code, stderr)
    if code == 2:
        assert len([line for line in stderr.splitlines() if line.strip()]) == 1, (argv, stderr)
    assert seconds < 20, (argv, seconds)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec_strings())
def test_generated_specs_never_traceback(spec):
    _clean_or_valid(["info", spec, "--no-distances", "--max-memory", "64M"])


ALGORITHMS = [("hypercube:3", "broadcast-binomial"), ("ring:6", "allgather-ring"), ("mesh:4x4", "unicast-ecube"),
              ("galaxyfly:n=3,q=5,a=4", "router-packet-collection"), ("clos:n=2,m=3,r=4", "clos-permutation-routing")]
SET_KEYS = ["root", "message_bytes", "startup", "per_byte", "per_hop", "ports", "duplex", "load", "cycles", "flits",
            "batches", "supernode", "router", "permutations", "packet_size", "setup", "warmup", "zz"]


@pytest.fixture(scope="module")
def compiled_engines():
    """One small run per target first: the time limit is about bad input, not a cold numba compile."""
    for spec, algorithm in ALGORITHMS:
        run_in_process(["run", spec, algorithm, "--json", "--set", "cycles=200"] if algorithm == "unicast-ecube"
                       else ["run", spec, algorithm, "--json"])


@pytest.mark.usefixtures("compiled_engines")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ALGORITHMS), st.lists(st.tuples(st.sampled_from(SET_KEYS), VALUES), max_size=2))
def test_generated_settings_never_traceback(target, items):
    spec, algorithm = target
    argv = ["run", spec, algorithm, "--json", "--max-memory", "256M"]
    for key, value in items:
        argv += ["--set", f"{key}={value}"]
    if algorithm == "unicast-ecube" and all(key != "cycles" for key, _ in items):
        argv += ["--set", "cycles=200"]
    _clean_or_valid(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
