"""Registry of topology families, algorithms and paper reproductions.

Modules register themselves at import time with :func:`register_family`,
:func:`register_algorithm` and :func:`register_experiment`.  Nothing is
imported up front: the generated manifest (:mod:`topocast._manifest`, written
by ``python -m topocast.catalogue``) names the module that registers each
family, algorithm and reproduction, and the modules that attach hooks to a
family (:func:`attach_router`, :func:`note_extension`).  :func:`family`,
:func:`algorithm` and :func:`experiment` import only the module that registers
the name asked for; :func:`families`, :func:`algorithms` and
:func:`experiments` import the whole package (full objects).  A module of
``topocast.topology``, ``topocast.algorithms`` or ``topocast.experiments`` the
manifest does not list yet is imported when a name is not found, so a new
file works before the manifest is regenerated; ``topocast list`` and the
README show it once it is.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, TypeVar

from .errors import TopocastError
from .infra import validate

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
    ``floats`` are checked by :mod:`topocast.infra.validate` against ``minimum``.
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
            shown = text if len(text) <= 60 else text[:57] + "..."
            raise TopocastError(
                f"{owner}: parameter '{self.name}' must be {_TYPE_WORDS.get(self.kind, self.kind)}, got '{shown}'"
            ) from None
        return self.check(value, owner)

    def check(self, value: Any, owner: str) -> Any:
        """``value`` checked against ``choices``, the kind and ``minimum``, normalised, or a :class:`TopocastError`.

        Ints come back as ``int``, floats as ``float``, ``dims`` and ``floats``
        as tuples (see :mod:`topocast.infra.validate`).
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
    estimate: Callable[..., tuple[int | float, int | float]] | None = None
    #: ``read_bytes(**params) -> (bytes, what)``: memory needed before ``estimate`` can know the size (reading
    #: a file); the memory guard checks it first
    read_bytes: Callable[..., tuple[float, str]] | None = None
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
    :class:`~topocast.plans.schedule.Schedule` or a typed plan of
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
    #: how it runs on a degraded network (:mod:`topocast.faults.plans`): ``intact`` (planned for the intact
    #: network, its transfers over failed parts dropped), ``surviving`` (it plans on whatever graph it is
    #: given, the generic collectives: planned on the surviving graph) or ``native`` (it reads the faults of
    #: the degraded network it is given and plans around them, e.g. by choosing its root)
    fault_mode: str = "intact"

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        accepted = ", ".join([p.name for p in self.params] + list(self.param_aliases)) or "none"
        raise TopocastError(f"algorithm {self.name}: unknown parameter '{name}' (accepted: {accepted})")


@dataclass(frozen=True)
class Experiment:
    """A paper reproduction: ``run(quick, out, progress) -> Report``.

    ``weight``: its cost relative to the others (about the seconds of its
    ``--quick`` run in a worker process on a fresh install, first-use
    compilation included), so that reproductions run side by side start
    with the costliest.
    """

    name: str
    run: Callable[..., Any]
    doc: str
    paper: str = ""
    weight: float = 1.0


@dataclass
class _Registry:
    families: dict[str, Family] = field(default_factory=dict)
    algorithms: dict[str, Algorithm] = field(default_factory=dict)
    experiments: dict[str, Experiment] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    algorithm_aliases: dict[str, str] = field(default_factory=dict)
    #: kinds whose whole package has been imported (``"family"``, ``"algorithm"``, ``"experiment"``)
    loaded: set[str] = field(default_factory=set)
    #: ``(kind, name) -> module`` whose import registered it
    origin: dict[tuple[str, str], str | None] = field(default_factory=dict)
    #: family -> modules that attach hooks to it (its router, its constructive cut)
    extensions: dict[str, list[str]] = field(default_factory=dict)
    #: (kind, name) already imported with everything the manifest lists for it
    ready: set[tuple[str, str]] = field(default_factory=set)


_REG = _Registry()
#: what a registry table holds
Entry = TypeVar("Entry", Family, Algorithm, Experiment)

#: kind -> the package whose modules register it
PACKAGES = {"family": "topocast.topology", "algorithm": "topocast.algorithms",
            "experiment": "topocast.experiments"}
_WORDS = {"family": "family", "algorithm": "algorithm", "experiment": "reproduction"}


def _importing_module() -> str | None:
    """The module whose top-level code is running the current call (the innermost ``<module>`` frame)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>":
            return frame.f_globals.get("__name__")
        frame = frame.f_back
    return None


def _tables(kind: str) -> tuple[dict[str, Any], dict[str, str]]:
    if kind == "family":
        return _REG.families, _REG.aliases
    if kind == "algorithm":
        return _REG.algorithms, _REG.algorithm_aliases
    return _REG.experiments, {}


# -- the manifest: which module registers what, without importing it -----------------------------
def manifest() -> Any:
    """The generated manifest module (:mod:`topocast._manifest`), or ``None`` when there is none."""
    try:
        from . import _manifest
    except ImportError:  # pragma: no cover - a checkout before the first `python -m topocast.catalogue`
        return None
    return _manifest


def manifest_entries(kind: str) -> list[dict[str, Any]]:
    """The manifest's records of ``kind`` (``"family"``, ``"algorithm"``, ``"experiment"``), sorted by name."""
    data = manifest()
    if data is None:
        return []
    entries: list[dict[str, Any]] = {"family": data.FAMILIES, "algorithm": data.ALGORITHMS,
                                     "experiment": data.EXPERIMENTS}[kind]
    return entries


_INDEX: dict[str, dict[str, dict[str, Any]]] = {}


def _manifest_index(kind: str) -> dict[str, dict[str, Any]]:
    """name and aliases -> manifest record."""
    if kind not in _INDEX:
        index: dict[str, dict[str, Any]] = {}
        for entry in manifest_entries(kind):
            for key in (entry["name"], *entry.get("aliases", ())):
                index[key] = entry
        _INDEX[kind] = index
    return _INDEX[kind]


def _import_entry(kind: str, entry: dict[str, Any]) -> None:
    """Import the module that registers ``entry`` and the modules that extend it."""
    key = (kind, entry["name"])
    if key in _REG.ready:
        return
    for module in (entry["module"], *entry.get("extends", ())):
        importlib.import_module(module)
    _REG.ready.add(key)


def _package_modules(kind: str) -> list[str]:
    """Every module of the package of ``kind`` (found on disk, not imported)."""
    package = importlib.import_module(PACKAGES[kind])
    return [info.name for info in pkgutil.walk_packages(package.__path__, PACKAGES[kind] + ".")]


def _import_unlisted(kind: str) -> None:
    """Import the modules of ``kind``'s package that the manifest does not list (files added since)."""
    data = manifest()
    listed = set(data.MODULES) if data is not None else set()
    for name in _package_modules(kind):
        if name not in listed:
            importlib.import_module(name)


def _load(kind: str | None = None) -> None:
    """Import every module of ``kind``'s package (all three packages when ``None``), and the family hooks."""
    for each in (PACKAGES if kind is None else (kind,)):
        if each in _REG.loaded:
            continue
        for name in _package_modules(each):
            importlib.import_module(name)
        for entry in manifest_entries(each):
            _import_entry(each, entry)
        _REG.loaded.add(each)


def load_all() -> None:
    """Import every module that registers anything (what ``python -m topocast.catalogue`` records)."""
    _load()


def origin(kind: str, name: str) -> str | None:
    """The module whose import registered ``name`` (``None`` if registered outside a module's top level)."""
    return _REG.origin.get((kind, name))


def extensions(family_name: str) -> list[str]:
    """Modules that attached hooks to the family ``family_name`` (router, constructive cut), in order."""
    return list(_REG.extensions.get(family_name, ()))


def _add(table: dict[str, Entry], aliases: dict[str, str], item: Entry, what: str) -> Entry:
    for key in (item.name, *getattr(item, "aliases", ())):
        if key in table or key in aliases:
            raise RuntimeError(f"{what} name '{key}' registered twice")
    table[item.name] = item
    for alias in getattr(item, "aliases", ()):
        aliases[alias] = item.name
    _REG.origin[(what, item.name)] = _importing_module()
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
    note_extension(family_name, _importing_module())
    return family


def note_extension(family_name: str, module: str | None = None) -> None:
    """Record that ``module`` (default: the module being imported) extends the family ``family_name``.

    The manifest lists it, so looking the family up imports it too (the hooks of
    :func:`attach_router` and :func:`topocast.topology.properties.register_cut` call this).
    """
    module = _importing_module() if module is None else module
    if module is not None and module != "__main__":
        listed = _REG.extensions.setdefault(family_name, [])
        if module not in listed:
            listed.append(module)


def _lookup(kind: str, name: str, table: dict[str, Entry], aliases: dict[str, str]) -> Entry:
    """The entry ``name`` of ``kind`` in ``table`` (its registry's own table); imports what registers it."""
    key = aliases.get(name, name)
    entry = _manifest_index(kind).get(name) if isinstance(name, str) else None
    if entry is not None:
        _import_entry(kind, entry)
        key = aliases.get(name, name)
    if key not in table and kind not in _REG.loaded:
        _import_unlisted(kind)
        key = aliases.get(name, name)
    if key not in table:
        known = ", ".join(sorted(set(table) | {e["name"] for e in manifest_entries(kind)})) or "none"
        raise TopocastError(f"unknown {_WORDS[kind]} '{name}' (known: {known})")
    return table[key]


def family(name: str) -> Family:
    """The family called ``name`` (or an alias of it); imports the module that registers it."""
    return _lookup("family", name, _REG.families, _REG.aliases)


def algorithm(name: str) -> Algorithm:
    """The algorithm called ``name`` (or an alias of it); imports the module that registers it."""
    return _lookup("algorithm", name, _REG.algorithms, _REG.algorithm_aliases)


def experiment(name: str) -> Experiment:
    """The paper reproduction called ``name``; imports the module that registers it."""
    return _lookup("experiment", name, _REG.experiments, {})


def families() -> list[Family]:
    """Every family (imports every module of :mod:`topocast.topology` and the family hooks)."""
    _load("family")
    return sorted(_REG.families.values(), key=lambda f: f.name)


def algorithms() -> list[Algorithm]:
    """Every algorithm (imports every module of :mod:`topocast.algorithms`)."""
    _load("algorithm")
    return sorted(_REG.algorithms.values(), key=lambda a: a.name)


def experiments() -> list[Experiment]:
    """Every paper reproduction (imports every module of :mod:`topocast.experiments`)."""
    _load("experiment")
    return sorted(_REG.experiments.values(), key=lambda e: e.name)


def names(kind: str) -> list[str]:
    """Names of ``kind`` from the manifest and the registrations so far, without importing anything."""
    return sorted({e["name"] for e in manifest_entries(kind)} | set(_tables(kind)[0]))
