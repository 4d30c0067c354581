"""topocast: interconnection-network topologies and collective-communication algorithms.

>>> import topocast as tc
>>> t = tc.build("torus:4x4")
>>> t.num_nodes, t.num_edges
(16, 32)

The public names below are imported on first use (``import topocast`` itself
loads no numerical package), so the command line starts fast.
"""

import os as _os
import sys as _sys
import types as _types

if _os.path.basename(_sys.argv[0] if _sys.argv else "") in ("topocast", "topocast.exe"):
    # the command line: SIGINT and SIGTERM exit cleanly even while the imports run
    from .infra.supervise import install_early_handlers

    install_early_handlers()

__version__ = "0.1.0"

#: public name -> the module that defines it (imported when the name is first used)
_PUBLIC = {
    "info": "api", "run": "api",
    "TopocastError": "errors", "VerificationError": "errors",
    "execute": "execution.execute",
    "algorithms": "registry", "experiments": "registry", "families": "registry",
    "RunResult": "execution.result",
    "Schedule": "plans.schedule", "ScheduleBuilder": "plans.schedule",
    "CostModel": "sim.models", "PortModel": "sim.models",
    "build": "spec", "parse_spec": "spec",
    "sweep": "sweep.grid",
    "synthesize": "synthesis",
    "export_schedule": "interop.schedules",
    "Topology": "topology.core",
}

#: public submodule -> the module it is (``tc.msccl`` is :mod:`topocast.interop.msccl`)
_MODULES = {"msccl": "interop.msccl"}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    """A public name, or a submodule (``topocast.registry``), imported on first use."""
    import importlib

    if name in _PUBLIC:
        value = getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _MODULES:
        return importlib.import_module(f".{_MODULES[name]}", __name__)
    if not name.startswith("__"):
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))


class _Package(_types.ModuleType):
    """The package module: importing the subpackage ``topocast.sweep`` leaves ``topocast.sweep`` the function of
    that name (likewise for any public name that is also a submodule's)."""

    def __setattr__(self, name: str, value) -> None:
        if name in _PUBLIC and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
