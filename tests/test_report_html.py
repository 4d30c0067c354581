"""report.html in a real headless browser (Debian's chromium driven by Playwright), and its Markdown twin.

Checks: no console errors, nothing fetched from elsewhere, a section per reproduction, the summary counts
equal to report.json, every image loaded (a broken one, naturalWidth 0, fails), the opening sentences per
reproduction before the counts, and claims before tables.  Without chromium or Playwright the browser
tests skip with the reason locally and fail when CI=true.
"""

import json
import os
import shutil
from pathlib import Path

import pytest

from topocast.cli import main
from topocast.outputs.report import Claim, Compare, Report, Table
from topocast.outputs.report_html import summary_lines, write_run

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _chromium() -> str:
    path = os.environ.get("TOPOCAST_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    reason = None
    if not path:
        reason = "no chromium executable (apt-get install chromium; .ci/run installs it)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "the playwright Python package is not installed (pip install -e '.[test]')"
    if reason:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"browser test needs chromium under CI: {reason}")
        pytest.skip(reason)
    return path


def _figure(path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from topocast.infra.fileio import save_figure

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    return save_figure(fig, path)


def _reports(out: Path) -> list[Report]:
    a = Report("alpha", "Alpha <paper> & co", [
        Table("Table 1: sizes (ours | paper)", ["n", "nodes"], [[1, Compare(4, 4)], [2, Compare(9, 8)]]),
        Table("Latency (cycles)", ["load", "DP"], [[0.1, "100 ±7"], [0.2, "sat"]]),
    ], [Claim("grows", True, "4 -> 9"),
        Claim("reading-dependent", False, "see readings", readings={"x=all": False, "x=used": True})],
        figures=[_figure(out / "alpha_fig.png")])
    runs = out / "beta_runs.csv"
    runs.write_text("row,label\n0,01325467\n")
    # a data file among the figures (the bug of issue 27) and in its own list: linked, never an <img>
    b = Report("beta", "Beta", [Table("t", ["x"], [[Compare(1, 2, kind="closed_form")],
                                                   [Compare(5, 9, kind="not_comparable")]])],
               [Claim("fails", False, "e", why="1 of 6")], figures=[runs], files=[runs]).attach_coverage()
    return [a.attach_coverage(), b]


def _open(html: Path) -> dict:
    from playwright.sync_api import sync_playwright

    errors, remote = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: remote.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
            page.goto(html.absolute().as_uri(), wait_until="load")
            state = page.evaluate("""() => ({
                sections: [...document.querySelectorAll('section.reproduction')].map(s => s.dataset.reproduction),
                findings: [...document.querySelectorAll('div.findings')].map(d => d.dataset.reproduction),
                findingsFirst: [...document.querySelectorAll('div.findings')].every(d =>
                    d.compareDocumentPosition(document.getElementById('summary-table'))
                    & Node.DOCUMENT_POSITION_FOLLOWING),
                claimsFirst: [...document.querySelectorAll('section.reproduction')].every(s => {
                    const c = s.querySelector('ul.claims'), t = s.querySelector('table.data');
                    return !c || !t || (c.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
                }),
                images: [...document.images].map(
                    i => ({src: i.src.slice(0, 30), ok: i.complete && i.naturalWidth > 0})),
                summary: Object.fromEntries([...document.querySelectorAll('#summary-table tbody tr')].map(tr => [
                    tr.dataset.reproduction,
                    Object.fromEntries([...tr.querySelectorAll('td[data-key]')].map(
                        td => [td.dataset.key, Number(td.textContent)]))])),
                verdicts: [...document.querySelectorAll('li[data-verdict]')].map(li => li.dataset.verdict),
            })""")
        finally:
            browser.close()
    return {**state, "errors": errors, "remote": remote}


def _main(args: list[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code in (0, None)


def _check(state: dict, run: dict, names: list[str]) -> None:
    assert state["errors"] == [] and state["remote"] == []
    assert state["sections"] == names == state["findings"]
    assert state["findingsFirst"] and state["claimsFirst"]
    broken = [i for i in state["images"] if not (i["ok"] and i["src"].startswith("data:image/png"))]
    assert state["images"] and not broken, broken
    for name, row in run["summary"].items():
        for key, value in state["summary"][name].items():
            assert value == row[key], (name, key)
    assert set(state["summary"]) == set(names) | {"all"}


def test_report_pages_from_hand_built_reports(tmp_path):
    reports = _reports(tmp_path)
    files = write_run(reports, tmp_path)
    run = json.loads(files["json"].read_text())
    assert run["summary"]["alpha"]["claims_depending"] == 1 and run["summary"]["all"]["printed_mismatched"] == 1
    html = files["html"].read_text()
    assert "Alpha &lt;paper&gt; &amp; co" in html and "http" not in html.replace("http-equiv", "")
    md = files["md"].read_text()
    assert "| alpha | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 1 | 1 | 1 |" in md and "![alpha_fig.png](alpha_fig.png)" in md
    assert "| beta | 0 | 0 | 1 | 0 | 0 | 0 | 1 | 0 | 1 | 0 |" in md
    assert "beta_runs.csv)" in md and "![beta_runs.csv]" not in md
    assert "<img" not in html.split("beta_runs.csv")[0][-300:]
    assert html.count('href="beta_runs.csv"') == 1   # listed once, though given twice
    assert "**Refuted.** 1 claims are refuted, under every reading we ran.\n  - fails: 1 of 6\n" in md
    assert "holds under x=used; refuted under x=all" in md
    lines = summary_lines(reports)
    assert lines[-1].startswith("summary all: printed cells 1/2 matched") and len(lines) == 3
    _check(_open(files["html"]), run, ["alpha", "beta"])


def test_reproduce_classic_writes_report_and_browser_opens_it(tmp_path, capsys):
    _main(["reproduce", "classic", "--quick", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert printed.startswith(f"results: writing to {tmp_path.absolute()}")
    assert printed.rstrip().splitlines()[-1].startswith(f"report: {tmp_path.absolute() / 'report.html'}")
    for name in ("report.html", "report.md", "report.json", "classic_report.json", "classic_classic_collectives.csv",
                 "classic_simulated_vs_closed_form.png"):
        assert (tmp_path / name).exists(), name
    run = json.loads((tmp_path / "report.json").read_text())
    _check(_open(tmp_path / "report.html"), run, ["classic"])


def test_reproduce_defaults_to_topocast_results(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _main(["reproduce", "classic", "--quick", "--json"])
    captured = capsys.readouterr()
    assert json.loads(captured.out)["name"] == "classic"  # stdout stays pure JSON
    assert "results: writing to" in captured.err and "report.html" in captured.err
    assert (tmp_path / "topocast-results" / "report.html").exists()


def test_a_broken_image_fails_the_browser_check(tmp_path):
    """The check reads naturalWidth: an image that does not decode (a CSV sent as a PNG) is caught."""
    bad = tmp_path / "bad.png"
    bad.write_text("row,label\n0,01325467\n")
    files = write_run([Report("alpha", "Alpha", [], [Claim("c", True, "e")], figures=[bad]).attach_coverage()],
                      tmp_path)
    state = _open(files["html"])
    assert [i["ok"] for i in state["images"]] == [False]
    with pytest.raises(AssertionError):
        _check(state, json.loads(files["json"].read_text()), ["alpha"])
