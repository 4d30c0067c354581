"""Run every benchmark in benchmarks/ and print their figures as one table, with the machine's load average.

    python benchmarks/run_all.py                  # every benchmark at full size; rewrites docs/performance.md's table
    python benchmarks/run_all.py --quick          # a short smoke run (small sizes, heavy benchmarks skipped)
    python benchmarks/run_all.py --only startup build
    python benchmarks/run_all.py --quick --write  # also write the quick table into docs/performance.md

Each benchmark runs as its own process (``python benchmarks/NAME.py ARGS
--figures FILE``), so its memory and its compiled-kernel loading are its
own; its usual output is shown as it runs, and the figures it writes
(:mod:`figures`) are collected into one table: benchmark, figure, value,
unit, target, pass/fail.  The load average (``os.getloadavg``) is taken at
the start and at the end: on a busy machine every time grows.  The table
goes between ``<!-- bench:begin -->`` and ``<!-- bench:end -->`` in
docs/performance.md (a full run writes it unless ``--no-write``; a
``--quick`` run only with ``--write``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOC = HERE.parent / "docs" / "performance.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


@dataclass(frozen=True)
class Benchmark:
    """A script of benchmarks/ with its arguments for a full run and for ``--quick`` (``None``: skipped)."""

    name: str
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] | None = None


BENCHMARKS = (
    Benchmark("startup", ("--runs", "9"), ("--runs", "3")),
    Benchmark("build", ("--runs", "7"), ("--runs", "3")),
    Benchmark("bfs", (), ("--quick",)),
    Benchmark("step_engine", ("--repeats", "5"), ("--n", "12", "--repeats", "1")),
    Benchmark("generic_broadcast", (), ("--spec", "torus:32x32x32")),
    Benchmark("faults", (), ("--spec", "torus:32x32x32")),
    Benchmark("collective_scale", (), ("--quick", "--series", "allgather-step", "alltoall-event")),
    Benchmark("fattree", (), ("--h", "2", "--m", "4", "--w", "4", "--rls-n", "8")),
    Benchmark("wormhole", (), ("--small",)),
    # the whole validation (16 readings, each under both VC-release rules, 3-6 min) runs by hand:
    # python benchmarks/booksim_validation.py
    Benchmark("booksim_validation", ("--quick",), ("--quick",)),
    Benchmark("booksim_speed", (), ("--runs", "3", "--no-process")),
    Benchmark("galaxyfly", ()),
    Benchmark("synthesis", (), ("classic",)),
    Benchmark("hdn", ()),
    Benchmark("ej_broadcast", ()),
    Benchmark("sweep", ()),
    Benchmark("reproduce", ("--full",), ("--runs", "1", "--fresh-runs", "0")),
    Benchmark("reductions", (), ("--quick",)),
    Benchmark("links", (), ("--quick",)),
    Benchmark("topologies", (), ("--polarfly", "31", "--slimfly", "19", "--terminals", "1000", "--radix", "32")),
)


def load_average() -> tuple[float, float, float]:
    try:
        return os.getloadavg()
    except OSError:  # pragma: no cover - not on this platform
        return (float("nan"),) * 3


def run_benchmark(bench: Benchmark, quick: bool, echo=None) -> list[dict]:
    """Run one benchmark as a process and return its figure rows (a failing row when it fails)."""
    args = bench.quick if quick else bench.full
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "figures.json"
        command = [sys.executable, str(HERE / f"{bench.name}.py"), *args, "--figures", str(out)]
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=HERE.parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        for line in proc.stdout:
            if echo is not None:
                echo(f"  {line.rstrip()}")
        code = proc.wait()
        seconds = time.perf_counter() - start
        rows = json.loads(out.read_text()) if out.exists() else []
    if code != 0:
        rows.append({"benchmark": bench.name, "figure": f"exit status {code}", "value": float(code), "unit": "",
                     "target": 0, "better": "lower", "pass": False})
    rows.append({"benchmark": bench.name, "figure": "whole benchmark (wall)", "value": seconds, "unit": "s",
                 "target": None, "better": "lower", "pass": None})
    return rows


def number(value: float | None) -> str:
    """A figure in a table: 3 significant digits, thousands separated."""
    if value is None:
        return ""
    value = float(value)
    if value != value:  # NaN
        return "nan"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def verdict(row: dict) -> str:
    return {True: "pass", False: "FAIL", None: ""}[row.get("pass")]


def target_text(row: dict) -> str:
    if row.get("target") is None:
        return ""
    return ("<= " if row.get("better", "lower") == "lower" else ">= ") + number(row["target"])


def table(rows: list[dict]) -> str:
    """The rows as one markdown table: benchmark, figure, value, unit, target, pass/fail."""
    lines = ["| benchmark | figure | value | unit | target | pass |", "|---|---|---:|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['benchmark']} | {row['figure']} | {number(row['value'])} | {row['unit']} | "
                     f"{target_text(row)} | {verdict(row)} |")
    return "\n".join(lines) + "\n"


def header(quick: bool, load_start, load_end, seconds: float, skipped: list[str]) -> str:
    """What the table was measured on: date, mode, machine, load average at the start and the end."""
    def load(values) -> str:
        return " / ".join(f"{x:.2f}" for x in values)

    mode = "`python benchmarks/run_all.py --quick` (smoke run: small sizes)" if quick else \
        "`python benchmarks/run_all.py`"
    lines = [f"Generated by {mode} on {datetime.date.today().isoformat()}: {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, {seconds:.0f} s in all.",
             "",
             f"Load average (1 / 5 / 15 min) at the start {load(load_start)}, at the end {load(load_end)}."]
    if skipped:
        lines.append(f"Not run in this mode: {', '.join(skipped)}.")
    return "\n".join(lines) + "\n"


def splice(text: str, body: str) -> str:
    """``text`` with everything between the markers replaced by ``body`` (markers added at the end if absent)."""
    if BEGIN not in text or END not in text:
        return text.rstrip("\n") + f"\n\n{BEGIN}\n{body}{END}\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{body}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes; benchmarks without a small mode skipped")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these benchmarks")
    parser.add_argument("--write", action="store_true", help="write the table into docs/performance.md (--quick)")
    parser.add_argument("--no-write", action="store_true", help="do not write docs/performance.md")
    parser.add_argument("--json", metavar="PATH", help="also write every row as JSON to PATH")
    args = parser.parse_args(argv)
    known = {b.name for b in BENCHMARKS}
    for name in args.only or ():
        if name not in known:
            parser.error(f"--only: unknown benchmark '{name}' (known: {', '.join(sorted(known))})")
    chosen = [b for b in BENCHMARKS if not args.only or b.name in args.only]
    skipped = [b.name for b in chosen if args.quick and b.quick is None]
    load_start, start = load_average(), time.perf_counter()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in load_start)}", flush=True)
    rows: list[dict] = []
    for bench in chosen:
        if args.quick and bench.quick is None:
            print(f"== {bench.name}: skipped in --quick", flush=True)
            continue
        print(f"== {bench.name}", flush=True)
        rows += run_benchmark(bench, args.quick, echo=lambda line: print(line, flush=True))
    load_end = load_average()
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in load_end)}\n")
    body = header(args.quick, load_start, load_end, time.perf_counter() - start, skipped) + "\n" + table(rows)
    print(body)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    if (args.write or not (args.quick or args.only)) and not args.no_write:
        DOC.write_text(splice(DOC.read_text(), body))
        print(f"wrote the table into {DOC.relative_to(HERE.parent)}")
    return 1 if any(r.get("pass") is False for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
