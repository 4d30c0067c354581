"""Fault specs: one token naming what is broken in a network, e.g. ``links=0.05,seed=3`` or ``routers=5;9``.

Grammar (``docs/faults.md``)::

    FAULTS := ITEM ("," ITEM)*            (commas inside parentheses or brackets do not split)
    ITEM   := "links=" PART | "routers=" PART | "groups=" PART | "label=" NAME | "seed=" INT
    PART   := LIST | DRAW
    DRAW   := INT                          a count, drawn at random
            | FRACTION | PERCENT           a share of all of them (0 <= f < 1; "5%" is 0.05)
    LIST   := "[" ENTRY (";" ENTRY)* "]"   named explicitly; the brackets may be left out when the
            | ENTRY (";" ENTRY)* [";"]     list holds a ";" (a trailing one makes a list of one)
            | LINK                         (links: a single u-v is a list of one)
    LINK   := NODE "-" NODE                every link between the two nodes
    NODE   := INT | "(" LABEL ")" | NAME   an index, the family's label ("(1,2)"), a node name

``links`` fail links; ``routers`` fail routers (every link of the router goes,
and the router is marked failed: it neither sends, receives nor relays);
``groups`` fail every global link of a group (the correlated failure of a
Dragonfly or Galaxyfly group's optics; a group is a component of the network
without its ``global`` links); ``label`` restricts the random links to the
links of one arc label (``label=global``).  A random draw takes ``seed``
(default 0): the same spec always names the same faults.

Parsing needs no network; :func:`topocast.faults.degrade.degrade` resolves the
names against one and draws the random parts.

>>> spec = parse("links=3-7;12-13,routers=5%,seed=2")
>>> spec.links, spec.routers, spec.seed
((('3', '7'), ('12', '13')), Draw(kind='fraction', value=0.05), 2)
>>> spec.text
'links=[3-7;12-13],routers=0.05,seed=2'
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ..errors import TopocastError

#: the keys of a fault spec, in their canonical order
KEYS = ("links", "routers", "groups", "label", "seed")
#: the longest fault spec read (a few thousand named links)
MAX_LENGTH = 1_000_000


@dataclass(frozen=True)
class Draw:
    """A random part of a fault spec: ``count`` parts, or a ``fraction`` of them (``0 <= f < 1``)."""

    kind: str
    value: int | float

    def text(self) -> str:
        return str(self.value) if self.kind == "count" else f"{self.value:.12g}" if self.value else "0.0"

    def size(self, total: int) -> int:
        """How many of ``total`` parts the draw takes (a fraction rounded to the nearest count)."""
        if self.kind == "count":
            return int(self.value)
        return int(math.floor(self.value * total + 0.5))


Part = tuple | Draw | None


@dataclass(frozen=True)
class FaultSpec:
    """A parsed fault spec: what fails, named (tuples of texts) or drawn (:class:`Draw`).

    Attributes
    ----------
    links : tuple of (str, str), Draw or None
        Failed links as end-point pairs (texts, resolved against a network), or a draw.
    routers : tuple of str, Draw or None
        Failed routers, or a draw.
    groups : tuple of str, Draw or None
        Groups whose global links all fail, or a draw.
    label : str or None
        The arc label random links are drawn from (None: every link).
    seed : int
        The seed of every random draw.
    """

    links: Part = None
    routers: Part = None
    groups: Part = None
    label: str | None = None
    seed: int = 0

    @property
    def random(self) -> bool:
        """Whether any part is drawn at random."""
        return any(isinstance(p, Draw) for p in (self.links, self.routers, self.groups))

    @property
    def empty(self) -> bool:
        """Whether the spec names nothing at all (``links=0`` is not empty: it is a draw of none)."""
        return self.links is None and self.routers is None and self.groups is None

    @property
    def text(self) -> str:
        """The canonical spelling: keys in :data:`KEYS` order, lists in brackets, the seed when a part is
        drawn (parsing it gives the same spec)."""
        items = []
        for key in ("links", "routers", "groups"):
            part = getattr(self, key)
            if part is None:
                continue
            if isinstance(part, Draw):
                items.append(f"{key}={part.text()}")
            else:
                entries = ("-".join(_node_text(e) for e in entry) if key == "links" else _node_text(entry)
                           for entry in part)
                items.append(f"{key}=[{';'.join(entries)}]")
        if self.label is not None:
            items.append(f"label={self.label}")
        if self.random:
            items.append(f"seed={self.seed}")
        return ",".join(items)

    def __str__(self) -> str:
        return self.text


def _node_text(text: str) -> str:
    """A node as written in the canonical spelling: an index or a bare name as is, a label in parentheses."""
    return text if _BARE.fullmatch(text) else f"({text})"


#: a node written without parentheses: an index or a name of letters, digits, '_' and '.' (no '-')
_BARE = re.compile(r"[A-Za-z0-9_.:]+")
_INT = re.compile(r"\d+")
_FRACTION = re.compile(r"(\d*\.\d*(e[-+]?\d+)?|\d+e[-+]?\d+)", re.IGNORECASE)


def _fail(key: str, rule: str, got: str) -> TopocastError:
    shown = got if len(got) <= 60 else got[:57] + "..."
    return TopocastError(f"faults: parameter '{key}' must be {rule}, got '{shown}'")


def split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside parentheses and brackets.

    >>> split_top("links=(0,1)-(0,2),seed=1", ",")
    ['links=(0,1)-(0,2)', 'seed=1']
    """
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth < 0:
                raise TopocastError(f"faults: unbalanced ')' or ']' in '{_short(text)}'")
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise TopocastError(f"faults: unbalanced '(' or '[' in '{_short(text)}'")
    parts.append(text[start:])
    return parts


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _node(entry: str, key: str) -> str:
    """One node's text: an index, a name, or a parenthesised label (parentheses dropped)."""
    entry = entry.strip()
    if entry.startswith("(") and entry.endswith(")") and len(entry) > 2:
        return entry[1:-1].strip()
    if entry and _BARE.fullmatch(entry):
        return entry
    raise _fail(key, "nodes written as an index, a name or a label in parentheses such as (1,2)", entry)


def _link(entry: str) -> tuple[str, str]:
    ends = split_top(entry.strip(), "-")
    if len(ends) != 2 or not all(e.strip() for e in ends):
        raise _fail("links", "links written u-v (two nodes: an index, a name or a label in parentheses; "
                             "a label or name holding '-' goes in parentheses)", entry.strip())
    return _node(ends[0], "links"), _node(ends[1], "links")


def _draw(value: str, key: str) -> Draw | None:
    """``value`` as a random draw (a count, a fraction, a percentage), or None when it is not a number."""
    text = value.strip()
    percent = text.endswith("%")
    number = text[:-1].strip() if percent else text
    if _INT.fullmatch(number) and not percent:
        return Draw("count", int(number))
    if _FRACTION.fullmatch(number) or (percent and _INT.fullmatch(number)):
        share = float(number) / (100.0 if percent else 1.0)
        if not (math.isfinite(share) and 0.0 <= share < 1.0):
            raise _fail(key, "a fraction in [0, 1) (a share of them, at random), a count or a list", text)
        return Draw("fraction", share)
    if text.lstrip("+-").replace(".", "", 1).isdigit() or text.lower() in ("nan", "inf", "-inf", "+inf"):
        raise _fail(key, "a fraction in [0, 1) (a share of them, at random), a count or a list", text)
    return None


def _part(key: str, value: str) -> tuple | Draw:
    text = value.strip()
    if not text:
        raise _fail(key, "a count, a fraction in [0, 1) or a list", text)
    bracketed = text.startswith("[") and text.endswith("]")
    if not bracketed and ";" not in text:
        draw = _draw(text, key)
        if draw is not None:
            return draw
    inner = text[1:-1] if bracketed else text
    entries = [e for e in split_top(inner, ";")]
    if entries and not entries[-1].strip():
        entries = entries[:-1]  # "routers=5;" is a list of one
    if not entries or any(not e.strip() for e in entries):
        raise _fail(key, "a list of entries separated by ';'", text)
    if not bracketed and ";" not in text and key == "groups":
        raise _fail(key, "a count, a fraction in [0, 1) or a list of groups such as [0;3]", text)
    named = tuple(_link(e) if key == "links" else _node(e, key) for e in entries)
    if len(set(named)) < len(named):  # each alone is legal, together they fail one thing twice
        raise _fail(key, "a list naming each entry once", text)
    return named


def parse(spec: str | FaultSpec | None) -> FaultSpec | None:
    """The :class:`FaultSpec` of ``spec`` (None or an empty string: no faults).

    Parameters
    ----------
    spec : str, FaultSpec or None
        A fault spec (see the module docstring).

    Returns
    -------
    FaultSpec or None
        The parsed spec, None when ``spec`` names no faults.

    Raises
    ------
    TopocastError
        One line naming the key and the rule: an unknown or repeated key, a fraction outside [0, 1),
        a negative or non-integral count, a malformed link, a seed outside 0..2**63-1.

    >>> parse("links=12").links
    Draw(kind='count', value=12)
    >>> parse(None) is None, parse("  ") is None
    (True, True)
    """
    if spec is None or isinstance(spec, FaultSpec):
        return spec
    if not isinstance(spec, str):
        raise TopocastError(f"faults: must be a fault spec such as 'links=0.05,seed=1', got {type(spec).__name__}")
    if len(spec) > MAX_LENGTH:
        raise TopocastError(f"faults: a fault spec of {len(spec):,} characters is longer than the "
                            f"{MAX_LENGTH:,} read")
    if any(unicodedata.category(ch) == "Cc" for ch in spec):
        raise TopocastError(f"faults: {_short(spec)!r} holds a control character (a newline, a tab, an escape ...)")
    if not spec.strip():
        return None
    values: dict[str, Any] = {}
    for item in split_top(spec.strip(), ","):
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not item.strip():
            raise TopocastError(f"faults: empty item in '{_short(spec)}'")
        if not sep:
            raise TopocastError(f"faults: item '{_short(item.strip())}' must be written key=value "
                                f"(keys: {', '.join(KEYS)})")
        if key not in KEYS:
            raise TopocastError(f"faults: unknown key '{_short(key)}' (keys: {', '.join(KEYS)})")
        if key in values:
            raise TopocastError(f"faults: key '{key}' given twice")
        if key == "seed":
            text = value.strip()
            if not _INT.fullmatch(text) or int(text) > 2**63 - 1:
                raise _fail("seed", "an integer in 0..2**63-1", text)
            values[key] = int(text)
        elif key == "label":
            text = value.strip()
            if not text or not _BARE.fullmatch(text):
                raise _fail("label", "an arc label name such as global", text)
            values[key] = text
        else:
            values[key] = _part(key, value)
    result = FaultSpec(**values)
    if result.label is not None and not isinstance(result.links, Draw):
        raise TopocastError("faults: parameter 'label' restricts random links: give links=COUNT or links=FRACTION "
                            "with it")
    return result


__all__ = ["Draw", "FaultSpec", "KEYS", "parse", "split_top"]
