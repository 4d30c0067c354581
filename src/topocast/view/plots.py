"""Plots of one run a user would otherwise script: the link-load heat map and the time-space diagram (PNG).

* ``link-load``: the network in the view's layout with every drawn link coloured by the bytes it carried
  (both directions), and beside it the busiest drawn links' load frame by frame (rows: links, hottest first;
  columns: the view's frames).
* ``time-space``: every transfer as a segment from (its start, its sender) to (its arrival, its receiver):
  steps on a step run, seconds on an event run.  Above ``MAX_SEGMENTS`` transfers every k-th is drawn and the
  title says so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import TopocastError

KINDS = ("link-load", "time-space")
MAX_SEGMENTS = 200_000
#: rows of the frame-by-frame panel of the heat map
HOT_ROWS = 60


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def link_load(run, out: str | Path) -> Path:
    """The link-load heat map of ``run`` (a :class:`~topocast.view.ViewRun`) into the PNG ``out``."""
    from matplotlib.collections import LineCollection

    from ..infra.fileio import save_figure
    from .data import drawn, frames_of

    d = drawn(run.topology)
    links = max(len(d["link_a"]), 1)
    fr = frames_of(run.topology, run.plan, run.result, d["arc_link"], links)
    per_frame = np.zeros((fr["count"], links))
    frame_of_entry = np.repeat(np.arange(fr["count"]), np.diff(fr["ptr"]))
    np.add.at(per_frame, (frame_of_entry, fr["link"]), fr["load"])
    total = per_frame.sum(axis=0)
    plt = _pyplot()
    figure, (net, matrix) = plt.subplots(1, 2, figsize=(12, 5.6), gridspec_kw={"width_ratios": [1.1, 1]})
    segments = np.stack([np.column_stack([d["x"][d["link_a"]], d["y"][d["link_a"]]]),
                         np.column_stack([d["x"][d["link_b"]], d["y"][d["link_b"]]])], axis=1)
    order = np.argsort(total, kind="stable")  # hottest drawn last, on top
    unit = run.result.units.get("link_bytes_max", "bytes")
    # an (n, 2, 2) array is a sequence of segments; matplotlib's stubs ask for a Sequence
    lines = LineCollection(segments[order], array=total[order], cmap="viridis",  # type: ignore[arg-type]
                           linewidths=1.6)
    net.add_collection(lines)
    net.scatter(d["x"], d["y"], s=6 if d["nodes"] > 400 else 14, c="#555", zorder=3)
    net.set_aspect("equal")
    net.autoscale()
    net.invert_yaxis()
    net.axis("off")
    figure.colorbar(lines, ax=net, label=f"{unit} carried (both directions)", shrink=0.8)
    what = f"{d['nodes']} clusters" if d["aggregated"] else f"{d['nodes']} nodes"
    net.set_title(f"{run.result.algorithm} on {run.result.spec}\n{what}, {len(d['link_a'])} links, "
                  f"{d['layout']} layout", fontsize=9)
    hot = np.argsort(-total, kind="stable")[:HOT_ROWS]
    hot = hot[total[hot] > 0]
    image = matrix.imshow(per_frame[:, hot].T, aspect="auto", cmap="viridis", interpolation="nearest")
    names = d["names"]
    matrix.set_yticks(range(len(hot)))
    matrix.set_yticklabels([f"{names[d['link_a'][i]]}-{names[d['link_b'][i]]}" for i in hot],
                           fontsize=5 if len(hot) > 30 else 7)
    matrix.set_xlabel(f"frame ({fr['labels'][0]} .. {fr['labels'][-1]})" if fr["labels"] else "frame")
    matrix.set_title(f"the {len(hot)} busiest links, frame by frame", fontsize=9)
    figure.colorbar(image, ax=matrix, label=f"{unit} in the frame", shrink=0.8)
    figure.tight_layout()
    return save_figure(figure, out)


def time_space(run, out: str | Path) -> Path:
    """The time-space diagram of ``run``'s transfers into the PNG ``out``."""
    from matplotlib.collections import LineCollection

    from ..infra.fileio import save_figure
    from .data import taken_transfers

    result, plan = run.result, run.plan
    if result.engine not in ("step", "event"):
        raise TopocastError(f"--kind: time-space draws the transfers of a schedule (step or event engine), not a "
                            f"{result.engine} run")
    taken = taken_transfers(result)
    every = max(1, -(-len(taken) // MAX_SEGMENTS))
    taken = taken[::every]
    if result.engine == "step":
        begin = plan.step[taken].astype(float)
        end = begin + 1.0
        axis = "step"
    else:
        begin, end = result.trace.start[taken], result.trace.finish[taken]
        axis = "time (s)"
    segments = np.stack([np.column_stack([begin, plan.src[taken]]), np.column_stack([end, plan.dst[taken]])], axis=1)
    plt = _pyplot()
    figure, ax = plt.subplots(figsize=(9, 6))
    colour = plan.src[taken] if len(taken) else np.zeros(0)
    ax.add_collection(LineCollection(segments, array=colour.astype(float), cmap="turbo",  # type: ignore[arg-type]
                                     linewidths=0.6 if len(taken) > 5000 else 1.0, alpha=0.8))
    ax.autoscale()
    ax.set_xlabel(axis)
    ax.set_ylabel("node")
    sampled = f"; every {every}th of {len(taken_transfers(result)):,} transfers drawn" if every > 1 else ""
    ax.set_title(f"{result.algorithm} on {result.spec}: transfers from (start, sender) to (arrival, receiver)"
                 f"{sampled}", fontsize=9)
    figure.tight_layout()
    return save_figure(figure, out)


def draw(kind: str, run, out: str | Path) -> Path:
    """``link-load`` or ``time-space`` of ``run`` into ``out``."""
    if kind == "link-load":
        return link_load(run, out)
    if kind == "time-space":
        return time_space(run, out)
    raise TopocastError(f"--kind: must be sweep, {', '.join(KINDS)}; got '{kind}'")
