"""The one check of numeric (and enumerated) parameters, shared by builders, models, engines and the registry.

Every function returns the value normalised (an ``int``, a ``float``, a tuple)
or raises a one-line :class:`~topocast.errors.TopocastError` that names the
parameter and the rule it breaks, e.g.
``mesh: parameter 'dims' must be integers >= 2, got 1.5``.

Integers refuse booleans, strings, NaN, infinities and non-integral floats;
an integral float such as ``4.0`` is accepted and returned as ``4``.  Numbers
refuse booleans, strings and NaN, and infinities unless ``allow_inf``.  Numpy
integer and floating scalars are accepted (they register with :mod:`numbers`),
so this module needs no numpy import.
"""

from __future__ import annotations

import math
import numbers as _abc
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from ..errors import TopocastError

__all__ = ["Normalised", "choice", "integer", "integers", "number", "numbers"]

T = TypeVar("T")


def _where(owner: str) -> str:
    return f"{owner}: " if owner else ""


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, (str, bytes)) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _bound(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _rule(minimum: Any, maximum: Any, integral: bool) -> str:
    if minimum is not None and maximum is not None:
        if integral:
            return f"in {_bound(minimum)}..{_bound(maximum)}"
        return f"between {_bound(minimum)} and {_bound(maximum)}"
    if minimum is not None:
        return f">= {_bound(minimum)}"
    if maximum is not None:
        return f"<= {_bound(maximum)}"
    return ""


def _fail(owner: str, name: str, rule: str, shown: str) -> TopocastError:
    return TopocastError(f"{_where(owner)}parameter '{name}' must be {rule}, got {shown}")


def _as_int(value: Any) -> int | None:
    """``value`` as an int when it is a non-boolean integral real, else None."""
    if isinstance(value, bool) or not isinstance(value, _abc.Real):
        return None
    if isinstance(value, _abc.Integral):
        return int(value)
    try:
        f = float(value)
    except (OverflowError, ValueError, TypeError):
        return None
    if not math.isfinite(f) or not f.is_integer():
        return None
    return int(f)


def _as_float(value: Any, allow_inf: bool) -> float | None:
    """``value`` as a float when it is a non-boolean real, not NaN (and finite unless ``allow_inf``), else None."""
    if isinstance(value, bool) or not isinstance(value, _abc.Real):
        return None
    try:
        f = float(value)
    except (OverflowError, ValueError, TypeError):
        return None
    if math.isnan(f) or (math.isinf(f) and not allow_inf):
        return None
    return f


def _in_range(value: float, minimum: Any, maximum: Any) -> bool:
    return (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


def integer(value: Any, name: str, *, owner: str = "", minimum: Any = None, maximum: Any = None) -> int:
    """``value`` as an ``int`` within ``[minimum, maximum]``, or a :class:`TopocastError` naming ``name``.

    >>> integer(4.0, "n")
    4
    >>> integer(1.5, "dims", owner="mesh", minimum=2)
    Traceback (most recent call last):
    ...
    topocast.errors.TopocastError: mesh: parameter 'dims' must be an integer >= 2, got 1.5
    """
    rule = _rule(minimum, maximum, integral=True)
    out = _as_int(value)
    if out is None:
        raise _fail(owner, name, "an integer" + (f" {rule}" if rule else ""), _show(value))
    if not _in_range(out, minimum, maximum):
        raise _fail(owner, name, rule, str(out))
    return out


def number(value: Any, name: str, *, owner: str = "", minimum: Any = None, maximum: Any = None,
           allow_inf: bool = False) -> float:
    """``value`` as a ``float`` within ``[minimum, maximum]``, or a :class:`TopocastError` naming ``name``.

    NaN is always refused; infinities only unless ``allow_inf``.

    >>> number(3, "load")
    3.0
    >>> number(float("nan"), "load", owner="mesh-unicast")
    Traceback (most recent call last):
    ...
    topocast.errors.TopocastError: mesh-unicast: parameter 'load' must be a finite number, got nan
    """
    rule = _rule(minimum, maximum, integral=False)
    out = _as_float(value, allow_inf)
    if out is None:
        kind = "a number" if allow_inf else "a finite number"
        raise _fail(owner, name, kind + (f" {rule}" if rule else ""), _show(value))
    if not _in_range(out, minimum, maximum):
        raise _fail(owner, name, rule, f"{out:g}")
    return out


def _entries(values: Any, name: str, owner: str, what: str, min_length: int) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable) or getattr(values, "ndim", 1) != 1:
        raise _fail(owner, name, f"a sequence of {what}", _show(values))
    entries = list(values)
    if len(entries) < min_length:
        need = "one entry" if min_length == 1 else f"{min_length} entries"
        raise TopocastError(f"{_where(owner)}parameter '{name}' needs at least {need}, got {_show(tuple(entries))}")
    return entries


def integers(values: Any, name: str, *, owner: str = "", minimum: Any = None, maximum: Any = None,
             min_length: int = 1) -> tuple[int, ...]:
    """Every entry of ``values`` (a sequence, e.g. ``dims``) checked by :func:`integer`, as a tuple.

    >>> integers([4, 4.0], "dims", minimum=2)
    (4, 4)
    >>> integers((4.5, 4), "dims", owner="torus", minimum=2)
    Traceback (most recent call last):
    ...
    topocast.errors.TopocastError: torus: parameter 'dims' must be integers >= 2, got 4.5
    """
    rule = _rule(minimum, maximum, integral=True)
    out = []
    for entry in _entries(values, name, owner, "integers", min_length):
        value = _as_int(entry)
        if value is None:
            raise _fail(owner, name, "integers" + (f" {rule}" if rule else ""), _show(entry))
        if not _in_range(value, minimum, maximum):
            raise _fail(owner, name, rule, str(value))
        out.append(value)
    return tuple(out)


def numbers(values: Any, name: str, *, owner: str = "", minimum: Any = None, maximum: Any = None,
            allow_inf: bool = False, min_length: int = 1) -> tuple[float, ...]:
    """Every entry of ``values`` checked by :func:`number`, as a tuple of floats.

    >>> numbers([1, 0.5], "weights", minimum=0)
    (1.0, 0.5)
    """
    rule = _rule(minimum, maximum, integral=False)
    kind = "numbers" if allow_inf else "finite numbers"
    out = []
    for entry in _entries(values, name, owner, "numbers", min_length):
        value = _as_float(entry, allow_inf)
        if value is None:
            raise _fail(owner, name, kind + (f" {rule}" if rule else ""), _show(entry))
        if not _in_range(value, minimum, maximum):
            raise _fail(owner, name, rule, f"{value:g}")
        out.append(value)
    return tuple(out)


def choice(value: Any, name: str, choices: Iterable, *, owner: str = "") -> Any:
    """``value`` if it is one of ``choices`` (a boolean never stands in for 0 or 1), else a :class:`TopocastError`.

    >>> choice("step", "engine", ("step", "wormhole"))
    'step'
    """
    options = tuple(choices)
    for option in options:
        try:
            same = bool(value == option)
        except (TypeError, ValueError):
            same = False
        if same and isinstance(value, bool) == isinstance(option, bool):
            return option
    raise _fail(owner, name, "one of " + ", ".join(str(o) for o in options), f"'{value}'")



#: the default of a :class:`Normalised` field the caller must give
REQUIRED: Any = object()


class Normalised(Generic[T]):
    """A frozen dataclass's field whose value is checked and normalised as the instance is made.

    The dataclass's ``__init__`` (and :func:`dataclasses.replace`) assigns each field once; this
    descriptor passes the value through ``check(value, field_name)`` then (a :class:`TopocastError`
    for a bad one, else the normalised value, e.g. ``integer(2.0) -> 2``), and the frozen class refuses
    any later assignment.  The class attribute is the ``default`` (none: the field is required), as for
    a plain field.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Link:
    ...     delay: Normalised[float] = Normalised(lambda v, name: number(v, name, minimum=0), 1.0)
    >>> Link(2).delay, Link().delay
    (2.0, 1.0)
    """

    def __init__(self, check: Callable[[Any, str], T], default: T = REQUIRED) -> None:
        self._check = check
        self._default = default
        self._name = self._slot = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name, self._slot = name, f"_{name}_value"

    def __get__(self, obj: object | None, owner: type | None = None) -> T:
        if obj is None:  # the class attribute: the default (dataclasses read it), none for a required field
            if self._default is REQUIRED:
                raise AttributeError(self._name)
            return self._default
        value: T = obj.__dict__[self._slot]
        return value

    def __set__(self, obj: object, value: Any) -> None:
        obj.__dict__[self._slot] = self._check(value, self._name)
