"""benchmarks/run_all.py: its table, its splice into docs/performance.md, and one benchmark run through it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def runner():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("run_all", BENCH / "run_all.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["run_all"] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("run_all", None)
        sys.path.remove(str(BENCH))


def test_every_benchmark_script_is_in_the_runner(runner):
    scripts = {p.stem for p in BENCH.glob("*.py")} - {"run_all", "figures"}
    assert scripts == {b.name for b in runner.BENCHMARKS}
    for path in BENCH.glob("*.py"):
        if path.stem not in ("run_all", "figures"):
            assert "add_argument" in path.read_text() or "--figures" in path.read_text(), path.name


def test_figures_and_the_table(runner):
    from figures import Figures

    figures = Figures("demo")
    figures.add("build", 0.03, "s", target=0.2)
    figures.add("rate", 1.5e6, "transfers/s", target=2e6, better="higher")
    figures.add("peak", 0.78, "GiB")
    assert [r["pass"] for r in figures.rows] == [True, False, None]
    text = runner.table(figures.rows)
    lines = text.splitlines()
    assert lines[0] == "| benchmark | figure | value | unit | target | pass |"
    assert lines[2] == "| demo | build | 0.03 | s | <= 0.2 | pass |"
    assert lines[3] == "| demo | rate | 1,500,000 | transfers/s | >= 2,000,000 | FAIL |"
    assert lines[4] == "| demo | peak | 0.78 | GiB |  |  |"
    with pytest.raises(ValueError):
        figures.add("x", 1, better="sideways")


def test_header_names_the_load_average(runner):
    text = runner.header(True, (1.5, 1.0, 0.5), (2.0, 1.25, 0.5), 12.0, ["hdn"])
    assert "--quick" in text and "1.50 / 1.00 / 0.50" in text and "2.00 / 1.25 / 0.50" in text
    assert "Not run in this mode: hdn." in text


def test_splice_replaces_the_marked_section_only(runner):
    text = f"# Performance\nintro\n{runner.BEGIN}\nold\n{runner.END}\nrest\n"
    assert runner.splice(text, "new\n") == f"# Performance\nintro\n{runner.BEGIN}\nnew\n{runner.END}\nrest\n"
    assert runner.splice("no markers\n", "t\n").endswith(f"{runner.BEGIN}\nt\n{runner.END}\n")
    doc = runner.DOC.read_text()
    assert doc.count(runner.BEGIN) == 1 and doc.count(runner.END) == 1


def test_one_benchmark_through_the_runner_in_quick_mode(runner):
    bench = next(b for b in runner.BENCHMARKS if b.name == "build")
    lines = []
    rows = runner.run_benchmark(bench, quick=True, echo=lines.append)
    figures = {r["figure"]: r for r in rows}
    torus = figures["build torus:100x100x100"]
    assert torus["unit"] == "s" and 0 < torus["value"] < 60 and torus["target"] == 0.2
    assert not [r for r in rows if r["figure"].startswith("exit status")], lines  # the arrays checked equal
    assert any("same arrays as torus:100x100x100: True" in line for line in lines)
    assert rows[-1]["figure"] == "whole benchmark (wall)"
