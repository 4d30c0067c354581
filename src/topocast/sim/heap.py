"""The event engine's heap: :mod:`topocast.infra.heap`, which engines and planners share (re-exported here)."""

from ..infra.heap import empty, grow, pop, push

__all__ = ["empty", "grow", "pop", "push"]
