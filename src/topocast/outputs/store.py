"""The result store of :func:`topocast.sweep.grid.sweep`: one JSON line per run, appended as runs finish.

A row is ``{"format", "key", "status", "error", "spec", "algorithm", "engine", "seed", "params",
"version", "seconds", "worker", "result"}``: ``format`` is the marker :data:`FORMAT` (written first on
every line, so a store tells itself from any other file), ``result`` the run's ``to_json()`` (``null``
for a failed run) and ``key`` the hash of :func:`topocast.sweep.grid.run_key`.

Writing: a store is opened only if it is new, empty, or every line of it is a row of this format;
any other file (a schedule, a CSV, random bytes, a device) is refused before any work, so a sweep
never appends to a file that is not its own.  Each row is written with one ``write`` of a whole line,
then ``os.fsync``, under a lock, on a file opened for appending: the file is never rewritten, and a
key already present is never written again.  A line torn by a crash in the middle of its ``write``
(the only line that can be incomplete: the last one) is cut off when the store is next opened for
writing, and that run is then run again.

Reading: a row that carries the marker but is malformed (unreadable JSON, a ``result`` that is not an
object, a missing field) is skipped and counted by reason (:class:`Scan`); its key does not count as
stored, so a junk row never hides a real run.  Of several rows of one key, the first good one is kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TopocastError

SUFFIXES = (".jsonl", ".ndjson", ".json")
#: the marker every store row carries (its first field)
FORMAT = "topocast-store/1"
_PREFIX = b'{"format":"' + FORMAT.encode() + b'"'
_KEY = re.compile(r"^[0-9a-f]{32}$")
STATUSES = ("ok", "failed")


def check_path(value: Any, option: str = "--store") -> Path:
    """``value`` as a store path: a JSON-lines file (``.jsonl``) whose directory exists, a regular file
    or a new name."""
    from ..infra.fileio import check_output_file

    path = check_output_file(value, option)
    if path.suffix.lower() == ".parquet":
        raise TopocastError(f"{option}: the store is JSON lines (one row appended per run); "
                            f"name it {path.with_suffix('.jsonl').name}")
    if path.suffix.lower() not in SUFFIXES:
        raise TopocastError(f"{option}: the store is a JSON-lines file ending in .jsonl, got '{value}'")
    return path


def encode(row: dict) -> bytes:
    """One store line: the marker first, then the row's fields sorted, compact, newline-terminated."""
    body = {k: v for k, v in row.items() if k != "format"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return _PREFIX + (b"," + text[1:].encode() if text != "{}" else b"}") + b"\n"


def row_problem(row: dict) -> str | None:
    """Why ``row`` (a JSON object carrying the marker) is not a usable store row, or None."""
    if not isinstance(row.get("key"), str) or not _KEY.match(row["key"]):
        return "no valid key"
    if row.get("status") not in STATUSES:
        return "status is neither ok nor failed"
    for name, kind in (("spec", str), ("algorithm", str), ("version", str), ("params", dict)):
        if not isinstance(row.get(name), kind):
            return f"'{name}' missing or of the wrong type"
    if isinstance(row.get("seed"), bool) or not isinstance(row.get("seed"), int):
        return "'seed' missing or not an integer"
    if row["status"] == "ok" and not isinstance(row.get("result"), dict):
        return "result is not an object"
    return None


@dataclass
class Scan:
    """What a store file holds: its good rows (first of each key), skipped lines by reason, the first line
    that is not a store row at all (``foreign``: ``(line number, why)``) and whether the last line is torn."""

    rows: list[dict] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    foreign: tuple[int, str] | None = None
    foreign_lines: int = 0
    lines: int = 0
    torn: bool = False

    def skipped_text(self) -> str:
        """``'3 lines: 2 result is not an object, 1 unreadable JSON'`` (empty when nothing was skipped)."""
        total = sum(self.skipped.values()) + self.foreign_lines
        if not total:
            return ""
        parts = [f"{n} {why}" for why, n in self.skipped.most_common()]
        if self.foreign_lines:
            parts.append(f"{self.foreign_lines} not store rows")
        return f"{total} line{'s' if total != 1 else ''}: " + ", ".join(parts)


def _line_kind(line: bytes) -> tuple[str, Any]:
    """``("row", dict)``, ``("bad", reason)`` (ours, malformed) or ``("foreign", reason)``."""
    ours = line.startswith(_PREFIX)
    try:
        row = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return ("bad", "unreadable JSON") if ours else ("foreign", "not JSON")
    if not isinstance(row, dict):
        return "foreign", "not a JSON object"
    if row.get("format") != FORMAT:
        return "foreign", f"no '{FORMAT}' format marker"
    problem = row_problem(row)
    return ("bad", problem) if problem else ("row", row)


def scan(path: str | Path) -> Scan:
    """Read the store at ``path`` line by line (:class:`Scan`; no file: an empty scan)."""
    from ..infra.fileio import check_input_file

    path = Path(path)
    result = Scan()
    if not path.exists() and not path.is_symlink():
        return result
    check_input_file(path, "store")
    seen: set[str] = set()
    why: Any
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            result.lines += 1
            if not line.endswith(b"\n"):
                if _PREFIX.startswith(line[:len(_PREFIX)]):
                    result.torn = True   # a crash during the last write: that run has not landed
                    break
                kind, why = "foreign", "an incomplete last line"
            elif not line.strip():
                kind, why = "bad", "empty line"
            else:
                kind, why = _line_kind(line)
            if kind == "foreign":
                result.foreign_lines += 1
                if result.foreign is None:
                    result.foreign = (number, why)
            elif kind == "bad":
                result.skipped[why] += 1
            elif why["key"] in seen:
                result.skipped["repeated key"] += 1
            else:
                seen.add(why["key"])
                result.rows.append(why)
    return result


def read_rows(path: str | Path) -> list[dict]:
    """Every good row of the store at ``path``, the first of each key only (no file: none)."""
    return scan(path).rows


def refuse_foreign(path: Path, found: Scan, option: str = "--store") -> None:
    """A :class:`TopocastError` if ``found`` has a line that is not a store row: the file is not a store."""
    if found.foreign is not None:
        number, why = found.foreign
        raise TopocastError(f"{option}: '{path}' is not a topocast sweep store (line {number}: {why}); "
                            "nothing was written to it: give a new or empty file")


class Store:
    """A JSON-lines store open for appending: ``keys``, ``append(row)``, ``close()``; ``scan`` is what was
    found on opening (rows skipped as malformed are in ``scan.skipped``).

    Opening refuses a file that is not a store (:func:`refuse_foreign`) and takes an exclusive ``flock``
    on it, so two sweeps cannot write one store at once.
    """

    def __init__(self, path: str | Path):
        from ..infra.fileio import destination

        self.path = Path(path)
        destination(self.path, "--store")
        refuse_foreign(self.path, scan(self.path))
        self._lock = threading.Lock()
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)
        try:
            self._take_lock()
            self.scan = scan(self.path)           # again, under the lock: what another writer left
            refuse_foreign(self.path, self.scan)
            self._cut_torn_tail()
            self.keys: set[str] = {row["key"] for row in self.scan.rows}
        except BaseException:
            os.close(self._fd)
            raise
        self.written = 0

    def _take_lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise TopocastError(f"--store: '{self.path}' is being written by another sweep") from None

    def _cut_torn_tail(self) -> None:
        """Drop an incomplete last line (a crash during its write): its run has not landed."""
        if not self.scan.torn:
            return
        keep, offset = 0, 0
        with open(self.path, "rb") as handle:
            for line in handle:
                offset += len(line)
                if line.endswith(b"\n"):
                    keep = offset
        os.ftruncate(self._fd, keep)
        os.fsync(self._fd)

    def append(self, row: dict) -> bool:
        """Write ``row`` as one line unless its key is stored already; True if written."""
        data = encode(row)
        with self._lock:
            if row["key"] in self.keys:
                return False
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
            self.keys.add(row["key"])
            self.written += 1
        return True

    def close(self) -> None:
        with self._lock, contextlib.suppress(OSError):
            os.close(self._fd)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
