"""Your own network: the family ``graph``, read from a GraphML, GML, node-link JSON or edge-list file.

``graph:PATH`` reads the file with networkx's reader for its extension:

=========================================  ==========================================
extension                                  reader
=========================================  ==========================================
``.graphml``                               ``nx.read_graphml``
``.gml``                                   ``nx.read_gml`` (node names from ``label``, else ``id``)
``.json``                                  ``nx.node_link_graph(json.load(...))`` (``links`` or ``edges``)
``.edges``, ``.edgelist``, ``.txt``        ``nx.read_edgelist`` (first two columns; ``#`` comments)
=========================================  ==========================================

The whole body of the spec is the path, so it may hold commas, ``=`` and
``:``.  Node names are kept (:class:`~topocast.topology.core.NameCodec`):
names that are all decimal integers (as edge lists, GraphML and GML store
every name: as text) become ints.  Node order: when every node carries an
integer attribute ``index`` numbering the nodes 0..N-1 (topocast's own
exports write it), that order; otherwise the names sorted (strings in natural
order, ``n2`` before ``n10``); otherwise, when names do not compare, the
file's order.  A repeated edge of a multigraph file, or a repeated line of an
edge list, is a parallel link.  Directed graphs, self-loops and empty graphs
are refused; a disconnected graph builds (``Topology.is_connected`` is then
False).  The canonical spec is ``graph:ABSOLUTE_PATH``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import TopocastError
from ..registry import Family, Param, register_family
from .core import Topology, node_order

#: extension -> (format name, reader key)
FORMATS = {
    ".graphml": ("GraphML", "graphml"),
    ".gml": ("GML", "gml"),
    ".json": ("node-link JSON", "json"),
    ".edges": ("edge list", "edgelist"),
    ".edgelist": ("edge list", "edgelist"),
    ".txt": ("edge list", "edgelist"),
}

# one graph read by ``estimate`` (the memory guard), handed to the builder that follows
_LAST_READ: dict[tuple, Any] = {}


def graph(path: str) -> Topology:
    """The undirected network stored in the file ``path`` (GraphML, GML, node-link JSON or an edge list).

    The extension picks the reader (see the module docstring); node names
    become labels, ``index(name)`` finds a node and the nodes are numbered in
    the order described there.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "net.edges")
    >>> _ = open(path, "w").write("a b\\nb c\\nc a\\nc d\\n")
    >>> t = graph(path)
    >>> t.num_nodes, t.num_edges, t.label(3), t.index("c"), t.is_connected
    (4, 4, ('d',), 2, True)
    >>> t.spec == "graph:" + os.path.realpath(path)
    True
    """
    resolved = _resolve(path)
    g = _LAST_READ.pop(_key(resolved), None)
    if g is None:
        g = read_networkx(resolved)
    order, names = _order_and_names(g)
    try:
        topology = Topology.from_networkx(g, "graph", {"path": str(resolved)}, order=order, names=names,
                                          meta={"spec": f"graph:{resolved}", "format": _format(resolved)[1]})
    except TopocastError as exc:
        raise TopocastError(f"{exc} (file '{resolved}')") from None
    return topology


def read_networkx(path: str | Path):
    """The networkx graph in ``path``, names normalised; a one-line :class:`TopocastError` on any failure."""
    resolved = _resolve(path)
    name, kind = _format(resolved)
    try:
        g = _READERS[kind](resolved)
    except MemoryError:
        raise
    except OSError as exc:
        raise TopocastError(f"graph: cannot read '{resolved}': {exc.strerror or exc}") from None
    except Exception as exc:  # malformed content: every reader raises its own kind
        raise TopocastError(f"graph: cannot parse '{resolved}' as {name}: {_first_line(exc)}") from None
    if g.is_directed():
        raise TopocastError(
            f"graph: directed graphs are not supported; convert with g.to_undirected() (file '{resolved}')")
    return g


def _resolve(path: str | Path) -> Path:
    text = str(path).strip()
    if not text:
        raise TopocastError("graph: give a file path, e.g. graph:network.graphml")
    resolved = Path(text).expanduser().resolve()
    if resolved.suffix.lower() not in FORMATS:
        known = ", ".join(FORMATS)
        raise TopocastError(f"graph: cannot tell the format of '{resolved}' from its extension (use {known})")
    if not resolved.exists():
        raise TopocastError(f"graph: cannot read '{resolved}': no such file")
    if not resolved.is_file():
        raise TopocastError(f"graph: cannot read '{resolved}': not a file")
    return resolved


def _format(path: Path) -> tuple[str, str]:
    return FORMATS[path.suffix.lower()]


def _key(path: Path) -> tuple:
    stat = path.stat()
    return (str(path), stat.st_mtime_ns, stat.st_size)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _read_graphml(path: Path):
    import networkx as nx

    return nx.read_graphml(path)


def _read_gml(path: Path):
    import networkx as nx

    try:
        return nx.read_gml(path, label="label")
    except nx.NetworkXError as exc:
        if "label" not in str(exc):
            raise
        return nx.read_gml(path, label="id")


def _read_json(path: Path):
    import networkx as nx

    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict) or "nodes" not in data:
        raise ValueError("not a node-link object (no 'nodes' list)")
    edges = "links" if "links" in data else "edges"
    data.setdefault(edges, [])
    return nx.node_link_graph(data, edges=edges)


def _read_edgelist(path: Path):
    import networkx as nx

    return nx.read_edgelist(path, create_using=nx.MultiGraph, data=False, encoding="utf-8")


_READERS = {"graphml": _read_graphml, "gml": _read_gml, "json": _read_json, "edgelist": _read_edgelist}


def _order_and_names(g) -> tuple[list, list]:
    """The node order (``index`` attributes, else sorted names) and the names to keep.

    Names that are all decimal integers written as text become ints.
    """
    nodes = list(g.nodes())
    as_ints = bool(nodes) and all(isinstance(n, str) and _is_decimal(n) for n in nodes)
    order = _index_order(g)
    if order is None:
        order = sorted(nodes, key=int) if as_ints else node_order(nodes)
    return order, [int(n) for n in order] if as_ints else order


def _is_decimal(text: str) -> bool:
    digits = text[1:] if text.startswith("-") else text
    return digits.isdigit() and digits.isascii() and str(int(text)) == text


def _index_order(g) -> list | None:
    """The nodes in the order their ``index`` attributes give, when those number the nodes 0..N-1."""
    index = dict(g.nodes(data="index"))
    values = list(index.values())
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    if sorted(values) != list(range(len(values))):
        return None
    return sorted(index, key=index.__getitem__)


def _parse_body(body: str) -> dict[str, Any]:
    path = body.strip()
    if not path:
        raise TopocastError("graph: give a file path, e.g. graph:network.graphml")
    return {"path": path}


def _estimate(path: str) -> tuple[int, int]:
    """``(nodes, directed arcs)`` after reading the file (kept for the builder that follows)."""
    resolved = _resolve(path)
    g = read_networkx(resolved)
    _LAST_READ.clear()
    _LAST_READ[_key(resolved)] = g
    return g.number_of_nodes(), 2 * g.number_of_edges()


register_family(Family(
    "graph", graph,
    (Param("path", "str", doc="file: .graphml, .gml, .json (node-link), .edges/.edgelist/.txt (edge list)"),),
    "your own network from a GraphML, GML, node-link JSON or edge-list file (docs/graph.md)",
    positional="path", parse_body=_parse_body, estimate=_estimate, example="graph:network.graphml"))
