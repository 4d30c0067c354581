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
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import quoteattr

import numpy as np

from ..errors import TopocastError
from .core import Topology

FORMATS = ("graphml", "gml", "json", "edgelist", "booksim-anynet")

#: file extension -> format, for :func:`format_for`
EXTENSIONS = {".graphml": "graphml", ".gml": "gml", ".json": "json", ".edges": "edgelist",
              ".edgelist": "edgelist", ".txt": "edgelist", ".anynet": "booksim-anynet"}


#: nodes or links per chunk of text handed to the file
CHUNK = 1 << 16


def export(topology: Topology, format: str | None, path: str | Path) -> Path:
    """Write a network to a file in an interchange format, atomically.

    Write ``topology`` to ``path`` in ``format`` (None: from the extension), atomically; returns the path.

    The text is streamed to the file in chunks (memory stays in proportion to a chunk, not to the network),
    through :func:`topocast.infra.fileio.atomic_writer`: an error or an interrupt part way leaves nothing at
    ``path``.

    Parameters
    ----------
    topology : Topology
        The network.
    format : str or None
        One of :data:`FORMATS`; None takes it from ``path``'s extension.
    path : str or Path
        A regular file or a new name in an existing directory.

    Returns
    -------
    Path

    Raises
    ------
    TopocastError
        An unknown format, a destination that is not a regular file, a network the format cannot hold.

    Examples
    --------
    >>> import os, tempfile
    >>> import topocast as tc
    >>> out = export(tc.build("ring:4"), "booksim-anynet", os.path.join(tempfile.mkdtemp(), "ring.anynet"))
    >>> print(out.read_text(), end="")
    router 0 node 0 router 1 router 3
    router 1 node 1 router 0 router 2
    router 2 node 2 router 1 router 3
    router 3 node 3 router 0 router 2
    """
    from ..infra.fileio import atomic_writer

    if not isinstance(topology, Topology):
        raise TopocastError(f"topology: must be a Topology (tc.build(spec)), got {type(topology).__name__}")
    fmt = check_format(format, path)
    check_output(path)
    chunks = _WRITERS[fmt](topology)
    first = next(chunks, "")  # the writer's checks run before any file is made
    try:
        with atomic_writer(path, "OUT") as handle:
            handle.write(first.encode("utf-8"))
            for chunk in chunks:
                handle.write(chunk.encode("utf-8"))
    except OSError as exc:
        raise TopocastError(f"export: cannot write '{path}': {exc.strerror or exc}") from None
    return Path(path)


def check_output(path: str | Path) -> Path:
    """Check a path as a file to write: a regular file or a new name in an existing, writable directory.

    See :func:`topocast.infra.fileio.check_output_file`.

    Parameters
    ----------
    path : str or Path
        The destination.

    Returns
    -------
    Path
        The path.

    Raises
    ------
    TopocastError
        Naming ``OUT`` and what is wrong.
    """
    from ..infra.fileio import check_output_file

    return check_output_file(path, "OUT")


def check_format(format: str | None, path: str | Path | None = None) -> str:
    """Check an export format against :data:`FORMATS`, or take it from the file's extension.

    Parameters
    ----------
    format : str or None
        The format; None: from ``path``.
    path : str or Path, optional
        The destination.

    Returns
    -------
    str
        The format.

    Raises
    ------
    TopocastError
        An unknown format, or an extension that names none.
    """
    if format is None:
        return format_for(path)
    fmt = str(format).strip().lower()
    if fmt not in FORMATS:
        raise TopocastError(f"export: format must be one of {', '.join(FORMATS)}, got '{format}'")
    return fmt


def format_for(path: str | Path | None) -> str:
    """Give the export format a file name's extension names (``.graphml`` -> ``graphml``, ``.anynet`` ...).

    Parameters
    ----------
    path : str or Path or None
        The file name.

    Returns
    -------
    str
        The format.

    Raises
    ------
    TopocastError
        When the extension names no format.
    """
    suffix = Path(str(path)).suffix.lower() if path is not None else ""
    if suffix not in EXTENSIONS:
        known = ", ".join(EXTENSIONS)
        raise TopocastError(f"export: cannot tell the format from '{path}' (give --format, or use {known})")
    return EXTENSIONS[suffix]


def export_text(topology: Topology, format: str) -> str:
    """Give the file contents of a network in a format (the whole text in memory: for small networks).

    Parameters
    ----------
    topology : Topology
        The network.
    format : str
        One of :data:`FORMATS`.

    Returns
    -------
    str
        The text.

    Raises
    ------
    TopocastError
        An unknown format, or a network the format cannot hold.
    """
    fmt = check_format(format)
    return "".join(_WRITERS[fmt](topology))


def node_names(topology: Topology) -> list[str]:
    """Give the text name of every node (its label as text).

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    list of str
        One name per node.

    Raises
    ------
    TopocastError
        If two names coincide or a name holds a control character.
    """
    names = [topology.codec.format(i) for i in range(topology.num_nodes)]
    if len(set(names)) != len(names):
        raise TopocastError(f"export: two nodes of {topology.spec} have the same name as text")
    bad = next((n for n in names if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in n)), None)
    if bad is not None:
        raise TopocastError(f"export: node name {bad!r} holds a control character, which no format keeps")
    return names


def _links(topology: Topology) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each link once (its lower-to-higher arc, parallel links repeated): sources, targets, arc labels."""
    keep = topology.arc_sources < topology.indices
    return topology.arc_sources[keep], topology.indices[keep], topology.arc_labels[keep]


def _link_chunks(topology: Topology) -> Iterator[tuple[list[int], list[int], list[str]]]:
    """Yield the links of :func:`_links` in chunks of :data:`CHUNK`: sources, targets and label names."""
    src, dst, labels = _links(topology)
    label_names = [str(name) for name in topology.label_names]
    for lo in range(0, len(src), CHUNK):
        hi = lo + CHUNK
        yield src[lo:hi].tolist(), dst[lo:hi].tolist(), [label_names[k] for k in labels[lo:hi].tolist()]


# -- GraphML ---------------------------------------------------------------------------------------------
def _graphml(topology: Topology) -> Iterator[str]:
    names = [quoteattr(n) for n in node_names(topology)]
    yield ('<?xml version=\'1.0\' encoding=\'utf-8\'?>\n'
           '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
           'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
           'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
           'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
           '  <key id="d0" for="node" attr.name="index" attr.type="long" />\n'
           '  <key id="d1" for="edge" attr.name="label" attr.type="string" />\n'
           '  <key id="d2" for="graph" attr.name="spec" attr.type="string" />\n'
           '  <graph edgedefault="undirected">\n'
           f'    <data key="d2">{xml_escape(topology.spec)}</data>\n')
    for lo in range(0, len(names), CHUNK):
        yield "".join(f'    <node id={names[i]}>\n      <data key="d0">{i}</data>\n    </node>\n'
                      for i in range(lo, min(lo + CHUNK, len(names))))
    for src, dst, labels in _link_chunks(topology):
        yield "".join(f'    <edge source={names[u]} target={names[v]}>\n      <data key="d1">{xml_escape(lab)}</data>'
                      "\n    </edge>\n" for u, v, lab in zip(src, dst, labels, strict=True))
    yield "  </graph>\n</graphml>\n"


# -- GML -------------------------------------------------------------------------------------------------
_GML_UNSAFE = re.compile(r'[^ -~]|[&"]')


def gml_string(text: str) -> str:
    """Quote text as a GML string.

    ``&``, ``"`` and every character outside printable ASCII are written as a character reference
    (``&#233;``), which GML readers (networkx's among them) turn back.

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    str
        The quoted string.
    """
    return '"' + _GML_UNSAFE.sub(lambda m: f"&#{ord(m.group(0))};", text) + '"'


def _gml(topology: Topology) -> Iterator[str]:
    names = [gml_string(n) for n in node_names(topology)]
    yield "graph [\n" + ("  multigraph 1\n" if topology.has_parallel_links else "") + \
        f"  spec {gml_string(topology.spec)}\n"
    for lo in range(0, len(names), CHUNK):
        yield "".join(f"  node [\n    id {i}\n    label {names[i]}\n    index {i}\n  ]\n"
                      for i in range(lo, min(lo + CHUNK, len(names))))
    for src, dst, labels in _link_chunks(topology):
        yield "".join(f"  edge [\n    source {u}\n    target {v}\n    label {gml_string(lab)}\n  ]\n"
                      for u, v, lab in zip(src, dst, labels, strict=True))
    yield "]\n"


# -- node-link JSON --------------------------------------------------------------------------------------
def _json(topology: Topology) -> Iterator[str]:
    names = [json.dumps(n) for n in node_names(topology)]
    multi = "true" if topology.has_parallel_links else "false"
    yield (f'{{\n "directed": false,\n "multigraph": {multi},\n "graph": {{\n  "spec": {json.dumps(topology.spec)}'
           '\n },\n "nodes": [')
    for lo in range(0, len(names), CHUNK):
        yield ("," if lo else "") + ",".join(f'\n  {{\n   "index": {i},\n   "id": {names[i]}\n  }}'
                                             for i in range(lo, min(lo + CHUNK, len(names))))
    yield "\n ],\n \"links\": ["
    first = True
    for src, dst, labels in _link_chunks(topology):
        yield ("" if first else ",") + ",".join(
            f'\n  {{\n   "label": {json.dumps(lab)},\n   "source": {names[u]},\n   "target": {names[v]}\n  }}'
            for u, v, lab in zip(src, dst, labels, strict=True))
        first = False
    yield "\n ]\n}\n"


# -- edge list -------------------------------------------------------------------------------------------
def _edgelist(topology: Topology) -> Iterator[str]:
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
    yield f"# {topology.spec}: {topology.num_nodes} nodes, {topology.num_edges} links\n"
    for src, dst, _ in _link_chunks(topology):
        yield "".join(f"{names[u]} {names[v]}\n" for u, v in zip(src, dst, strict=True))


# -- BookSim2 anynet -------------------------------------------------------------------------------------
def _anynet(topology: Topology) -> Iterator[str]:
    if not topology.is_connected:
        raise TopocastError(f"export: booksim-anynet needs a connected network; {topology.spec} is not connected")
    yield ""
    indptr, indices = topology.indptr, topology.indices
    for lo in range(0, topology.num_nodes, CHUNK):
        lines = []
        for r in range(lo, min(lo + CHUNK, topology.num_nodes)):
            neighbours = sorted(set(indices[indptr[r]:indptr[r + 1]].tolist()))
            lines.append(f"router {r} node {r}" + "".join(f" router {n}" for n in neighbours) + "\n")
        yield "".join(lines)


_WRITERS = {"graphml": _graphml, "gml": _gml, "json": _json, "edgelist": _edgelist, "booksim-anynet": _anynet}
