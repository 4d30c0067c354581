"""Flit-level wormhole engine for path-based multicast on meshes.

``engine`` (the cycle-driven numba core), ``routing`` (e-cube and Lin-Ni
Hamiltonian routing, path expansion), ``traffic`` (plans into arrays,
Poisson generators), ``workload`` (one load point with batch-means
statistics, load sweeps in a process pool).
"""

from .engine import WormholeConfig, WormTrace, WormTraffic, simulate
from .routing import ECUBE, HIGH, LOW, snake_labels
from .traffic import TrafficBuilder
from .workload import WorkloadResult, run_workload, sweep

__all__ = ["ECUBE", "HIGH", "LOW", "TrafficBuilder", "WormTrace", "WormTraffic", "WormholeConfig",
           "WorkloadResult", "run_workload", "simulate", "snake_labels", "sweep"]
