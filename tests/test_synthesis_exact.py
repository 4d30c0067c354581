"""The exact synthesis (time-indexed program, HiGHS) against closed forms and an exhaustive search.

Oracles: recursive doubling's one-port all-gather time (d start-ups and N-1 message times, optimal by the
one-port bound), a whole message down a path (one hop after another), and the minimum one-port broadcast
rounds found by breadth-first search over informed sets (every matching of informed to uninformed nodes).
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast.errors import TopocastError
from topocast.sim.models import CostModel, PortModel
from topocast.synthesis import synthesize
from topocast.synthesis.exact import solve


def test_one_port_allgather_on_a_square_is_recursive_doubling():
    t = tc.build("hypercube:2")
    plan = solve(t, np.arange(4), "all", CostModel(startup=1.0, per_byte=1.0), PortModel.one_port(), 1.0, 9.0)
    assert plan.optimal and plan.makespan == 2 + 3 and plan.dual_bound == plan.makespan


def test_whole_message_down_a_path_takes_every_hop_in_turn():
    t = tc.build("path:4")
    plan = solve(t, np.array([0]), "all", CostModel(startup=1.0, per_byte=1.0, per_hop=1.0), PortModel(), 1.0, 20.0)
    assert plan.optimal and plan.makespan == 3 * 3


def _broadcast_rounds(g: nx.Graph, root: int) -> int:
    """Fewest one-port rounds to inform every node: BFS over informed sets, each round a matching."""
    n = g.number_of_nodes()
    full = (1 << n) - 1
    seen, frontier, rounds = {1 << root}, [1 << root], 0
    while full not in seen:
        rounds += 1
        nxt = []
        for state in frontier:
            informed = [v for v in range(n) if state >> v & 1]
            options = [[None] + [w for w in g[v] if not state >> w & 1] for v in informed]
            for pick in itertools.product(*options):
                chosen = [w for w in pick if w is not None]
                if len(set(chosen)) != len(chosen):
                    continue
                new = state | sum(1 << w for w in chosen)
                if new not in seen:
                    seen.add(new)
                    nxt.append(new)
        frontier = nxt
    return rounds


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_port_broadcast_optimum_matches_exhaustive_search(seed):
    g = nx.connected_watts_strogatz_graph(6, 2, 0.5, seed=seed)
    t = tc.Topology.from_networkx(g)
    g = t.to_networkx()
    rounds = _broadcast_rounds(nx.Graph(g), 0)
    plan = solve(t, np.array([0]), "all", CostModel(startup=1.0, per_byte=0.0), PortModel.one_port(), 64.0,
                 float(rounds + 2))
    assert plan.optimal and plan.makespan == rounds


def test_synthesize_exact_returns_the_verified_optimum_and_its_proof(tmp_path):
    s = synthesize("ring:6", "allgather", exact=True, restarts=0, startup=2.0, per_byte=1.0, message_bytes=1.0,
                   ports="1")
    proof = s.bound["exact"]
    assert s.result.verified and s.result.metrics["exactly_once"]
    assert proof["optimal"] and s.measured == proof["optimum"] == 11.0   # 3 start-ups + 5 messages: the bound
    assert s.measured >= s.lower_bound
    header = s.write(tmp_path / "e.json").read_text()
    assert '"exact"' in header and '"optimal":true' in header


def test_exact_refuses_costs_without_a_coarse_grid():
    with pytest.raises(TopocastError, match="exact: the time grid"):
        synthesize("ring:5", "allgather", exact=True, restarts=0)   # 1 us start-up against 102.4 ns per message
