"""``topocast view``: one self-contained HTML page of a run on its network (no outside requests).

The page draws the network in a layout that suits its family (:mod:`topocast.view.layout`), colours every link
by the load it carried (per frame, or up to the frame), plays the run frame by frame (slider, play/pause),
highlights on a click the links a node's messages crossed, and shows the run's key figures, its hottest links
and, when the cut bound binds, the cut's links.  Script and style are inline; the page's Content Security
Policy forbids every outside request.  What it draws comes from the plan, the trace and the per-link records
(:mod:`topocast.view.data`).

>>> import topocast as tc
>>> from topocast.view import from_algorithm, render
>>> page = render(from_algorithm("mesh:3x3", "allgather-mesh"))
>>> page.startswith("<!DOCTYPE html>") and "http://" not in page.replace("http://www.w3.org", "")
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TopocastError

#: pages with more drawn links than this draw the network on a canvas (redrawn per frame), fewer as SVG elements
SVG_LINKS = 3_000


@dataclass
class ViewRun:
    """A run to draw: its network, its plan and its result with per-link records."""

    topology: Any
    plan: Any
    result: Any


def from_algorithm(spec: str, algorithm: str, engine: str | None = None, seed: int = 0,
                   max_memory: float | None = None, params_from_text: bool = False, **params: Any) -> ViewRun:
    """Plan and run ``algorithm`` on ``spec`` with per-link records (as :func:`topocast.api.run`)."""
    from .. import api
    from ..execution.execute import execute

    checked = api.prepare(spec, algorithm, engine, seed, max_memory, params_from_text, **params)
    plan = api.plan(checked.topology, checked.algorithm, checked.params, checked.engine, checked.seed,
                    checked.max_memory)
    result = execute(checked.topology, plan, api.plan_engine(plan, checked.engine), api.model_of(checked),
                     algorithm=checked.algorithm.name, seed=checked.seed, params=checked.params,
                     max_bytes=checked.max_memory, links=True)
    return ViewRun(checked.topology, plan, result)


def from_schedule(spec: str, path: str, engine: str = "event", max_memory: float | None = None) -> ViewRun:
    """Replay a schedule file of ``topocast synthesize`` with per-link records."""
    from ..measure.links import attach
    from ..spec import build
    from ..synthesis import replay
    from ..synthesis.fileformat import read

    result = replay(spec, path, engine=engine, max_memory=max_memory)
    topology = build(spec, max_memory=max_memory)
    schedule = read(path, topology, max_memory)[1]
    attach(result, topology, schedule)
    return ViewRun(topology, schedule, result)


def from_result(path: str | Path, max_memory: float | None = None) -> ViewRun:
    """Run again what a ``run --json`` file records (runs are deterministic for their seed) and check that the
    run gives the recorded figures."""
    from ..infra.fileio import check_input_file

    file = check_input_file(path, "RESULT.json")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TopocastError(f"RESULT.json: {file} is not a run's JSON ({exc})") from None
    if not isinstance(data, dict) or not {"spec", "algorithm", "engine", "params", "seed"} <= set(data):
        raise TopocastError(f"RESULT.json: {file} lacks the keys of a run (spec, algorithm, engine, params, seed)")
    params = dict(data["params"]) if isinstance(data["params"], dict) else {}
    if "schedule" in params and str(data["algorithm"]).startswith("synthesized:"):
        run = from_schedule(data["spec"], params["schedule"], engine=data["engine"], max_memory=max_memory)
    else:
        run = from_algorithm(data["spec"], data["algorithm"], engine=data["engine"], seed=data["seed"],
                             max_memory=max_memory, **params)
    again = run.result.to_json()
    for key in ("verified", "lower_bound", "steps", "time", "mean_latency"):
        if key in data and data[key] != again.get(key):
            raise TopocastError(f"RESULT.json: running {data['algorithm']} on {data['spec']} again gives {key} "
                                f"{again.get(key)!r}, the file records {data[key]!r} (a file from another "
                                "version, or edited)")
    return run


def load(source: str, algorithm: str | None = None, schedule: str | None = None, engine: str | None = None,
         settings: dict[str, str] | None = None, seed: int = 0, max_memory: float | None = None) -> ViewRun:
    """The run the command line names: ``RESULT.json``, ``SPEC --schedule FILE`` or ``SPEC ALGORITHM``.

    A ``SOURCE`` ending in ``.json`` with neither an algorithm nor a schedule is a result file.
    """
    from .data import ENGINES, raise_engine

    if engine is not None and engine not in ENGINES:
        raise_engine(engine)
    if algorithm is None and schedule is None:
        if not str(source).endswith(".json"):
            raise TopocastError("SOURCE: give a run's RESULT.json, or a SPEC with an ALGORITHM or --schedule FILE")
        if settings:
            raise TopocastError("--set: a result file records its parameters; --set does not apply to RESULT.json")
        if engine is not None:
            raise TopocastError("--engine: a result file records its engine; --engine does not apply to RESULT.json")
        return from_result(source, max_memory=max_memory)
    if algorithm is not None and schedule is not None:
        raise TopocastError("algorithm: give an algorithm name or --schedule FILE, not both")
    if schedule is not None:
        if settings:
            raise TopocastError("--set: a schedule file carries its own model; --set does not apply to --schedule")
        return from_schedule(source, schedule, engine=engine or "event", max_memory=max_memory)
    if algorithm is None:  # never: without a schedule file an algorithm was given (checked above)
        raise TopocastError("algorithm: give an algorithm name or --schedule FILE")
    return from_algorithm(source, algorithm, engine=engine, seed=seed, max_memory=max_memory, params_from_text=True,
                          **(settings or {}))


def render(run: ViewRun) -> str:
    """The page's HTML."""
    import jinja2

    from .data import page_data

    data = page_data(run.topology, run.plan, run.result)
    note = (f"{data['layout']} layout; " + (f"aggregated into {data['nodes']} clusters of nodes"
                                          if data["aggregated"] else f"{data['nodes']} nodes")
            + f", {data['links']} links drawn, {data['frames']} frames")
    env = jinja2.Environment(loader=jinja2.PackageLoader("topocast", "outputs/templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    # inside <script>: no closing tag, no HTML comment opener can end the block early
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return env.get_template("view.html.j2").render(title=data["title"], layout_note=note, svg_links=SVG_LINKS,
                                                   data_json=jinja2.utils.markupsafe.Markup(text))


def write(run: ViewRun, out: str | Path) -> Path:
    """Write the page of ``run`` to ``out`` (atomically)."""
    from ..infra.fileio import atomic_write

    return atomic_write(out, render(run), "--out")


__all__ = ["ViewRun", "from_algorithm", "load", "from_result", "from_schedule", "render", "write"]
