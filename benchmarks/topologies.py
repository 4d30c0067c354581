"""Issue 32's speed targets: ``topocast info`` with exact distances on a 10^5-router PolarFly and Slim Fly (each
under 30 s), and ``topocast compare`` of the six default families at about 10,000 terminals, all columns (under
5 minutes on 2 cores).

Each command runs as a fresh process, as a user types it (numba's compiled kernels load from their cache; the
first run after an install compiles them, a few seconds more).

    python benchmarks/topologies.py [--polarfly 317] [--slimfly 223] [--terminals 10000 --radix 48] [--json]
                                    [--figures PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from figures import Figures, add_argument


def timed(argv: list[str]) -> tuple[float, dict]:
    """Seconds of ``topocast ARGV --json`` in a fresh process, and its JSON output."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "topocast.cli", *argv, "--json"], capture_output=True, text=True,
                          check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"topocast {' '.join(argv)} failed: {done.stderr.strip()}")
    return seconds, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polarfly", type=int, default=317, help="q of the PolarFly (317: 100,807 routers)")
    parser.add_argument("--slimfly", type=int, default=223, help="q of the Slim Fly (223: 99,458 routers)")
    parser.add_argument("--terminals", type=int, default=10000)
    parser.add_argument("--radix", type=int, default=48)
    parser.add_argument("--json", action="store_true")
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("topologies")
    out = {}
    for family, q in (("polarfly", args.polarfly), ("slimfly", args.slimfly)):
        seconds, info = timed(["info", f"{family}:q={q}"])
        out[family] = {"routers": info["nodes"], "arcs": 2 * info["edges"], "diameter": info["diameter"],
                       "seconds": seconds}
        print(f"info {family}:q={q}: {info['nodes']:,} routers, {2 * info['edges']:,} arcs, diameter "
              f"{info['diameter']}, mean distance {info['average_distance']:.4f}: {seconds:.1f} s", flush=True)
        figures.add(f"info {family}:q={q} ({info['nodes']:,} routers) with distances", seconds, "s", target=30)
    seconds, data = timed(["compare", "--terminals", str(args.terminals), "--radix", str(args.radix)])
    out["compare"] = {"seconds": seconds, "networks": [r["spec"] for r in data["rows"]]}
    print(f"compare --terminals {args.terminals} --radix {args.radix}: {len(data['rows'])} networks "
          f"({', '.join(r['spec'] for r in data['rows'])}), all columns: {seconds:.1f} s", flush=True)
    figures.add(f"compare, {len(data['rows'])} families at about {args.terminals:,} terminals, all columns", seconds,
                "s", target=300)
    if args.json:
        print(json.dumps(out, indent=1))
    figures.write(args.figures)


if __name__ == "__main__":
    main()
