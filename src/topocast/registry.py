"""Registry of topology families, algorithms and paper reproductions.

Modules register themselves at import time with :func:`register_family`,
:func:`register_algorithm` and :func:`register_experiment`.  The registry
imports every module of ``topocast.topology``, ``topocast.algorithms`` and
``topocast.experiments`` the first time it is asked for anything, so adding a
family or an algorithm touches one new file and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import validate
from .errors import TopocastError

REQUIRED = object()

_PARSERS: dict[str, Callable[[str], Any]] = {}


def _parse_int(text: str) -> int:
    return int(text)


def _parse_bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise ValueError(text)


def _parse_dims(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.lower().split("x"))


def _parse_float_list(text: str) -> tuple[float, ...]:
    return tuple(float(part) for part in text.split("/"))


_PARSERS.update(
    int=_parse_int,
    float=float,
    str=str,
    bool=_parse_bool,
    dims=_parse_dims,
    floats=_parse_float_list,
)

_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "bool": "true or false",
    "dims": "sizes separated by 'x', e.g. 8x8",
    "floats": "numbers separated by '/'",
}


@dataclass(frozen=True)
class Param:
    """One parameter of a family or an algorithm.

    ``kind`` names the text parser (``int``, ``float``, ``str``, ``bool``,
    ``dims``, ``floats``); ints, floats and every entry of ``dims`` and
    ``floats`` are checked by :mod:`topocast.validate` against ``minimum``.
    """

    name: str
    kind: str = "int"
    default: Any = REQUIRED
    doc: str = ""
    minimum: float | None = None
    choices: tuple[str, ...] | None = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def parse(self, text: str, owner: str) -> Any:
        """Parse ``text`` and check it, raising a one-line :class:`TopocastError`."""
        try:
            value = _PARSERS[self.kind](text)
        except (ValueError, KeyError):
            raise TopocastError(
                f"{owner}: parameter '{self.name}' must be {_TYPE_WORDS.get(self.kind, self.kind)}, got '{text}'"
            ) from None
        return self.check(value, owner)

    def check(self, value: Any, owner: str) -> Any:
        """``value`` checked against ``choices``, the kind and ``minimum``, normalised, or a :class:`TopocastError`.

        Ints come back as ``int``, floats as ``float``, ``dims`` and ``floats``
        as tuples (see :mod:`topocast.validate`).
        """
        if value is None and not self.required and self.default is None:
            return value
        if self.choices is not None:
            value = validate.choice(value, self.name, self.choices, owner=owner)
        if self.kind == "int":
            return validate.integer(value, self.name, owner=owner, minimum=self.minimum)
        if self.kind == "float":
            return validate.number(value, self.name, owner=owner, minimum=self.minimum)
        if self.kind == "dims":
            return validate.integers(value, self.name, owner=owner, minimum=self.minimum)
        if self.kind == "floats":
            return validate.numbers(value, self.name, owner=owner, minimum=self.minimum)
        return value


@dataclass(frozen=True)
class Family:
    """A topology family: a builder and the grammar of its spec strings.

    ``positional`` names the parameter that a bare body fills (``mesh:16x16``
    fills ``dims``).  ``parse_body`` overrides the ``k=v,...`` grammar
    entirely (used by ``product``).  ``estimate`` returns ``(nodes,
    directed_edges)`` from the parameters without building, for the memory
    guard.
    """

    name: str
    builder: Callable[..., Any]
    params: tuple[Param, ...]
    doc: str
    aliases: tuple[str, ...] = ()
    positional: str | None = None
    parse_body: Callable[[str], dict[str, Any]] | None = None
    estimate: Callable[..., tuple[int, int]] | None = None
    example: str = ""
    #: ``router(topology, source, target) -> list of node indices`` (the family's
    #: own routing algorithm); ``topocast route`` falls back to a BFS shortest path
    router: Callable[..., list[int]] | None = None
    #: ``orbits(topology) -> int64[N]``: an orbit label per node under automorphisms
    #: the family knows (checked by the family); distance metrics then run one BFS
    #: per orbit instead of one per node
    orbits: Callable[..., Any] | None = None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        accepted = ", ".join(p.name for p in self.params) or "none"
        raise TopocastError(f"{self.name}: unknown parameter '{name}' (accepted: {accepted})")


@dataclass(frozen=True)
class Algorithm:
    """A collective algorithm: a plan builder, its parameters and the families it applies to.

    ``plan(topology, **params)`` returns the algorithm's plan (a
    :class:`~topocast.schedule.Schedule` or a typed plan of
    :mod:`topocast.plans`); it receives ``seed`` and ``engine`` too when its
    signature names them, and every parameter except those in
    ``model_params``, which ``model(params)`` turns into the
    :class:`~topocast.sim.models.Model` the run is measured under.
    ``families`` empty means any.  ``param_aliases`` maps an accepted
    alternative name to ``(parameter, conversion)``, e.g. Galaxyfly's
    ``bandwidth`` in bit/s to ``per_byte``.
    """

    name: str
    plan: Callable[..., Any]
    collective: str
    doc: str
    families: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    aliases: tuple[str, ...] = ()
    engines: tuple[str, ...] = ("step",)
    paper: str = ""
    #: engines that run from the spec alone (e.g. EJ's ``frontier`` on billions of
    #: nodes): ``plan`` then receives an :class:`~topocast.topology.core.UnbuiltTopology`
    unbuilt_engines: tuple[str, ...] = ()
    model: Callable[[dict[str, Any]], Any] | None = None
    model_params: tuple[str, ...] = ()
    param_aliases: dict[str, tuple[str, Callable[[Any], Any]]] = field(default_factory=dict)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        accepted = ", ".join([p.name for p in self.params] + list(self.param_aliases)) or "none"
        raise TopocastError(f"algorithm {self.name}: unknown parameter '{name}' (accepted: {accepted})")


@dataclass(frozen=True)
class Experiment:
    """A paper reproduction: ``run(quick, out, progress) -> Report``."""

    name: str
    run: Callable[..., Any]
    doc: str
    paper: str = ""


@dataclass
class _Registry:
    families: dict[str, Family] = field(default_factory=dict)
    algorithms: dict[str, Algorithm] = field(default_factory=dict)
    experiments: dict[str, Experiment] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    algorithm_aliases: dict[str, str] = field(default_factory=dict)
    loaded: bool = False


_REG = _Registry()
_PACKAGES = ("topocast.topology", "topocast.algorithms", "topocast.experiments")


def _load() -> None:
    if _REG.loaded:
        return
    _REG.loaded = True
    for package_name in _PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            importlib.import_module(info.name)


def _add(table: dict, aliases: dict, item, what: str):
    for key in (item.name, *getattr(item, "aliases", ())):
        if key in table or key in aliases:
            raise RuntimeError(f"{what} name '{key}' registered twice")
    table[item.name] = item
    for alias in getattr(item, "aliases", ()):
        aliases[alias] = item.name
    return item


def register_family(family: Family) -> Family:
    """Add a family; its name and aliases must be new."""
    return _add(_REG.families, _REG.aliases, family, "family")


def register_algorithm(algorithm: Algorithm) -> Algorithm:
    """Add an algorithm; its name and aliases must be new."""
    return _add(_REG.algorithms, _REG.algorithm_aliases, algorithm, "algorithm")


def register_experiment(experiment: Experiment) -> Experiment:
    """Add a paper reproduction; its name must be new."""
    return _add(_REG.experiments, {}, experiment, "experiment")


# -- hooks a higher layer attaches to a family -------------------------------------------------
# The topology layer imports nothing from algorithms/: a family's own router
# (e.g. HDN's Algorithm 1 in algorithms/hdn_routing.py) is attached from there.


def attach_router(family_name: str, router: Callable[..., list[int]]) -> Family:
    """Give the registered family ``family_name`` its router (``topocast route``); returns the new Family."""
    from dataclasses import replace

    if family_name not in _REG.families:
        raise RuntimeError(f"attach_router: family '{family_name}' is not registered")
    family = replace(_REG.families[family_name], router=router)
    _REG.families[family_name] = family
    return family


def _lookup(table: dict, aliases: dict, name: str, what: str):
    _load()
    key = aliases.get(name, name)
    if key not in table:
        known = ", ".join(sorted(table)) or "none"
        raise TopocastError(f"unknown {what} '{name}' (known: {known})")
    return table[key]


def family(name: str) -> Family:
    """The family called ``name`` (or an alias of it)."""
    return _lookup(_REG.families, _REG.aliases, name, "family")


def algorithm(name: str) -> Algorithm:
    """The algorithm called ``name`` (or an alias of it)."""
    return _lookup(_REG.algorithms, _REG.algorithm_aliases, name, "algorithm")


def experiment(name: str) -> Experiment:
    """The paper reproduction called ``name``."""
    return _lookup(_REG.experiments, {}, name, "reproduction")


def families() -> list[Family]:
    _load()
    return sorted(_REG.families.values(), key=lambda f: f.name)


def algorithms() -> list[Algorithm]:
    _load()
    return sorted(_REG.algorithms.values(), key=lambda a: a.name)


def experiments() -> list[Experiment]:
    _load()
    return sorted(_REG.experiments.values(), key=lambda e: e.name)
