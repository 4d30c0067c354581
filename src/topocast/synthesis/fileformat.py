"""The schedule file: one JSON document, header and arrays together (format ``topocast-schedule``, version 1).

Header keys: ``format``, ``version``, ``spec`` (the topology's canonical spec),
``nodes``, ``collective``, ``engine``, ``method``, ``seed``, ``chunks``,
``chunk_bytes``, ``model`` (``message_bytes``, ``startup``, ``per_byte``,
``per_hop``, ``ports``, ``duplex``), ``measured`` and ``unit`` (s or steps),
``lower_bound``, ``ratio``, ``reference_algorithm``, ``verification``
(verified, exactly_once, redundant_receipts, receipts), ``candidates`` and
``notes``, ``origin`` (``synthesized`` or ``registered``: ``method`` then
names the registered algorithm), ``bound`` (the bound's kind, value, witness
and class: :func:`topocast.synthesis.certificate`), and ``faults`` (the
canonical fault spec) for a schedule made on a degraded network: its arrays
promise the intact collective, and a replay degrades the network and
restricts the promise to the healthy nodes connected to each origin.  ``arrays`` maps ``origin``, ``src``,
``dst``, ``range_ptr``, ``range_first``, ``range_count``, ``step`` or the
dependencies ``after_ptr`` and ``after_ids`` (or all three), and ``targets``
for total exchange, to ``{"dtype", "shape", "sha256", "data"}``: ``data`` is the
little-endian bytes, zlib-compressed, base64-encoded; ``sha256`` is of the raw
bytes.  Keys are sorted and no wall-clock time is stored, so the same
synthesis gives the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule

if TYPE_CHECKING:
    from ..topology.core import Topology
    from . import Synthesis

FORMAT = "topocast-schedule"
VERSION = 1
ARRAYS = ("origin", "src", "dst", "range_ptr", "range_first", "range_count")
#: timing arrays: a step per transfer, dependencies (CSR), or both; ``targets`` for total exchange
OPTIONAL_ARRAYS = ("step", "after_ptr", "after_ids", "targets")
HEADER = ("spec", "nodes", "collective", "engine", "method", "seed", "chunks", "chunk_bytes", "model", "arrays")
MODEL_KEYS = ("message_bytes", "startup", "per_byte", "per_hop", "ports", "duplex")
#: arrays a reduction adds: per transfer, add (1) or copy (0); the hop whose payload it forwards (-1: none)
OPTIONAL_REDUCTION = ("combine", "forward")


def _encode(a: np.ndarray) -> dict[str, Any]:
    raw = np.ascontiguousarray(a, dtype="<i8").tobytes()
    return {"dtype": "<i8", "shape": [int(len(a))], "sha256": hashlib.sha256(raw).hexdigest(),
            "data": base64.b64encode(zlib.compress(raw, 6)).decode("ascii")}


def _decode(record: Any, name: str, where: str, max_bytes: float) -> np.ndarray:
    """One array of the file, its size checked before it is inflated (a small file cannot claim gigabytes)."""
    if not isinstance(record, dict) or record.get("dtype") != "<i8" or not isinstance(record.get("data"), str) \
            or not isinstance(record.get("sha256"), str) or not isinstance(record.get("shape"), list) \
            or len(record["shape"]) != 1 or isinstance(record["shape"][0], bool) \
            or not isinstance(record["shape"][0], int) or record["shape"][0] < 0:
        raise TopocastError(f"schedule file {where}: array '{name}' is corrupt (expected dtype '<i8', a shape "
                            "of one length, data and sha256)")
    size = 8 * record["shape"][0]
    from ..infra.memory import check_need

    check_need(f"schedule file {where}: array '{name}'", size, max_bytes)
    try:
        inflate = zlib.decompressobj()
        raw = inflate.decompress(base64.b64decode(record["data"], validate=True), size + 1)
        if len(raw) != size or inflate.unconsumed_tail:
            raise ValueError("length does not match its shape")
        if hashlib.sha256(raw).hexdigest() != record["sha256"]:
            raise ValueError("checksum mismatch")
        return np.frombuffer(raw, dtype="<i8").astype(np.int64)
    except (TypeError, ValueError, zlib.error) as exc:
        raise TopocastError(f"schedule file {where}: array '{name}' is corrupt ({exc})") from None


def header_of(synthesis: Synthesis) -> dict[str, Any]:
    """Every header field of a :class:`~topocast.synthesis.Synthesis` (no timing, so files are reproducible)."""
    summary = synthesis.summary()
    summary.pop("synthesis_seconds")
    schedule = synthesis.schedule
    return {"format": FORMAT, "version": VERSION, "nodes": int(schedule.num_nodes),
            "chunk_bytes": float(schedule.message_bytes), **summary}


def write(path: str | Path, synthesis: Synthesis) -> Path:
    """Write ``synthesis`` (already verified) to ``path`` atomically."""
    from ..infra.fileio import atomic_write

    s = synthesis.schedule if synthesis.lifted is None else synthesis.lifted  # (degraded: the faults restrict it)
    arrays = {name: getattr(s, name) for name in ARRAYS}
    for name in ("step", "after_ptr", "after_ids"):
        if getattr(s, name) is not None:
            arrays[name] = getattr(s, name)
    if not isinstance(s.targets, str):
        arrays["targets"] = np.asarray(s.targets)
    for name in OPTIONAL_REDUCTION:
        if getattr(s, name) is not None:
            arrays[name] = np.asarray(getattr(s, name), dtype=np.int64)
    doc = header_of(synthesis)
    doc["arrays"] = {name: _encode(a) for name, a in arrays.items()}
    return atomic_write(path, json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")


def load(path: str | Path, max_bytes: float | None = None) -> dict[str, Any]:
    """The parsed document, checked for format, version, required keys and the types of the header."""
    from ..infra.fileio import check_input_file
    from ..infra.memory import default_limit

    where = str(path)
    limit = default_limit() if max_bytes is None else max_bytes
    path = check_input_file(path, "schedule file", max_bytes=limit / 4)
    try:
        doc = json.loads(Path(path).read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else _first_line(exc)
        raise TopocastError(f"schedule file {where}: not a topocast schedule (unreadable JSON: {why})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TopocastError(f"schedule file {where}: not a topocast schedule (format is not '{FORMAT}')")
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version != VERSION:
        raise TopocastError(f"schedule file {where}: format version {json.dumps(version)} is not one this "
                            f"topocast reads (it reads version {VERSION}, written as the integer {VERSION})")
    missing = [k for k in HEADER if k not in doc]
    if missing:
        raise TopocastError(f"schedule file {where}: corrupt, missing {', '.join(missing)}")
    _check_header(doc, where)
    return doc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _check_header(doc: dict[str, Any], where: str) -> None:
    """Types and ranges of every header field the replay uses (a hand-edited file is refused, not echoed)."""
    from ..infra.validate import choice, integer, number
    from .model import COLLECTIVES

    owner = f"schedule file {where}"
    for name in ("spec", "method"):
        if not isinstance(doc[name], str) or not doc[name]:
            raise TopocastError(f"{owner}: '{name}' must be a non-empty string, got {_short(doc[name])}")
    choice(doc["collective"], "collective", COLLECTIVES, owner=owner)
    choice(doc["engine"], "engine", ("event", "step"), owner=owner)
    integer(doc["nodes"], "nodes", owner=owner, minimum=2)
    integer(doc["seed"], "seed", owner=owner, minimum=0, maximum=2**63 - 1)
    integer(doc["chunks"], "chunks", owner=owner, minimum=1)
    number(doc["chunk_bytes"], "chunk_bytes", owner=owner, minimum=0)
    for name in ("nodes", "seed", "chunks", "chunk_bytes"):
        if isinstance(doc[name], str):
            raise TopocastError(f"{owner}: '{name}' must be a number, got the string {_short(doc[name])}")
    if not doc["chunk_bytes"] > 0:
        raise TopocastError(f"{owner}: 'chunk_bytes' must be > 0, got {doc['chunk_bytes']}")
    if not isinstance(doc["arrays"], dict):
        raise TopocastError(f"{owner}: 'arrays' must be an object of arrays")
    _check_model(doc["model"], doc["chunk_bytes"] * doc["chunks"], owner)


def _check_model(model: Any, message_bytes: float, owner: str) -> None:
    from ..infra.validate import number

    if not isinstance(model, dict):
        raise TopocastError(f"{owner}: 'model' must be an object, got {_short(model)}")
    missing = [k for k in MODEL_KEYS if k not in model]
    if missing:
        raise TopocastError(f"{owner}: model is missing {', '.join(missing)}")
    for name in ("message_bytes", "startup", "per_byte", "per_hop"):
        if isinstance(model[name], str):
            raise TopocastError(f"{owner}: model '{name}' must be a number, got the string {_short(model[name])}")
        number(model[name], f"model {name}", owner=owner, minimum=0)
    if not model["message_bytes"] > 0:
        raise TopocastError(f"{owner}: model 'message_bytes' must be > 0, got {model['message_bytes']}")
    if not math.isclose(float(model["message_bytes"]), float(message_bytes), rel_tol=1e-9):
        raise TopocastError(f"{owner}: model 'message_bytes' ({model['message_bytes']}) is not chunks x chunk_bytes "
                            f"({message_bytes})")
    ports = model["ports"]
    if ports != "all" and (isinstance(ports, bool) or not isinstance(ports, int) or ports < 1):
        raise TopocastError(f"{owner}: model 'ports' must be \"all\" or an integer >= 1, got {_short(ports)}")
    if model["duplex"] not in ("full", "half"):
        raise TopocastError(f"{owner}: model 'duplex' must be \"full\" or \"half\", got {_short(model['duplex'])}")


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def read(path: str | Path, topology: Topology | None = None,
         max_bytes: float | None = None) -> tuple[dict[str, Any], Schedule]:
    """``(header, Schedule)`` from ``path``; refuses a file made for another topology than ``topology``, and a
    file whose messages are not those of its collective (an all-gather relabelled a broadcast)."""
    from ..infra.memory import default_limit

    where = str(path)
    limit = default_limit() if max_bytes is None else max_bytes
    doc = load(path, limit)
    if topology is not None and doc["spec"] != topology.spec:
        raise TopocastError(f"schedule file {where}: made for '{doc['spec']}', not for '{topology.spec}'")
    if topology is not None and doc["nodes"] != topology.num_nodes:
        raise TopocastError(f"schedule file {where}: 'nodes' is {doc['nodes']}, the network has "
                            f"{topology.num_nodes}")
    records = doc.pop("arrays")
    unknown = sorted(set(records) - set(ARRAYS) - set(OPTIONAL_ARRAYS) - set(OPTIONAL_REDUCTION))
    if unknown:
        raise TopocastError(f"schedule file {where}: corrupt, unknown arrays {', '.join(map(str, unknown))}")
    missing = [k for k in ARRAYS if k not in records]
    if "step" not in records and not {"after_ptr", "after_ids"} <= set(records):
        missing.append("step (or after_ptr and after_ids)")
    if ("after_ptr" in records) != ("after_ids" in records):
        missing.append("after_ids" if "after_ptr" in records else "after_ptr")
    if missing:
        raise TopocastError(f"schedule file {where}: corrupt, missing arrays {', '.join(missing)}")
    arrays = {name: _decode(rec, name, where, limit / 4) for name, rec in records.items()}
    targets = arrays.get("targets", "all")
    try:
        schedule = Schedule(num_nodes=int(doc["nodes"]), origin=arrays["origin"], src=arrays["src"],
                            dst=arrays["dst"], range_ptr=arrays["range_ptr"], range_first=arrays["range_first"],
                            range_count=arrays["range_count"], collective=doc["collective"], targets=targets,
                            step=arrays.get("step"), after_ptr=arrays.get("after_ptr"),
                            after_ids=arrays.get("after_ids"), message_bytes=float(doc["chunk_bytes"]),
                            meta={"method": doc["method"], "schedule_file": where},
                            combine=_flags(arrays.get("combine"), where), forward=arrays.get("forward"))
    except TopocastError as exc:
        raise TopocastError(f"schedule file {where}: corrupt ({exc})") from None
    _check_shapes(schedule, where)
    _check_messages(schedule, doc["collective"], int(doc["chunks"]), where)
    return doc, schedule


def _flags(combine: np.ndarray | None, where: str) -> np.ndarray | None:
    if combine is None:
        return None
    if len(combine) and (combine.min() < 0 or combine.max() > 1):
        raise TopocastError(f"schedule file {where}: corrupt, 'combine' holds values other than 0 and 1")
    return combine.astype(bool)


def _check_messages(s: Schedule, collective: str, chunks: int, where: str) -> None:
    """The messages are those of ``collective`` on ``s.num_nodes`` nodes in ``chunks`` chunks each."""
    n = s.num_nodes
    origins = np.bincount(s.origin, minlength=n)
    targets = np.asarray(s.targets) if not isinstance(s.targets, str) else None
    if collective == "allreduce":
        ok, want = targets is None and len(s.origin) >= 1, "blocks every node ends holding"
    elif collective == "reduce-scatter":
        owned = np.bincount(targets, minlength=n) if targets is not None and len(targets) and \
            targets.min() >= 0 and targets.max() < n else np.zeros(n, np.int64)
        ok, want = bool(np.all(owned == owned[0]) and owned[0] > 0), "the same number of blocks owned by every node"
    elif collective == "reduce":
        ok = targets is not None and len(targets) >= 1 and len(np.unique(targets)) == 1 and 0 <= targets[0] < n
        want = "blocks all ending at one root"
    elif collective == "broadcast":
        ok = isinstance(s.targets, str) and len(s.origin) == chunks and len(np.unique(s.origin)) == 1
        want = f"{chunks} message(s) from one root to every node"
    elif collective == "allgather":
        ok = isinstance(s.targets, str) and len(s.origin) == n * chunks and bool(np.all(origins == chunks))
        want = f"{chunks} message(s) from every node to every node"
    else:
        targets = np.asarray(s.targets) if not isinstance(s.targets, str) else np.empty(0, np.int64)
        ok = len(targets) == len(s.origin) == n * n * chunks and bool(targets.min(initial=0) >= 0) \
            and bool(targets.max(initial=0) < n) \
            and bool(np.all(np.bincount(s.origin * n + targets, minlength=n * n) == chunks))
        want = f"{chunks} message(s) from every node to each node"
    if not ok:
        raise TopocastError(f"schedule file {where}: its messages are not those of a {collective} "
                            f"(want {want}, found {len(s.origin)} message(s) from {int(np.count_nonzero(origins))} "
                            "origin(s))")


def _csr_ok(ptr: np.ndarray, ids: np.ndarray, t: int) -> bool:
    """A dependency CSR over ``t`` transfers: pointers from 0 to ``len(ids)``, non-decreasing, ids in range."""
    return bool(ptr[0] == 0 and ptr[-1] == len(ids) and np.all(np.diff(ptr) >= 0)
                and (len(ids) == 0 or (ids.min() >= 0 and ids.max() < t)))


def _check_shapes(s: Schedule, where: str) -> None:
    """Refuse arrays that do not fit together (a truncated or edited file)."""
    t = s.num_transfers
    ok = (len(s.dst) == t and (s.step is None or len(s.step) == t) and len(s.range_ptr) == t + 1
          and (s.after_ptr is None or (len(s.after_ptr) == t + 1 and s.after_ids is not None
                                     and _csr_ok(s.after_ptr, s.after_ids, t)))
          and len(s.range_first) == len(s.range_count)
          and (t == 0 or (s.range_ptr[0] == 0 and s.range_ptr[-1] == len(s.range_first)
                          and np.all(np.diff(s.range_ptr) >= 0)))
          and (len(s.src) == 0 or (min(s.src.min(), s.dst.min()) >= 0 and max(s.src.max(), s.dst.max()) < s.num_nodes))
          and (len(s.origin) == 0 or (s.origin.min() >= 0 and s.origin.max() < s.num_nodes))
          and (len(s.range_first) == 0 or (s.range_first.min() >= 0 and s.range_count.min() >= 0
                                           and (s.range_first + s.range_count).max() <= s.num_messages)))
    if not ok:
        raise TopocastError(f"schedule file {where}: corrupt (arrays do not fit together)")
