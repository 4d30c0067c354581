"""The whole run's report: ``report.html`` (self-contained, figures embedded), ``report.md`` and ``report.json``.

Both pages come from jinja2 templates (``topocast/outputs/templates``) filled from the same context, so the summary at
the top of the page, the Markdown twin and the terminal's closing lines (:func:`summary_lines`) agree; the
counts are those of ``report.json``.
"""

from __future__ import annotations

import base64
import datetime
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..experiments.coverage import STATUSES, counts
from ..infra.fileio import atomic_write, write_json
from .report import KIND_LABELS, Claim, Compare, Report, Tally, _fmt, findings

MARKS = {True: "✓", False: "✗", None: ""}
#: what a browser shows as an image: anything else a report lists is linked, never put in an <img>
IMAGE_TYPES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
VERDICTS = {"confirmed": "confirmed", "refuted": "refuted", "depends": "depends on the reading"}


def _cell(cell: Any) -> dict:
    if isinstance(cell, Compare):
        kind = KIND_LABELS[cell.kind] or "paper"
        return {"compare": True, "ours": _fmt(cell.ours) if cell.ours is not None else "—",
                "paper": "—" if cell.paper is None else _fmt(cell.paper), "kind": kind,
                "mark": MARKS[cell.match], "cls": {True: "ok", False: "bad", None: "none"}[cell.match]}
    if cell is None:
        return {"compare": False, "text": ""}
    if isinstance(cell, bool):
        return {"compare": False, "text": "yes" if cell else "no"}
    return {"compare": False, "text": _fmt(cell)}


def _claim(claim: Claim) -> dict:
    return {"text": claim.text, "verdict": claim.verdict, "label": VERDICTS[claim.verdict],
            "evidence": claim.evidence, "why": claim.why,
            "readings": [{"name": k, "holds": bool(v)} for k, v in claim.readings.items()],
            "readings_text": claim.readings_text()}


def _is_image(path: Path) -> bool:
    """Whether a browser shows ``path`` as an image (by its suffix)."""
    return Path(path).suffix.lower() in IMAGE_TYPES


def _figure(path: Path, embed: bool) -> dict:
    """An image of the report, embedded as a data URI when ``embed``; ``image`` False for a file that is not
    one (it is then linked, not shown)."""
    path = Path(path)
    mime = IMAGE_TYPES.get(path.suffix.lower())
    data = None
    if embed and mime and path.exists():
        data = f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")
    return {"name": path.name, "data": data, "image": mime is not None}


def _tally(t: Tally) -> dict:
    return {**asdict(t), "printed": t.printed_matched + t.printed_mismatched,
            "derived": t.derived_matched + t.derived_mismatched,
            "closed_form": t.closed_form_passed + t.closed_form_failed,
            "claims": t.claims_confirmed + t.claims_refuted}


def summary(reports: list[Report]) -> dict:
    """Per reproduction and in total: the tallies and coverage counts (what report.json's 'summary' holds)."""
    rows = {}
    total = Tally()
    cov_total = dict.fromkeys(STATUSES, 0)
    for r in reports:
        t = r.tally()
        total = total + t
        cov = counts(r.coverage)
        cov_total = {k: cov_total[k] + cov[k] for k in STATUSES}
        rows[r.name] = {**_tally(t), "coverage": cov, "line": t.line(r.name)}
    rows["all"] = {**_tally(total), "coverage": cov_total, "line": total.line("all")}
    return rows


def summary_lines(reports: list[Report]) -> list[str]:
    """The closing lines of the terminal output: one summary line per reproduction, coverage, and the total."""
    lines = []
    for name, row in summary(reports).items():
        cov = row["coverage"]
        extra = "" if name == "all" and len(reports) == 1 else row["line"]
        if not extra:
            continue
        if sum(cov.values()):
            extra += (f"; paper coverage: {cov['reproduced']} reproduced, {cov['partly']} partly, "
                      f"{cov['not reproduced']} not reproduced, {cov['not reproducible']} not reproducible")
        lines.append(extra)
    return lines


def context(reports: list[Report], quick: bool = False, embed: bool = True) -> dict:
    """Everything the templates show."""
    sections = []
    for r in reports:
        keys = r.table_keys()
        sections.append({
            "name": r.name, "title": r.title,
            "tables": [{"title": t.title, "key": k, "columns": t.columns, "notes": t.notes,
                        "rows": [[_cell(c) for c in row] for row in t.rows],
                        "matched": t.compared()[0], "compared": t.compared()[1]}
                       for t, k in zip(r.tables, keys, strict=True)],
            "figures": [_figure(f, embed) for f in r.figures if _is_image(f)],
            "files": list(dict.fromkeys([Path(f).name for f in r.files]
                                        + [Path(f).name for f in r.figures if not _is_image(f)])),
            "views": [_view(v, embed) for v in r.views],
            "findings": findings(r),
            "claims": [_claim(c) for c in r.claims],
            "notes": r.notes,
            "coverage": [i.as_json() for i in r.coverage],
            "not_reproduced": [i.as_json() for i in r.coverage if i.status != "reproduced"],
        })
    return {"sections": sections, "summary": summary(reports), "statuses": STATUSES, "quick": quick,
            "generated": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")}


def _view(view, embed: bool) -> dict:
    """A per-link view page: its file name, caption and (embedded) its HTML for an iframe's ``srcdoc``."""
    path = Path(view.path)
    page = path.read_text(encoding="utf-8") if embed and path.is_file() else None
    return {"name": path.name, "caption": view.caption, "srcdoc": page}


def _environment(autoescape: bool):
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("topocast", "outputs/templates"), autoescape=autoescape,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)


def _md(text: Any) -> str:
    """A table cell for Markdown: pipes escaped, no line breaks."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_html(reports: list[Report], quick: bool = False) -> str:
    return _environment(True).get_template("report.html.j2").render(**context(reports, quick, embed=True))


def render_markdown(reports: list[Report], quick: bool = False) -> str:
    env = _environment(False)
    env.filters["md"] = _md
    return env.get_template("report.md.j2").render(**context(reports, quick, embed=False))


def write_run(reports: list[Report], out: Path, quick: bool = False) -> dict[str, Path]:
    """Write ``report.html``, ``report.md`` and ``report.json`` for the whole run into ``out``."""
    out = Path(out)
    payload = {"quick": quick, "summary": summary(reports), "reports": [r.as_json() for r in reports]}
    return {"json": write_json(out / "report.json", payload),
            "md": atomic_write(out / "report.md", render_markdown(reports, quick)),
            "html": atomic_write(out / "report.html", render_html(reports, quick))}
