"""Interrupt-safe output: write to a temporary file beside the target, then rename.

Every temporary path is recorded in a registry (:func:`pending`) before the
file is created, and announced to :func:`set_announcer`'s callback, so the
command line's interrupt handler can delete it whatever the moment of the
interrupt.  Files get the mode the umask gives (0644 under umask 022), like
any file a program opens for writing.  :func:`check_output_file` and
:func:`check_output_dir` validate an output location before any long work.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import secrets
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .errors import TopocastError

_PENDING: set[str] = set()
_ANNOUNCE: list[Callable[[str, bool], None]] = []


def pending() -> set[str]:
    """Temporary files created and not yet renamed or removed (absolute paths)."""
    return set(_PENDING)


def set_announcer(callback: Callable[[str, bool], None] | None) -> None:
    """Call ``callback(path, created)`` before a temporary file is created and after it is gone."""
    _ANNOUNCE.clear()
    if callback is not None:
        _ANNOUNCE.append(callback)


def _note(path: str, created: bool) -> None:
    (_PENDING.add if created else _PENDING.discard)(path)
    for callback in _ANNOUNCE:
        with contextlib.suppress(OSError):
            callback(path, created)


def remove_pending() -> None:
    """Delete every temporary file still pending (interrupt clean-up)."""
    for path in list(_PENDING):
        with contextlib.suppress(OSError):
            os.unlink(path)
        _PENDING.discard(path)


def _open_temp(path: Path) -> tuple[int, str]:
    """Create a fresh temporary file beside ``path`` with mode 0666 & ~umask; recorded first."""
    for _ in range(100):
        tmp = str(path.parent.absolute() / f".{path.name}.{secrets.token_hex(4)}.tmp")
        _note(tmp, True)
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            _note(tmp, False)
        except BaseException:
            _note(tmp, False)
            raise
    raise FileExistsError(f"no free temporary name beside {path}")


def atomic_write(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` so that an interrupted run never leaves a half file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _open_temp(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    finally:
        _note(tmp, False)
    return path


def write_csv(path: str | Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """Write ``header`` and ``rows`` as CSV, atomically."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return atomic_write(path, buffer.getvalue())


def write_json(path: str | Path, payload: Any) -> Path:
    """Write ``payload`` as indented JSON, atomically."""
    return atomic_write(path, json.dumps(payload, indent=2, sort_keys=False) + "\n")


def save_figure(figure, path: str | Path, dpi: int = 120) -> Path:
    """Save a matplotlib figure atomically as PNG and close it."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(figure)
    return atomic_write(path, buffer.getvalue())


# -- checking output locations before any work -------------------------------------------------


def _as_path(value: Any, option: str) -> Path:
    if isinstance(value, Path):
        text = str(value)
    elif isinstance(value, str):
        text = value
    else:
        raise TopocastError(f"{option}: must be a path, got {type(value).__name__}")
    if not text.strip():
        raise TopocastError(f"{option}: must be a file name, got an empty string")
    if "\0" in text:
        raise TopocastError(f"{option}: a path cannot contain a NUL character")
    return Path(text).expanduser()


def _writable_dir(directory: Path, option: str, what: str) -> None:
    """Raise unless ``directory`` exists, is a directory and can be written to."""
    if not directory.exists():
        raise TopocastError(f"{option}: {what} directory '{directory}' does not exist")
    if not directory.is_dir():
        raise TopocastError(f"{option}: {what} '{directory}' is not a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise TopocastError(f"{option}: {what} directory '{directory}' is not writable")


def check_output_file(value: Any, option: str) -> Path:
    """``value`` as the path of a file to write: its parent exists and is writable, it is not a directory."""
    path = _as_path(value, option)
    if str(value).endswith(("/", os.sep)) or path.name in ("", ".", ".."):
        raise TopocastError(f"{option}: '{value}' names a directory; give a file name such as out.csv")
    try:
        if path.is_dir():
            raise TopocastError(f"{option}: '{value}' is a directory; give a file name such as {path / 'out.csv'}")
        if path.exists() and not os.access(path, os.W_OK):
            raise TopocastError(f"{option}: '{value}' exists and is not writable")
        _writable_dir(path.parent, option, f"cannot write '{value}':")
    except OSError as exc:
        raise TopocastError(f"{option}: cannot use '{value}': {exc.strerror or exc}") from None
    return path


def check_output_dir(value: Any, option: str) -> Path:
    """``value`` as an output directory, created now if missing (its nearest existing ancestor must be a
    writable directory)."""
    path = _as_path(value, option)
    try:
        if path.exists():
            _writable_dir(path, option, "output")
            return path
        ancestor = path.absolute().parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        _writable_dir(ancestor, option, f"cannot create '{value}':")
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TopocastError(f"{option}: cannot use '{value}': {exc.strerror or exc}") from None
    return path
