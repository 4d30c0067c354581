"""Reports of paper reproductions: tables with a reference value beside ours, and claims.

A cell may be a plain value or a :class:`Compare`: our value beside a
reference of one of three kinds.  ``"paper"``: a value printed in the paper
(counted as a printed cell matched or mismatched); ``"closed_form"``: a closed
form of ours (counted as a closed-form check passed or failed);
``"setting"``: a value we chose or an input echoed back (shown, never
counted).  A :class:`Claim` records a qualitative statement of a paper,
confirmed or refuted from measured evidence, with the numbers behind the
verdict.  :class:`Tally` adds the counts up into the one-line summary of a
reproduction.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .fileio import write_csv, write_json

KINDS = ("paper", "closed_form", "setting")


@dataclass(frozen=True)
class Compare:
    """Our value beside a reference of ``kind``; ``rel_tol`` 0 means exact equality."""

    ours: Any
    paper: Any
    rel_tol: float = 0.0
    kind: str = "paper"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Compare kind must be one of {KINDS}, got {self.kind!r}")

    @property
    def match(self) -> bool | None:
        """Whether ours equals the reference; None for a setting or a missing value (not counted)."""
        if self.kind == "setting" or self.paper is None or self.ours is None:
            return None
        if isinstance(self.ours, (int, float)) and isinstance(self.paper, (int, float)):
            if self.rel_tol == 0:
                return self.ours == self.paper
            return math.isclose(self.ours, self.paper, rel_tol=self.rel_tol)
        return self.ours == self.paper

    def text(self) -> str:
        mark = {True: "✓", False: "✗", None: ""}[self.match]
        paper = "—" if self.paper is None else _fmt(self.paper)
        suffix = {"paper": "", "closed_form": " (closed form)", "setting": " (setting)"}[self.kind]
        return f"{_fmt(self.ours)} | {paper}{suffix} {mark}".rstrip()

    def as_json(self) -> dict:
        return {"ours": self.ours, "paper": self.paper, "match": self.match, "kind": self.kind}


@dataclass(frozen=True)
class Claim:
    text: str
    confirmed: bool
    evidence: str

    def as_json(self) -> dict:
        return {"claim": self.text, "confirmed": self.confirmed, "evidence": self.evidence}


@dataclass
class Tally:
    """Counts of compared cells per kind, and of claims."""

    printed_matched: int = 0
    printed_mismatched: int = 0
    closed_form_passed: int = 0
    closed_form_failed: int = 0
    settings_shown: int = 0
    claims_confirmed: int = 0
    claims_refuted: int = 0

    def add_cell(self, cell: Compare) -> None:
        if cell.kind == "setting":
            self.settings_shown += 1
        elif cell.match is None:
            return
        elif cell.kind == "paper":
            self.printed_matched += bool(cell.match)
            self.printed_mismatched += not cell.match
        else:
            self.closed_form_passed += bool(cell.match)
            self.closed_form_failed += not cell.match

    def __add__(self, other: Tally) -> Tally:
        return Tally(**{k: v + getattr(other, k) for k, v in asdict(self).items()})

    def cells(self) -> dict:
        return {k: v for k, v in asdict(self).items() if not k.startswith("claims")}

    def line(self, name: str) -> str:
        printed = self.printed_matched + self.printed_mismatched
        closed = self.closed_form_passed + self.closed_form_failed
        text = (f"summary {name}: printed cells {self.printed_matched}/{printed} matched "
                f"({self.printed_mismatched} mismatched), closed-form checks {self.closed_form_passed}/{closed}, "
                f"claims {self.claims_confirmed} confirmed / {self.claims_refuted} refuted")
        if self.settings_shown:
            text += f", {self.settings_shown} settings shown (not counted)"
        return text


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)

    def tally(self) -> Tally:
        tally = Tally()
        for row in self.rows:
            for cell in row:
                if isinstance(cell, Compare):
                    tally.add_cell(cell)
        return tally

    def compared(self) -> tuple[int, int]:
        """(cells that agree, cells checked): printed and closed-form cells, never settings."""
        t = self.tally()
        return (t.printed_matched + t.closed_form_passed,
                t.printed_matched + t.printed_mismatched + t.closed_form_passed + t.closed_form_failed)

    def as_json(self) -> dict:
        hits, total = self.compared()
        return {
            "title": self.title,
            "columns": self.columns,
            "rows": [[c.as_json() if isinstance(c, Compare) else c for c in row] for row in self.rows],
            "notes": self.notes,
            "matched": hits,
            "compared": total,
            "counts": self.tally().cells(),
        }

    def csv_rows(self) -> tuple[list[str], list[list[Any]]]:
        header: list[str] = []
        for col, cell in zip(self.columns, self.rows[0] if self.rows else [], strict=False):
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

    def tally(self) -> Tally:
        total = Tally()
        for table in self.tables:
            total = total + table.tally()
        total.claims_confirmed = sum(bool(c.confirmed) for c in self.claims)
        total.claims_refuted = len(self.claims) - total.claims_confirmed
        return total

    def summary_line(self) -> str:
        return self.tally().line(self.name)

    def as_json(self) -> dict:
        tally = self.tally()
        return {
            "name": self.name,
            "title": self.title,
            "tables": [t.as_json() for t in self.tables],
            "claims": [c.as_json() for c in self.claims],
            "figures": [str(f) for f in self.figures],
            "notes": self.notes,
            "summary": {**asdict(tally), "line": tally.line(self.name)},
        }

    def write(self, out: Path) -> list[Path]:
        """Write every table as CSV and the whole report as JSON into ``out``."""
        written = []
        for i, table in enumerate(self.tables):
            header, rows = table.csv_rows()
            slug = "".join(ch if ch.isalnum() else "_" for ch in table.title.lower()).strip("_")[:60]
            written.append(write_csv(Path(out) / f"{self.name}_{i:02d}_{slug}.csv", header, rows))
        written.append(write_json(Path(out) / f"{self.name}_report.json", self.as_json()))
        return written


def total_line(reports: list[Report]) -> str:
    """The summary line over several reproductions."""
    total = Tally()
    for report in reports:
        total = total + report.tally()
    return total.line("all")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
