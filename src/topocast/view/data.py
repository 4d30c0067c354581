"""What the view page draws, as compact arrays: drawn nodes and links, per-frame link loads, highlight sets, cut.

Everything here is derived from the plan, the run's trace and its per-link records (:mod:`topocast.measure.links`);
nothing reads an engine's internals beyond the trace the verifier reads too.

* **Frames**: a step run has one frame per step (steps binned when there are more than ``MAX_FRAMES``); an
  event run ``MAX_FRAMES`` equal slices of the makespan, a transfer counted in the slice it starts in; a
  wormhole run one frame with the totals of its link table.
* **Loads**: bytes a drawn link carried in a frame, both directions together (a drawn link is an undirected
  pair of drawn nodes).
* **Highlight** of a node: the links that carried the messages that started at it (up to
  ``HIGHLIGHT_DELIVERIES`` message deliveries in the run); above that, the links of the transfers it sent or
  received.  A wormhole run: the links its worms crossed, relayed worms counted for the message's origin.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..measure.links import arcs_of, cut_arcs, messages_per_transfer, worm_arcs
from .layout import MAX_LINKS, MAX_NODES, clusters, layout

MAX_FRAMES = 200
#: engines whose runs load the network's own links
ENGINES = ("step", "event", "wormhole")
HIGHLIGHT_DELIVERIES = 2_000_000
#: result keys shown as the run's key figures, in this order (those present)
FIGURES = ("spec", "algorithm", "engine", "collective", "verified", "first_violation", "steps", "time",
           "mean_latency", "lower_bound", "lower_bound_kind", "lower_bound_ratio", "messages", "transfers",
           "link_bytes_max", "link_bytes_mean", "link_imbalance", "link_busy_max", "links_used", "links_total",
           "cut_link_count", "cut_bytes")


def encode(values: np.ndarray, kind: str) -> str:
    """A numpy array as base64 of its little-endian bytes (``kind``: u16, u32, f32, f64)."""
    dtype = {"u16": "<u2", "u32": "<u4", "i32": "<i4", "f32": "<f4", "f64": "<f8"}[kind]
    return base64.b64encode(np.ascontiguousarray(values, dtype=dtype).tobytes()).decode("ascii")


def _index_kind(limit: int) -> str:
    return "u16" if limit < 65_536 else "u32"


def drawn(topology) -> dict[str, Any]:
    """Drawn nodes (one per node, or clusters) and drawn links (undirected pairs of drawn nodes)."""
    lay = layout(topology)
    n = topology.num_nodes
    src, dst = topology.arc_sources, topology.indices
    pairs = np.unique(np.minimum(src, dst) * np.int64(n) + np.maximum(src, dst))
    aggregated = n > MAX_NODES or len(pairs) > MAX_LINKS
    if aggregated:
        node_of = clusters(lay)
        k = int(node_of.max(initial=-1)) + 1
        size = np.bincount(node_of, minlength=k)
        x = np.bincount(node_of, weights=lay.x, minlength=k) / np.maximum(size, 1)
        y = np.bincount(node_of, weights=lay.y, minlength=k) / np.maximum(size, 1)
        first = np.full(k, -1, np.int64)
        first[node_of[::-1]] = np.arange(n)[::-1]
        last = np.zeros(k, np.int64)
        last[node_of] = np.arange(n)
        names = [f"{topology.node_name(int(a))} .. {topology.node_name(int(b))} ({int(s)} nodes)"
                 for a, b, s in zip(first, last, size, strict=True)]
    else:
        node_of = np.arange(n, dtype=np.int64)
        k, size, x, y = n, np.ones(n, np.int64), lay.x, lay.y
        names = [str(topology.node_name(v)) for v in range(n)]
    a, b = node_of[src], node_of[dst]
    between = a != b
    key = np.minimum(a, b) * np.int64(k) + np.maximum(a, b)
    link_keys, link_of_arc = np.unique(key[between], return_inverse=True)
    arc_link = np.full(len(src), -1, np.int64)
    arc_link[between] = link_of_arc
    return {"layout": lay.kind, "aggregated": aggregated, "node_of": node_of, "nodes": k, "size": size, "x": x,
            "y": y, "names": names, "link_a": link_keys // k, "link_b": link_keys % k, "arc_link": arc_link}


def taken_transfers(result) -> np.ndarray:
    trace = result.trace
    if result.engine == "step":
        return trace.order if trace.stop_position < 0 else trace.order[:trace.stop_position]
    return trace.order[:trace.done]


def frames_of(topology, plan, result, arc_link: np.ndarray, links: int) -> dict[str, Any]:
    """Per frame the loads of the drawn links (sparse), the frames' labels, and per transfer its drawn link."""
    if result.engine in ("step", "event"):
        taken = taken_transfers(result)
        arcs = arcs_of(topology, plan.src[taken], plan.dst[taken])
        link = arc_link[arcs]
        load = messages_per_transfer(plan)[taken] * float(plan.message_bytes)
        if result.engine == "step":
            steps = max(plan.num_steps, 1)
            per = -(-steps // MAX_FRAMES)
            frame = plan.step[taken] // per
            count = -(-steps // per)
            labels = [f"step {f * per + 1}" if per == 1 else f"steps {f * per + 1}-{min(steps, (f + 1) * per)}"
                      for f in range(count)]
        else:
            span = float(result.trace.makespan) or 1.0
            count = min(MAX_FRAMES, max(1, len(taken)))
            frame = np.minimum((result.trace.start[taken] / span * count).astype(np.int64), count - 1)
            labels = [f"t {f * span / count:.4g} - {(f + 1) * span / count:.4g} s" for f in range(count)]
    elif result.engine == "wormhole":
        table = result.links
        arcs = arcs_of(topology, table.src, table.dst)
        link, load, frame, count = arc_link[arcs], table.bytes, np.zeros(len(table), np.int64), 1
        labels = [f"all {int(result.metrics.get('cycles', 0))} cycles"]
        taken = None
        worms, crossed = worm_arcs(plan, result.trace.trace)
        worm_link = (worm_origin(plan)[worms], arc_link[crossed])
    else:
        raise_engine(result.engine)
    keep = (link >= 0) & (load > 0)
    key = frame[keep] * np.int64(links) + link[keep]
    uniq, inverse = np.unique(key, return_inverse=True)
    sums = np.bincount(inverse, weights=load[keep], minlength=len(uniq))
    fr = uniq // links
    ptr = np.searchsorted(fr, np.arange(count + 1))
    return {"count": int(count), "labels": labels, "ptr": ptr, "link": uniq % links, "load": sums,
            "transfer_link": None if taken is None else (taken, link),
            "worm_link": worm_link if result.engine == "wormhole" else None}


def worm_origin(plan) -> np.ndarray:
    """Per worm of a wormhole plan the node its message started at (the source of the multicast or unicast its
    job serves: relayed worms count for the message's origin)."""
    worm_message = np.repeat(plan.job_multicast(), np.diff(plan.traffic.job_worm_ptr))
    return np.asarray(plan.source, np.int64)[worm_message]


def owner_sets(owner: np.ndarray, link: np.ndarray, nodes: int, links: int) -> tuple[np.ndarray, np.ndarray]:
    """Per drawn node (CSR) the distinct drawn links of the ``(owner, link)`` pairs (links < 0 dropped)."""
    ok = link >= 0
    key = np.unique(owner[ok] * np.int64(links) + link[ok])
    return np.searchsorted(key // links, np.arange(nodes + 1)), key % links


def highlight_sets(plan, node_of: np.ndarray, nodes: int, transfer_link, links: int) -> tuple[str, np.ndarray,
                                                                                               np.ndarray]:
    """Per drawn node the drawn links its messages crossed ("messages"), or those of its own transfers
    ("transfers") when the run delivers more than ``HIGHLIGHT_DELIVERIES`` messages."""
    if transfer_link is None:
        return "none", np.zeros(nodes + 1, np.int64), np.zeros(0, np.int64)
    taken, link = transfer_link
    ok = link >= 0
    taken, link = taken[ok], link[ok]
    lo, hi = plan.range_ptr[taken], plan.range_ptr[taken + 1]
    nranges = hi - lo
    ranges = np.repeat(lo - np.r_[0, np.cumsum(nranges)[:-1]], nranges) + np.arange(int(nranges.sum()))
    range_link = np.repeat(link, nranges)
    counts = plan.range_count[ranges]
    if int(counts.sum()) <= HIGHLIGHT_DELIVERIES:
        mode = "messages"
        msgs = np.repeat(plan.range_first[ranges] - np.r_[0, np.cumsum(counts)[:-1]], counts) + np.arange(
            int(counts.sum()))
        owner = node_of[plan.origin[msgs]]
        pair_link = np.repeat(range_link, counts)
    else:
        mode = "transfers"
        owner = np.concatenate([node_of[plan.src[taken]], node_of[plan.dst[taken]]])
        pair_link = np.concatenate([link, link])
    ptr, hl = owner_sets(owner, pair_link, nodes, links)
    return mode, ptr, hl


def raise_engine(engine: str) -> None:
    """Refuse a run whose engine does not load the network's links."""
    raise TopocastError(f"view: the {engine} engine records no per-link loads on the network's links "
                        "(circuit: switch wires; frontier: per-label counts); view a step, event or wormhole run")


def page_data(topology, plan, result) -> dict[str, Any]:
    """Everything the page's script reads, JSON-ready (arrays base64-encoded)."""
    if result.engine not in ENGINES:
        raise_engine(result.engine)
    d = drawn(topology)
    links = len(d["link_a"])
    fr = frames_of(topology, plan, result, d["arc_link"], max(links, 1))
    if fr["worm_link"] is not None:
        owner, worm_link = fr["worm_link"]
        mode = "messages"
        hl_ptr, hl_link = owner_sets(d["node_of"][owner], worm_link, d["nodes"], max(links, 1))
    else:
        mode, hl_ptr, hl_link = highlight_sets(plan, d["node_of"], d["nodes"], fr["transfer_link"], max(links, 1))
    cut = np.zeros(0, np.int64)
    if result.metrics.get("lower_bound_kind") == "cut":
        cut = np.unique(d["arc_link"][cut_arcs(topology)])
        cut = cut[cut >= 0]
    data = result.to_json()
    figures = [(k, data[k], data.get("units", {}).get(k, "")) for k in FIGURES if k in data]
    lk = _index_kind(max(links, 1))
    return {
        "title": f"{data['algorithm']} on {data['spec']}",
        "layout": d["layout"], "aggregated": bool(d["aggregated"]), "nodes": int(d["nodes"]), "links": links,
        "x": encode(d["x"], "f32"), "y": encode(d["y"], "f32"), "size": encode(d["size"], "u32"),
        "names": d["names"], "link_a": encode(d["link_a"], "u32"), "link_b": encode(d["link_b"], "u32"),
        "frames": fr["count"], "frame_labels": fr["labels"], "frame_ptr": encode(fr["ptr"], "u32"),
        "frame_link": encode(fr["link"], lk), "frame_link_kind": lk, "frame_load": encode(fr["load"], "f64"),
        "highlight_mode": mode, "hl_ptr": encode(hl_ptr, "u32"), "hl_link": encode(hl_link, lk),
        "cut": encode(cut, "u32"), "cut_count": int(len(cut)),
        "figures": figures, "hottest": data.get("hottest_links", []), "notes": data.get("notes", []),
        "load_unit": data.get("units", {}).get("link_bytes_max", "bytes"),
    }
