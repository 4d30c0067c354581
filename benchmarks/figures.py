"""The machine-readable side of a benchmark: its figures as rows, for ``benchmarks/run_all.py``.

Each benchmark keeps printing its figures for people and also records them::

    figures = Figures("bfs")
    figures.add("exact diameter", seconds, "s", target=2.0)          # pass when <= 2.0
    figures.add("speed-up vs networkx", ratio, "x", target=10, better="higher")
    figures.write(args.figures)                                      # --figures PATH, if given

``--figures PATH`` (added by :func:`add_argument`) writes the rows as a JSON
list to ``PATH``: ``{"benchmark", "figure", "value", "unit", "target",
"better", "pass"}``, ``pass`` ``None`` when the figure has no target.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path


def add_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--figures PATH``: write the figures as JSON rows to PATH (what run_all.py reads)."""
    parser.add_argument("--figures", metavar="PATH", default=None,
                        help="also write the figures as JSON rows to PATH (for benchmarks/run_all.py)")


def verdict(value: float, target: float | None, better: str) -> bool | None:
    """Whether ``value`` meets ``target`` (``better``: ``lower`` or ``higher``); ``None`` without a target."""
    if target is None or value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return bool(value <= target) if better == "lower" else bool(value >= target)


class Figures:
    """The figures one benchmark run measured."""

    def __init__(self, benchmark: str):
        self.benchmark = benchmark
        self.rows: list[dict] = []

    def add(self, figure: str, value: float, unit: str = "", target: float | None = None,
            better: str = "lower") -> float:
        """Record one figure (and return ``value``); ``better`` says which side of ``target`` passes."""
        if better not in ("lower", "higher"):
            raise ValueError(f"better: 'lower' or 'higher', got {better!r}")
        value = float(value)
        self.rows.append({"benchmark": self.benchmark, "figure": figure, "value": value, "unit": unit,
                          "target": target, "better": better, "pass": verdict(value, target, better)})
        return value

    def write(self, path: str | os.PathLike | None) -> None:
        """Write the rows as JSON to ``path`` (nothing when ``path`` is ``None``)."""
        if path is not None:
            Path(path).write_text(json.dumps(self.rows, indent=1) + "\n")
