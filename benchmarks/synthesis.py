"""Synthesis targets (docs/synthesis.md): synthesised schedule against the papers' algorithms and the bound.

python benchmarks/synthesis.py [galaxyfly dragonfly classic optimal trees ports ej hdn graph big] [--figures PATH]
(default: all but big; ``--figures PATH`` also writes each network's synth/bound ratio and synthesis
time as JSON rows)

Per target: the synthesised time (us) or steps, the competitor's, the lower
bound, the ratios and the synthesis time (s, verification included).  Every
schedule is verified exactly once by the shared engines before it is counted.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import networkx as nx
from figures import Figures

import topocast as tc
from topocast.experiments.classic import CLOSED_FORMS, COST, MESSAGE_BYTES
from topocast.experiments.galaxyfly import DRAGONFLY, PERFORMANCE, galaxyfly_spec
from topocast.synthesis import synthesize

CLASSIC = [("allgather-recursive-doubling", "hypercube:4", "allgather"),
           ("allgather-recursive-doubling", "hypercube:8", "allgather"),
           ("allgather-mesh", "torus:5x5", "allgather"), ("allgather-mesh", "torus:4x4x4", "allgather"),
           ("allgather-mesh", "torus:8x8", "allgather"),
           ("broadcast-binomial", "hypercube:8", "broadcast"), ("broadcast-mesh", "torus:5x5", "broadcast"),
           ("broadcast-mesh", "torus:4x4x4", "broadcast"), ("broadcast-mesh", "torus:8x8x8", "broadcast")]
EJ = ["ej:a=1,b=2,n=3", "ej:a=2,b=3,n=2", "ej:a=3,b=4,n=2", "ej:a=4,b=5,n=2", "ej:a=0,b=3,n=2", "ej:a=2,b=2,n=2",
      "ej:a=1,b=5,n=1", "ej:a=6,b=7,n=1"]
FIGURES = Figures("synthesis")


def _line(*cells) -> None:
    print(" | ".join(str(c) for c in cells), flush=True)


def _timed(*args, **kwargs):
    t0 = time.perf_counter()
    s = synthesize(*args, **kwargs)
    return s, time.perf_counter() - t0


def allgather_vs(specs, algorithms, title: str, target: float | None = None) -> None:
    _line(f"## {title}", "N", "synth us", *[f"{a} us" for a in algorithms], "bound us", "synth/bound",
          *[f"synth/{a}" for a in algorithms], "synth s")
    for spec in specs:
        t = tc.build(spec)
        s, secs = _timed(t, "allgather")
        others = [tc.run(t, a).metrics["time"] for a in algorithms]
        _line(spec, t.num_nodes, f"{s.measured * 1e6:.2f}", *[f"{o * 1e6:.2f}" for o in others],
              f"{s.lower_bound * 1e6:.2f}", f"{s.ratio:.3f}", *[f"{s.measured / o:.3f}" for o in others],
              f"{secs:.2f}")
        _record(f"{spec} allgather", s.ratio, secs, target)
        witness = s.bound["witness"] if s.bound["kind"] != "cut" else f"{s.bound['witness']['links']} links"
        _line("", "", f"origin {s.origin}: {s.method}; bound {s.bound['kind']} {witness}")


def optimal() -> None:
    """Networks where the optimum is known: the ratio to the bound is 1.0 exactly when the bound proves it."""
    _line("## proven optimum (standard model unless stated)", "collective", "synth us", "bound us", "synth/bound",
          "bound kind", "origin", "synth s")
    cases = [("hypercube:4", "allgather", {"ports": "1"}), ("hypercube:6", "allgather", {"ports": "1"}),
             ("torus:8x8", "allgather", {}), ("torus:4x4x4", "allgather", {}),
             ("polarfly:q=7", "allgather", {}), ("polarfly:q=11", "allgather", {}),
             ("slimfly:q=5", "allgather", {}), ("hypercube:6", "alltoall", {"ports": "1"})]
    for spec, collective, model in cases:
        s, secs = _timed(spec, collective, params_from_text=True, **model)
        _line(spec + (" one-port" if model else ""), collective, f"{s.measured * 1e6:.3f}",
              f"{s.lower_bound * 1e6:.3f}", f"{s.ratio:.3f}", s.bound["kind"], f"{s.origin}:{s.method}",
              f"{secs:.2f}")
        _record(f"{spec} {collective}{' one-port' if model else ''}", s.ratio, secs, 1.0)


TREE_NETWORKS = ("ring:16", "torus:8x8", "torus:4x4x4", "hypercube:6", "polarfly:q=7", "slimfly:q=5",
                 "dragonfly:g=9,a=4,h=2", "jellyfish:n=64,d=6", *(galaxyfly_spec(*c) for c in PERFORMANCE))
TREE_COLLECTIVES = ("broadcast", "allgather", "reduce-scatter", "allreduce")


def trees() -> None:
    """1 GB collectives (bandwidth regime), all-port full duplex: tree packing (broadcast, all-gather) and its
    reversal (reduce-scatter, allreduce) within 1.05x of the bound.  The registered algorithms are left out
    (``known=False``) to keep the run short; ``trees/bound`` is the packed candidate's own ratio."""
    _line("## 1 GB collectives, all-port full duplex (tree packing)", "collective", "N", "synth ms", "bound ms",
          "synth/bound", "bound kind", "method", "trees/bound", "trees per root", "synth s")
    for spec in TREE_NETWORKS:
        for collective in TREE_COLLECTIVES:
            s, secs = _timed(spec, collective, message_bytes=1e9, ports="all", duplex="full", restarts=0,
                             known=False)
            packed = [c for c in s.candidates if c.get("method") == "trees"]
            own = f"{packed[0]['measured'] / s.lower_bound:.3f}" if packed else "-"
            _line(spec, collective, s.schedule.num_nodes, f"{s.measured * 1e3:.3f}", f"{s.lower_bound * 1e3:.3f}",
                  f"{s.ratio:.3f}", s.bound["kind"], s.method, own, packed[0]["trees"] if packed else "-",
                  f"{secs:.2f}")
            _record(f"{spec} {collective} 1 GB", s.ratio, secs, 1.05)


def ports() -> None:
    """The greedy planned for P ports (standard model): never slower than one port, closer to the bound."""
    _line("## P ports (standard model, full duplex)", "collective", "P=1 us", "P=2 us", "P=3 us", "bound P=2 us",
          "P=2 / bound", "P=2 origin", "synth s (P=2)")
    for spec in ("hypercube:6", "torus:8x8", "polarfly:q=7", "galaxyfly:n=3,q=5,a=4"):
        for collective in ("broadcast", "allgather"):
            runs = {}
            for p in (1, 2, 3):
                runs[p] = _timed(spec, collective, ports=p)
            s2, secs = runs[2]
            _line(spec, collective, *[f"{runs[p][0].measured * 1e6:.3f}" for p in (1, 2, 3)],
                  f"{s2.lower_bound * 1e6:.3f}", f"{s2.ratio:.3f}", f"{s2.origin}:{s2.method}", f"{secs:.2f}")
            _record(f"{spec} {collective} ports=2", s2.ratio, secs)


def classic() -> None:
    _line("## tori and hypercubes (reproduce classic model)", "collective", "synth us", "textbook us",
          "synth/textbook", "bound us", "synth/bound", "synth s")
    for alg, spec, collective in CLASSIC:
        t = tc.build(spec)
        s, secs = _timed(t, collective, message_bytes=MESSAGE_BYTES, startup=COST.startup, per_byte=COST.per_byte,
                         per_hop=COST.per_hop)
        book = CLOSED_FORMS[alg](t, 0, MESSAGE_BYTES, COST)
        _line(spec, collective, f"{s.measured * 1e6:.3f}", f"{book * 1e6:.3f} ({alg}, {s.model['ports']}-port)",
              f"{s.measured / book:.3f}", f"{s.lower_bound * 1e6:.3f}", f"{s.ratio:.3f}", f"{secs:.2f}")
        _record(f"{spec} {collective}", s.ratio, secs)


def steps_vs(specs, algorithm: str, title: str) -> None:
    _line(f"## {title}", "N", "synth steps", f"{algorithm} steps", "lower bound", "method", "synth s")
    worse = 0
    for spec in specs:
        t = tc.build(spec)
        s, secs = _timed(t, "broadcast", engine="step")
        theirs = tc.run(t, algorithm).metrics["steps"]
        worse += s.measured > theirs
        _line(spec, t.num_nodes, s.measured, theirs, s.lower_bound, s.method, f"{secs:.2f}")
        _record(f"{spec} broadcast", s.measured / s.lower_bound if s.lower_bound else float("nan"), secs)
    _line(f"synthesised broadcast takes more steps than {algorithm} on {worse} of {len(specs)} networks")


def hdn_specs() -> list[str]:
    from topocast.experiments.hdn import QUICK_NODES, _configs, _layout, _spec

    return [_spec(s) for s in _configs() if _layout(s).num_nodes <= QUICK_NODES]


def graph() -> None:
    _line("## graph: random graphs (standard model, all-port)", "N", "links", "synth us", "bound us", "synth/bound",
          "synth s")
    with tempfile.TemporaryDirectory() as tmp:
        for n, d, seed in ((1000, 4, 0), (1000, 8, 1), (500, 3, 2)):
            g = nx.random_regular_graph(d, n, seed=seed)
            path = Path(tmp) / f"rr{n}_{d}.edges"
            nx.write_edgelist(g, path, data=False)
            t = tc.build(f"graph:{path}")
            s, secs = _timed(t, "allgather")
            _line(f"random {d}-regular seed {seed}", n, t.num_edges, f"{s.measured * 1e6:.2f}",
                  f"{s.lower_bound * 1e6:.2f}", f"{s.ratio:.3f}", f"{secs:.2f}")
            _record(f"random {d}-regular N={n} seed {seed} allgather", s.ratio, secs)


def big() -> None:
    allgather_vs(["galaxyfly:n=12,q=29,a=32"], [], "Galaxyfly benchmark network (SFATA/RFATA: benchmarks/galaxyfly.py)",
                 1.5)


SECTIONS = {
    "galaxyfly": lambda: allgather_vs([galaxyfly_spec(*c) for c in PERFORMANCE], ["sfata", "rfata"],
                                      "Galaxyfly, Tables 3-4 networks, paper model (160 B, 16 Gbps, 1 us, 100 ns)",
                                      1.15),
    "dragonfly": lambda: allgather_vs([f"dragonfly:g={g},a={a}" for g, a in DRAGONFLY], ["sfata"],
                                      "Dragonfly of the same router counts (Table 5 comparator: SFATA on it)"),
    "classic": classic,
    "optimal": optimal,
    "trees": trees,
    "ports": ports,
    "ej": lambda: steps_vs(EJ, "one-to-all-improved", "EJ all-port half-duplex broadcast"),
    "hdn": lambda: steps_vs(hdn_specs(), "hdn-broadcast", "HDN one-port broadcast, Theorem 3 networks <= 30,000"),
    "graph": graph,
    "big": big,
}


def _record(network: str, ratio: float, seconds: float, target: float | None = None) -> None:
    FIGURES.add(f"{network}: synthesised / lower bound", ratio, "x", target=target)
    FIGURES.add(f"{network}: synthesis time", seconds, "s")


def main(argv: list[str]) -> None:
    argv = list(argv)
    figures_path = None
    if "--figures" in argv:
        at = argv.index("--figures")
        figures_path = argv[at + 1]
        del argv[at:at + 2]
    chosen = argv or [k for k in SECTIONS if k != "big"]
    for name in chosen:
        SECTIONS[name]()
    FIGURES.write(figures_path)


if __name__ == "__main__":
    main(sys.argv[1:])
