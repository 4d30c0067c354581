"""Reports of paper reproductions: tables with a reference value beside ours, and claims.

A cell may be a plain value or a :class:`Compare`: our value beside a
reference of one of five kinds.  ``"paper"``: a value printed in the paper
(counted as a printed cell matched or mismatched); ``"not_comparable"``: a
value printed in the paper that ours cannot be held against, because the
model behind it is not stated (counted apart as a printed cell not
comparable, never as a match or a mismatch); ``"derived"``: a number
computed from printed values only, such as the ratio of two printed cells
(counted apart from printed cells); ``"closed_form"``: a closed form of ours
(counted as a closed-form check passed or failed); ``"setting"``: a value we
chose or an input echoed back (shown, never counted).  A :class:`Claim`
records a qualitative statement of a paper, confirmed or refuted from
measured evidence, with the numbers behind the verdict.  :class:`Tally` adds
the counts up into the one-line summary of a reproduction, and
:func:`findings` turns verdicts and counts into the few sentences a report
opens with.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..infra.fileio import write_csv, write_json

KINDS = ("paper", "not_comparable", "derived", "closed_form", "setting")
#: how a kind is named beside a value (the printed kind needs no name)
KIND_LABELS = {"paper": "", "not_comparable": "not comparable", "derived": "derived",
               "closed_form": "closed form", "setting": "setting"}


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
        """Whether ours equals the reference; None for a setting, a value not comparable or a missing value
        (not counted as a match or a mismatch)."""
        if self.kind in ("setting", "not_comparable") or self.paper is None or self.ours is None:
            return None
        if isinstance(self.ours, (int, float)) and isinstance(self.paper, (int, float)):
            if self.rel_tol == 0:
                return self.ours == self.paper
            return math.isclose(self.ours, self.paper, rel_tol=self.rel_tol)
        return self.ours == self.paper

    def text(self) -> str:
        mark = {True: "✓", False: "✗", None: ""}[self.match]
        paper = "—" if self.paper is None else _fmt(self.paper)
        suffix = f" ({KIND_LABELS[self.kind]})" if KIND_LABELS[self.kind] else ""
        return f"{_fmt(self.ours)} | {paper}{suffix} {mark}".rstrip()

    def as_json(self) -> dict:
        return {"ours": self.ours, "paper": self.paper, "match": self.match, "kind": self.kind}


@dataclass(frozen=True)
class Claim:
    """A qualitative statement of a paper; ``confirmed`` is the verdict under our default reading.

    ``readings`` maps each reading of an open modelling choice (for example ``"avg_channel=used"``) to the
    verdict under it; a claim whose verdicts differ *depends on the reading*.  The default reading's verdict
    is ``confirmed``, so the confirmed / refuted counts do not change when readings are added.
    """

    text: str
    confirmed: bool
    evidence: str
    readings: dict = field(default_factory=dict, compare=False, hash=False)
    #: the number behind the default verdict in a few words ('MP below DP at 1 of 6 loads'); the report's
    #: opening sentences use it, else the evidence's first clause
    why: str = field(default="", compare=False)

    @property
    def depends(self) -> bool:
        """True when the verdict differs between the readings of an open modelling choice."""
        return len({bool(v) for v in self.readings.values()}) > 1

    @property
    def verdict(self) -> str:
        """'confirmed', 'refuted', or 'depends' (on the reading)."""
        if self.depends:
            return "depends"
        return "confirmed" if self.confirmed else "refuted"

    def readings_text(self) -> str:
        """'holds under X; refuted under Y', or '' without readings."""
        held = [k for k, v in self.readings.items() if v]
        failed = [k for k, v in self.readings.items() if not v]
        parts = ([f"holds under {', '.join(held)}"] if held else []) + \
                ([f"refuted under {', '.join(failed)}"] if failed else [])
        return "; ".join(parts)

    def short_why(self, limit: int = 160) -> str:
        """:attr:`why`, else the evidence up to its first ';' (cut at ``limit`` characters)."""
        text = self.why or self.evidence.split("; ")[0]
        return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"

    def as_json(self) -> dict:
        data = {"claim": self.text, "confirmed": self.confirmed, "evidence": self.evidence}
        if self.why:
            data["why"] = self.why
        if self.readings:
            data.update(readings={k: bool(v) for k, v in self.readings.items()}, verdict=self.verdict)
        return data


@dataclass
class Tally:
    """Counts of compared cells per kind, and of claims."""

    printed_matched: int = 0
    printed_mismatched: int = 0
    printed_not_comparable: int = 0
    derived_matched: int = 0
    derived_mismatched: int = 0
    closed_form_passed: int = 0
    closed_form_failed: int = 0
    settings_shown: int = 0
    claims_confirmed: int = 0
    claims_refuted: int = 0
    claims_depending: int = 0

    def add_cell(self, cell: Compare) -> None:
        if cell.kind == "setting":
            self.settings_shown += 1
        elif cell.kind == "not_comparable":
            self.printed_not_comparable += cell.paper is not None
        elif cell.match is None:
            return
        elif cell.kind == "paper":
            self.printed_matched += bool(cell.match)
            self.printed_mismatched += not cell.match
        elif cell.kind == "derived":
            self.derived_matched += bool(cell.match)
            self.derived_mismatched += not cell.match
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
        apart = f", {self.printed_not_comparable} not comparable" if self.printed_not_comparable else ""
        derived = self.derived_matched + self.derived_mismatched
        text = (f"summary {name}: printed cells {self.printed_matched}/{printed} matched "
                f"({self.printed_mismatched} mismatched{apart}), "
                + (f"derived from printed cells {self.derived_matched}/{derived} agree, " if derived else "")
                + f"closed-form checks {self.closed_form_passed}/{closed}, "
                f"claims {self.claims_confirmed} confirmed / {self.claims_refuted} refuted")
        if self.claims_depending:
            text += f" ({self.claims_depending} of them depend on the reading)"
        if self.settings_shown:
            text += f", {self.settings_shown} settings shown (not counted)"
        return text


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)
    #: short stable name of the table's files (``<report>_<key>.csv``); derived from the title when empty
    key: str = ""
    #: the tidy (header, rows) of the CSV when the table as shown is not tidy (e.g. metrics as rows)
    tidy: tuple[list[str], list[list[Any]]] | None = None

    def tally(self) -> Tally:
        tally = Tally()
        for row in self.rows:
            for cell in row:
                if isinstance(cell, Compare):
                    tally.add_cell(cell)
        return tally

    def compared(self) -> tuple[int, int]:
        """(cells that agree, cells checked): printed, derived and closed-form cells; never settings, never
        printed cells that are not comparable."""
        t = self.tally()
        agree = t.printed_matched + t.derived_matched + t.closed_form_passed
        return agree, agree + t.printed_mismatched + t.derived_mismatched + t.closed_form_failed

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
        """The table as tidy rows: rectangular, one value per cell, numeric columns numeric.

        A column holding a :class:`Compare` anywhere becomes ``col``, ``col (paper)``, ``col match`` (when
        every reference is a printed value; otherwise ``col (reference)``, ``col match`` and ``col reference``,
        the kind of each reference); ``"100 ±7"`` becomes a value and a
        ``col ±95% CI`` column; words in a numeric column (``sat``, ``yes``) move to a ``col note`` column.
        """
        if self.tidy is not None:
            return list(self.tidy[0]), [list(r) for r in self.tidy[1]]
        width = max([len(self.columns)] + [len(r) for r in self.rows])
        names = list(self.columns) + [f"column {j + 1}" for j in range(len(self.columns), width)]
        grid = [list(r) + [None] * (width - len(r)) for r in self.rows]
        header: list[str] = []
        parts: list[list[list[Any]]] = []
        for j, name in enumerate(names):
            col_header, col_rows = _tidy_column(name, [row[j] for row in grid])
            header += col_header
            parts.append(col_rows)
        rows = [[v for part in parts for v in part[i]] for i in range(len(grid))]
        return header, rows

    def tidy_json(self) -> dict:
        header, rows = self.csv_rows()
        return {"columns": header, "rows": rows}


#: a digit string with a leading zero ('01325467'): an identifier, never a number
_IDENTIFIER = re.compile(r"^\s*[-+]?0\d")
_CI = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s*±\s*(\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s*$", re.I)
_NUMBER = re.compile(r"^\s*[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?\s*$", re.I)
_MISSING = ("", "—", "-", "–", "n/a")


def readings_table(title: str, claims, note: str) -> Table:
    """Every claim's verdict and evidence under every reading, one row per claim and reading: ``claims``
    yields ``(text, {reading: (holds, evidence)})``; ``note`` says what the readings are."""
    table = Table(title, ["claim", "reading", "verdict", "evidence"], [], key="claims_by_reading")
    for text, readings in claims:
        for name, (ok, evidence) in readings.items():
            table.rows.append([text, name, "holds" if ok else "fails", evidence])
    table.notes.append(note)
    return table


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() and not any(c in text.lower() for c in ".e") else value


def _split(value: Any) -> tuple[Any, Any, Any]:
    """(number or None, CI half-width or None, note or None) of one cell value; non-numeric columns keep text."""
    if value is None or (isinstance(value, str) and value.strip() in _MISSING):
        return None, None, None
    if isinstance(value, bool):
        return None, None, value
    if isinstance(value, (int, float)):
        return value, None, None
    if isinstance(value, str):
        if m := _CI.match(value):
            return _number(m.group(1)), _number(m.group(2)), None
        if _NUMBER.match(value):
            return _number(value), None, None
    return None, None, value if isinstance(value, str) else str(value)


def _identifiers(values: list[Any]) -> bool:
    """True when a column holds identifiers written as digits: some value is a digit string with a leading
    zero (a number would lose it), so every value of the column stays text."""
    return any(isinstance(v, str) and _IDENTIFIER.match(v) for v in values)


def _tidy_column(name: str, cells: list[Any]) -> tuple[list[str], list[list[Any]]]:
    compare = any(isinstance(c, Compare) for c in cells)
    ours = [c.ours if isinstance(c, Compare) else c for c in cells]
    split = [_split(v) for v in ours]
    numeric = any(n is not None for n, _, _ in split) and not _identifiers(ours)
    with_ci = any(ci is not None for _, ci, _ in split)
    notes = numeric and any(note is not None for _, _, note in split)
    if numeric:
        header = [name] + ([f"{name} ±95% CI"] if with_ci else []) + ([f"{name} note"] if notes else [])
        rows = [[n] + ([ci] if with_ci else []) + ([note] if notes else []) for n, ci, note in split]
    else:
        header = [name]
        rows = [[None if (v is None or (isinstance(v, str) and v.strip() in _MISSING)) else v] for v in ours]
    if compare:
        refs = [c for c in cells if isinstance(c, Compare)]
        kinds = any(c.kind != "paper" for c in refs)
        # "(paper)" only over values the paper prints; a column with closed forms or settings names its kind
        header += [f"{name} (paper)" if not kinds else f"{name} (reference)", f"{name} match"]
        header += [f"{name} reference"] if kinds else []
        for row, cell in zip(rows, cells, strict=True):
            if isinstance(cell, Compare):
                row += [cell.paper, cell.match] + ([cell.kind] if kinds else [])
            else:
                row += [None, None] + ([None] if kinds else [])
    return header, rows


_KEY = re.compile(r"^(tables?|figures?|section|theorems?|algorithms?)\s+"
                  r"([0-9][0-9.]*(?:\s*(?:[-–,]|and)\s*[0-9][0-9.]*)?)", re.I)
_STOP = {"the", "of", "a", "an", "and", "on", "in", "s", "paper", "per", "by", "with", "against", "vs", "ours",
         "its"}


def table_key(title: str) -> str:
    """A short stable file name for a table: 'table3', 'figures3_6', else the first three words of its title."""
    if m := _KEY.match(title.strip()):
        number = re.sub(r"[^0-9]+", "_", m.group(2)).strip("_")
        return f"{m.group(1).lower()}{number}"
    words = [w for w in re.findall(r"[a-z0-9]+", title.split(":")[0].lower()) if w not in _STOP]
    return "_".join(words[:3])[:32] or "table"


@dataclass(frozen=True)
class View:
    """An interactive per-link page of one run (``topocast view``) written beside the report, and what it shows
    about a verdict; report.html embeds it."""

    path: Path
    caption: str


@dataclass
class Report:
    name: str
    title: str
    tables: list[Table] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    #: images (PNG) shown in the report
    figures: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: data files written beside the tables (a runs CSV): listed and linked, never shown as images
    files: list[Path] = field(default_factory=list)
    #: sentences of the experiment's own, computed from its results, that the report opens with beside
    #: :func:`findings` (the residual of a fitted model, say)
    highlights: list[str] = field(default_factory=list)
    #: what of the paper is reproduced, partly, or not (``topocast.experiments.coverage``),
    #: filled in by :meth:`attach_coverage`
    coverage: list = field(default_factory=list)
    #: per-link views (:class:`View`) where they explain a verdict, embedded in report.html
    views: list = field(default_factory=list)

    def attach_coverage(self) -> Report:
        """Fill :attr:`coverage` from :mod:`topocast.experiments.coverage` (nothing without an entry)."""
        from ..experiments.coverage import coverage_of

        self.coverage = coverage_of(self.name)
        return self

    def tally(self) -> Tally:
        total = Tally()
        for table in self.tables:
            total = total + table.tally()
        total.claims_confirmed = sum(bool(c.confirmed) for c in self.claims)
        total.claims_refuted = len(self.claims) - total.claims_confirmed
        total.claims_depending = sum(c.depends for c in self.claims)
        return total

    def table_keys(self) -> list[str]:
        """The short, stable, unique file key of every table (``<report>_<key>.csv``)."""
        keys: list[str] = []
        for table in self.tables:
            key = table.key or table_key(table.title)
            unique, n = key, 2
            while unique in keys:
                unique, n = f"{key}_{n}", n + 1
            keys.append(unique)
        return keys

    def summary_line(self) -> str:
        return self.tally().line(self.name)

    def as_json(self) -> dict:
        tally = self.tally()
        return {
            "name": self.name,
            "title": self.title,
            "tables": [{**t.as_json(), "key": k, "tidy": t.tidy_json()} for t, k in zip(self.tables,
                                                                                        self.table_keys(),
                                                                                        strict=True)],
            "claims": [c.as_json() for c in self.claims],
            "figures": [str(f) for f in self.figures],
            "files": [str(f) for f in self.files],
            "views": [{"file": str(v.path), "caption": v.caption} for v in self.views],
            "notes": self.notes,
            "findings": findings(self),
            "coverage": [item.as_json() for item in self.coverage],
            "summary": {**asdict(tally), "line": tally.line(self.name)},
        }

    def write(self, out: Path) -> list[Path]:
        """Write every table as CSV and the whole report as JSON into ``out``."""
        written = []
        for table, key in zip(self.tables, self.table_keys(), strict=True):
            header, rows = table.csv_rows()
            written.append(write_csv(Path(out) / f"{self.name}_{key}.csv", header, rows))
        written.append(write_json(Path(out) / f"{self.name}_report.json", self.as_json()))
        return written


def _printed_by_table(report: Report) -> tuple[list[str], int]:
    """'Table 2 16/16' per table with printed cells compared, and how many matches are within a tolerance."""
    parts, tolerant = [], 0
    for table in report.tables:
        cells = [c for row in table.rows for c in row if isinstance(c, Compare) and c.kind == "paper"
                 and c.match is not None]
        if cells:
            name = table.title.split(":")[0].split(" (")[0]
            parts.append(f"{name} {sum(bool(c.match) for c in cells)}/{len(cells)}")
            tolerant += sum(bool(c.match) and c.rel_tol > 0 and c.ours != c.paper for c in cells)
    return parts, tolerant


def _reproduced(report: Report, tally: Tally, held: int) -> str:
    """The sentence on what we reproduce: printed cells that match, how many claims hold under every reading."""
    printed = tally.printed_matched + tally.printed_mismatched
    parts, tolerant = _printed_by_table(report)
    text = (f"{tally.printed_matched} of {printed} comparable printed cells match"
            + (f", {tolerant} of them within a stated tolerance" if tolerant else "")
            + (f" ({', '.join(parts)})" if parts else "")) if printed else "No printed cell is compared"
    if tally.printed_not_comparable:
        text += f"; {tally.printed_not_comparable} printed cells are shown but not comparable"
    if tally.derived_matched + tally.derived_mismatched:
        text += (f"; {tally.derived_matched} of {tally.derived_matched + tally.derived_mismatched} values derived "
                 "from printed cells agree")
    return text + (f"; {held} claims hold under every reading we ran." if held else "; no claim holds under every "
                   "reading we ran.")


def _readings_split(claim: Claim) -> str:
    """'holds only under A (fails under the other 3)' or the converse, whichever list is shorter."""
    held = [k for k, v in claim.readings.items() if v]
    failed = [k for k, v in claim.readings.items() if not v]
    if len(held) <= len(failed):
        return f"holds only under {', '.join(held)} (fails under the other {len(failed)})"
    return f"fails only under {', '.join(failed)} (holds under the other {len(held)})"


def findings(report: Report) -> dict:
    """What a report opens with, computed from its cells and verdicts: what we reproduce, what we refute and
    the number why, what depends on a reading, then the counts.

    Returns
    -------
    dict
        ``reproduced``, ``refuted``, ``depends``: one sentence each (the counts), and the claims behind each,
        ``held``, ``refuted_items`` (the claim and its number), ``depends_items`` (the claim and where it holds);
        ``highlights`` (the experiment's own computed sentences) and ``counts`` (the summary line).
    """
    tally = report.tally()
    held = [c.text for c in report.claims if c.confirmed and not c.depends]
    refuted = [f"{c.text}: {c.short_why()}" for c in report.claims if not c.confirmed and not c.depends]
    depends = [f"{c.text}: {_readings_split(c)}; under our default reading it {'holds' if c.confirmed else 'fails'}"
               for c in report.claims if c.depends]
    return {
        "reproduced": _reproduced(report, tally, len(held)),
        "held": held,
        "refuted": f"{len(refuted)} claims are refuted, under every reading we ran." if refuted
        else "No claim is refuted under every reading we ran.",
        "refuted_items": refuted,
        "depends": f"{len(depends)} claims depend on the reading." if depends else "No verdict depends on a reading.",
        "depends_items": depends,
        "highlights": list(report.highlights),
        "counts": tally.line(report.name),
    }


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
