"""Per-link records and the view page: overhead of ``links=True`` (A/B), page time, and playback in a browser.

    python benchmarks/links.py [--repeats 5] [--quick] [--no-browser] [--figures PATH]

1. A/B: each run with and without per-link records (``topocast.run(..., links=True)``), alternated
   ``--repeats`` times after a warm-up; the fastest of each (the machine is shared: the minimum is the
   figure least disturbed by other work) and the overhead in percent.  Target (issue 34): under 10 % up to
   10^5 directed links.  Beside it, the derivation alone (``measure.links.attach``) against ``execute``
   alone (engine, verification, bound), the stricter ratio.
2. ``topocast view`` of a 4,096-node torus all-gather (``torus:64x64 allgather-mesh``, step engine): the
   run, the page's data and the page written, in process, after a warm-up.  Target: under 10 s.
3. Playback (unless ``--no-browser``): the page of ``torus:100x100 allgather-mesh`` (20,000 drawn links, no
   aggregation) and of the 4,096-node torus in headless Chromium; every frame set once by the slider's
   code, timed in the page (``performance.now`` around the frame and the layout it forces).  Target: the
   longest frame under 100 ms.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from figures import Figures, add_argument

import topocast as tc

RUNS = (("torus:64x64", "allgather-mesh", "step"), ("torus:64x64", "allgather-mesh", "event"),
        ("torus:160x160", "broadcast-mesh", "step"), ("torus:160x160", "broadcast-mesh", "event"),
        ("torus:16x16", "alltoall-mesh", "event"))
QUICK_RUNS = (("torus:32x32", "allgather-mesh", "step"), ("torus:32x32", "allgather-mesh", "event"))


def ab(spec: str, algorithm: str, engine: str, repeats: int) -> tuple[float, float, int]:
    """Fastest seconds without and with per-link records, and the directed links."""
    result = tc.run(spec, algorithm, engine=engine, links=True)  # warm-up: compile, cache the cut
    plain, links = [], []
    for _ in range(repeats):
        for flag, into in ((False, plain), (True, links)):
            start = time.perf_counter()
            tc.run(spec, algorithm, engine=engine, links=flag)
            into.append(time.perf_counter() - start)
    return min(plain), min(links), len(result.links)


def derivation(spec: str, algorithm: str, engine: str, repeats: int) -> tuple[float, float]:
    """Fastest seconds of ``execute`` alone and of the per-link derivation alone on its result."""
    from topocast import api
    from topocast.execution.execute import execute
    from topocast.measure.links import attach

    checked = api.prepare(spec, algorithm, engine)
    plan = api.plan(checked.topology, checked.algorithm, checked.params, engine, 0, None)
    run, derive = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        result = execute(checked.topology, plan, engine, api.model_of(checked))
        run.append(time.perf_counter() - start)
        start = time.perf_counter()
        attach(result, checked.topology, plan)
        derive.append(time.perf_counter() - start)
    return min(run), min(derive)


def page(spec: str, algorithm: str, out: Path) -> tuple[float, float, int]:
    """Seconds to run with records, seconds to write the page, and its size in bytes."""
    from topocast.view import from_algorithm, write

    start = time.perf_counter()
    run = from_algorithm(spec, algorithm)
    ran = time.perf_counter() - start
    write(run, out)
    return ran, time.perf_counter() - start - ran, out.stat().st_size


def playback(html: Path) -> tuple[float, int, int]:
    """The longest and the median frame time in ms over every frame, and the drawn links."""
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("TOPOCAST_CHROMIUM") or shutil.which("chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 860})
            tab.goto(html.absolute().as_uri(), wait_until="load")
            times = tab.evaluate("""() => {
                const v = topocastView, out = [];
                for (let f = 0; f < v.frames; f++) {
                    const t = performance.now();
                    v.setFrame(f);
                    document.body.getBoundingClientRect();  // the layout the frame forces
                    out.push(performance.now() - t);
                }
                return {times: out, links: v.links};
            }""")
        finally:
            browser.close()
    frames = times["times"]
    return max(frames), statistics.median(frames), times["links"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small runs only, no browser")
    parser.add_argument("--no-browser", action="store_true")
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("links")
    print(f"load average: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for spec, algorithm, engine in QUICK_RUNS if args.quick else RUNS:
        plain, links, count = ab(spec, algorithm, engine, args.repeats)
        overhead = 100 * (links - plain) / plain
        print(f"{spec} {algorithm} {engine}: {count:,} links, {plain:.3f} s without, {links:.3f} s with records: "
              f"{overhead:+.1f} %")
        figures.add(f"links overhead {spec} {algorithm} {engine} ({count:,} links)", overhead, "%", target=10.0)
        executed, derived = derivation(spec, algorithm, engine, args.repeats)
        print(f"    execute alone {executed:.3f} s, derivation alone {derived:.4f} s: {100 * derived / executed:.1f} %")
        figures.add(f"derivation / execute {spec} {algorithm} {engine}", 100 * derived / executed, "%")
    with tempfile.TemporaryDirectory() as tmp:
        spec = "torus:16x16" if args.quick else "torus:64x64"
        html = Path(tmp) / "torus.html"
        page(spec, "allgather-mesh", html)  # warm-up
        ran, wrote, size = page(spec, "allgather-mesh", html)
        print(f"view {spec} allgather-mesh: run {ran:.2f} s, page {wrote:.2f} s, total {ran + wrote:.2f} s, "
              f"{size / 1e6:.1f} MB")
        figures.add(f"view {spec} allgather-mesh: page written (run included)", ran + wrote, "s", target=10.0)
        figures.add(f"view {spec} allgather-mesh: page size", size / 1e6, "MB")
        if not (args.quick or args.no_browser):
            big = Path(tmp) / "torus100.html"
            page("torus:100x100", "allgather-mesh", big)
            for name, path in (("torus:100x100", big), (spec, html)):
                worst, median, drawn = playback(path)
                print(f"playback {name}: {drawn:,} drawn links, longest frame {worst:.1f} ms, median {median:.1f} ms")
                figures.add(f"playback {name} ({drawn:,} drawn links): longest frame", worst, "ms", target=100.0)
    figures.write(args.figures)


if __name__ == "__main__":
    sys.exit(main())
