"""Terminal rendering of reproduction reports (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from .report import Compare, Report, Table


def render_report(report: Report, console: Console) -> None:
    console.rule(f"[bold]{report.title}")
    for table in report.tables:
        rich_table = RichTable(title=escape(table.title), caption=_caption(table))
        for column in table.columns:
            rich_table.add_column(escape(column), justify="right")
        for row in table.rows:
            rich_table.add_row(*(_cell(c) for c in row))
        console.print(rich_table)
        for note in table.notes:
            console.print(f"  note: {note}", markup=False)
    for claim in report.claims:
        mark = "[green]confirmed[/green]" if claim.confirmed else "[red]refuted[/red]"
        console.print(f"{mark}  {escape(claim.text)}")
        if claim.readings:
            label = "depends on the reading" if claim.depends else "same under every reading"
            console.print(f"           {label}: {claim.readings_text()}", markup=False)
        console.print(f"           {claim.evidence}", markup=False)
    for note in report.notes:
        console.print(f"note: {note}", markup=False)
    for figure in report.figures:
        console.print(f"figure: {figure}", markup=False)
    for path in report.files:
        console.print(f"file: {path}", markup=False)


def _caption(table: Table) -> str | None:
    t = table.tally()
    parts = []
    if t.printed_matched + t.printed_mismatched:
        parts.append(f"{t.printed_matched}/{t.printed_matched + t.printed_mismatched} printed cells match the paper")
    if t.printed_not_comparable:
        parts.append(f"{t.printed_not_comparable} printed cells not comparable, not counted")
    if t.derived_matched + t.derived_mismatched:
        parts.append(f"{t.derived_matched}/{t.derived_matched + t.derived_mismatched} values derived from printed "
                     "cells agree")
    if t.closed_form_passed + t.closed_form_failed:
        parts.append(f"{t.closed_form_passed}/{t.closed_form_passed + t.closed_form_failed} closed-form checks pass")
    if t.settings_shown:
        parts.append(f"{t.settings_shown} settings shown, not counted")
    return "; ".join(parts) or None


def _cell(cell) -> str:
    if isinstance(cell, Compare):
        match = cell.match
        colour = {True: "green", False: "red", None: "white"}[match]
        return f"[{colour}]{escape(cell.text())}[/{colour}]"
    if isinstance(cell, float):
        return f"{cell:.6g}"
    return escape(str(cell))
