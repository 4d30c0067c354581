"""RunResult: the one result of every run, and its versioned JSON form.

The JSON keys are documented in ``docs/cli.md`` and fixed by the JSON Schema
shipped as ``topocast/schemas/run.schema.json``.  Core keys come first, then
the engine's own metrics, each under one name, then per-step series (once).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..verify.delivery import Verification

SCHEMA_VERSION = "1.0"

#: keys every ``topocast run --json`` carries, in this order
CORE_KEYS = ("schema_version", "spec", "algorithm", "engine", "collective", "seed", "params", "verified",
             "complete", "exactly_once", "redundant_receipts", "missing_deliveries", "first_violation",
             "lower_bound", "lower_bound_ratio", "units")


@dataclass
class RunResult:
    """Outcome of one run: verification, bound, the engine's metrics, per-step series.

    ``metrics`` holds the verification keys, the bound and the engine's scalar
    metrics; ``per_step`` equal-length lists (one entry per step); ``units``
    the unit of every dimensional metric; ``trace`` the engine's trace (Python
    users only, never serialised); ``links`` the per-link records when asked for
    (:class:`topocast.measure.links.LinkTable`, one row per directed link; never
    serialised: its summaries are metrics, its rows go to ``run --links FILE.csv``).
    """

    spec: str
    algorithm: str
    engine: str
    collective: str
    verification: Verification
    seed: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    per_step: dict[str, list[Any]] | None = None
    notes: list[str] = field(default_factory=list)
    trace: Any = None
    links: Any = None

    @property
    def verified(self) -> bool:
        return self.verification.verified

    @property
    def first_violation(self) -> str | None:
        return self.verification.first_violation

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "spec": self.spec, "algorithm": self.algorithm,
                               "engine": self.engine, "collective": self.collective, "seed": int(self.seed),
                               "params": _clean(self.params)}
        out.update(_clean(self.verification.as_dict()))
        out["lower_bound"] = _clean(self.metrics.get("lower_bound"))
        out["lower_bound_ratio"] = _clean(self.metrics.get("lower_bound_ratio"))
        out["units"] = dict(self.units)
        for key, value in _clean(self.metrics).items():
            out.setdefault(key, value)
        if self.per_step is not None:
            out["per_step"] = _clean(self.per_step)
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def _clean(value: Any) -> Any:
    """JSON-safe: numpy scalars and arrays to Python, NaN to null, infinities to strings."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return _clean(value.tolist())
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return None if math.isnan(v) else (v if math.isfinite(v) else str(v))
    return value


def ratio(measured: float | None, bound: float | None) -> float | None:
    """``measured / bound``, or None when either is missing or the bound is not positive."""
    if measured is None or bound is None or not bound > 0:
        return None
    return float(measured) / float(bound)
