"""topocast: interconnection-network topologies and collective-communication algorithms.

>>> import topocast as tc
>>> t = tc.build("torus:4x4")
>>> t.num_nodes, t.num_edges
(16, 32)
"""

import os as _os
import sys as _sys

if _os.path.basename(_sys.argv[0] if _sys.argv else "") in ("topocast", "topocast.exe"):
    # the command line: SIGINT and SIGTERM exit cleanly even while the imports below run
    from .supervise import install_early_handlers

    install_early_handlers()

from .api import info, run  # noqa: E402
from .errors import TopocastError, VerificationError  # noqa: E402
from .execute import execute  # noqa: E402
from .registry import algorithms, experiments, families  # noqa: E402
from .result import RunResult  # noqa: E402
from .schedule import Schedule, ScheduleBuilder  # noqa: E402
from .sim.models import CostModel, PortModel  # noqa: E402
from .spec import build, parse_spec  # noqa: E402
from .sweep import sweep  # noqa: E402
from .synthesis import synthesize  # noqa: E402
from .topology.core import Topology  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "CostModel", "PortModel", "RunResult", "Schedule", "ScheduleBuilder", "Topology", "TopocastError",
    "VerificationError", "algorithms", "build", "execute", "experiments", "families", "info", "parse_spec",
    "run", "sweep", "synthesize",
]
