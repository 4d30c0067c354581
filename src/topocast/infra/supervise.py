"""Interrupts that work at any moment: the command runs in a child process, this one watches.

Compiled (numba) code holds the interpreter lock and never checks Python's
signal flags, so a Ctrl-C in a long kernel would otherwise wait for the kernel
to finish.  :func:`supervise` forks: the child (in its own process group, with
every worker process it starts) does the work; the parent only waits.  On
SIGINT or SIGTERM the parent kills the child's whole process group at once,
deletes the temporary files the child announced (:func:`topocast.infra.fileio.set_announcer`)
and not yet renamed, prints one line (``topocast: interrupted``) and exits
130 (SIGINT) or 143 (SIGTERM).  Completed files are whole: each was renamed
into place only once written.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable

EXIT_CODES: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}
MESSAGE = b"topocast: interrupted; files already written are complete, none is half-written\n"


class _Watch:
    """The parent's state: the child's pid and the temporary files it announced."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.pending: set[str] = set()
        self.lock = threading.Lock()
        self.reader: threading.Thread | None = None

    def read(self, fd: int) -> None:
        """Collect ``+path`` / ``-path`` lines from the child until it (and every copy of the pipe) is gone."""
        buffer = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            with self.lock:
                for line in lines:
                    path = os.fsdecode(line[1:])
                    (self.pending.add if line[:1] == b"+" else self.pending.discard)(path)
        os.close(fd)

    def clean(self) -> None:
        """Delete every announced temporary file that still exists."""
        if self.reader is not None:
            self.reader.join(timeout=0.5)
        with self.lock:
            paths = list(self.pending)
        for path in paths:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def kill(self) -> None:
        """SIGKILL the child's process group (the child and its workers), then reap the child."""
        if self.pid is None:
            return
        for target in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, signal.SIGKILL)):
            with contextlib.suppress(OSError):
                target()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)

    def stop(self, signum: int, frame=None) -> None:
        """The parent's handler of SIGINT and SIGTERM."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self.kill()
        self.clean()
        _say(MESSAGE)
        os._exit(EXIT_CODES.get(signum, 128 + signum))


def _say(data: bytes) -> None:
    with contextlib.suppress(OSError):
        os.write(2, data)


def _die_with_parent(parent: int) -> None:
    """Linux: have the kernel SIGKILL this process when the parent dies (even of SIGKILL)."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(137)


def _child(work: Callable[[], int], write_fd: int, parent: int) -> None:
    """Run ``work`` in the forked child and leave with its status, never returning."""
    code = 1
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from . import fileio

    def announce(path: str, created: bool) -> None:
        os.write(write_fd, (b"+" if created else b"-") + os.fsencode(path) + b"\n")

    fileio.set_announcer(announce)
    try:
        code = work()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        fileio.remove_pending()
        _say(MESSAGE)
        code = 130
    except BaseException:  # only with --debug does an error get this far: show it
        import traceback

        fileio.remove_pending()
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)


def _early_exit(signum: int, frame=None) -> None:
    """Before any file is open: say so and leave at once."""
    _say(MESSAGE)
    os._exit(EXIT_CODES.get(signum, 128 + signum))


def install_early_handlers() -> None:
    """SIGINT and SIGTERM end the command at once (used while the package imports, before any work)."""
    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGINT, _early_exit)
        signal.signal(signal.SIGTERM, _early_exit)


def supervise(work: Callable[[], int]) -> int:
    """Run ``work()`` (returning an exit status) in a watched child process; return its status."""
    watch = _Watch()
    signal.signal(signal.SIGINT, watch.stop)
    signal.signal(signal.SIGTERM, watch.stop)
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(work, write_fd, parent)
    os.close(write_fd)
    watch.pid = pid
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)
    watch.reader = threading.Thread(target=watch.read, args=(read_fd,), daemon=True)
    watch.reader.start()
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            return 1
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        return code
    # the child died of a signal: its workers go too, and its temporary files
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    watch.pid = None
    watch.clean()
    if -code in EXIT_CODES:
        _say(MESSAGE)
        return EXIT_CODES[-code]
    _say(f"topocast: error: the command was killed by signal {-code}\n".encode())
    return 128 - code
