"""Terminals (endpoints) per router, read from a topology's metadata.

Router-level families say how many terminals hang on their routers:

* ``meta["terminal_hosts"] = {"field": f, "range": [lo, hi]}`` and ``meta["p"]``:
  ``p`` terminals on every router whose label coordinate ``f`` lies in
  ``lo .. hi - 1`` (the leaves of a fat tree or of a Dragonfly+), none on the
  others;
* ``meta["p"]`` alone: ``p`` on every router (PolarFly, Slim Fly, HyperX,
  Jellyfish, Dragonfly, Galaxyfly, ...);
* the generalized fat tree ``gft``: one on every processor node, none on the
  switches;
* anything else: every node is one terminal (the classic networks, where a
  node is a processor).
"""

from __future__ import annotations

import numpy as np

from .core import MixedRadixCodec, Topology


def terminal_counts(topology: Topology) -> np.ndarray:
    """Count the terminals attached to each node of a network.

    Parameters
    ----------
    topology : Topology
        The network; families with terminals say so in ``meta``, others have one terminal per node.

    Returns
    -------
    numpy.ndarray
        Terminals per node (int64).

    Examples
    --------
    >>> import topocast as tc
    >>> terminal_counts(tc.build("fattree:k=2,n=3")).tolist()
    [0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2]
    """
    n = topology.num_nodes
    meta = topology.meta
    hosts = meta.get("terminal_hosts")
    if hosts is not None and "p" in meta and isinstance(topology.codec, MixedRadixCodec):
        field = topology.codec.fields.index(hosts["field"])
        coord = topology.codec.decode_array(np.arange(n))[:, field]
        lo, hi = hosts["range"]
        return np.where((coord >= lo) & (coord < hi), int(meta["p"]), 0).astype(np.int64)
    if "p" in meta:
        return np.full(n, int(meta["p"]), dtype=np.int64)
    if topology.family == "gft" and "processors" in meta:
        out = np.zeros(n, dtype=np.int64)
        out[:int(meta["processors"])] = 1
        return out
    return np.ones(n, dtype=np.int64)
