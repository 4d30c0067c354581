"""What the interop options of the command line do: ``run --msccl`` and ``export-schedule``."""

from __future__ import annotations

from ..errors import TopocastError

#: ``--set`` keys of ``run --msccl``
MSCCL_SETTINGS = ("chunk_bytes", "startup", "per_byte", "per_hop", "ports", "duplex")


def model_settings(settings: list[str], allowed: tuple[str, ...] = MSCCL_SETTINGS) -> dict:
    """``--set key=value`` items as numbers (ports: an integer or ``all``; duplex: full or half)."""
    from ..infra.validate import number

    out: dict = {}
    for item in settings or []:
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key:
            raise TopocastError(f"--set: expected key=value, got '{item}'")
        if key not in allowed:
            raise TopocastError(f"--set: '{key}' is not a parameter here (take {', '.join(allowed)})")
        if key in out:
            raise TopocastError(f"--set: parameter '{key}' given twice")
        if key == "duplex":
            if value not in ("full", "half"):
                raise TopocastError(f"--set: duplex must be full or half, got '{value}'")
            out[key] = value
        elif key == "ports":
            out[key] = None if value == "all" else int(number(_float(key, value), "ports", minimum=1))
        else:
            out[key] = number(_float(key, value), key, minimum=0)
    return out


def _float(key: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise TopocastError(f"--set: parameter '{key}' must be a number, got '{value}'") from None


def model_of(params: dict):
    """The :class:`~topocast.sim.models.Model` of the settings (defaults for what is not given)."""
    from ..sim.models import CostModel, Model, PortModel

    cost = CostModel(**{k: params[k] for k in ("startup", "per_byte", "per_hop") if k in params})
    ports = PortModel(params.get("ports"), params.get("duplex", "full"))
    return Model(ports, cost)


def run_msccl(spec: str, path: str, engine: str | None, mapping: str | None, settings: list[str],
              max_memory: float | None, lenient: bool = False):
    """``topocast run SPEC --msccl FILE [--mapping N0,N1,...] [--lenient] [--set chunk_bytes=...]``."""
    from .msccl import CHUNK_BYTES, parse_mapping, run

    params = model_settings(settings)
    nodes = parse_mapping(mapping) if mapping is not None else None
    return run(spec, path, engine=engine or "step", mapping=nodes,
               chunk_bytes=params.get("chunk_bytes", CHUNK_BYTES), model=model_of(params), max_memory=max_memory,
               lenient=lenient)
