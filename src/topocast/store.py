"""The result store of :func:`topocast.sweep.sweep`: one JSON line per run, appended as runs finish.

A row is ``{"key", "status", "error", "spec", "algorithm", "engine", "seed", "params", "version",
"seconds", "worker", "result"}`` where ``result`` is the run's ``to_json()`` (``null`` for a failed
run) and ``key`` the hash of :func:`topocast.sweep.run_key`.  Each row is written with one
``write`` of a whole line, then ``flush`` and ``os.fsync``, under a lock, on a file opened for
appending: the file is never rewritten, and a key already present is never written again.  A line
torn by a crash in the middle of its ``write`` (the only line that can be incomplete: the last one)
is cut off when the store is next opened for writing, and that run is then run again.  Readers
skip torn lines and keep the first row of a key (a safety net; no duplicate is ever written).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from .errors import TopocastError

SUFFIXES = (".jsonl", ".ndjson", ".json")


def check_path(value: Any, option: str = "--store") -> Path:
    """``value`` as a store path: a JSON-lines file (``.jsonl``) whose directory exists."""
    from .fileio import check_output_file

    path = check_output_file(value, option)
    if path.suffix.lower() == ".parquet":
        raise TopocastError(f"{option}: the store is JSON lines (one row appended per run); "
                            f"name it {path.with_suffix('.jsonl').name}")
    if path.suffix.lower() not in SUFFIXES:
        raise TopocastError(f"{option}: the store is a JSON-lines file ending in .jsonl, got '{value}'")
    return path


def read_rows(path: str | Path) -> list[dict]:
    """Every complete row of the store at ``path``, the first of each key only (no file: none)."""
    path = Path(path)
    if not path.exists():
        return []
    if path.is_dir():
        raise TopocastError(f"store: '{path}' is a directory, not a JSON-lines store")
    rows: list[dict] = []
    seen: set[str] = set()
    with open(path, "rb") as handle:
        for line in handle:
            if not line.endswith(b"\n"):
                break  # a torn last line
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if not isinstance(row, dict) or not isinstance(row.get("key"), str) or row["key"] in seen:
                continue
            seen.add(row["key"])
            rows.append(row)
    return rows


class Store:
    """A JSON-lines store open for appending: ``keys``, ``append(row)``, ``close()``.

    Opening takes an exclusive ``flock`` on the file, so two sweeps cannot write one store at once.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)
        try:
            self._take_lock()
            self._cut_torn_tail()
            self.keys: set[str] = {row["key"] for row in read_rows(self.path)}
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
        size = os.fstat(self._fd).st_size
        if size == 0:
            return
        with open(self.path, "rb") as handle:
            handle.seek(max(0, size - 1))
            if handle.read(1) == b"\n":
                return
            keep, offset = 0, 0
            handle.seek(0)
            for line in handle:
                offset += len(line)
                if line.endswith(b"\n"):
                    keep = offset
        os.ftruncate(self._fd, keep)
        os.fsync(self._fd)

    def append(self, row: dict) -> bool:
        """Write ``row`` as one line unless its key is stored already; True if written."""
        data = (json.dumps(row, sort_keys=True, separators=(",", ":"), default=str) + "\n").encode()
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
