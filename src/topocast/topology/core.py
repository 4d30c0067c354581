"""The one immutable :class:`Topology` every family builds, and its label codecs.

Nodes are ``0..N-1``.  Links are stored as directed arcs in CSR form (each
undirected link appears once in each direction), rows sorted by neighbour.
Parallel links are allowed: a ring of two nodes is a double link, so each node
keeps two ports, as the hierarchical dual-net paper counts them.  Every arc
carries a small integer label indexing ``label_names`` (a port or direction
name such as ``+d0``, ``+rho``, ``global``, ``up``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..infra.validate import integer

_NO_NODES = np.zeros(0, dtype=np.int64)
_NO_NODES.setflags(write=False)


class Codec:
    """Translate between node indices and a family's own coordinates."""

    #: names of the coordinates, e.g. ``("x", "y")`` or ``("C", "U", "SN", "N")``
    fields: tuple[str, ...] = ("index",)

    def decode(self, index: int) -> tuple:
        """Give the coordinates of a node (the plain codec: its index).

        Parameters
        ----------
        index : int
            Node index.

        Returns
        -------
        tuple
            The coordinates.
        """
        return (int(index),)

    def encode(self, label: Sequence) -> int:
        """Give the node index of coordinates.

        Parameters
        ----------
        label : sequence
            The coordinates (the plain codec: one index).

        Returns
        -------
        int
            Node index.

        Raises
        ------
        TopocastError
            If the coordinates are not integers (subclasses: out of range too).
        """
        return integer(label[0], "index", owner="node")

    def format(self, index: int) -> str:
        """Write the coordinates of a node as text, ``"3,4"``.

        Parameters
        ----------
        index : int
            Node index.

        Returns
        -------
        str
            The coordinates, comma-separated.
        """
        return ",".join(str(v) for v in self.decode(index))

    def parse(self, text: str) -> int:
        """Find a node from ``"3,4"`` style text (or a bare index).

        Parameters
        ----------
        text : str
            Comma-separated coordinates.

        Returns
        -------
        int
            Node index.

        Raises
        ------
        TopocastError
            If the text is not a list of integers or names no node.
        """
        try:
            parts = tuple(int(p) for p in text.replace("(", "").replace(")", "").split(","))
        except ValueError:
            raise TopocastError(f"node: '{text}' is not a list of integers") from None
        return self.encode(parts)


class MixedRadixCodec(Codec):
    """Mixed-radix coordinates, the first coordinate most significant.

    ``index = sum(c[i] * stride[i])`` with ``stride[-1] == 1``.
    """

    def __init__(self, radices: Sequence[int], fields: Sequence[str] | None = None):
        self.radices = tuple(int(r) for r in radices)
        self.fields = tuple(fields) if fields is not None else tuple(f"x{i}" for i in range(len(radices)))
        strides = [1] * len(self.radices)
        for i in range(len(self.radices) - 2, -1, -1):
            strides[i] = strides[i + 1] * self.radices[i + 1]
        self.strides = tuple(strides)

    def decode(self, index: int) -> tuple:
        """Give the mixed-radix coordinates of a node.

        Parameters
        ----------
        index : int
            Node index.

        Returns
        -------
        tuple of int
            One coordinate per dimension, the first most significant.
        """
        return tuple(int(index) // s % r for s, r in zip(self.strides, self.radices, strict=False))

    def decode_array(self, index: np.ndarray) -> np.ndarray:
        """Give the coordinates of many nodes.

        Parameters
        ----------
        index : numpy.ndarray
            Node indices.

        Returns
        -------
        numpy.ndarray
            Shape ``(len(index), dims)``.
        """
        index = np.asarray(index, dtype=np.int64)
        return np.stack([(index // s) % r for s, r in zip(self.strides, self.radices, strict=False)], axis=-1)

    def encode(self, label: Sequence) -> int:
        """Give the node index of mixed-radix coordinates.

        Parameters
        ----------
        label : sequence of int
            One coordinate per dimension.

        Returns
        -------
        int
            Node index.

        Raises
        ------
        TopocastError
            A wrong number of coordinates, or one that is not an integer in ``0..radix-1``.
        """
        if len(label) != len(self.radices):
            raise TopocastError(f"node: expected {len(self.radices)} coordinates, got {len(label)}")
        coords = [integer(value, name, owner="node") for value, name in zip(label, self.fields, strict=True)]
        for value, r, name in zip(coords, self.radices, self.fields, strict=True):
            if not 0 <= value < r:
                raise TopocastError(f"node: coordinate {name}={value} must be in 0..{r - 1}")
        return sum(v * s for v, s in zip(coords, self.strides, strict=True))

    def encode_array(self, coords: np.ndarray) -> np.ndarray:
        """Give the node indices of many coordinate rows (unchecked).

        Parameters
        ----------
        coords : numpy.ndarray
            Shape ``(nodes, dims)``.

        Returns
        -------
        numpy.ndarray
            Node indices.
        """
        coords = np.asarray(coords, dtype=np.int64)
        return coords @ np.asarray(self.strides, dtype=np.int64)


class Topology:
    """An immutable network: CSR adjacency, arc labels, a label codec, metadata.

    Build one with a family builder (``topocast.build("torus:8x8")``) or
    :meth:`from_arcs`.  Arrays are read-only.

    Parameters
    ----------
    family : str
        Family name (``torus``, ``graph``, ...).
    params : mapping
        The family's parameters.
    indptr, indices : numpy.ndarray
        CSR adjacency: the heads of node ``u``'s arcs are ``indices[indptr[u]:indptr[u + 1]]``.
    arc_labels : numpy.ndarray
        Index into ``label_names`` of every arc.
    label_names : sequence of str
        Arc label names.
    codec : Codec, optional
        Translates node indices to the family's coordinates (default: the index itself).
    vertex_transitive : bool, default False
        Every node looks the same (one BFS gives all distances).
    meta : mapping, optional
        Metadata: the canonical spec, terminals, faults, ...

    Raises
    ------
    TopocastError
        If the CSR arrays are inconsistent.
    """

    __slots__ = (
        "family", "params", "indptr", "indices", "arc_labels", "label_names",
        "codec", "vertex_transitive", "meta", "__dict__",
    )

    def __init__(
        self,
        family: str,
        params: Mapping[str, Any],
        indptr: np.ndarray,
        indices: np.ndarray,
        arc_labels: np.ndarray,
        label_names: Sequence[str],
        codec: Codec | None = None,
        vertex_transitive: bool = False,
        meta: Mapping[str, Any] | None = None,
    ):
        self.family = family
        self.params = MappingProxyType(dict(params))
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.indices = np.asarray(indices, dtype=np.int64)
        self.arc_labels = np.asarray(arc_labels, dtype=np.int16)
        self.label_names = tuple(label_names)
        self.codec = codec if codec is not None else Codec()
        self.vertex_transitive = bool(vertex_transitive)
        self.meta = MappingProxyType(dict(meta or {}))
        for arr in (self.indptr, self.indices, self.arc_labels):
            arr.setflags(write=False)
        if len(self.indptr) < 2 or self.indptr[-1] != len(self.indices) or len(self.arc_labels) != len(self.indices):
            raise TopocastError(f"{family}: inconsistent CSR arrays (need indptr[-1] == len(indices) == len(labels))")

    # -- construction -----------------------------------------------------
    @classmethod
    def from_arcs(
        cls,
        family: str,
        params: Mapping[str, Any],
        num_nodes: int,
        src: np.ndarray,
        dst: np.ndarray,
        labels: np.ndarray | None = None,
        label_names: Sequence[str] = ("link",),
        **kwargs: Any,
    ) -> Topology:
        """Build a topology from directed arcs (give both directions of every link).

        Parameters
        ----------
        family : str
            Family name.
        params : mapping
            The family's parameters.
        num_nodes : int
            Number of nodes, >= 0.
        src, dst : numpy.ndarray
            Tail and head of every arc.
        labels : numpy.ndarray, optional
            Index into ``label_names`` of every arc (default 0).
        label_names : sequence of str, default ("link",)
            Arc label names.
        **kwargs
            ``codec``, ``vertex_transitive``, ``meta`` as the constructor takes them.

        Returns
        -------
        Topology
            Rows sorted by (neighbour, label).

        Raises
        ------
        TopocastError
            A bad node count or inconsistent arrays.
        """
        num_nodes = integer(num_nodes, "num_nodes", owner=family, minimum=0)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        labels = np.zeros(len(src), dtype=np.int16) if labels is None else np.asarray(labels, dtype=np.int16)
        order = np.lexsort((labels, dst, src))
        src, dst, labels = src[order], dst[order], labels[order]
        indptr = np.zeros(num_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=num_nodes), out=indptr[1:])
        return cls(family, params, indptr, dst, labels, label_names, **kwargs)

    @classmethod
    def from_networkx(
        cls,
        graph,
        family: str = "graph",
        params: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        order: Sequence | None = None,
        names: Sequence | None = None,
    ) -> Topology:
        """Build a topology from an undirected networkx ``Graph`` or ``MultiGraph``.

        Node order: ``order`` if given, else the node names sorted (:func:`node_order`: strings in natural
        order, so ``n2 < n10``), else, when the names do not compare (ints mixed with strings), networkx's
        insertion order.  The names become the label codec (:class:`NameCodec`): ``label(i)`` is ``(name,)``
        (a tuple name comes back as the tuple itself) and ``index(name)`` finds the node, also from text.
        A MultiGraph's parallel edges become parallel links.

        Parameters
        ----------
        graph : networkx.Graph or networkx.MultiGraph
            The graph, not empty, without self-loops.
        family : str, default "graph"
            Family name of the result.
        params : mapping, optional
            Parameters recorded on the result.
        meta : mapping, optional
            Extra metadata.
        order : sequence, optional
            Every node of the graph exactly once, in the order of the node indices.
        names : sequence, optional
            One name per node of the order, replacing the names kept.

        Returns
        -------
        Topology
            The network.

        Raises
        ------
        TopocastError
            A directed, empty or non-networkx graph, a self-loop, or an ``order`` or ``names`` that does not fit.

        Examples
        --------
        >>> import networkx as nx
        >>> t = Topology.from_networkx(nx.Graph([("b", "a"), ("a", "c")]))
        >>> t.num_nodes, t.label(0), t.index("c"), t.spec
        (3, ('a',), 2, 'graph:<networkx graph>')
        """
        if not all(hasattr(graph, name) for name in ("is_directed", "nodes", "edges", "number_of_nodes")):
            raise TopocastError(f"{family}: graph must be a networkx Graph or MultiGraph, got {type(graph).__name__}")
        if graph.is_directed():
            raise TopocastError(f"{family}: directed graphs are not supported; convert with g.to_undirected()")
        nodes = node_order(graph.nodes()) if order is None else list(order)
        if not nodes:
            raise TopocastError(f"{family}: the graph is empty (no nodes)")
        if len(nodes) != graph.number_of_nodes() or set(nodes) != set(graph.nodes()):
            raise TopocastError(f"{family}: 'order' must list every node of the graph exactly once")
        u, v = _networkx_links(graph, {name: i for i, name in enumerate(nodes)}, nodes, family)
        if names is not None and len(names) != len(nodes):
            raise TopocastError(f"{family}: 'names' must give one name per node")
        meta = dict(meta) if meta is not None else {"spec": f"{family}:<networkx graph>"}
        return cls.from_arcs(family, params or {}, len(nodes), np.concatenate([u, v]), np.concatenate([v, u]),
                             codec=NameCodec(nodes if names is None else names), meta=meta)

    # -- sizes and degrees ------------------------------------------------
    @property
    def num_nodes(self) -> int:
        """Number of nodes."""
        return len(self.indptr) - 1

    @property
    def num_arcs(self) -> int:
        """Directed arcs = 2 x links (parallel links counted each)."""
        return len(self.indices)

    @property
    def num_edges(self) -> int:
        """Undirected links, parallel links counted each."""
        return len(self.indices) // 2

    @cached_property
    def port_degree(self) -> np.ndarray:
        """Ports per node (a double link counts twice)."""
        deg = np.diff(self.indptr)
        deg.setflags(write=False)
        return deg

    @cached_property
    def distinct_degree(self) -> np.ndarray:
        """Distinct neighbours per node."""
        if self.num_arcs == 0:
            return np.zeros(self.num_nodes, dtype=np.int64)
        src = np.repeat(np.arange(self.num_nodes), self.port_degree)
        new = np.ones(self.num_arcs, dtype=bool)
        new[1:] = (self.indices[1:] != self.indices[:-1]) | (src[1:] != src[:-1])
        deg = np.bincount(src[new], minlength=self.num_nodes)
        deg.setflags(write=False)
        return deg

    @property
    def has_parallel_links(self) -> bool:
        """Whether some pair of nodes is joined by more than one link."""
        return bool(np.any(self.distinct_degree != self.port_degree))

    @cached_property
    def is_connected(self) -> bool:
        """Whether every node reaches every other (one BFS; see :func:`topocast.topology.metrics.is_connected`)."""
        from .metrics import is_connected

        return is_connected(self)

    # -- faults (:mod:`topocast.faults`) ------------------------------------
    @property
    def faults(self) -> str | None:
        """The canonical fault spec that degraded this network (:func:`topocast.faults.degrade`), or None."""
        return self.meta.get("faults")

    @property
    def failed_nodes(self) -> np.ndarray:
        """Nodes marked failed by the fault spec (sorted; empty on an intact network)."""
        return self.meta.get("failed_nodes", _NO_NODES)

    @property
    def intact(self) -> Topology:
        """The network before its faults (itself when it has none)."""
        return self.meta.get("intact", self)

    def neighbors(self, node: int) -> np.ndarray:
        """List the neighbours of a node, one entry per arc (sorted).

        Parameters
        ----------
        node : int
            Node index.

        Returns
        -------
        numpy.ndarray
            Heads of the node's arcs (a read-only view of the CSR).
        """
        return self.indices[self.indptr[node]:self.indptr[node + 1]]

    def arc_index(self, u: int, v: int) -> int:
        """Find the CSR index of the first arc ``u -> v``.

        Parameters
        ----------
        u, v : int
            Tail and head.

        Returns
        -------
        int
            Arc index, or -1 when there is no such arc.
        """
        lo, hi = self.indptr[u], self.indptr[u + 1]
        pos = lo + int(np.searchsorted(self.indices[lo:hi], v))
        return int(pos) if pos < hi and self.indices[pos] == v else -1

    def has_edge(self, u: int, v: int) -> bool:
        """Tell whether a link joins ``u`` and ``v``.

        Parameters
        ----------
        u, v : int
            The two nodes.

        Returns
        -------
        bool
            True when there is an arc ``u -> v``.
        """
        return self.arc_index(u, v) >= 0

    @cached_property
    def arc_sources(self) -> np.ndarray:
        """Tail node of every arc."""
        src = np.repeat(np.arange(self.num_nodes, dtype=np.int64), self.port_degree)
        src.setflags(write=False)
        return src

    @cached_property
    def reverse_arc(self) -> np.ndarray:
        """Arc going back along the same link, for every arc.

        Parallel links pair up in order: the k-th ``u -> v`` arc with the k-th ``v -> u`` arc.  Raises
        :class:`TopocastError` if the adjacency is not symmetric.
        """
        src, dst = self.arc_sources, self.indices
        forward = np.lexsort((np.arange(self.num_arcs), dst, src))
        backward = np.lexsort((np.arange(self.num_arcs), src, dst))
        rev = np.empty(self.num_arcs, dtype=np.int64)
        rev[forward] = backward
        if not (np.array_equal(src[forward], dst[backward]) and np.array_equal(dst[forward], src[backward])):
            raise TopocastError(f"{self.family}: adjacency is not symmetric")
        rev.setflags(write=False)
        return rev

    def label_of(self, arc: int) -> str:
        """Give the label name of an arc.

        Parameters
        ----------
        arc : int
            Arc index.

        Returns
        -------
        str
            Its label, e.g. ``+d0``.
        """
        return self.label_names[self.arc_labels[arc]]

    # -- labels -----------------------------------------------------------
    def label(self, node: int) -> tuple:
        """Give the family's coordinates of a node.

        Parameters
        ----------
        node : int
            Node index.

        Returns
        -------
        tuple
            The coordinates (the name for a graph from networkx or a file).

        Raises
        ------
        TopocastError
            If ``node`` is not an integer in ``0..num_nodes-1``.
        """
        node = integer(node, "node", owner="node")
        if not 0 <= node < self.num_nodes:
            raise TopocastError(f"node: {node} is outside 0..{self.num_nodes - 1}")
        return self.codec.decode(node)

    def index(self, label: Any) -> int:
        """Find the node index of a label: a tuple of coordinates, text ``"1,2"``, or a node name.

        A topology built from a networkx graph or a ``graph:`` file also takes the node's name (a string, an
        int, a tuple) or its text.

        Parameters
        ----------
        label : tuple or str or Any
            Coordinates, their text, or a name.

        Returns
        -------
        int
            Node index.

        Raises
        ------
        TopocastError
            If the label names no node.
        """
        if isinstance(label, str):
            return self.codec.parse(label)
        if not isinstance(label, (Sequence, np.ndarray)):
            label = (label,)
        return self.codec.encode(tuple(label))

    def node_name(self, node: int) -> Any:
        """Give the name of a node: the original name for a graph from networkx or a file, else its label text.

        Parameters
        ----------
        node : int
            Node index.

        Returns
        -------
        Any
            The name.

        Examples
        --------
        >>> import topocast as tc
        >>> tc.build("torus:3x4").node_name(5)
        '1,1'
        """
        self.label(node)  # range check with the usual message
        name = getattr(self.codec, "name", None)
        return name(int(node)) if name is not None else self.codec.format(int(node))

    @property
    def spec(self) -> str:
        """Canonical spec string (``family:key=value,...``)."""
        if "spec" in self.meta:
            return str(self.meta["spec"])
        body = ",".join(f"{k}={_fmt(v)}" for k, v in self.params.items())
        return f"{self.family}:{body}"

    # -- interop ----------------------------------------------------------
    def to_networkx(self):
        """Convert to a networkx Graph, or MultiGraph when there are parallel links.

        Each edge gets attribute ``label`` (the label of its lower-to-higher arc).

        Returns
        -------
        networkx.Graph or networkx.MultiGraph
            The network.
        """
        import networkx as nx

        multi = self.has_parallel_links
        graph = nx.MultiGraph() if multi else nx.Graph()
        graph.add_nodes_from(range(self.num_nodes))
        src, dst = self.arc_sources, self.indices
        keep = src < dst
        names = np.asarray(self.label_names, dtype=object)[self.arc_labels[keep]]
        graph.add_edges_from(
            (int(u), int(v), {"label": lab}) for u, v, lab in zip(src[keep], dst[keep], names, strict=False)
        )
        return graph

    def __repr__(self) -> str:
        """Spec, nodes, links and faults."""
        faults = f", faults={self.faults!r}" if self.faults is not None else ""
        return f"Topology({self.spec!r}, nodes={self.num_nodes}, links={self.num_edges}{faults})"


def _networkx_links(graph, index: Mapping, nodes: Sequence, family: str) -> tuple[np.ndarray, np.ndarray]:
    """Each link of ``graph`` once as node numbers ``(u < v)``, a parallel edge repeated; self-loops refused."""
    multi = graph.is_multigraph()
    src: list[int] = []
    dst: list[int] = []
    count: list[int] = []
    for a, neighbours in graph.adjacency():
        i = index[a]
        for b, data in neighbours.items():
            j = index[b]
            if i == j:
                raise TopocastError(
                    f"{family}: node {nodes[i]!r} has a self-loop; a link must join two different nodes")
            if i < j:
                src.append(i)
                dst.append(j)
                count.append(len(data) if multi else 1)
    count_array = np.asarray(count, dtype=np.int64)
    return (np.repeat(np.asarray(src, dtype=np.int64), count_array),
            np.repeat(np.asarray(dst, dtype=np.int64), count_array))


class UnbuiltTopology:
    """A topology named by its spec but not built: family, parameters, size.

    Algorithms whose engine needs no adjacency (a per-step rule over node
    coordinates) receive this instead of a :class:`Topology`, so a network of
    billions of nodes can run without its CSR arrays.
    """

    def __init__(self, family: str, params: Mapping[str, Any], num_nodes: int | None = None):
        self.family = family
        self.params = MappingProxyType(dict(params))
        self.num_nodes = num_nodes
        self.meta: Mapping[str, Any] = MappingProxyType({})

    @property
    def spec(self) -> str:
        """Canonical spec string (``family:key=value,...``)."""
        body = ",".join(f"{k}={_fmt(v)}" for k, v in self.params.items())
        return f"{self.family}:{body}"

    def __repr__(self) -> str:
        """Spec and nodes."""
        return f"UnbuiltTopology({self.spec!r}, nodes={self.num_nodes})"


class NameCodec(Codec):
    """Node names of a graph from networkx or a file: ``decode(i)`` is ``(name,)`` (a tuple name as is).

    ``parse`` finds a node from text: the name itself, the name as an int, a
    tuple name written ``"1,2"`` or ``"(1, 2)"``, or the text of the name.
    """

    fields = ("name",)

    def __init__(self, names: Iterable):
        self.names = list(names)
        self.lookup = {n: i for i, n in enumerate(self.names)}
        if len(self.lookup) != len(self.names):
            raise TopocastError("node: node names must be distinct")
        self._texts: dict[str, int] | None = None

    def name(self, index: int) -> Any:
        """Give the original name of a node.

        Parameters
        ----------
        index : int
            Node index.

        Returns
        -------
        Any
            The name.
        """
        return self.names[index]

    def decode(self, index: int) -> tuple:
        """Give the label of a node: ``(name,)``, or a tuple name as it is.

        Parameters
        ----------
        index : int
            Node index.

        Returns
        -------
        tuple
            The label.
        """
        name = self.names[index]
        return name if isinstance(name, tuple) else (name,)

    def encode(self, label: Sequence) -> int:
        """Find the node of a label ``(name,)`` or a tuple name.

        Parameters
        ----------
        label : sequence
            The label.

        Returns
        -------
        int
            Node index.

        Raises
        ------
        TopocastError
            If no node has that name.
        """
        label = tuple(label)
        for key in (label, label[0] if len(label) == 1 else None):
            try:
                if key is not None and key in self.lookup:
                    return self.lookup[key]
            except TypeError:  # unhashable part
                continue
        raise TopocastError(f"node: unknown node {label[0] if len(label) == 1 else label!r}")

    def format(self, index: int) -> str:
        """Write the name of a node as text (a tuple name comma-separated).

        Parameters
        ----------
        index : int
            Node index.

        Returns
        -------
        str
            The text.
        """
        name = self.names[index]
        return ",".join(str(v) for v in name) if isinstance(name, tuple) else str(name)

    def parse(self, text: str) -> int:
        """Find a node from text: the name, the name as an int, a tuple name ``"1,2"`` or ``"(1, 2)"``.

        Parameters
        ----------
        text : str
            The text.

        Returns
        -------
        int
            Node index.

        Raises
        ------
        TopocastError
            If no node matches.
        """
        for key in _text_keys(text):
            if key in self.lookup:
                return self.lookup[key]
        if self._texts is None:
            self._texts = {}
            for i, name in enumerate(self.names):
                self._texts.setdefault(str(name), i)
                self._texts.setdefault(self.format(i), i)
        found = self._texts.get(text.strip())
        if found is None:
            raise TopocastError(f"node: unknown node '{text}'")
        return found


_NameCodec = NameCodec  # the earlier private name


def _text_keys(text: str) -> list:
    """Names ``text`` may stand for: itself, stripped, an int, a tuple of ints or strings."""
    keys: list = [text, text.strip()]
    with suppress(ValueError):
        keys.append(int(text))
    inner = text.strip().removeprefix("(").removesuffix(")")
    if "," in inner:
        parts = [p.strip().strip("'\"") for p in inner.split(",") if p.strip()]
        keys.append(tuple(int(p) if p.lstrip("-").isdigit() else p for p in parts))
    return keys


def node_order(names: Iterable) -> list:
    """Sort node names: strings in natural order (``"n2" < "n10"``, ``"-1,2" < "0,2" < "0,10"``).

    Names that do not compare with each other (ints mixed with strings) keep their order.

    Parameters
    ----------
    names : iterable
        The names.

    Returns
    -------
    list
        The names sorted, or as given.

    Examples
    --------
    >>> node_order(["n10", "n2", "n1"]), node_order(["0,1", "-1,2", "0,-3"]), node_order(["b", 1])
    (['n1', 'n2', 'n10'], ['-1,2', '0,-3', '0,1'], ['b', 1])
    """
    names = list(names)
    try:
        return sorted(names, key=_sort_key)
    except TypeError:
        return names


#: a run of digits, with its minus sign at the start of the text or after a separator (``-1,0``, not ``n-1``)
_NUMBER = re.compile(r"((?:(?<![^\s,;(\[])-)?\d+)")


def _sort_key(name: Any) -> Any:
    if isinstance(name, str):
        parts = [(0, int(p)) if p.lstrip("-").isdigit() else (1, p) for p in _NUMBER.split(name) if p]
        return (parts, name)
    if isinstance(name, tuple):
        return tuple(_sort_key(v) for v in name)
    return name


def _fmt(value: Any) -> str:
    if isinstance(value, tuple):
        return "x".join(str(v) for v in value)
    return str(value)
