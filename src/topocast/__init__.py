"""topocast: interconnection-network topologies and collective-communication algorithms.

>>> import topocast as tc
>>> t = tc.build("torus:4x4")
>>> t.num_nodes, t.num_edges
(16, 32)
"""

from .api import info, run
from .errors import TopocastError, VerificationError
from .execute import execute
from .registry import algorithms, experiments, families
from .result import RunResult
from .schedule import Schedule, ScheduleBuilder
from .sim.models import CostModel, PortModel
from .spec import build, parse_spec
from .topology.core import Topology

__version__ = "0.1.0"

__all__ = [
    "CostModel", "PortModel", "RunResult", "Schedule", "ScheduleBuilder", "Topology", "TopocastError",
    "VerificationError", "algorithms", "build", "execute", "experiments", "families", "info", "parse_spec",
    "run",
]
