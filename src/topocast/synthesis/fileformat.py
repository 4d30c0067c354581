"""The schedule file: one JSON document, header and arrays together (format ``topocast-schedule``, version 1).

Header keys: ``format``, ``version``, ``spec`` (the topology's canonical spec),
``nodes``, ``collective``, ``engine``, ``method``, ``seed``, ``chunks``,
``chunk_bytes``, ``model`` (``message_bytes``, ``startup``, ``per_byte``,
``per_hop``, ``ports``, ``duplex``), ``measured`` and ``unit`` (s or steps),
``lower_bound``, ``ratio``, ``reference_algorithm``, ``verification``
(verified, exactly_once, redundant_receipts, receipts), ``candidates`` and
``notes``.  ``arrays`` maps ``origin``, ``src``, ``dst``, ``range_ptr``,
``range_first``, ``range_count``, ``step`` (and ``targets`` for total
exchange) to ``{"dtype", "shape", "sha256", "data"}``: ``data`` is the
little-endian bytes, zlib-compressed, base64-encoded; ``sha256`` is of the raw
bytes.  Keys are sorted and no wall-clock time is stored, so the same
synthesis gives the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..schedule import Schedule

FORMAT = "topocast-schedule"
VERSION = 1
ARRAYS = ("origin", "src", "dst", "range_ptr", "range_first", "range_count", "step")
HEADER = ("spec", "nodes", "collective", "engine", "method", "seed", "chunks", "chunk_bytes", "model", "arrays")


def _encode(a: np.ndarray) -> dict[str, Any]:
    raw = np.ascontiguousarray(a, dtype="<i8").tobytes()
    return {"dtype": "<i8", "shape": [int(len(a))], "sha256": hashlib.sha256(raw).hexdigest(),
            "data": base64.b64encode(zlib.compress(raw, 6)).decode("ascii")}


def _decode(record: dict[str, Any], name: str, where: str) -> np.ndarray:
    try:
        raw = zlib.decompress(base64.b64decode(record["data"], validate=True))
        if hashlib.sha256(raw).hexdigest() != record["sha256"]:
            raise ValueError("checksum mismatch")
        a = np.frombuffer(raw, dtype=record["dtype"]).astype(np.int64)
        if list(a.shape) != list(record["shape"]):
            raise ValueError("shape mismatch")
        return a
    except (KeyError, TypeError, ValueError, zlib.error) as exc:
        raise TopocastError(f"schedule file {where}: array '{name}' is corrupt ({exc})") from None


def header_of(synthesis) -> dict[str, Any]:
    """Every header field of a :class:`~topocast.synthesis.Synthesis` (no timing, so files are reproducible)."""
    summary = synthesis.summary()
    summary.pop("synthesis_seconds")
    schedule = synthesis.schedule
    return {"format": FORMAT, "version": VERSION, "nodes": int(schedule.num_nodes),
            "chunk_bytes": float(schedule.message_bytes), **summary}


def write(path: str | Path, synthesis) -> Path:
    """Write ``synthesis`` (already verified) to ``path`` atomically."""
    from ..fileio import atomic_write

    s = synthesis.schedule
    arrays = {name: getattr(s, name) for name in ARRAYS}
    if not isinstance(s.targets, str):
        arrays["targets"] = np.asarray(s.targets)
    doc = header_of(synthesis)
    doc["arrays"] = {name: _encode(a) for name, a in arrays.items()}
    return atomic_write(path, json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")


def load(path: str | Path) -> dict[str, Any]:
    """The parsed document, checked for format, version and required keys."""
    where = str(path)
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise TopocastError(f"schedule file {where}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TopocastError(f"schedule file {where}: not a topocast schedule (unreadable JSON: {exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TopocastError(f"schedule file {where}: not a topocast schedule (format is not '{FORMAT}')")
    if doc.get("version") != VERSION:
        raise TopocastError(f"schedule file {where}: version {doc.get('version')} is not supported (want {VERSION})")
    missing = [k for k in HEADER if k not in doc]
    if missing:
        raise TopocastError(f"schedule file {where}: corrupt, missing {', '.join(missing)}")
    return doc


def read(path: str | Path, topology=None) -> tuple[dict[str, Any], Schedule]:
    """``(header, Schedule)`` from ``path``; refuses a file made for another topology than ``topology``."""
    where = str(path)
    doc = load(path)
    if topology is not None and doc["spec"] != topology.spec:
        raise TopocastError(f"schedule file {where}: made for '{doc['spec']}', not for '{topology.spec}'")
    arrays = {name: _decode(rec, name, where) for name, rec in doc.pop("arrays").items()}
    missing = [k for k in ARRAYS if k not in arrays]
    if missing:
        raise TopocastError(f"schedule file {where}: corrupt, missing arrays {', '.join(missing)}")
    targets = arrays.get("targets", "all")
    try:
        schedule = Schedule(num_nodes=int(doc["nodes"]), origin=arrays["origin"], src=arrays["src"],
                            dst=arrays["dst"], range_ptr=arrays["range_ptr"], range_first=arrays["range_first"],
                            range_count=arrays["range_count"], collective=doc["collective"], targets=targets,
                            step=arrays["step"], message_bytes=float(doc["chunk_bytes"]),
                            meta={"method": doc["method"], "schedule_file": where})
    except TopocastError as exc:
        raise TopocastError(f"schedule file {where}: corrupt ({exc})") from None
    _check_shapes(schedule, where)
    return doc, schedule


def _check_shapes(s: Schedule, where: str) -> None:
    """Refuse arrays that do not fit together (a truncated or edited file)."""
    t = s.num_transfers
    ok = (len(s.dst) == t and len(s.step) == t and len(s.range_ptr) == t + 1
          and len(s.range_first) == len(s.range_count)
          and (t == 0 or (s.range_ptr[0] == 0 and s.range_ptr[-1] == len(s.range_first)
                          and np.all(np.diff(s.range_ptr) >= 0)))
          and (len(s.src) == 0 or (min(s.src.min(), s.dst.min()) >= 0 and max(s.src.max(), s.dst.max()) < s.num_nodes))
          and (len(s.origin) == 0 or (s.origin.min() >= 0 and s.origin.max() < s.num_nodes))
          and (len(s.range_first) == 0 or (s.range_first.min() >= 0 and s.range_count.min() >= 0
                                           and (s.range_first + s.range_count).max() <= s.num_messages)))
    if not ok:
        raise TopocastError(f"schedule file {where}: corrupt (arrays do not fit together)")
