"""SIGINT and SIGTERM end any command within 2 s: one line, exit 130 or 143, no half-written or temporary file."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

COMMANDS = {
    "reproduce": ["reproduce", "--quick", "--out", "{out}"],
    "multicast": ["reproduce", "multicast", "--quick", "--out", "{out}"],
    "run": ["run", "mesh:16x16", "multicast-qg", "--set", "load=0.5", "--set", "cycles=60000", "--csv",
            "{out}/series.csv"],
}


def _interrupt(argv: list[str], out: Path, sig: int, delay: float) -> tuple[int, str, float]:
    """Start ``topocast argv``, send ``sig`` after ``delay`` s; exit status, stderr, seconds to exit."""
    argv = [a.replace("{out}", str(out)) for a in argv]
    proc = subprocess.Popen(["topocast", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    sent = time.perf_counter()
    proc.send_signal(sig)
    try:
        _, stderr = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"{argv} did not end after signal {sig}")
    return proc.returncode, stderr, time.perf_counter() - sent


@pytest.mark.parametrize("name,sig,delay", [
    ("reproduce", signal.SIGINT, 0.3), ("reproduce", signal.SIGTERM, 1.5), ("reproduce", signal.SIGINT, 4.0),
    ("multicast", signal.SIGTERM, 2.0), ("run", signal.SIGINT, 3.0), ("run", signal.SIGTERM, 2.0),
])
def test_signal_ends_the_command(tmp_path, name, sig, delay):
    out = tmp_path / "out"
    out.mkdir()
    code, stderr, seconds = _interrupt(COMMANDS[name], out, sig, delay)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert code == (130 if sig == signal.SIGINT else 143), (code, stderr)
    assert seconds < 2.0, seconds
    assert len(lines) == 1 and "interrupted" in lines[0], stderr
    assert "Traceback" not in stderr
    assert not [p for p in out.rglob("*") if ".tmp" in p.name], list(out.rglob("*"))
    for path in out.rglob("*.json"):
        json.loads(path.read_text())  # every completed file is whole
    time.sleep(0.3)
    leftover = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True).stdout.split()
    assert not leftover, f"processes left running: {leftover}"
