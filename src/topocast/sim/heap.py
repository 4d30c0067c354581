"""The event engine's heap: :mod:`topocast.heap`, which engines and planners share (re-exported here)."""

from ..heap import empty, grow, pop, push

__all__ = ["empty", "grow", "pop", "push"]
