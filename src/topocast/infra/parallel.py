"""Serial and parallel builds of one numba kernel.

A kernel whose outer loop is ``numba.prange`` runs serially when it is
compiled without ``parallel=True``, and compiles several times faster that
way (no parallel pass).  :func:`twin` compiles the same Python source a
second time, under another name and with ``parallel=True``, optionally with
other kernels bound to some of its global names.  Callers run the serial
build on small inputs and the parallel twin on large ones, so a quick run
never compiles (or starts the threads of) a parallel kernel.  Both builds
are cached on disk (``cache=True``), each under its own name.

The OpenMP threads of numba's parallel kernels sleep at the end of a
parallel loop instead of spinning (``OMP_WAIT_POLICY=PASSIVE``, unless the
environment sets it; the OpenMP runtime reads it when numba first starts its
threads).  On a machine shared with other busy processes a spinning thread
holds the core that the last working thread waits for, and a kernel with a
parallel loop per BFS level ran several times slower on both cores than on
one (``docs/performance.md``, "BFS and eccentricity").
"""

from __future__ import annotations

import os
import types

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba as nb  # noqa: E402 - after the wait policy, which numba's OpenMP layer reads once


def twin(kernel, name: str, parallel: bool = True, **bind):
    """A second build of ``kernel`` (a numba dispatcher) named ``name``: ``parallel``, globals ``bind`` replaced."""
    source = kernel.py_func
    scope = dict(source.__globals__)
    scope.update(bind)
    func = types.FunctionType(source.__code__, scope, name, source.__defaults__, source.__closure__)
    func.__qualname__, func.__module__, func.__doc__ = name, source.__module__, source.__doc__
    return nb.njit(cache=True, parallel=parallel)(func)


__all__ = ["twin"]
