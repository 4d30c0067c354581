"""Progress on a terminal (rich), silent when output is not a terminal.

* :class:`Progress`: ``progress.track(items, "what")`` yields items and shows a bar; ``progress.status("what")``
  shows a spinner while a block runs.
* :class:`Board`: one live display for several jobs (the reproductions of ``topocast reproduce``): a row per job
  with what it does now and its elapsed time from the first second, the running job's own bars under it.
* :func:`watch_compiles`: calls back when numba compiles a kernel (a first run: later runs load the cache), so
  a status can say "compiling ... (first run only)" instead of sitting still.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress

T = TypeVar("T")


class Progress:
    """``progress.track(items, "what")`` yields items and shows a bar on a terminal.

    Parameters
    ----------
    enabled : bool, optional
        Show anything at all (default: when stderr is a terminal).
    board : Board, optional
        Draw on this board's live display (the row ``row``) instead of a display of its own.
    row : int
        The board row the bars and statuses belong to.
    """

    def __init__(self, enabled: bool | None = None, board: Board | None = None, row: int = 0):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.board, self.row = board, row

    def track(self, items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
        """Yield ``items``, advancing a bar labelled ``description`` (``total`` items when given)."""
        if not self.enabled:
            yield from items
            return
        if self.board is not None:
            yield from self.board.track(self.row, items, description, total)
            return
        from rich.progress import track

        yield from track(items, description=description, total=total, transient=True,
                         console=_console())

    @contextmanager
    def status(self, description: str):
        """Show ``description`` with a spinner while the block runs."""
        if not self.enabled:
            yield
            return
        if self.board is not None:
            with self.board.doing(self.row, description):
                yield
            return
        with _console().status(description) as shown, watch_compiles(_compile_text(shown, description)):
            yield


def _compile_text(shown, description: str) -> Callable[[str, bool], None]:
    def update(kernel: str, starting: bool) -> None:
        shown.update(f"{description}: compiling {kernel} (first run only)" if starting else description)

    return update


class Board:
    """One live display for several jobs: a row per job (name, what it does now, elapsed time), and the running
    jobs' own bars under their rows.  With ``enabled`` False nothing is drawn and every call is cheap.

    Parameters
    ----------
    names : list of str
        The jobs, one row each, in order.
    enabled : bool
        Draw (a terminal) or not.
    """

    def __init__(self, names: list[str], enabled: bool):
        self.names, self.enabled = list(names), enabled
        self._live: RichProgress | None = None
        self._rows: list[Any] = []
        self._words = ["waiting"] * len(self.names)
        self._lock = threading.Lock()

    def __enter__(self) -> Board:
        if self.enabled:
            from rich.progress import Progress as RichProgress
            from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

            live = RichProgress(SpinnerColumn(finished_text="[green]done"), TextColumn("{task.description}"),
                                TimeElapsedColumn(), console=_console(), transient=True)
            self._live = live
            live.start()
            self._rows = [live.add_task(f"{name}: waiting", total=None, start=False) for name in self.names]
        return self

    def __exit__(self, *exc) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def start(self, i: int, words: str = "running") -> None:
        """Job ``i`` starts now (its clock starts)."""
        if self._live is not None:
            self._live.start_task(self._rows[i])
        self.state(i, words)

    def state(self, i: int, words: str) -> None:
        """What job ``i`` does now, in a few words."""
        with self._lock:
            self._words[i] = words
            if self._live is not None:
                self._live.update(self._rows[i], description=f"{self.names[i]}: {words}")

    def finish(self, i: int, words: str) -> None:
        """Job ``i`` is done; ``words`` say how it ended."""
        self.state(i, words)
        if self._live is not None:
            self._live.update(self._rows[i], total=1, completed=1)
            self._live.stop_task(self._rows[i])

    @contextmanager
    def doing(self, i: int, words: str):
        """Job ``i`` does ``words`` while the block runs (then back to what it did)."""
        before = self._words[i]
        self.state(i, words)
        try:
            with watch_compiles(lambda kernel, starting: self.state(
                    i, f"{words}: compiling {kernel} (first run only)" if starting else words)):
                yield
        finally:
            self.state(i, before)

    def track(self, i: int, items: Iterable[T], description: str, total: int | None) -> Iterator[T]:
        """A bar for job ``i``'s ``items`` under its row, removed when they are done."""
        if self._live is None:
            yield from items
            return
        task = self._live.add_task(f"  {self.names[i]}: {description}", total=total)
        try:
            for item in items:
                yield item
                self._live.advance(task)
        finally:
            self._live.remove_task(task)

    def job(self, i: int) -> Progress:
        """A :class:`Progress` drawing on row ``i``."""
        return Progress(enabled=self.enabled, board=self, row=i)


@contextmanager
def watch_compiles(callback: Callable[[str, bool], None]):
    """Call ``callback(kernel, True)`` when numba starts compiling one of topocast's kernels in this process and
    ``callback(kernel, False)`` when it is done (loading a cached kernel calls nothing; the functions numba
    compiles inside a kernel are part of it).  ``kernel`` names the function, e.g. ``sim.step._run_steps``."""
    from numba.core import event

    stack: list[str] = []

    class _Listener(event.Listener):
        def on_start(self, ev) -> None:
            name = _kernel_name(ev)
            stack.append(name)
            if name and len([k for k in stack if k]) == 1:
                callback(name, True)

        def on_end(self, ev) -> None:
            name = stack.pop() if stack else ""
            if name and not any(stack):
                callback(name, False)

    with event.install_listener("numba:compile", _Listener()):
        yield


def _kernel_name(ev) -> str:
    """``module.function`` of a topocast kernel being compiled ('' for numba's own functions)."""
    dispatcher = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
    func = getattr(dispatcher, "py_func", None)
    if func is None or not func.__module__.startswith("topocast."):
        return ""
    return f"{func.__module__.removeprefix('topocast.')}.{func.__qualname__}"


class Stopwatch:
    """Seconds since it was made (``elapsed``)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start


def _console():
    from rich.console import Console

    return Console(stderr=True)


SILENT = Progress(enabled=False)
