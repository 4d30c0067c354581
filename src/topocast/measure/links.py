"""Per-link records of a run: what every directed link carried, derived from the engine's trace and the plan.

One row per directed link (a distinct ``src -> dst`` pair of the topology; parallel arcs of a multigraph are
one row): ``bytes`` carried, ``busy`` time, ``transfers`` that crossed it and ``peak`` occupancy.  Nothing here
runs inside an engine: every column comes from what the engine records for the verifier (the order it took
the transfers, their start and finish, the arcs' busy time, the worms' paths) plus the plan, and, asked for
with ``links``, the event engine's ready time of every transfer.

=========  ==========================================  ===========================================
engine     busy                                        peak
=========  ==========================================  ===========================================
step       steps in which the link carried a transfer  most messages the link carried in one step
event      seconds the link transmitted (the engine's  most transfers waiting for the link or on it at
           own ``arc_busy``)                           once (its queue), each from when its data was
                                                       ready at the sender to its arrival
circuit    configurations in which a circuit used it   most circuits on it in one configuration
                                                       (above 1: a conflict)
wormhole   flit cycles: flits of the worms that        not recorded (empty): the engine keeps no
           crossed it (blocking not counted)           per-link buffer history
=========  ==========================================  ===========================================

The frontier engine simulates one message over bitmaps and never knows a link: its records are per-step
transfer counts per link label (:class:`LabelCounts`).

Summaries (:func:`summary`): the largest and mean bytes over every directed link of the network (unused
ones count as zero), their ratio (imbalance), the hottest links with their names and labels, and, when the
binding lower bound is the cut bound, the cut's links and what crossed them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..topology.csr import first_arc

if TYPE_CHECKING:
    from ..execution.result import RunResult
    from ..plans.circuit import CircuitPlan
    from ..plans.schedule import Schedule
    from ..plans.wormhole import WormPlan
    from ..sim.event import EventTrace
    from ..sim.frontier import FrontierTrace
    from ..sim.step import StepTrace
    from ..sim.wormhole.engine import WormTrace
    from ..topology.core import Topology

#: rows of the CSV formatted at a time: the table stays as numpy columns (about 50 bytes per link) and its
#: text goes to disk chunk by chunk, so a run of millions of links never holds its CSV in memory
CSV_CHUNK = 65_536
#: hottest links named in the summary
HOTTEST = 5
#: cut links listed by name in the summary (all are counted)
CUT_LISTED = 64
COLUMNS = ("src", "dst", "bytes", "busy", "transfers", "peak")


@dataclass
class LinkTable:
    """Per directed link of a run: ``src``, ``dst``, ``bytes``, ``busy``, ``transfers``, ``peak`` (numpy columns).

    ``label_codes`` index ``label_names``: the link label of each link (:attr:`label`: '' when the family
    has none); ``units``: the unit of ``bytes``, ``busy`` and ``peak`` for the engine that ran (``peak`` NaN
    where the engine does not record it); ``names``: a function from node index to its name, for the
    labelled columns.
    """

    src: np.ndarray
    dst: np.ndarray
    bytes: np.ndarray
    busy: np.ndarray
    transfers: np.ndarray
    peak: np.ndarray
    label_codes: np.ndarray
    label_names: tuple[str, ...] = ()
    units: dict[str, str] = field(default_factory=dict)
    names: Callable[[int], Any] | None = None

    def __len__(self) -> int:
        return len(self.src)

    @property
    def label(self) -> np.ndarray:
        """The link label of each link, as text ('' where there is none)."""
        names = np.array([*self.label_names, ""], dtype=object)
        codes = np.asarray(self.label_codes, dtype=np.int64)
        return names[np.where((codes >= 0) & (codes < len(names) - 1), codes, len(names) - 1)]

    def columns(self) -> dict[str, np.ndarray]:
        """The table as named columns."""
        return {c: getattr(self, c) for c in COLUMNS}

    def rows(self, lo: int = 0, hi: int | None = None) -> list[tuple[Any, ...]]:
        """Rows ``lo .. hi - 1`` as tuples: the six columns, then the labels (when the network has any)."""
        hi = len(self) if hi is None else min(hi, len(self))
        cols = [self.src[lo:hi].tolist(), self.dst[lo:hi].tolist(), self.bytes[lo:hi].tolist(),
                self.busy[lo:hi].tolist(), self.transfers[lo:hi].tolist(),
                [None if p != p else p for p in self.peak[lo:hi].tolist()]]
        if self.labelled:
            names = self.names or str
            cols += [[str(names(int(v))) for v in self.src[lo:hi]], [str(names(int(v))) for v in self.dst[lo:hi]],
                     self.label[lo:hi].tolist()]
        return list(zip(*cols, strict=True))

    @property
    def labelled(self) -> bool:
        return self.names is not None

    @property
    def header(self) -> list[str]:
        return [*COLUMNS, *(("src_label", "dst_label", "label") if self.labelled else ())]

    def to_pandas(self) -> Any:
        """The table as a pandas DataFrame (pandas is optional)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is not a dependency
            raise TopocastError("links: to_pandas needs pandas (pip install pandas)") from None
        return pd.DataFrame(dict(zip(self.header, zip(*self.rows(), strict=True), strict=True)))


@dataclass
class LabelCounts:
    """Frontier records: per step, the transfers under each link label (``counts[step, label]``)."""

    counts: np.ndarray
    label_names: tuple[str, ...]
    units: dict[str, str] = field(default_factory=lambda: {"transfers": "transfers"})

    header = ["step", "label", "transfers"]

    def __len__(self) -> int:
        return int(self.counts.size)

    def rows(self, lo: int = 0, hi: int | None = None) -> list[tuple[Any, ...]]:
        steps, labels = self.counts.shape if self.counts.ndim == 2 else (0, 0)
        out = [(s + 1, self.label_names[k] if k < len(self.label_names) else str(k), int(self.counts[s, k]))
               for s in range(steps) for k in range(labels)]
        return out[lo:hi]


# -- links of a topology ------------------------------------------------------------------------------------
def link_rows(topology: Topology) -> tuple[np.ndarray, np.ndarray | None]:
    """Per arc its link row (parallel arcs share one), and per row its first arc (None: every arc is a row)."""
    if not topology.has_parallel_links:
        return np.arange(topology.num_arcs, dtype=np.int64), None
    src, dst = topology.arc_sources, topology.indices
    first = np.ones(len(dst), dtype=bool)
    first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    return np.cumsum(first) - 1, np.flatnonzero(first)


def rows_of(topology: Topology, first: np.ndarray | None) -> int:
    """Rows of the link table (directed links) given :func:`link_rows`' ``first``."""
    return topology.num_arcs if first is None else len(first)


def arcs_of(topology: Topology, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The first arc ``src[i] -> dst[i]`` of each pair (-1: no link)."""
    keys = topology.arc_sources * np.int64(topology.num_nodes) + topology.indices
    want = np.asarray(src, np.int64) * np.int64(topology.num_nodes) + np.asarray(dst, np.int64)
    pos = np.searchsorted(keys, want)
    ok = pos < len(keys)
    ok[ok] = keys[pos[ok]] == want[ok]
    return np.where(ok, pos, -1)


def _table(topology: Topology, row_of_arc: np.ndarray, first: np.ndarray | None, *, nbytes: np.ndarray,
           busy: np.ndarray, transfers: np.ndarray, peak: np.ndarray, units: dict[str, str]) -> LinkTable:
    pick = slice(None) if first is None else first
    return LinkTable(topology.arc_sources[pick], topology.indices[pick], nbytes, busy, transfers, peak,
                     topology.arc_labels[pick], topology.label_names, units, topology.node_name)


def messages_per_transfer(schedule: Schedule) -> np.ndarray:
    """Messages each transfer carries (the sum of its ranges' counts)."""
    owner = np.repeat(np.arange(schedule.num_transfers), np.diff(schedule.range_ptr))
    return np.bincount(owner, weights=schedule.range_count, minlength=schedule.num_transfers).astype(np.int64)


@nb.njit(cache=True)
def _walk(indptr: np.ndarray, indices: np.ndarray, row_of_arc: np.ndarray, src: np.ndarray, dst: np.ndarray,
          range_ptr: np.ndarray, count: np.ndarray, step: np.ndarray, taken: np.ndarray, rows: np.ndarray,
          acc: np.ndarray) -> int:
    """One pass over the transfers ``taken`` (in the engine's order): per transfer its link row (into
    ``rows``), per row the messages carried, the transfers, and (``step`` given, transfers in step order) the
    busy steps and the most messages in one step; ``acc`` columns: messages, transfers, busy, peak, current
    step's messages, last step.  Returns the position of a transfer without a link, or -1."""
    for i in range(len(taken)):
        t = taken[i]
        e = first_arc(indptr, indices, src[t], dst[t])
        if e < 0:
            return i
        r = row_of_arc[e]
        rows[i] = r
        m = 0
        for k in range(range_ptr[t], range_ptr[t + 1]):
            m += count[k]
        acc[r, 0] += m
        acc[r, 1] += 1
        if len(step):
            if acc[r, 5] != step[t] + 1:
                acc[r, 5] = step[t] + 1
                acc[r, 2] += 1
                acc[r, 4] = 0
            acc[r, 4] += m
            if acc[r, 4] > acc[r, 3]:
                acc[r, 3] = acc[r, 4]
    return -1


def _schedule_links(topology: Topology, schedule: Schedule, taken: np.ndarray,
                    by_step: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Per taken transfer its link row, per row the accumulated columns (see :func:`_walk`), and the rows."""
    row_of_arc, first = link_rows(topology)
    rows = np.empty(len(taken), np.int64)
    acc = np.zeros((rows_of(topology, first), 6), np.int64)
    step = schedule.step if by_step else np.zeros(0, np.int64)
    if step is None:
        raise TopocastError("links: a run in steps needs a step per transfer")
    bad = _walk(topology.indptr, topology.indices, row_of_arc, schedule.src, schedule.dst, schedule.range_ptr,
                schedule.range_count, step, np.ascontiguousarray(taken, np.int64), rows, acc)
    if bad >= 0:
        raise TopocastError("links: a transfer the engine took has no link")
    return rows, acc, row_of_arc, first


# -- one function per engine --------------------------------------------------------------------------------
def from_step(topology: Topology, schedule: Schedule, trace: StepTrace) -> LinkTable:
    """Per-link records of a step-engine run: the transfers the engine took (up to where it stopped)."""
    stop = trace.stop_position
    taken = trace.order if stop < 0 else trace.order[:stop]
    _, acc, row_of_arc, first = _schedule_links(topology, schedule, taken, by_step=True)
    return _table(topology, row_of_arc, first, nbytes=acc[:, 0] * float(schedule.message_bytes),
                  busy=acc[:, 2].astype(np.float64), transfers=acc[:, 1].copy(), peak=acc[:, 3].astype(np.float64),
                  units={"bytes": "bytes", "busy": "steps", "peak": "messages"})


#: intervals a link may have open at once before :func:`_in_flight_peak` sorts instead of scanning
OPEN_SLOTS = 4


@nb.njit(cache=True)
def _open_scan(rows: np.ndarray, start: np.ndarray, end: np.ndarray, size: int,
               slots: int) -> tuple[np.ndarray, bool]:
    """Per link the most intervals open at once, taking the intervals in the given order: valid when every
    link's starts come in order (each link serves its transfers one after the other) and at most ``slots``
    are open at once; returns (peaks, False) otherwise.  The open intervals are kept per link used, in the
    order links are first met (a run touching few of many links touches little memory)."""
    compact = np.full(size, -1, np.int64)
    used = 0
    open_end = np.empty((min(len(rows), size), slots))
    count = np.zeros(min(len(rows), size), np.int64)
    last = np.empty(min(len(rows), size))
    peak = np.zeros(size)
    for i in range(len(rows)):
        r, s = rows[i], start[i]
        c = compact[r]
        if c < 0:
            c = compact[r] = used
            used += 1
            last[c] = -np.inf
        if s < last[c]:
            return peak, False
        last[c] = s
        kept = 0
        for k in range(count[c]):
            if open_end[c, k] > s:
                open_end[c, kept] = open_end[c, k]
                kept += 1
        if kept == slots:
            return peak, False
        open_end[c, kept] = end[i]
        count[c] = kept + 1
        if count[c] > peak[r]:
            peak[r] = count[c]
    return peak, True


def _in_flight_peak(rows: np.ndarray, start: np.ndarray, end: np.ndarray, size: int) -> np.ndarray:
    """Per link the most intervals ``[start, end)`` open at once (an interval ending when one starts is closed)."""
    if len(rows) == 0:
        return np.zeros(size)
    peak, ok = _open_scan(rows, start, end, size, OPEN_SLOTS)
    if ok:
        return peak
    row = np.concatenate([rows, rows])
    when = np.concatenate([start, end])
    delta = np.concatenate([np.ones(len(rows), np.int64), -np.ones(len(rows), np.int64)])
    order = np.lexsort((delta, when, row))  # by link, then time, closings first
    level = np.cumsum(delta[order])         # every link's deltas sum to 0: the running count restarts per link
    row = row[order]
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    out = np.zeros(size)
    out[row[starts]] = np.maximum.reduceat(level, starts)
    return out


def from_event(topology: Topology, schedule: Schedule, trace: EventTrace) -> LinkTable:
    """Per-link records of an event-engine run: the transfers processed, the engine's per-arc busy time."""
    taken = trace.order[:trace.done]
    rows, acc, row_of_arc, first = _schedule_links(topology, schedule, taken, by_step=False)
    size = rows_of(topology, first)
    busy = trace.arc_busy if first is None else np.bincount(row_of_arc, weights=trace.arc_busy, minlength=size)
    return _table(topology, row_of_arc, first, nbytes=acc[:, 0] * float(schedule.message_bytes),
                  busy=np.array(busy, dtype=np.float64), transfers=acc[:, 1].copy(),
                  peak=_in_flight_peak(rows, (trace.start if trace.ready is None else trace.ready)[taken],
                                       trace.finish[taken], size),
                  units={"bytes": "bytes", "busy": "s", "peak": "transfers"})


def worm_arcs(plan: WormPlan, trace: WormTrace) -> tuple[np.ndarray, np.ndarray]:
    """Every link crossing of a wormhole run: ``(worm, arc)`` per crossing, for every injected worm over its
    whole path (its alternate route when it took it), worms in order."""
    t = plan.traffic
    injected = np.flatnonzero(trace.worm_inject >= 0)
    lo, hi = t.path_ptr[injected], t.path_ptr[injected + 1]
    if trace.worm_route is not None and t.path_alt is not None:
        alt = trace.worm_route[injected] == 1
        lo = np.where(alt, t.path_alt[0, injected], lo)
        hi = np.where(alt, t.path_alt[1, injected], hi)
    lengths = hi - lo
    pos = np.repeat(lo - np.cumsum(np.r_[0, lengths[:-1]]), lengths) + np.arange(int(lengths.sum()))
    arcs = t.path_arc[pos]
    crossing = arcs >= 0
    return np.repeat(injected, lengths)[crossing], arcs[crossing]


def from_wormhole(topology: Topology, plan: WormPlan, trace: WormTrace) -> LinkTable:
    """Per-link records of a wormhole run: every injected worm over its whole path (its alternate when taken)."""
    row_of_arc, first = link_rows(topology)
    size = rows_of(topology, first)
    rows = row_of_arc[worm_arcs(plan, trace)[1]]
    flits = float(plan.flits)
    moved = np.bincount(rows, minlength=size) * flits
    return _table(topology, row_of_arc, first, nbytes=moved, busy=moved.copy(),
                  transfers=np.bincount(rows, minlength=size).astype(np.int64), peak=np.full(size, np.nan),
                  units={"bytes": "flits", "busy": "cycles", "peak": ""})


def from_circuit(plan: CircuitPlan) -> LinkTable:
    """Per-link records of a circuit plan: every wire between stages, over every configuration set."""
    from ..sim.circuit import trace

    net = plan.network
    wires = int(net.out_off[-1])
    carried = np.zeros(wires, np.int64)
    busy = np.zeros(wires, np.int64)
    peak = np.zeros(wires, np.int64)
    first_row = 1 if plan.collective == "alltoall" else 0   # the identity row of a total exchange stays home
    for p in range(plan.passes):
        for row in range(first_row, plan.rows):
            use = trace(net, plan.routes(np.array([row], np.int64), p)[0]).link_use
            carried += use
            busy += use > 0
            np.maximum(peak, use, out=peak)
    stage = np.searchsorted(net.out_off, np.arange(wires), side="right") - 1
    switch = (np.arange(wires) - net.out_off[stage]) // net.outs[stage]
    first_switch = np.r_[0, np.cumsum(net.switches)[:-1]]
    src = first_switch[stage] + switch
    nxt = np.asarray(net.next_in)
    in_stage = np.minimum(stage + 1, net.num_stages - 1)
    dst = np.where(nxt >= 0, first_switch[in_stage] + (np.maximum(nxt, 0) - net.in_off[in_stage]) //
                   np.maximum(net.ins[in_stage], 1), -1)
    stage_names = tuple(net.stage_names[s] if s < len(net.stage_names) else f"stage {s}"
                        for s in range(net.num_stages))
    switch_stage = np.repeat(np.arange(net.num_stages), net.switches)

    def name(k: int) -> str:  # a switch by stage and position; -1: the network's outputs
        return "output" if k < 0 else f"s{switch_stage[k]}.{k - first_switch[switch_stage[k]]}"

    return LinkTable(src.astype(np.int64), dst.astype(np.int64), carried * float(plan.message_bytes),
                     busy.astype(np.float64), carried, peak.astype(np.float64), stage, stage_names,
                     {"bytes": "bytes", "busy": "configurations", "peak": "circuits"}, name)


def from_frontier(trace: FrontierTrace, topology: Topology | None = None) -> LabelCounts:
    """Per step the transfers under each link label of a frontier run (label names from a built topology)."""
    names = tuple(getattr(topology, "label_names", ()) or ())
    return LabelCounts(np.asarray(trace.label_counts), names)


def link_table(topology: Any, plan: Any, engine: str, trace: Any) -> LinkTable | LabelCounts:
    """The per-link records of a run on ``engine`` from its ``trace`` and ``plan``.

    Parameters
    ----------
    topology : Topology
        The network the plan ran on.
    plan : Schedule, CircuitPlan, WormPlan or FrontierPlan
        The plan.
    engine : str
        The engine that ran it.
    trace : object
        The engine adapter's trace (``RunResult.trace``).

    Returns
    -------
    LinkTable or LabelCounts
        One row per directed link (frontier: per step and label).
    """
    if engine == "step":
        return from_step(topology, plan, trace)
    if engine == "event":
        return from_event(topology, plan, trace)
    if engine == "wormhole":
        return from_wormhole(topology, plan, trace.trace)
    if engine == "circuit":
        return from_circuit(plan)
    if engine == "frontier":
        return from_frontier(trace, topology)
    raise TopocastError(f"links: no per-link records for engine '{engine}'")


def attach(result: RunResult, topology: Any, plan: Any) -> LinkTable | LabelCounts:
    """Give ``result`` (a :class:`~topocast.execution.result.RunResult` with its trace) its per-link records and add
    their summaries to its metrics; returns the table."""
    if result.trace is None:
        raise TopocastError("links: the run kept no trace to derive per-link records from")
    table = link_table(topology, plan, result.engine, result.trace)
    found = summary(table, topology, result.metrics.get("lower_bound_kind"))
    result.units.update({k: v for k, v in summary_units(table).items() if k in found})
    result.metrics.update(found)
    result.links = table
    return table


# -- summaries ----------------------------------------------------------------------------------------------
def link_name(table: LinkTable, i: int) -> str:
    names = table.names or str
    text = f"{names(int(table.src[i]))}->{names(int(table.dst[i]))}"
    code = int(table.label_codes[i])
    label = table.label_names[code] if 0 <= code < len(table.label_names) else ""
    return f"{text} ({label})" if label else text


def cut_arcs(topology: Topology) -> np.ndarray:
    """Arcs across the best balanced cut of ``topology`` (the one the cut bound uses)."""
    from ..topology.properties import best_cut

    _, side, _ = best_cut(topology)
    return np.flatnonzero(side[topology.arc_sources] != side[topology.indices])


def hottest(load: np.ndarray, count: int) -> np.ndarray:
    """The rows of the ``count`` largest loads, most first, ties by row (without sorting every row)."""
    if len(load) <= count:
        return np.lexsort((np.arange(len(load)), -load))
    kth = np.partition(load, len(load) - count)[len(load) - count]
    above = np.flatnonzero(load > kth)
    rows = np.concatenate([above, np.flatnonzero(load == kth)[:count - len(above)]])
    return rows[np.lexsort((rows, -load[rows]))]


def summary(table: LinkTable | LabelCounts, topology: Topology | None = None,
            bound_kind: str | None = None) -> dict[str, Any]:
    """Scalar summaries of a link table for the run's result (keys ``link_*``, ``hottest_links``, ``cut_*``)."""
    if isinstance(table, LabelCounts):
        per_label = table.counts.sum(axis=0) if table.counts.size else np.zeros(0)
        mean = float(per_label.mean()) if len(per_label) else 0.0
        top = float(per_label.max(initial=0))
        return {"link_label_transfers_max": top, "link_label_transfers_mean": mean,
                "link_imbalance": top / mean if mean > 0 else None}
    load = table.bytes
    mean = float(load.mean()) if len(load) else 0.0
    top = float(load.max(initial=0))
    out: dict[str, Any] = {"link_bytes_max": top, "link_bytes_mean": mean,
                           "link_imbalance": top / mean if mean > 0 else None,
                           "link_busy_max": float(table.busy.max(initial=0)),
                           "links_used": int(np.count_nonzero(table.transfers)), "links_total": len(table)}
    hot = hottest(load, HOTTEST)
    out["hottest_links"] = [{"link": link_name(table, i), "src": int(table.src[i]), "dst": int(table.dst[i]),
                             "bytes": float(load[i]), "busy": float(table.busy[i])} for i in hot if load[i] > 0]
    if bound_kind == "cut" and topology is not None and getattr(topology, "indices", None) is not None:
        row_of_arc, _ = link_rows(topology)
        rows = np.unique(row_of_arc[cut_arcs(topology)])
        out["cut_link_count"] = int(len(rows))
        out["cut_bytes"] = float(load[rows].sum())
        out["cut_links"] = [link_name(table, i) for i in rows[:CUT_LISTED]]
    return out


UNITS = {"link_bytes_max": "bytes", "link_bytes_mean": "bytes", "cut_bytes": "bytes"}


def summary_units(table: LinkTable | LabelCounts) -> dict[str, str]:
    """The units of :func:`summary`'s dimensional keys for this table."""
    if isinstance(table, LabelCounts):
        return {}
    unit = table.units.get("bytes", "bytes")
    out = {k: unit for k in UNITS}
    out["link_busy_max"] = table.units.get("busy", "")
    return out


def write_csv(table: LinkTable | LabelCounts, path: str | Path, chunk: int = CSV_CHUNK) -> str | Path:
    """Write ``table`` to ``path`` as CSV, ``chunk`` rows at a time (never the whole text in memory)."""
    import csv

    from ..infra.fileio import atomic_writer

    with atomic_writer(path, "--links") as raw:
        import io

        text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        writer = csv.writer(text)
        writer.writerow(table.header)
        for lo in range(0, len(table), chunk):
            writer.writerows(table.rows(lo, lo + chunk))
        text.flush()
        text.detach()
    return path
