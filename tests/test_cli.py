"""The command line: JSON keys, exit statuses, one-line errors, no tracebacks."""

import json
import subprocess
import sys

import pytest

from topocast import registry
from topocast.cli import main
from topocast.plans.schedule import ScheduleBuilder
from topocast.registry import Algorithm


def cli(capsys, *args):
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def test_info_torus_json(capsys):
    code, out, _ = cli(capsys, "info", "torus:10x10x10", "--json")
    data = json.loads(out)
    assert code == 0
    # by hand: 10^3 nodes, 3 links per node, degree 2 * 3, diameter 3 * (10 // 2); a ring of 10 sums
    # 0+1+2+3+4+5+4+3+2+1 = 25 distances from one node, so one node's total is 3 * 25 * 10^2 = 7500
    assert (data["nodes"], data["edges"], data["degree"]["min"], data["degree"]["max"], data["diameter"]) == \
        (1000, 3000, 6, 6, 15) == (10 ** 3, 3 * 10 ** 3, 2 * 3, 2 * 3, 3 * (10 // 2))
    assert data["average_distance"] == pytest.approx(7500 / 999)
    assert 3 * sum(min(i, 10 - i) for i in range(10)) * 10 ** 2 == 7500
    assert sum(data["distance_distribution"]) == 1000 * 1000


def test_run_recursive_doubling_json(capsys):
    code, out, _ = cli(capsys, "run", "hypercube:6", "allgather-recursive-doubling", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["verified"] and data["exactly_once"] and data["redundant_receipts"] == 0
    assert data["steps"] == 6 and len(data["per_step"]["senders"]) == 6  # log2(64) exchanges
    assert data["lower_bound_ratio"] == 1.0


def test_run_event_engine_with_settings_and_csv(capsys, tmp_path):
    target = tmp_path / "steps.csv"
    code, out, _ = cli(capsys, "run", "torus:4x4", "alltoall-mesh", "--engine", "event", "--set", "startup=2",
                       "--set", "per_byte=0.5", "--set", "message_bytes=1", "--json", "--csv", str(target))
    assert code == 0
    data = json.loads(out)
    # Grama et al.'s mesh all-to-all, (2 ts + tw m p)(sqrt(p) - 1) with ts = 2, tw = 0.5, m = 1, p = 16: 12 * 3
    assert data["time"] == pytest.approx(2 * (3 * 2 + 4 * 0.5 * 6))
    grama = (2 * 2 + 0.5 * 1 * 16) * (4 - 1)
    assert data["time"] == pytest.approx(grama)
    assert target.read_text().startswith("metric,value")


@pytest.mark.parametrize("args, needle", [
    (["info", "nosuch:3"], "unknown family 'nosuch'"),
    (["info", "mesh:16y16"], "parameter 'dims' must be"),
    (["info", "torus:0x4"], "'dims' must be >= 2"),
    (["info", "ring:-4"], "'n' must be >= 2"),
    (["info", "torus:4x4,depth=2"], "unknown parameter 'depth'"),
    (["info", "hypercube:28", "--max-memory", "1G"], "max-memory"),
    (["info", "ring:8", "--max-memory", "lots"], "max-memory"),
    (["run", "ring:8", "nosuch"], "unknown algorithm 'nosuch'"),
    (["run", "ring:8", "broadcast-ring", "--set", "root"], "--set: expected key=value"),
    (["run", "ring:8", "broadcast-ring", "--set", "root=x"], "parameter 'root' must be an integer"),
    (["run", "ring:8", "broadcast-binomial"], "runs on hypercube"),
    (["reproduce", "nosuch"], "unknown reproduction 'nosuch'"),
    (["info", "ring:8", "--bogus"], "No such option"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, needle):
    code, out, err = cli(capsys, *args)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err + out


def test_verification_failure_exits_1_with_the_first_violation(capsys):
    def broken(topology, **_):
        """A plan with a transfer between two nodes that are not linked (0 and 2 of a 4-ring)."""
        b = ScheduleBuilder(topology.num_nodes, origin=[0], collective="broadcast")
        b.add(src=[0, 0], dst=[1, 3], first=0, step=0)
        b.add(src=[1, 0], dst=[2, 2], first=0, step=1)
        return b.build()

    registry.algorithm("broadcast-ring")  # load the registry first
    registry.register_algorithm(Algorithm("test-broken", broken, "broadcast", "always fails"))
    try:
        code, _, err = cli(capsys, "run", "ring:4", "test-broken")
    finally:
        del registry._REG.algorithms["test-broken"]
    assert code == 1
    assert "transfer 3 (step 1) 0 -> 2" in err and "no link" in err


def test_console_script_has_no_traceback_on_bad_input():
    proc = subprocess.run([sys.executable, "-m", "topocast.cli", "info", "mesh:0x0"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "topocast: error: mesh: parameter 'dims' must be >= 2, got 0"


def test_list_json_has_every_family_and_algorithm(capsys):
    code, out, _ = cli(capsys, "list", "--json")
    data = json.loads(out)
    names = {f["name"] for f in data["families"]}
    assert {"ring", "path", "complete", "mesh", "torus", "hypercube", "product"} <= names
    algs = {a["name"] for a in data["algorithms"]}
    assert {"broadcast-binomial", "allgather-recursive-doubling", "alltoall-mesh"} <= algs
    assert "classic" in {e["name"] for e in data["reproductions"]}


def test_route_falls_back_to_shortest_path(capsys):
    code, out, _ = cli(capsys, "route", "mesh:4x4", "--from", "0,0", "--to", "3,2", "--json")
    data = json.loads(out)
    assert code == 0 and data["length"] == data["shortest"] == 5 == abs(3 - 0) + abs(2 - 0)  # Manhattan distance
    assert data["path"][0] == [0, 0] and data["path"][-1] == [3, 2]


def test_reproduce_classic_writes_files(capsys, tmp_path):
    code, out, _ = cli(capsys, "reproduce", "classic", "--quick", "--json", "--out", str(tmp_path))
    assert code == 0
    data = json.loads(out)
    table = data["tables"][0]
    assert table["compared"] > 10 and table["matched"] == table["compared"]
    assert (tmp_path / "classic_report.json").exists()
    assert not list(tmp_path.glob(".*.tmp"))


def test_memory_guard_covers_verification_state(capsys):
    code, _, err = cli(capsys, "run", "hypercube:12", "alltoall-hypercube", "--max-memory", "100M")
    # refused before planning: 4096 nodes hold 4096**2 = 16777216 messages, 2**36 (node, message) pairs
    assert code == 2 and "max-memory: alltoall-hypercube on 4096 nodes (alltoall, 16777216 messages" in err
