"""Write a topology as GraphML, GML, node-link JSON, an edge list or a BookSim2 ``anynet`` file.

Node names are the node labels as text (``Codec.format``: ``"0,1"`` for a
torus node, the original name for a ``graph:`` network), and every node of a
GraphML, GML or JSON export carries an integer attribute ``index`` (its
topocast number), so ``graph:FILE`` reads the same nodes back in the same
order; edges carry ``label`` (the port name of their lower-to-higher arc) and
a parallel link is a repeated edge (a multigraph).  An edge list repeats the
line of a parallel link; it cannot hold isolated nodes, and whitespace inside
a name is removed (whitespace separates its columns).

BookSim2 ``anynet`` (``src/networks/anynet.cpp``): one line per router,
``router R node R router R1 router R2 ...``: router ``R`` is node ``R`` and
has one terminal, node ``R``.  BookSim keeps a router's neighbours in a map,
so a parallel link cannot be expressed: it is written once (one channel
each way).  The file has no comments (BookSim's parser has none); BookSim
needs the routers numbered 0..N-1 and a connected network.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import TopocastError
from ..fileio import atomic_write
from .core import Topology

FORMATS = ("graphml", "gml", "json", "edgelist", "booksim-anynet")

#: file extension -> format, for :func:`format_for`
EXTENSIONS = {".graphml": "graphml", ".gml": "gml", ".json": "json", ".edges": "edgelist",
              ".edgelist": "edgelist", ".txt": "edgelist", ".anynet": "booksim-anynet"}


def export(topology: Topology, format: str | None, path: str | Path) -> Path:
    """Write ``topology`` to ``path`` in ``format`` (None: from the extension), atomically; returns the path.

    >>> import os, tempfile
    >>> import topocast as tc
    >>> out = export(tc.build("ring:4"), "booksim-anynet", os.path.join(tempfile.mkdtemp(), "ring.anynet"))
    >>> print(out.read_text(), end="")
    router 0 node 0 router 1 router 3
    router 1 node 1 router 0 router 2
    router 2 node 2 router 1 router 3
    router 3 node 3 router 0 router 2
    """
    fmt = check_format(format, path)
    check_output(path)
    text = export_text(topology, fmt)
    try:
        return atomic_write(path, text)
    except OSError as exc:
        raise TopocastError(f"export: cannot write '{path}': {exc.strerror or exc}") from None


def check_output(path: str | Path) -> Path:
    """``path`` as a file to write: a :class:`TopocastError` if it is empty or names a directory."""
    text = str(path)
    if not text.strip() or text.endswith(("/", "\\")) or Path(text).expanduser().is_dir():
        raise TopocastError(f"export: '{path}' is not a file name; give one such as net.graphml")
    return Path(text).expanduser()


def check_format(format: str | None, path: str | Path | None = None) -> str:
    """``format`` checked against :data:`FORMATS`, or the format ``path``'s extension names."""
    if format is None:
        return format_for(path)
    fmt = str(format).strip().lower()
    if fmt not in FORMATS:
        raise TopocastError(f"export: format must be one of {', '.join(FORMATS)}, got '{format}'")
    return fmt


def format_for(path: str | Path | None) -> str:
    """The export format a file name's extension names (``.graphml`` -> ``graphml``, ``.anynet`` ...)."""
    suffix = Path(str(path)).suffix.lower() if path is not None else ""
    if suffix not in EXTENSIONS:
        known = ", ".join(EXTENSIONS)
        raise TopocastError(f"export: cannot tell the format from '{path}' (give --format, or use {known})")
    return EXTENSIONS[suffix]


def export_text(topology: Topology, format: str) -> str:
    """The file contents of ``topology`` in ``format``."""
    fmt = check_format(format)
    return _WRITERS[fmt](topology)


def node_names(topology: Topology) -> list[str]:
    """The text name of every node (its label as text); a :class:`TopocastError` if two coincide."""
    names = [topology.codec.format(i) for i in range(topology.num_nodes)]
    if len(set(names)) != len(names):
        raise TopocastError(f"export: two nodes of {topology.spec} have the same name as text")
    return names


def named_graph(topology: Topology):
    """A networkx Graph (MultiGraph with parallel links) with text names, ``index`` and edge ``label``."""
    import networkx as nx

    names = node_names(topology)
    graph = nx.MultiGraph() if topology.has_parallel_links else nx.Graph()
    graph.graph["spec"] = topology.spec
    graph.add_nodes_from((name, {"index": i}) for i, name in enumerate(names))
    src, dst, labels = _links(topology)
    label_names = np.asarray(topology.label_names, dtype=object)[labels]
    graph.add_edges_from((names[u], names[v], {"label": str(lab)})
                         for u, v, lab in zip(src.tolist(), dst.tolist(), label_names, strict=True))
    return graph


def _links(topology: Topology) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each link once (its lower-to-higher arc, parallel links repeated): sources, targets, arc labels."""
    keep = topology.arc_sources < topology.indices
    return topology.arc_sources[keep], topology.indices[keep], topology.arc_labels[keep]


def _graphml(topology: Topology) -> str:
    import networkx as nx

    return "\n".join(nx.generate_graphml(named_graph(topology))) + "\n"


def _gml(topology: Topology) -> str:
    import networkx as nx

    return "\n".join(nx.generate_gml(named_graph(topology))) + "\n"


def _json(topology: Topology) -> str:
    import networkx as nx

    return json.dumps(nx.node_link_data(named_graph(topology), edges="links"), indent=1) + "\n"


def _edgelist(topology: Topology) -> str:
    names = ["".join(name.split()) for name in node_names(topology)]
    if len(set(names)) != len(names):
        raise TopocastError("export: node names collide once whitespace is removed; use graphml, gml or json")
    bad = next((n for n in names if "#" in n or not n), None)
    if bad is not None:
        raise TopocastError(f"export: node name '{bad}' cannot be written in an edge list; use graphml, gml or json")
    isolated = np.flatnonzero(topology.port_degree == 0)
    if len(isolated):
        raise TopocastError(f"export: an edge list cannot hold the isolated node '{names[isolated[0]]}'; "
                            "use graphml, gml or json")
    src, dst, _ = _links(topology)
    head = f"# {topology.spec}: {topology.num_nodes} nodes, {topology.num_edges} links\n"
    return head + "".join(f"{names[u]} {names[v]}\n" for u, v in zip(src.tolist(), dst.tolist(), strict=True))


def _anynet(topology: Topology) -> str:
    if not topology.is_connected:
        raise TopocastError(f"export: booksim-anynet needs a connected network; {topology.spec} is not connected")
    lines = []
    for r in range(topology.num_nodes):
        neighbours = np.unique(topology.neighbors(r)).tolist()
        lines.append(f"router {r} node {r}" + "".join(f" router {n}" for n in neighbours) + "\n")
    return "".join(lines)


_WRITERS = {"graphml": _graphml, "gml": _gml, "json": _json, "edgelist": _edgelist, "booksim-anynet": _anynet}
