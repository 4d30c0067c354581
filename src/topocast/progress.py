"""Progress bars for long runs (rich), silent when output is not a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


class Progress:
    """``progress.track(items, "what")`` yields items and shows a bar on a terminal."""

    def __init__(self, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled

    def track(self, items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
        if not self.enabled:
            yield from items
            return
        from rich.progress import track

        yield from track(items, description=description, total=total, transient=True,
                         console=_console())

    @contextmanager
    def status(self, description: str):
        if not self.enabled:
            yield
            return
        with _console().status(description):
            yield


def _console():
    from rich.console import Console

    return Console(stderr=True)


SILENT = Progress(enabled=False)
