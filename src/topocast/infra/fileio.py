"""Interrupt-safe output: nothing half-written ever sits at a destination.

A file is written unnamed (Linux ``O_TMPFILE``) and linked into place once
whole, or, where that is not available, written to ``.NAME.PID.HEX.tmp`` beside
the target and renamed; a later write of the same name removes such a
temporary when its process is gone (killed with SIGKILL).  Writes go only to
regular files or new names in existing directories: a device, FIFO, socket or
directory at the destination is refused, and missing directories are not
created (:func:`destination`).  Every named temporary path is recorded in a registry (:func:`pending`) before the
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
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import TopocastError

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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _temp_name(path: Path) -> str:
    """A fresh temporary name beside ``path``: ``.NAME.PID.HEX.tmp`` (the PID lets a later run tell it is stale)."""
    return str(path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def remove_stale(path: Path) -> list[str]:
    """Delete the temporaries of ``path`` left by topocast processes that no longer run (killed with SIGKILL
    between creating and renaming one); returns the paths removed."""
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.(\d+)\.[0-9a-f]{{8}}\.tmp$")
    removed: list[str] = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        match = pattern.match(entry.name)
        if match and int(match.group(1)) != os.getpid() and not _alive(int(match.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(entry.path)
    return removed


def _open_anonymous(directory: Path) -> int | None:
    """An unnamed file in ``directory`` (Linux ``O_TMPFILE``): it has no name until linked, so a process killed
    while writing it leaves nothing behind.  None where the system or file system has no such files."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None:
        return None
    try:
        return os.open(directory, flag | os.O_WRONLY, 0o666)
    except OSError:
        return None


def _open_named(path: Path) -> tuple[int, str]:
    """Create a fresh named temporary file beside ``path`` with mode 0666 & ~umask; recorded first."""
    for _ in range(100):
        tmp = _temp_name(path)
        _note(tmp, True)
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            _note(tmp, False)
        except BaseException:
            _note(tmp, False)
            raise
    raise FileExistsError(f"no free temporary name beside {path}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def destination(path: str | Path, option: str = "path") -> Path:
    """The file a write to ``path`` replaces: symbolic links followed; a :class:`TopocastError` unless it is a
    regular file or a new name in an existing directory (never a device, FIFO, socket or directory)."""
    target = Path(os.path.realpath(Path(path).expanduser()))
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise TopocastError(f"{option}: cannot use '{path}': {exc.strerror or exc}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise TopocastError(f"{option}: '{path}' is {_kind(info.st_mode)}, not a regular file; "
                            "topocast writes only regular files")
    if not target.parent.is_dir():
        raise TopocastError(f"{option}: cannot write '{path}': directory '{target.parent}' does not exist")
    return target


def _kind(mode: int) -> str:
    for test, word in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return word
    return "not a regular file"


def _link_into_place(fd: int, target: Path) -> None:
    """Give the unnamed file ``fd`` the name ``target``, replacing a file already there atomically."""
    directory = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            os.link(f"/proc/self/fd/{fd}", target.name, dst_dir_fd=directory)
            return
        except FileExistsError:
            pass
        for _ in range(100):
            tmp = _temp_name(target)
            _note(tmp, True)
            try:
                os.link(f"/proc/self/fd/{fd}", os.path.basename(tmp), dst_dir_fd=directory)
            except FileExistsError:
                _note(tmp, False)
                continue
            try:
                destination(target)
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            finally:
                _note(tmp, False)
            return
        raise FileExistsError(f"no free temporary name beside {target}")
    finally:
        os.close(directory)


@contextlib.contextmanager
def atomic_writer(path: str | Path, option: str = "path") -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through, put in place only when the block ends without an error, so
    that nothing half-written ever sits at ``path``, whatever the moment a process is interrupted or killed.

    The data goes to an unnamed file (``O_TMPFILE``) linked into place once whole, else to a temporary
    ``.NAME.PID.HEX.tmp`` renamed into place (removed by the next write of ``NAME`` if its process was killed).
    Only a regular file or a new name in an existing directory is written (:func:`destination`).
    """
    target = destination(_as_path(path, option), option)
    remove_stale(target)
    fd = _open_anonymous(target.parent)
    if fd is not None:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            _link_into_place(handle.fileno(), target)
        return
    fd, tmp = _open_named(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        destination(target)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    finally:
        _note(tmp, False)


def atomic_write(path: str | Path, data: str | bytes, option: str = "path") -> Path:
    """Write ``data`` to ``path`` through :func:`atomic_writer`; returns ``path``."""
    with atomic_writer(path, option) as handle:
        handle.write(data.encode() if isinstance(data, str) else data)
    return Path(path)


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
        destination(path, option)
        _writable_dir(Path(os.path.realpath(path)).parent, option, f"cannot write '{value}':")
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


# -- checking input files before reading them --------------------------------------------------


def check_input_file(value: Any, option: str, max_bytes: float | None = None) -> Path:
    """``value`` as a file to read: it exists, is a regular file (a FIFO, device, socket or directory is
    refused at once, never opened: reading a FIFO would wait for a writer) and, with ``max_bytes``, is no
    larger than that."""
    path = _as_path(value, option)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise TopocastError(f"{option}: '{value}' does not exist") from None
    except OSError as exc:
        raise TopocastError(f"{option}: cannot read '{value}': {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise TopocastError(f"{option}: '{value}' is {_kind(info.st_mode)}, not a regular file")
    if not os.access(path, os.R_OK):
        raise TopocastError(f"{option}: '{value}' is not readable")
    if max_bytes is not None and info.st_size > max_bytes:
        from .memory import human_bytes

        raise TopocastError(f"{option}: '{value}' is {human_bytes(info.st_size)}, larger than the "
                            f"{human_bytes(max_bytes)} this reader accepts")
    return path
