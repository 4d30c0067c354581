"""Networks for two simulators, each with a configuration that runs it.

* SST Merlin ``anytopo`` (``sst-anytopo``): a GraphML file its ``topoAny.import_graph`` reads (networkx's
  GraphML reader): nodes in index order with ids ``0 .. N-1`` (it numbers nodes in file order), an integer
  ``endpoints`` attribute on every node (it refuses a node without one), undirected edges, a parallel link
  repeated; and ``NAME.py``, an SST configuration that loads the file with shortest-path source routing, one
  ``hr_router`` per node and a uniform offered-load job on the endpoints.
* BookSim2 ``anynet`` (``booksim-anynet``): the network file (:mod:`topocast.topology.export`) and
  ``NAME.cfg`` naming it (``topology = anynet``, minimal routing, uniform traffic).
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape

from ..errors import TopocastError
from ..topology.core import Topology

SST_CONFIG = '''"""SST Merlin run of {spec} ({nodes} routers, {endpoints} endpoint(s) each) written by topocast.

Run: sst {script}
"""
import os

import sst  # noqa: F401
from sst.merlin.base import System
from sst.merlin.endpoint import EndpointNIC, OfferedLoadJob
from sst.merlin.interface import *  # noqa: F401,F403  (registers the NIC plugins)
from sst.merlin.router import hr_router
from sst.merlin.targetgen import UniformTarget
from sst.merlin.topology import topoAny

GRAPH = os.path.join(os.path.dirname(os.path.abspath(__file__)), {graph!r})
BANDWIDTH = "{bandwidth}"

topology = topoAny()
topology.routing_mode = "source_routing"
topology.topo_name = {name!r}
topology.import_graph(GRAPH)
topology.link_latency = "{latency}"
topology.host_link_latency = "{latency}"

router = hr_router()
router.link_bw = BANDWIDTH
router.xbar_bw = BANDWIDTH
router.flit_size = "32B"
router.input_latency = "{latency}"
router.output_latency = "{latency}"
router.input_buf_size = "32kB"
router.output_buf_size = "32kB"
router.num_vns = 1
topology.router = router

nic = EndpointNIC(use_reorderLinkControl=True, topo=topology)
nic.addPlugin("sourceRoutingPlugin", routing_table=topology.calculate_routing_table())
nic.link_bw = BANDWIDTH
nic.input_buf_size = "32kB"
nic.output_buf_size = "32kB"

job = OfferedLoadJob(0, topology.getNumNodes())
job.setEndpointNIC(nic)
job.pattern = UniformTarget()
job.offered_load = {load}
job.link_bw = BANDWIDTH
job.message_size = "32B"
job.warmup_time = "10us"
job.collect_time = "50us"
job.drain_time = "200us"

system = System()
system.setTopology(topology)
system.allocateNodes(job, "linear")
system.build()
'''

BOOKSIM_CONFIG = """// BookSim2 run of {spec} ({nodes} routers, one terminal each) written by topocast
// Run: booksim {cfg}  (from this directory)
topology = anynet;
network_file = {network};
routing_function = min;
num_vcs = 4;
vc_buf_size = 8;
traffic = uniform;
injection_rate = {load};
packet_size = 1;
sim_type = latency;
sample_period = 1000;
warmup_periods = 3;
max_samples = 10;
"""


def sst_graphml(topology: Topology, endpoints: int = 1) -> str:
    """The GraphML text SST's ``anytopo`` reads (the module docstring)."""
    from ..infra.validate import integer

    endpoints = integer(endpoints, "endpoints", minimum=1)
    if not topology.is_connected:
        raise TopocastError(f"export: sst-anytopo needs a connected network; {topology.spec} is not connected")
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
             '  <key id="endpoints" for="node" attr.name="endpoints" attr.type="int"/>',
             '  <key id="spec" for="graph" attr.name="spec" attr.type="string"/>',
             '  <graph edgedefault="undirected">',
             f'    <data key="spec">{escape(topology.spec)}</data>']
    lines += [f'    <node id="{v}"><data key="endpoints">{endpoints}</data></node>' for v in range(topology.num_nodes)]
    src, dst = topology.arc_sources, topology.indices
    keep = src < dst
    lines += [f'    <edge source="{u}" target="{v}"/>' for u, v in zip(src[keep].tolist(), dst[keep].tolist(),
                                                                     strict=True)]
    lines += ["  </graph>", "</graphml>", ""]
    return "\n".join(lines)


def export_sst(topology: Topology, path: str | Path, endpoints: int = 1, load: float = 0.5,
               bandwidth: str = "16Gb/s", latency: str = "20ns") -> list[Path]:
    """Write ``PATH`` (GraphML for ``anytopo``) and ``PATH`` with ``.py`` (its SST configuration)."""
    from ..infra.fileio import atomic_write, check_output_file

    graph = Path(path)
    script = graph.with_suffix(".py")
    check_output_file(graph, "OUT")
    check_output_file(script, "OUT")
    text = sst_graphml(topology, endpoints)
    config = SST_CONFIG.format(spec=topology.spec, nodes=topology.num_nodes, endpoints=endpoints,
                               script=script.name, graph=graph.name, name=_name(topology), bandwidth=bandwidth,
                               latency=latency, load=float(load))
    return [atomic_write(graph, text), atomic_write(script, config)]


def export_booksim(topology: Topology, path: str | Path, load: float = 0.05) -> list[Path]:
    """Write ``PATH`` (the ``anynet`` network file) and ``PATH`` with ``.cfg`` (the BookSim configuration)."""
    from ..infra.fileio import atomic_write, check_output_file
    from ..topology.export import export

    network = Path(path)
    cfg = network.with_suffix(".cfg")
    if cfg == network:
        raise TopocastError(f"OUT: the network file cannot be named like its config ({cfg.name}); use .anynet")
    check_output_file(cfg, "OUT")
    written = export(topology, "booksim-anynet", network)
    config = BOOKSIM_CONFIG.format(spec=topology.spec, nodes=topology.num_nodes, cfg=cfg.name,
                                   network=network.name, load=float(load))
    return [written, atomic_write(cfg, config)]


def _name(topology: Topology) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in topology.spec)[:60]
