"""``topocast view`` pages in a real headless browser (Debian's chromium driven by Playwright), and the run plots.

For a mesh, a Galaxyfly and a ``graph:`` file: no console errors, nothing requested from elsewhere, the slider's
frames colour exactly the links the plan's transfers use in that frame, the cumulative loads at the last frame
are the per-link records of ``run --links`` (both directions of a drawn link added), and a click on a node
highlights exactly the links its messages crossed (from the plan's message ranges).  Screenshots are written
under the test's temporary directory.  Without chromium or Playwright the browser tests skip (fail under CI).
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from test_report_html import CHROMIUM_ARGS, _chromium
from topocast.cli import main


def _main(args: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(args)
    return stop.value.code


def _plan_and_result(spec, algorithm, engine):
    from topocast import api
    from topocast.execution.execute import execute

    checked = api.prepare(spec, algorithm, engine)
    plan = api.plan(checked.topology, checked.algorithm, checked.params, checked.engine, 0, None)
    return checked.topology, plan, execute(checked.topology, plan, engine, api.model_of(checked))


def _expected(spec, algorithm, engine, node):
    """Per frame the undirected pairs used, and the pairs node's messages crossed, by a loop over transfers."""
    topology, plan, result = _plan_and_result(spec, algorithm, engine)
    frames = defaultdict(set)
    crossed = set()
    if engine == "event":
        span, count = result.trace.makespan, min(200, plan.num_transfers)
    for t in range(plan.num_transfers):
        u, v = int(plan.src[t]), int(plan.dst[t])
        pair = (min(u, v), max(u, v))
        frame = int(plan.step[t]) if engine == "step" else min(int(result.trace.start[t] / span * count), count - 1)
        frames[frame].add(pair)
        for k in range(plan.range_ptr[t], plan.range_ptr[t + 1]):
            first, many = int(plan.range_first[k]), int(plan.range_count[k])
            if np.any(plan.origin[first:first + many] == node):
                crossed.add(pair)
    return frames, crossed


def _links_csv(tmp_path: Path, source: list[str]) -> dict[tuple[int, int], float]:
    path = tmp_path / "links.csv"
    assert _main(["run", *source, "--links", str(path)]) == 0
    with open(path, newline="") as f:
        return {(int(r["src"]), int(r["dst"])): float(r["bytes"]) for r in csv.DictReader(f)}


def _browse(page_file: Path, shots: Path, frames: list[int], node: int) -> dict:
    from playwright.sync_api import sync_playwright

    errors, remote, out = [], [], {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: remote.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
            page.goto(page_file.absolute().as_uri(), wait_until="load")
            out["info"] = page.evaluate("({frames: topocastView.frames, pairs: topocastView.pairs(),"
                                        " mode: topocastView.highlightMode, canvas: topocastView.canvas})")
            out["frames"] = {}
            for k in frames:
                page.locator("#slider").fill(str(k))  # the user's way: an input event on the range
                out["frames"][k] = page.evaluate("""() => ({
                    levels: topocastView.levels(),
                    strokes: [...document.querySelectorAll('#links line')].map(l => getComputedStyle(l).stroke),
                    label: document.getElementById('frame').textContent})""")
            page.screenshot(path=str(shots / f"{page_file.stem}-frame.png"))
            page.locator("#cumulative").check()
            page.locator("#slider").fill(str(out["info"]["frames"] - 1))
            out["cumulative"] = page.evaluate("topocastView.loads()")
            x, y = page.evaluate(f"topocastView.nodeScreen({node})")
            page.mouse.click(x, y)  # where the user sees the node (an SVG circle or a spot of the canvas)
            out["highlight"] = page.evaluate("""() => ({
                set: topocastView.highlighted(), drawn: document.querySelectorAll('#hllayer line').length,
                selected: String(topocastView.selected()),
                text: document.getElementById('selection').textContent})""")
            page.screenshot(path=str(shots / f"{page_file.stem}-highlight.png"))
        finally:
            browser.close()
    return {**out, "errors": errors, "remote": remote}


def _graph_file(tmp_path: Path) -> str:
    import networkx as nx

    path = tmp_path / "petersen.graphml"
    nx.write_graphml(nx.petersen_graph(), path)
    return f"graph:{path}"


CASES = [("mesh", "mesh:5x4", "allgather-mesh", "step", 7),
         ("galaxyfly", "galaxyfly:n=3,q=5,a=4", "router-first-allgather", "event", 9),
         ("graph", None, "allgather-bfs-trees", "step", 3),
         ("canvas", "torus:40x40", "broadcast-mesh", "step", 0)]  # 3,200 links: drawn on a canvas


@pytest.mark.parametrize(("name", "spec", "algorithm", "engine", "node"), CASES, ids=[c[0] for c in CASES])
def test_view_page_in_a_browser(tmp_path, name, spec, algorithm, engine, node):
    spec = spec or _graph_file(tmp_path)
    source = [spec, algorithm, "--engine", engine]
    page_file = tmp_path / f"{name}.html"
    if name == "graph":  # the RESULT.json path: the run is taken again from its file
        result_file = tmp_path / "result.json"
        import topocast as tc

        result_file.write_text(json.dumps(tc.run(spec, algorithm, engine=engine).to_json()))
        assert _main(["view", str(result_file), "--out", str(page_file)]) == 0
    else:
        assert _main(["view", *source, "--out", str(page_file)]) == 0
    html = page_file.read_text()
    assert "<script src" not in html and "<link" not in html
    frames, crossed = _expected(spec, algorithm, engine, node)
    shown = sorted(frames)[:3] + [max(frames)]
    state = _browse(page_file, tmp_path, shown, node)
    assert state["errors"] == [] and state["remote"] == []
    pairs = [tuple(p) for p in state["info"]["pairs"]]
    for k in shown:
        levels = state["frames"][k]["levels"]
        coloured = {pairs[i] for i, lv in enumerate(levels) if lv > 0}
        assert coloured == frames[k], (k, coloured ^ frames[k])
        if name != "canvas":
            idle = {s for s, lv in zip(state["frames"][k]["strokes"], levels, strict=True) if lv == 0}
            assert len(idle) <= 1  # every idle link drawn in the one idle colour
    first, last = shown[0], shown[-1]
    assert state["info"]["canvas"] == (name == "canvas")
    if frames[first] != frames[last] and name != "canvas":
        assert state["frames"][first]["strokes"] != state["frames"][last]["strokes"]
    # cumulative loads at the last frame are the per-link records, both directions added
    records = _links_csv(tmp_path, source)
    for (a, b), load in zip(pairs, state["cumulative"], strict=True):
        assert load == pytest.approx(records.get((a, b), 0.0) + records.get((b, a), 0.0))
    assert state["info"]["mode"] == "messages"
    hl = state["highlight"]
    assert {pairs[i] for i in hl["set"]} == crossed
    assert hl["drawn"] == (0 if name == "canvas" else len(crossed))
    assert hl["selected"] == str(node)
    assert (tmp_path / f"{name}-highlight.png").stat().st_size > 0


def test_aggregated_page_keeps_the_loads(tmp_path):
    from topocast.view import from_algorithm
    from topocast.view.data import page_data

    run = from_algorithm("torus:120x120", "broadcast-mesh")
    data = page_data(run.topology, run.plan, run.result)
    assert data["aggregated"] and data["nodes"] < 1000
    import base64

    loads = np.frombuffer(base64.b64decode(data["frame_load"]), "<f8")
    inside = run.result.links.bytes.sum() - loads.sum()
    assert inside >= 0  # loads inside a cluster are not drawn; none is counted twice
    assert loads.sum() > 0


def test_view_refuses_what_it_cannot_draw(tmp_path, capsys):
    out = str(tmp_path / "p.html")
    assert _main(["view", "torus:4x4", "--out", out]) == 2
    assert "SOURCE" in capsys.readouterr().err
    assert _main(["view", "ej:a=2,b=3,n=1", "one-to-all-improved", "--engine", "frontier", "--out", out]) == 2
    assert "view: the frontier engine" in capsys.readouterr().err
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps({"spec": "torus:4x4", "algorithm": "allgather-mesh", "engine": "step", "seed": 0,
                               "params": {}, "steps": 99}))
    assert _main(["view", str(bad), "--out", out]) == 2
    assert "again gives steps" in capsys.readouterr().err
    assert not Path(out).exists()


@pytest.mark.parametrize("kind", ["link-load", "time-space"])
def test_run_plots(tmp_path, kind):
    import matplotlib.image

    out = tmp_path / f"{kind}.png"
    assert _main(["plot", "torus:4x4", "allgather-mesh", "--kind", kind, "--out", str(out)]) == 0
    assert matplotlib.image.imread(out).shape[0] > 100
    assert _main(["plot", "torus:4x4", "allgather-mesh", "--kind", kind, "--x", "N", "--out", str(out)]) == 2


def test_view_and_links_of_a_schedule_file(tmp_path):
    """A synthesized schedule: ``run --schedule --links``, ``view --schedule`` and ``view RESULT.json`` agree."""
    from topocast.view import from_result, from_schedule

    sched = tmp_path / "s.json"
    assert _main(["synthesize", "torus:3x3", "allgather", "--out", str(sched), "--budget", "2"]) in (0, None)
    records = _links_csv(tmp_path, ["torus:3x3", "--schedule", str(sched)])
    run = from_schedule("torus:3x3", str(sched))
    assert {(int(s), int(d)): float(b) for s, d, b in zip(run.result.links.src, run.result.links.dst,
                                                         run.result.links.bytes, strict=True)} == records
    result_file = tmp_path / "r.json"
    result_file.write_text(json.dumps(run.result.to_json()))
    again = from_result(result_file)
    assert again.result.metrics["time"] == run.result.metrics["time"]
    page_file = tmp_path / "s.html"
    assert _main(["view", "torus:3x3", "--schedule", str(sched), "--out", str(page_file)]) == 0
    assert _main(["view", str(result_file), "--engine", "event", "--out", str(page_file)]) == 2


def test_report_embeds_a_view(tmp_path):
    """A report's per-link view sits in report.html as a sandboxed iframe that runs, offline, without errors."""
    from playwright.sync_api import sync_playwright

    from topocast.outputs.report import Claim, Report, View
    from topocast.outputs.report_html import write_run
    from topocast.view import from_algorithm, write

    page_file = write(from_algorithm("mesh:4x4", "allgather-mesh"), tmp_path / "demo_view.html")
    report = Report("demo", "Demo", [], [Claim("holds", True, "e")], views=[View(page_file, "why it holds")])
    files = write_run([report.attach_coverage()], tmp_path)
    assert "demo_view.html" in (tmp_path / "report.md").read_text()
    errors, remote = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: remote.append(r.url) if not r.url.startswith(("file:", "data:", "about:"))
                    else None)
            page.goto(files["html"].absolute().as_uri(), wait_until="load")
            inner = page.frame_locator("iframe.view")
            inner.locator("#slider").fill("3")
            frames = [f for f in page.frames if f != page.main_frame]
            state = frames[0].evaluate("({frames: topocastView.frames, on: topocastView.levels().filter(x => x > 0)"
                                       ".length})")
        finally:
            browser.close()
    assert errors == [] and remote == []
    assert state["frames"] == 6 and state["on"] > 0


def test_wormhole_highlight_is_the_links_of_the_messages_a_node_started(tmp_path):
    """Clicking a node of a wormhole run highlights the links its messages' worms crossed: checked against the
    plan's node sequences (every worm the engine injected, relays counted for the message's source)."""
    import base64

    from topocast.view import from_algorithm
    from topocast.view.data import page_data

    def decode(text, kind):
        return np.frombuffer(base64.b64decode(text), {"u16": "<u2", "u32": "<u4"}[kind]).astype(np.int64)

    run = from_algorithm("mesh:6x6", "multicast-qg", engine="wormhole", seed=3, load=0.004, destinations=6,
                         cycles=800)
    data = page_data(run.topology, run.plan, run.result)
    assert data["highlight_mode"] == "messages"
    a, b = decode(data["link_a"], "u32"), decode(data["link_b"], "u32")
    ptr, hl = decode(data["hl_ptr"], "u32"), decode(data["hl_link"], data["frame_link_kind"])
    plan, trace = run.plan, run.result.trace.trace
    t = plan.traffic
    want = defaultdict(set)
    for m in range(len(plan.source)):
        for job in range(plan.job_ptr[m], plan.job_ptr[m + 1]):
            for worm in range(t.job_worm_ptr[job], t.job_worm_ptr[job + 1]):
                if trace.worm_inject[worm] < 0:
                    continue
                nodes = t.path_node[t.path_ptr[worm]:t.path_ptr[worm + 1]]
                want[int(plan.source[m])] |= {frozenset(map(int, p)) for p in zip(nodes[:-1], nodes[1:], strict=True)}
    assert any(want.values())
    for node in range(run.topology.num_nodes):
        got = {frozenset((int(a[k]), int(b[k]))) for k in hl[ptr[node]:ptr[node + 1]]}
        assert got == want[node], node
