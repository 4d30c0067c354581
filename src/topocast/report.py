"""Reports of paper reproductions: tables with the paper's values beside ours.

A cell may be a plain value or a :class:`Compare` (ours, the paper's, and
whether they match).  A :class:`Claim` records a qualitative statement of a
paper, confirmed or refuted, with the numbers behind the verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .fileio import write_csv, write_json


@dataclass(frozen=True)
class Compare:
    """Our value beside the paper's; ``rel_tol`` 0 means exact equality."""

    ours: Any
    paper: Any
    rel_tol: float = 0.0

    @property
    def match(self) -> bool | None:
        if self.paper is None or self.ours is None:
            return None
        if isinstance(self.ours, (int, float)) and isinstance(self.paper, (int, float)):
            if self.rel_tol == 0:
                return self.ours == self.paper
            return math.isclose(self.ours, self.paper, rel_tol=self.rel_tol)
        return self.ours == self.paper

    def text(self) -> str:
        mark = {True: "✓", False: "✗", None: ""}[self.match]
        paper = "—" if self.paper is None else _fmt(self.paper)
        return f"{_fmt(self.ours)} | {paper} {mark}".rstrip()

    def as_json(self) -> dict:
        return {"ours": self.ours, "paper": self.paper, "match": self.match}


@dataclass(frozen=True)
class Claim:
    text: str
    confirmed: bool
    evidence: str

    def as_json(self) -> dict:
        return {"claim": self.text, "confirmed": self.confirmed, "evidence": self.evidence}


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)

    def compared(self) -> tuple[int, int]:
        """(cells that match, cells compared with a paper value)."""
        hits = total = 0
        for row in self.rows:
            for cell in row:
                if isinstance(cell, Compare) and cell.match is not None:
                    total += 1
                    hits += bool(cell.match)
        return hits, total

    def as_json(self) -> dict:
        return {
            "title": self.title,
            "columns": self.columns,
            "rows": [[c.as_json() if isinstance(c, Compare) else c for c in row] for row in self.rows],
            "notes": self.notes,
            "matched": self.compared()[0],
            "compared": self.compared()[1],
        }

    def csv_rows(self) -> tuple[list[str], list[list[Any]]]:
        header: list[str] = []
        for col, cell in zip(self.columns, self.rows[0] if self.rows else []):
            header += [f"{col}", f"{col} (paper)", f"{col} match"] if isinstance(cell, Compare) else [col]
        if not self.rows:
            header = list(self.columns)
        rows = []
        for row in self.rows:
            flat: list[Any] = []
            for cell in row:
                flat += [cell.ours, cell.paper, cell.match] if isinstance(cell, Compare) else [cell]
            rows.append(flat)
        return header, rows


@dataclass
class Report:
    name: str
    title: str
    tables: list[Table] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "tables": [t.as_json() for t in self.tables],
            "claims": [c.as_json() for c in self.claims],
            "figures": [str(f) for f in self.figures],
            "notes": self.notes,
        }

    def write(self, out: Path) -> list[Path]:
        """Write every table as CSV and the whole report as JSON into ``out``."""
        written = []
        for i, table in enumerate(self.tables):
            header, rows = table.csv_rows()
            slug = "".join(ch if ch.isalnum() else "_" for ch in table.title.lower()).strip("_")[:60]
            written.append(write_csv(out / f"{self.name}_{i:02d}_{slug}.csv", header, rows))
        written.append(write_json(out / f"{self.name}_report.json", self.as_json()))
        return written


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
