"""Your own network: the family ``graph``, read from a GraphML, GML, node-link JSON or edge-list file.

``graph:PATH`` reads the file in the format its extension names, else (no or
an unknown extension, e.g. a symbolic link named without one) in the format
its content shows (an XML ``<graphml>`` document, a JSON object, a GML
``graph [`` block, else an edge list):

=========================================  ==========================================
extension                                  reader
=========================================  ==========================================
``.graphml``                               ``nx.read_graphml``
``.gml``                                   ``nx.read_gml`` (node names from ``label``, else ``id``)
``.json``                                  ``nx.node_link_graph(json.load(...))`` (``links`` or ``edges``)
``.edges``, ``.edgelist``, ``.txt``        topocast's edge-list reader (first two columns; ``#`` comments)
=========================================  ==========================================

The whole body of the spec is the path, so it may hold commas, ``=`` and
``:``.  Node names are kept (:class:`~topocast.topology.core.NameCodec`):
names that are all decimal integers (as edge lists, GraphML and GML store
every name: as text) become ints.  Node order: when every node carries an
integer attribute ``index`` numbering the nodes 0..N-1 (topocast's own
exports write it), that order; otherwise the names sorted (strings in natural
order, ``n2`` before ``n10``); otherwise, when names do not compare, the
file's order.  A repeated edge of a multigraph file, or a repeated line of an
edge list, is a parallel link.

Malformed files are refused, never repaired: a node declared twice, an edge
naming an undeclared node, more than one graph in a file, a node name with a
NUL or another control character, an edge-list line with one column, text
that is not UTF-8.  Directed graphs, self-loops and networks of fewer than two
nodes are refused; a disconnected graph builds (``Topology.is_connected`` is
then False).  Reading needs memory in proportion to the file (see
:data:`READ_BYTES_PER_FILE_BYTE`); the memory guard checks it before the file
is parsed.  The canonical spec is ``graph:ABSOLUTE_PATH``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..registry import Family, Param, register_family
from .core import NameCodec, Topology, node_order

#: extension -> (format name, reader key)
FORMATS = {
    ".graphml": ("GraphML", "graphml"),
    ".gml": ("GML", "gml"),
    ".json": ("node-link JSON", "json"),
    ".edges": ("edge list", "edgelist"),
    ".edgelist": ("edge list", "edgelist"),
    ".txt": ("edge list", "edgelist"),
}
NAMES = {"graphml": "GraphML", "gml": "GML", "json": "node-link JSON", "edgelist": "edge list"}

#: bytes of memory a reader needs per byte of the file, at its peak (measured: networkx's GraphML, GML and JSON
#: graphs about 30x; topocast's edge-list reader about 12x), before the topology itself is built
READ_BYTES_PER_FILE_BYTE = {"graphml": 40, "gml": 40, "json": 40, "edgelist": 16}

# one graph read by ``estimate`` (the memory guard), handed to the builder that follows
_LAST_READ: dict[tuple, Any] = {}


def graph(path: str) -> Topology:
    r"""Build the network stored in a graph file (GraphML, GML, node-link JSON or an edge list).

    The undirected network stored in the file ``path`` (GraphML, GML, node-link JSON or an edge list).

    The extension (else the content) picks the reader (see the module docstring); node names become
    labels, ``index(name)`` finds a node and the nodes are numbered in the order described there.

    Parameters
    ----------
    path : str
        The file.

    Returns
    -------
    Topology

    Raises
    ------
    TopocastError
        The file is missing, not a regular file, malformed (see the module docstring), directed, has a
        self-loop or fewer than two nodes.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "net.edges")
    >>> _ = open(path, "w").write("a b\nb c\nc a\nc d\n")
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
    meta = {"spec": f"graph:{resolved}", "format": file_format(resolved)}
    try:
        if isinstance(g, EdgeList):
            topology = g.topology({"path": str(resolved)}, meta)
        else:
            order, names = _order_and_names(g)
            topology = Topology.from_networkx(g, "graph", {"path": str(resolved)}, order=order, names=names,
                                              meta=meta)
    except TopocastError as exc:
        raise TopocastError(f"{exc} (file '{resolved}')") from None
    return topology


def read_networkx(path: str | Path):
    """Read a graph file into networkx (or an edge list), checked and with names normalised.

    The graph in ``path``, checked and names normalised: a networkx graph, or an :class:`EdgeList` for an
    edge-list file; a one-line :class:`TopocastError` on any failure.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    networkx.Graph or EdgeList
        The graph; an :class:`EdgeList` for an edge-list file.

    Raises
    ------
    TopocastError
        One line naming the file and what is wrong: unreadable, unparsable, nested too deeply, or a node
        name with a control character.
    """
    resolved = _resolve(path)
    kind = file_format(resolved)
    name = NAMES[kind]
    try:
        g = _READERS[kind](resolved)
    except MemoryError:
        raise
    except TopocastError as exc:
        raise TopocastError(f"graph: cannot parse '{resolved}' as {name}: {exc}") from None
    except OSError as exc:
        raise TopocastError(f"graph: cannot read '{resolved}': {exc.strerror or exc}") from None
    except RecursionError:
        raise TopocastError(f"graph: cannot parse '{resolved}' as {name}: nested too deeply") from None
    except Exception as exc:  # malformed content: every reader raises its own kind
        raise TopocastError(f"graph: cannot parse '{resolved}' as {name}: {_first_line(exc)}") from None
    if not isinstance(g, EdgeList):
        if g.is_directed():
            raise TopocastError(
                f"graph: directed graphs are not supported; convert with g.to_undirected() (file '{resolved}')")
        bad = next((n for n in g.nodes() if _has_control(n)), None)
        if bad is not None:
            raise TopocastError(f"graph: '{resolved}': node name {_shown(bad)} holds a control character")
    return g


def _resolve(path: str | Path) -> Path:
    from ..infra.fileio import check_input_file

    text = str(path).strip()
    if not text:
        raise TopocastError("graph: give a file path, e.g. graph:network.graphml")
    if "\0" in text:
        raise TopocastError("graph: a path cannot contain a NUL character")
    resolved = Path(text).expanduser().resolve()
    if not resolved.exists():
        raise TopocastError(f"graph: cannot read '{resolved}': no such file")
    if resolved.is_dir():
        raise TopocastError(f"graph: cannot read '{resolved}': not a file (a directory)")
    check_input_file(resolved, "graph")
    return resolved


def file_format(path: Path) -> str:
    """Pick the reader of a graph file: its extension's, else the one its content shows.

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    str
        ``graphml``, ``gml``, ``json`` or ``edgelist``.

    Raises
    ------
    TopocastError
        As :func:`sniff`.
    """
    known = FORMATS.get(path.suffix.lower())
    return known[1] if known else sniff(path)


def sniff(path: Path) -> str:
    """Tell the format of a graph file from its first bytes: ``graphml``, ``json``, ``gml`` or ``edgelist``.

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    str
        The format.

    Raises
    ------
    TopocastError
        For XML that is not GraphML.
    """
    with open(path, "rb") as handle:
        head = handle.read(4096)
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if text.startswith(b"<"):
        if b"graphml" in head.lower():
            return "graphml"
        raise TopocastError(f"graph: '{path}' is XML but not GraphML; give a .graphml, .gml, .json or edge-list "
                            "file")
    if text.startswith((b"{", b"[")):
        return "json"
    words = re.findall(rb"[A-Za-z_]+|\[", text[:200])
    if words[:2] == [b"graph", b"["] or (words and words[0] in (b"Creator", b"Version")):
        return "gml"
    return "edgelist"


def _key(path: Path) -> tuple:
    stat = path.stat()
    return (str(path), stat.st_mtime_ns, stat.st_size)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _has_control(name: Any) -> bool:
    if isinstance(name, tuple):
        return any(_has_control(part) for part in name)
    return isinstance(name, str) and any(unicodedata.category(ch) == "Cc" for ch in name)


def _shown(name: Any) -> str:
    text = repr(name)
    return text if len(text) <= 60 else text[:57] + "..."


# -- GraphML ------------------------------------------------------------------------------------------
def _read_graphml(path: Path):
    import networkx as nx

    _check_graphml(path)
    return nx.read_graphml(path)


def _check_graphml(path: Path) -> None:
    """One ``<graph>`` (none nested), every node id declared once, every edge end declared."""
    import xml.etree.ElementTree as ET

    graphs, nodes = 0, set()
    ends: list[str] = []
    for _, element in ET.iterparse(path, events=("end",)):
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "graph":
            graphs += 1
        elif tag == "node":
            name = element.get("id")
            if name is None:
                raise TopocastError("a node has no 'id'")
            if name in nodes:
                raise TopocastError(f"node {_shown(name)} is declared twice")
            nodes.add(name)
        elif tag == "edge":
            ends.extend((element.get("source"), element.get("target")))
        elif tag == "hyperedge":
            raise TopocastError("hyperedges are not supported")
        if tag in ("node", "edge", "data", "key", "default", "desc", "port"):
            element.clear()
    if graphs != 1:
        raise TopocastError(f"it holds {graphs} graphs (nested or side by side); topocast reads one"
                            if graphs else "it holds no <graph> element")
    missing = next((e for e in ends if e not in nodes), None)
    if missing is not None:
        raise TopocastError(f"an edge names node {_shown(missing)}, which is not declared")


# -- GML -------------------------------------------------------------------------------------------------
def _read_gml(path: Path):
    import networkx as nx

    try:
        return nx.read_gml(path, label="label")
    except nx.NetworkXError as exc:
        if "label" not in str(exc):
            raise
        return nx.read_gml(path, label="id")


# -- node-link JSON --------------------------------------------------------------------------------------
def _read_json(path: Path):
    import networkx as nx

    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if isinstance(data, list):
        raise TopocastError("it holds a list (several graphs?); topocast reads one node-link object")
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise TopocastError("not a node-link object (no 'nodes' list)")
    if "links" in data and "edges" in data:
        raise TopocastError("it has both 'links' and 'edges'; give one list of edges")
    edges = "links" if "links" in data else "edges"
    data.setdefault(edges, [])
    _check_node_link(data["nodes"], data[edges], edges)
    return nx.node_link_graph(data, edges=edges)


def _check_node_link(nodes: list, edges: Any, name: str) -> None:
    """Every node an object with a distinct, hashable ``id``; every edge's ends among them."""
    ids: set = set()
    for item in nodes:
        if not isinstance(item, dict) or "id" not in item:
            raise TopocastError("every entry of 'nodes' must be an object with an 'id'")
        key = _hashable(item["id"])
        if key in ids:
            raise TopocastError(f"node {_shown(item['id'])} is declared twice")
        ids.add(key)
    if not isinstance(edges, list):
        raise TopocastError(f"'{name}' must be a list")
    for item in edges:
        if not isinstance(item, dict) or "source" not in item or "target" not in item:
            raise TopocastError(f"every entry of '{name}' must be an object with 'source' and 'target'")
        for end in (item["source"], item["target"]):
            if _hashable(end) not in ids:
                raise TopocastError(f"an edge names node {_shown(end)}, which is not declared")


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict) or isinstance(value, float) and value != value:
        raise TopocastError(f"a node id must be a string, a number or a list, got {_shown(value)}")
    return value


# -- edge list -------------------------------------------------------------------------------------------
class EdgeList:
    """An edge-list file read into arrays: node names (first-appearance order) and each line's two ends."""

    def __init__(self, names: list, u: np.ndarray, v: np.ndarray):
        self.names, self.u, self.v = names, u, v

    def topology(self, params: dict, meta: dict) -> Topology:
        """Build the network, nodes numbered by their names (decimal names as ints, in numeric order; else natural).

        Parameters
        ----------
        params : dict
            Parameters recorded on the result.
        meta : dict
            Metadata recorded on the result.

        Returns
        -------
        Topology
            The network.

        Raises
        ------
        TopocastError
            For a self-loop.
        """
        as_ints = all(_is_decimal(n) for n in self.names)
        names = [int(n) for n in self.names] if as_ints else self.names
        order = sorted(range(len(names)), key=names.__getitem__) if as_ints else _natural(names)
        rank = np.empty(len(order), np.int64)
        rank[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
        u, v = rank[self.u], rank[self.v]
        if np.any(u == v):
            i = int(np.flatnonzero(u == v)[0])
            raise TopocastError(f"graph: node {_shown(names[order[u[i]]])} has a self-loop; a link must join two "
                                "different nodes")
        return Topology.from_arcs("graph", params, len(order), np.concatenate([u, v]), np.concatenate([v, u]),
                                  codec=NameCodec([names[i] for i in order]), meta=meta)


def _natural(names: list) -> list[int]:
    ordered = node_order(names)
    where = {name: i for i, name in enumerate(names)}
    return [where[name] for name in ordered]


def _read_edgelist(path: Path) -> EdgeList:
    r"""Read an edge-list file.

    Lines ``NAME NAME [more columns, ignored]`` (``\n``, ``\r\n`` or ``\r`` ends a line); ``#`` starts a
    comment; blank lines are skipped.
    """
    index: dict[str, int] = {}
    ends: list[int] = []
    number = 0
    try:
        with open(path, encoding="utf-8", newline=None) as handle:
            for number, line in enumerate(handle, 1):
                words = line.split("#", 1)[0].split()
                if not words:
                    continue
                if len(words) == 1:
                    raise TopocastError(f"line {number} has one column ({_shown(words[0])}); an edge is 'NODE NODE'")
                for word in words[:2]:
                    if _has_control(word):
                        raise TopocastError(f"line {number}: node name {_shown(word)} holds a control character")
                    ends.append(index.setdefault(word, len(index)))
    except UnicodeDecodeError:
        raise TopocastError(f"line {number + 1} is not UTF-8 text") from None
    if not ends:
        raise TopocastError("it holds no edge")
    pairs = np.asarray(ends, dtype=np.int64)
    return EdgeList(list(index), pairs[0::2], pairs[1::2])


_READERS = {"graphml": _read_graphml, "gml": _read_gml, "json": _read_json, "edgelist": _read_edgelist}


def _order_and_names(g) -> tuple[list, list]:
    """Choose the node order (``index`` attributes, else sorted names) and the names to keep.

    Names that are all decimal integers written as text become ints.
    """
    nodes = list(g.nodes())
    as_ints = bool(nodes) and all(isinstance(n, str) and _is_decimal(n) for n in nodes)
    order = _index_order(g)
    if order is None:
        order = sorted(nodes, key=int) if as_ints else node_order(nodes)
    return order, [int(n) for n in order] if as_ints else order


def _is_decimal(text: Any) -> bool:
    if not isinstance(text, str):
        return False
    digits = text[1:] if text.startswith("-") else text
    return digits.isdigit() and digits.isascii() and str(int(text)) == text


def _index_order(g) -> list | None:
    """Order the nodes by their ``index`` attributes, when those number the nodes 0..N-1."""
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


def _read_bytes(path: str) -> tuple[float, str]:
    """Memory needed to read the file before its size is known, and what for (the guard checks it first)."""
    from ..infra.memory import human_bytes

    resolved = _resolve(path)
    kind = file_format(resolved)
    size = resolved.stat().st_size
    return size * READ_BYTES_PER_FILE_BYTE[kind], f"reading '{resolved}' ({human_bytes(size)} of {NAMES[kind]})"


def _estimate(path: str) -> tuple[int, int]:
    """``(nodes, directed arcs)`` after reading the file (kept for the builder that follows)."""
    resolved = _resolve(path)
    g = read_networkx(resolved)
    _LAST_READ.clear()
    _LAST_READ[_key(resolved)] = g
    if isinstance(g, EdgeList):
        return len(g.names), 2 * len(g.u)
    return g.number_of_nodes(), 2 * g.number_of_edges()


register_family(Family(
    "graph", graph,
    (Param("path", "str", doc="file: .graphml, .gml, .json (node-link), .edges/.edgelist/.txt (edge list)"),),
    "your own network from a GraphML, GML, node-link JSON or edge-list file (docs/graph.md)",
    positional="path", parse_body=_parse_body, estimate=_estimate, read_bytes=_read_bytes,
    example="graph:network.graphml"))
