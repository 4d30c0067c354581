"""``topocast reproduce fattree``: the fat-tree thesis (Magliocca 2021) with the MIN and Clos background.

Tables: switches per level of the thesis's trees; the switch states of the
examples of 4.1.3 (LLS on GFT(2,2,2), k = 5, 7) and 4.2.3 (GFT(2,4,2), k = 3,
two passes); Figure 5.5 (a Latin square of XOR configurations); the number of
Latin squares per tree; one verification line per scheme and tree; Algorithms
1 and 2 as printed against the carry rule; the MIN XOR / d-shift schemes and
the exhaustive partition of an 8-line MIN into Latin squares; the right
Latin square on the Butterfly-Butterfly (Izzi and Massini 2020); Clos routing
and blocking; folded Clos versus fat tree; total-exchange time next
to the classic ring, mesh and hypercube algorithms.  Figure: the opened
GFT(2,2,2) with the thesis's configuration for k = 5 drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..algorithms import butterfly_rls as rls
from ..algorithms import fattree_alltoall as ft
from ..algorithms.clos_routing import blocking_example, greedy_route, route_permutation
from ..algorithms.min_alltoall import random_base
from ..api import run
from ..infra.progress import Progress
from ..measure.circuit import exchange_lower_bound, trace
from ..outputs.report import Claim, Compare, Report, Table
from ..registry import Experiment, register_experiment
from ..sim.models import CostModel
from ..topology.fattree import GFTShape, gft
from ..topology.multistage import (
    benes_network,
    clos_network,
    clos_properties,
    folded_clos_is_fat_tree,
    multistage_network,
)
from .traces import check_min_square, check_rls, partition_check, route_square, trace_thesis_algorithm, xor_square

PAPER = "F. Magliocca, Realizzazione di comunicazione all-to-all ... attraverso reti Fat Tree, Sapienza 2021"
THESIS_TREES = [(2, 2, 2), (2, 4, 4), (2, 4, 2), (2, 2, 3)]

# section 4.1.3, printed states per level (thesis numbering), level 2 first
LLS_EXAMPLES = {
    5: {2: "0 1 1 1", 1: "1 0 1 0", 0: "1 1 1 1"},
    7: {2: "0 0 0 1", 1: "0 1 0 1", 0: "1 1 1 1"},
}
# section 4.2.3, GFT(2,4,2), k = 3; the worked text prints "3" for the first level-1
# switch in pass 2, Algorithm 2's own formula gives (1 + 1 + 2) mod 4 = 0
SLIM_EXAMPLE = {
    1: {2: "1 1 1 0", 1: " ".join(["2 1"] * 4), 0: " ".join(["1"] * 16)},
    2: {2: "0 0 0 0", 1: " ".join(["3 3"] * 4), 0: " ".join(["1"] * 16)},
}
SLIM_EXAMPLE_ALGORITHM2 = " ".join(["0 3"] * 4)
# Figure 5.5 (rows: the source reaching each output) and its matrices (columns up0 up1 top down1 down0)
FIG55_ROWS = ["01325467", "10234576", "23107645", "32016754", "45761023", "54670132", "67543201", "76452310"]
FIG55_MATRICES = [
    "00000 00001 00001 00000", "00001 00000 00000 00001", "00010 00011 00011 00010",
    "00011 00010 00010 00011", "00100 00101 00101 00100", "00101 00100 00100 00101",
    "00110 00111 00111 00110", "00111 00110 00110 00111"]


def _fmt(states) -> str:
    return " ".join(str(int(v)) for v in states)


def _full_level(shape: GFTShape, x: int, per_local) -> np.ndarray:
    return np.tile(np.asarray(per_local), shape.level_count(x) // len(per_local))


# -- compute -----------------------------------------------------------------------------------
def measure_node_counts(trees) -> list[dict]:
    """Section 2.2.3: processors and switches per level of each built tree."""
    rows = []
    for h, m, w in trees:
        topo = gft(h, m, w)
        levels = [topo.label(v)[0] for v in range(topo.num_nodes)]
        rows.append({"tree": (h, m, w), "kind": GFTShape(h, m, w).kind, "processors": levels.count(-1),
                     "levels": [levels.count(x) for x in range(h + 1)],
                     "sizes": " / ".join(topo.meta["switch_sizes"])})
    return rows


def measure_examples() -> dict:
    """Sections 4.1.3 and 4.2.3: our states for the thesis's worked examples, per level."""
    lls, slim = GFTShape(2, 2, 2), GFTShape(2, 4, 2)
    return {
        "lls": {k: {x: _fmt(_full_level(lls, x, ft.thesis_lls_states(lls, k)[x])) for x in (2, 1, 0)}
                for k in LLS_EXAMPLES},
        "slim": {p: {x: _fmt(_full_level(slim, x, ft.thesis_lls_states(slim, 3, (p - 1,))[x])) for x in (2, 1, 0)}
                 for p in SLIM_EXAMPLE},
    }


def measure_figure55() -> dict:
    """Section 5.1.3, Figure 5.5: the XOR translates of M^(0,6) on GFT(2,2,2), traced."""
    shape = GFTShape(2, 2, 2)
    base = [np.array([0, 1, 1, 0]), np.zeros(4, np.int64), np.zeros(4, np.int64)]
    check = xor_square(shape, base)
    rows = []
    for x in range(8):
        sources = np.argsort(check.perms[x])  # the thesis lists, per output, the input that reaches it
        states = ft.xor_states(shape, [x], (), base)
        rows.append(("".join(map(str, sources)),
                     " ".join(f"00{states[2][0, r]}{states[1][0, r]}{states[0][0, r]}" for r in range(4))))
    return {"rows": rows, "latin_square": check.latin_square, "conflicts": check.conflicts, "ok": check.ok}


def measure_square_counts(quick: bool, rng) -> dict:
    """Sections 5.1.3 and 5.2.3: exhaustive split of GFT(2,2,2) into Latin squares, random bases elsewhere."""
    shape = GFTShape(2, 2, 2)
    seen: set[bytes] = set()
    squares_ok, total = 0, 0
    for base in ft.all_xor_bases(shape):
        check = xor_square(shape, base)
        squares_ok += check.ok
        total += 1
        seen.update(row.tobytes() for row in check.perms)
    ev: dict[str, Any] = {"total": total, "squares_ok": squares_ok, "distinct": len(seen),
                          "count": ft.latin_square_count(shape),
          "configurations": ft.xor_configuration_count(shape), "samples": 5 if quick else 40, "trees": []}
    for h, m, w in [(2, 2, 2), (2, 4, 4), (2, 4, 2), (3, 2, 2), (3, 4, 2), (2, 2, 4)]:
        shape = GFTShape(h, m, w)
        good, seen = 0, set()
        for _ in range(ev["samples"]):
            check = xor_square(shape, ft.random_xor_base(shape, rng))
            good += check.ok
            seen.update(row.tobytes() for row in check.perms)
        ev["trees"].append({"tree": (h, m, w), "kind": shape.kind, "count": ft.latin_square_count(shape),
                            "formula": m ** ((h + 1) * m ** h - (h + 1)) if m == w else None, "good": good,
                            "distinct": len(seen), "permutations": ev["samples"] * shape.processors})
    return ev


def measure_verification(quick: bool, progress: Progress) -> list[dict]:
    """Chapters 4 and 5: every row and pass of LLS (and CLS where m, w are powers of 2) traced."""
    trees = [(2, 2, 2), (2, 4, 4), (2, 4, 2), (2, 2, 3), (3, 4, 2), (2, 8, 2), (3, 2, 2)]
    if not quick:
        trees += [(3, 4, 4), (2, 8, 8), (3, 8, 4), (2, 16, 4), (3, 3, 2)]
    rows = []
    for h, m, w in progress.track(trees, "fat-tree schemes"):
        shape = GFTShape(h, m, w)
        schemes: list[tuple[str, Callable[..., Any]]] = [("LLS", ft.lls_routes)]
        if not (m & (m - 1)) and not (w & (w - 1)):
            schemes.append(("CLS", ft.xor_routes))
        for name, make in schemes:
            check = route_square(shape, make, np.arange(shape.processors))
            rows.append({"tree": (h, m, w), "scheme": name, "processors": shape.processors, "check": check,
                         "per_pass": check.circuits // max(1, shape.processors * check.passes),
                         "formula_passes": ft.groups_per_level(shape) if h == 2 else None,
                         "pass_bound": ft.pass_lower_bound(shape)})
    return rows


def measure_thesis_algorithms(quick: bool) -> list[dict]:
    """Algorithms 1 and 2 as printed, traced (thesis numbering, rotation k is i -> i - k)."""
    trees = [(2, 2, 2), (2, 4, 4), (3, 2, 2), (2, 3, 3)] + ([] if quick else [(3, 4, 4), (4, 2, 2)])
    slimmed = [(2, 4, 2), (2, 2, 1)] + ([] if quick else [(2, 8, 4)])
    rows = []
    for h, m, w in trees + slimmed:
        shape = GFTShape(h, m, w)
        n = shape.processors
        if m == w:
            check = trace_thesis_algorithm(shape, lambda k, p, s=shape: ft.thesis_algorithm1_states(s, k))
        else:
            check = trace_thesis_algorithm(shape, lambda k, p, s=shape: ft.thesis_algorithm2_states(s, k, p))
        rotations = int(sum(np.array_equal(check.perms[k], (np.arange(n) - k) % n) for k in range(n)))
        rows.append({"tree": f"GFT({h},{m},{w})", "algorithm": "Algorithm 1" if m == w else "Algorithm 2",
                     "passes": check.passes, "rotations": rotations, "rows": n, "ok": check.ok})
    return rows


def measure_mins(quick: bool, rng) -> list[dict]:
    """Section 3.2.4: XOR and d-shift steps on log_d N-stage MINs, straight and random bases."""
    cases = [("butterfly", 3, 2), ("omega", 3, 2), ("baseline", 3, 2), ("butterfly", 2, 3), ("omega", 2, 4),
             ("baseline", 3, 3)] + ([] if quick else [("butterfly", 6, 2), ("omega", 4, 3), ("baseline", 3, 4)])
    rows = []
    for fam, n, d in cases:
        net = multistage_network(fam, n=n, d=d)
        rows.append({"network": f"{fam}:n={n},d={d}", "d": d, "inputs": net.num_inputs,
                     "straight": check_min_square(net), "random": check_min_square(net, random_base(net, rng))})
    return rows


def measure_partition() -> dict:
    """Section 3.2.4.1: every admissible permutation of an 8-line MIN, split into Latin squares."""
    return {fam: partition_check(multistage_network(fam, n=3, d=2)) for fam in ("butterfly", "omega", "baseline")}


def measure_rls(quick: bool, progress: Progress) -> list[dict]:
    """Section 3.2.4.2: every rotation of the RLS traced on the Butterfly-Butterfly."""
    rows = []
    for n in progress.track(list(range(2, 7)) + ([] if quick else [8, 10]), "Butterfly-Butterfly RLS"):
        plan = rls.rls_plan(n)
        lines, i = plan.lines, np.arange(plan.lines)
        # where the first butterfly alone leaves each circuit of configuration 1 (destination tags)
        _, first = rls.destination_tag_states(plan.network, 0, n, i[None, :], rls.intermediate(lines, [1]))
        rows.append({"n": n, "lines": lines, "stages": plan.network.num_stages, "check": check_rls(plan),
                     "middle_ok": bool(np.array_equal(first[0], plan.pi[(lines // 2 - i) % lines])),
                     "involution": bool(np.array_equal(rls.involution(lines)[rls.involution(lines)], i))})
    return rows


def measure_clos(rng) -> dict:
    """Sections 2.1.4-2.1.5: Clos routing of random permutations, a blocking example, folding."""
    rows = []
    for n, m, r, n2, m2 in [(2, 2, 4, 0, 0), (2, 3, 4, 0, 0), (3, 4, 4, 0, 0), (3, 5, 4, 0, 0), (4, 4, 6, 0, 0),
                            (2, 2, 4, 2, 2), (3, 3, 6, 2, 2)]:
        props = clos_properties(n, m, r, n2, m2)
        net = clos_network(n, m, r, n2, m2)
        realised, greedy = 0, 0
        for _ in range(20):
            perm = rng.permutation(net.num_inputs)
            traced = trace(net, route_permutation(net, perm))
            realised += np.array_equal(traced.perm, perm) and traced.conflicts == 0
            if not n2:
                greedy += greedy_route(n, m, r, np.arange(net.num_inputs), perm).blocked > 0
        rows.append({"name": f"C({n},{m},{r})" + (f" / C({n2},{m2},{r // n2})" if n2 else ""), "props": props,
                     "realised": realised, "greedy": None if n2 else greedy})
    folds = [("C(2,2,3)", clos_network(2, 2, 3), gft(1, 3, 2)), ("C(3,3,4)", clos_network(3, 3, 4), gft(1, 4, 3)),
             ("Benes 8 (5-stage Clos)", benes_network(3, 2), gft(2, 2, 2)),
             ("Benes 16", benes_network(4, 2), gft(3, 2, 2)), ("3-ary Benes 27", benes_network(3, 3), gft(2, 3, 3))]
    return {"rows": rows, "blocking": blocking_example(3, 4, 4),
            "folds": [(name, folded_clos_is_fat_tree(net, tree), tree.spec) for name, net, tree in folds]}


def measure_top_changes() -> np.ndarray:
    """Section 4.1.2: top-level switches changed from rotation k-1 to k on GFT(2,4,4)."""
    shape = GFTShape(2, 4, 4)
    tops = ft.lls_states(shape, np.arange(shape.processors))[2]
    return np.count_nonzero(np.diff(tops, axis=0) != 0, axis=1)


def measure_timing(quick: bool, progress: Progress) -> list[list]:
    """Total exchange time: circuit-switched fat trees beside the classic store-and-forward algorithms."""
    cases = [(64, "8x8", 6, [(2, 4, 4), (2, 8, 1)])]
    if not quick:
        cases.append((256, "16x16", 8, [(3, 4, 4), (2, 8, 4)]))
    rows = []
    cost: dict[str, Any] = dict(startup=1e-6, per_byte=1e-10)
    for size in progress.track([1024.0, 1048576.0], "total-exchange timing"):
        for n, mesh, dim, trees in cases:
            bound = exchange_lower_bound(CostModel(**cost), size, n - 1)
            for h, m, w in trees:
                for algo in ("all-to-all-personalized-lls", "all-to-all-personalized-cls"):
                    res = run(gft(h, m, w), algo, message_bytes=size, setup=1e-6, **cost)
                    rows.append([n, f"{size:g}", f"GFT({h},{m},{w}) {algo.rsplit('-', 1)[1].upper()}",
                                 res.metrics["passes"], res.metrics["time"], res.metrics["time"] / bound])
            for spec, algo in ((f"ring:{n}", "alltoall-ring"), (f"mesh:{mesh}", "alltoall-mesh"),
                               (f"hypercube:{dim}", "alltoall-hypercube")):
                res = run(spec, algo, engine="event", message_bytes=size, **cost)
                rows.append([n, f"{size:g}", f"{spec} {algo}", "-", res.metrics["time"], res.metrics["time"] / bound])
            rows.append([n, f"{size:g}", "lower bound (N-1 messages per link)", "-", bound, 1.0])
    return rows


def measure(quick: bool, progress: Progress) -> dict:
    """Compute: everything the fat-tree report shows, as plain data (one seeded generator, fixed order)."""
    rng = np.random.default_rng(2021)
    return {"nodes": measure_node_counts(THESIS_TREES), "examples": measure_examples(),
            "figure55": measure_figure55(), "squares": measure_square_counts(quick, rng),
            "verification": measure_verification(quick, progress), "algorithms": measure_thesis_algorithms(quick),
            "mins": measure_mins(quick, rng), "rls": measure_rls(quick, progress), "clos": measure_clos(rng),
            "timing": measure_timing(quick, progress), "partition": measure_partition(),
            "top_changes": measure_top_changes()}


# -- tables ------------------------------------------------------------------------------------
def node_count_table(rows: list[dict]) -> Table:
    """Section 2.2.3: switches per level against the construction's closed form m^(h-x) w^x."""
    out = []
    for r in rows:
        h, m, w = r["tree"]
        out.append([f"GFT({h},{m},{w})", r["kind"], Compare(r["processors"], w * m ** h, kind="closed_form"),
                    *[Compare(r["levels"][x], m ** (h - x) * w ** x, kind="closed_form") for x in range(3)],
                    r["sizes"]])
    return Table("Switches per level: built against the closed form of the construction (2.2.3), m^(h-x) w^x; "
                 "processors w m^h",
                 ["tree", "kind", "processors", "level 0", "level 1", "level 2", "switch sizes (0 / 1 / top)"], out)


def lls_example_table(examples: dict) -> Table:
    """Section 4.1.3: the printed switch states of the LLS examples."""
    rows = [[f"k = {k}", f"level {x}", Compare(examples["lls"][k][x], printed[x])]
            for k, printed in LLS_EXAMPLES.items() for x in (2, 1, 0)]
    return Table("Section 4.1.3: LLS switch states on GFT(2,2,2) (thesis numbering, down stages)",
                 ["rotation", "level", "states, switch 0..3"], rows,
                 notes=["The thesis's state i sends input u to output u - i and its rotation k sends i to i - k; "
                        "ours is the same configuration as our rotation -k with shift states negated."])


def slim_example_table(examples: dict) -> Table:
    """Section 4.2.3: the printed switch states of the slimmed example, two passes."""
    rows = [[f"pass {p}", f"level {x}", Compare(examples["slim"][p][x], printed[x])]
            for p, printed in SLIM_EXAMPLE.items() for x in (2, 1, 0)]
    return Table("Section 4.2.3: slimmed LLS on GFT(2,4,2), k = 3, ceil(4/2) = 2 passes",
                 ["pass", "level", "states"], rows,
                 notes=["Pass 2, level 1: the worked example prints 3 for the first switch of each group; "
                        f"Algorithm 2's own formula gives {SLIM_EXAMPLE_ALGORITHM2.split()[0]}, as we do "
                        "(our states route rotation -3 with no conflict)."])


def figure55_table(fig: dict) -> Table:
    """Section 5.1.3, Figure 5.5: printed permutations and matrices."""
    rows = [[x, Compare(perm, FIG55_ROWS[x]), Compare(matrix, FIG55_MATRICES[x])]
            for x, (perm, matrix) in enumerate(fig["rows"])]
    return Table("Figure 5.5: the Latin square of the XOR translates of M^(0,6) on GFT(2,2,2)",
                 ["x", "permutation (source per output)", "matrix rows (up0 up1 top down1 down0)"], rows,
                 notes=["The caption says M^(0,2); the text and the matrices are M^(0,6) (last column 0110).",
                        f"Latin square: {'yes' if fig['latin_square'] else 'no'}, conflicts: {fig['conflicts']}."])


def square_count_table(squares: dict) -> Table:
    """Sections 5.1.3 and 5.2.3: Latin squares per tree against the thesis's count (a closed form)."""
    rows = []
    for t in squares["trees"]:
        h, m, w = t["tree"]
        sampled = (f"{t['good']}/{squares['samples']} Latin squares, {t['distinct']} distinct of "
                   f"{t['permutations']} permutations")
        rows.append([f"GFT({h},{m},{w})", t["kind"], Compare(f"2^{t['count'].bit_length() - 1}",
                     None if t["formula"] is None else f"2^{t['formula'].bit_length() - 1}", kind="closed_form"),
                     sampled])
    return Table("Latin squares of XOR configurations per tree (configurations / N)",
                 ["tree", "kind", "Latin squares", "random bases checked"], rows,
                 notes=["Slimmed and fattened trees: the thesis's count (5.2.3) is not a closed formula "
                        "(it keeps a free level index x); ours counts one XOR state per top and down switch, "
                        "level 0 having w states: w^(m^h) * m^(sum_x w^x m^(h-x)) configurations."])


def verification_table(rows: list[dict]) -> Table:
    """Chapters 4 and 5: one line per scheme and tree; passes against ceil(m/w) (a closed form, h = 2)."""
    out = []
    for r in rows:
        h, m, w = r["tree"]
        check = r["check"]
        line = (f"{r['processors']} permutations, Latin square: {'yes' if check.latin_square else 'no'}, "
                f"conflicts: {check.conflicts}, passes: {check.passes}")
        out.append([f"GFT({h},{m},{w})", r["scheme"], line,
                    Compare(check.passes, r["formula_passes"], kind="closed_form"), f"{r['pass_bound']:g}",
                    r["per_pass"]])
    return Table("Verification per scheme and tree (circuit engine, every row and pass traced)",
                 ["tree", "scheme", "result", "passes (closed form ceil(m/w), thesis 4.2, h = 2)",
                  "pass bound (m/w)^(h-1)", "circuits per pass"], out,
                 notes=["h >= 3 slimmed trees need (m/w)^(h-1) passes (the top carries m w^h circuits for "
                        "w m^h processors); the thesis works through h = 2 only."])


def algorithms_table(rows: list[dict]) -> Table:
    """Algorithms 1 and 2 as printed: rows that are rotations, out of all rows."""
    return Table("Algorithms 1 and 2 as printed versus the carry rule (thesis numbering)",
                 ["tree", "algorithm", "passes", "rows that are rotations i -> i - k",
                  "rows delivered once, no conflict, Latin square"],
                 [[r["tree"], r["algorithm"], r["passes"], Compare(r["rotations"], r["rows"], kind="closed_form"),
                   "yes" if r["ok"] else "no"] for r in rows],
                 notes=["Our LLS (the carry rule) realises every rotation on every tree tested.",
                        "Algorithm 2: top state floor(k / (ceil(m/w) w^h)) mod m as in the worked example of 4.2.3; "
                        "state i read as u -> u - i, which is the thesis's w x m state for m = 2w (trees chosen so)."])


def min_table(rows: list[dict]) -> Table:
    """Section 3.2.4: XOR / d-shift steps on MINs."""
    out = [[r["network"], "XOR (Massini 2003)" if r["d"] == 2 else "d-shift (Liu et al. 2007)",
            f"{r['inputs']} permutations, Latin square: {'yes' if r['straight']['latin_square'] else 'no'}, "
            f"conflicts: {r['straight']['conflicts']}", "yes" if r["random"]["latin_square"] else "no"]
           for r in rows]
    return Table("XOR / d-shift steps on log_d N-stage MINs", ["network", "scheme", "straight base",
                 "random base: Latin square"], out,
                 notes=["The right Latin square on the 2 log2 N - 1 stage Butterfly-Butterfly has its own table."])


def rls_table(rows: list[dict]) -> Table:
    """Section 3.2.4.2: the right Latin square on the Butterfly-Butterfly; stages against 2 log2 N - 1."""
    out = []
    for r in rows:
        check = r["check"]
        line = (f"{r['lines']} permutations i -> i - k, Latin square: {'yes' if check.latin_square else 'no'}, "
                f"conflicts: {check.conflicts}, rows not the rotation: {check.wrong_rows}")
        out.append([f"butterfly-butterfly:n={r['n']}", Compare(r["stages"], 2 * r["n"] - 1, kind="closed_form"),
                    line, "yes" if check.first_stage_straight else "no", "yes" if r["middle_ok"] else "no"])
    return Table("Right Latin square on the Butterfly-Butterfly (Izzi and Massini 2020, thesis 3.2.4.2)",
                 ["network", "stages (closed form 2 log2 N - 1, thesis 3.2.4.2)",
                  "result (circuit engine, every row traced)", "first stage straight (all k)",
                  "k = 1: middle stage output is pi(N/2 - i)"], out,
                 notes=["Configuration k realises i -> (i - k) mod N: the thesis's first rotation, traced, moves "
                        "every message one place down (its row of images is rotated right, hence RLS).",
                        "Second butterfly: the identity's settings for even k, stage log2 N complemented for odd k; "
                        "first butterfly: pi((i - k) mod N) for even k, pi((N/2 - 1 + k - i) mod N) for odd k "
                        "(k = 1 is the thesis's pi(N/2 - i)), set by destination tags."])


def clos_table(clos: dict) -> Table:
    """Section 2.1.4: Clos networks, non-blocking conditions and routing."""
    rows = [[r["name"], "yes" if r["props"]["strictly_nonblocking"] else "no",
             "yes" if r["props"]["rearrangeable"] else "no", f"{r['realised']}/20",
             "-" if r["greedy"] is None else f"{r['greedy']}/20"] for r in clos["rows"]]
    return Table("Clos networks: non-blocking from (n, m, r), 20 random permutations routed by edge colouring",
                 ["network", "strict (m >= 2n-1)", "rearrangeable (m >= n)", "realised, no conflict",
                  "greedy router blocked"], rows,
                 notes=["C(2,2,4) with C(2,2,2) middles is the 5-stage Clos of thesis 2.1.4 (Benes on 8 lines)."])


def timing_table(rows: list[list]) -> Table:
    return Table("Total exchange time (s): circuit-switched fat trees vs classic store-and-forward",
                 ["N", "message bytes", "network / scheme", "passes", "time", "/ bound"], rows,
                 notes=["Fat trees: (N-1) rows x passes x (set-up 1 us + start-up 1 us + m t_w), t_w = 0.1 ns/B; "
                        "the identity row stays home.  Classic: event engine, same t_s and t_w, messages bundled."])


def tables(ev: dict) -> list[Table]:
    return [node_count_table(ev["nodes"]), lls_example_table(ev["examples"]), slim_example_table(ev["examples"]),
            figure55_table(ev["figure55"]), square_count_table(ev["squares"]), verification_table(ev["verification"]),
            algorithms_table(ev["algorithms"]), min_table(ev["mins"]), rls_table(ev["rls"]), clos_table(ev["clos"]),
            timing_table(ev["timing"])]


# -- claims ------------------------------------------------------------------------------------
def scheme_claims(ev: dict) -> list[Claim]:
    """Chapters 4 and 5: LLS and CLS route every row; Algorithms 1 and 2 as printed; one top switch per step."""
    found = {r["tree"] + (r["scheme"],): r["check"] for r in ev["verification"]}
    changes = ev["top_changes"]
    return [
        Claim("Configuration k (carry rule, straight up stages) realises the rotation i -> i + k with no link used "
              "twice, for every k (ch. 4)", all(c.ok for key, c in found.items() if key[3] == "LLS"),
              f"{sum(1 for key in found if key[3] == 'LLS')} trees, every row traced"),
        *algorithm_claims(ev["algorithms"]),
        Claim("C^x realises i -> i XOR x; the N configurations form the CLS (ch. 5)",
              all(c.ok for key, c in found.items() if key[3] == "CLS"),
              f"{sum(1 for key in found if key[3] == 'CLS')} trees, every row traced"),
        Claim("Rotation k is obtained from rotation k-1 by changing one top-level switch (4.1.2)",
              bool(changes.max() <= 1), f"GFT(2,4,4): top switches changed per step: max {int(changes.max())}, "
              f"steps changing exactly one: {int(np.count_nonzero(changes == 1))} of {len(changes)}"),
        *pass_claims(found),
    ]


def algorithm_claims(rows: list[dict]) -> list[Claim]:
    """Sections 4.1.3 and 4.2.3: Algorithms 1 and 2 as printed."""
    one = [r for r in rows if r["algorithm"] == "Algorithm 1"]
    two = [r for r in rows if r["algorithm"] == "Algorithm 2"]
    evidence = "; ".join(f"{r['tree']}: {r['rotations']} of {r['rows']} rows are rotations" for r in one)
    evidence2 = "; ".join(f"{r['tree']}, {r['passes']} passes: {r['rotations']} of {r['rows']} rows are rotations"
                          for r in two)
    return [
        Claim("Algorithm 1 as printed gives rotation k (the first k mod w^x switches of each group get +1)",
              all(r["rotations"] == r["rows"] for r in one),
              evidence + ". The carry reaches the switches whose digit-reversed local index is small, not "
              "the first ones; k = 5 and 7 on GFT(2,2,2) (the printed examples) are among the rows that work."),
        Claim("Algorithm 2 as printed gives rotation k over the ceil(m/w) passes of a slimmed GFT(2,m,w) (4.2.3)",
              all(r["rotations"] == r["rows"] for r in two),
              evidence2 + "; every row still delivers each message once with no conflict (same cause as "
              "Algorithm 1: the first switches of a group are not the ones the carry reaches)"),
    ]


def pass_claims(found: dict) -> list[Claim]:
    """Section 4.2: passes of slimmed trees, h = 2 and h >= 3."""
    h2 = {k[:3]: c.passes for k, c in found.items() if k[0] == 2 and k[1] > k[2]}
    h3 = {k[:3]: c.passes for k, c in found.items() if k[0] >= 3 and k[1] > k[2]}
    return [
        Claim("A slimmed GFT(2,m,w) needs ceil(m/w) passes per permutation (4.2)",
              all(v == -(-k[1] // k[2]) for k, v in h2.items()), ", ".join(f"GFT{k}: {v}" for k, v in h2.items())),
        Claim("ceil(m/w) passes suffice on any slimmed GFT(h,m,w) (4.2, stated for every h)",
              all(v == -(-k[1] // k[2]) for k, v in h3.items()),
              ", ".join(f"GFT{k}: {v} passes (bound (m/w)^(h-1) = {(k[1] / k[2]) ** (k[0] - 1):g}) vs ceil(m/w) = "
                        f"{-(-k[1] // k[2])}" for k, v in h3.items())),
    ]


def square_claims(ev: dict) -> list[Claim]:
    """Sections 5.1.3 and 3.2.4: Latin-square counts, Figure 5.5, MIN schemes, Massini's partition."""
    sq, fig = ev["squares"], ev["figure55"]
    exhaustive = sq["squares_ok"] == sq["total"] == sq["count"] and sq["distinct"] == sq["configurations"]
    figure_match = all(p == FIG55_ROWS[x] and m == FIG55_MATRICES[x] for x, (p, m) in enumerate(fig["rows"]))
    mins_ok = all(r["straight"]["latin_square"] and r["random"]["latin_square"]
                  and not (r["straight"]["conflicts"] or r["random"]["conflicts"]) for r in ev["mins"])
    return [
        Claim("GFT(2,2,2): the m^((h+1)m^h) permutations routable with straight up stages split into "
              "m^((h+1)m^h-(h+1)) Latin squares (5.1.3)", exhaustive,
              f"exhaustive: {sq['total']} bases, {sq['squares_ok']} Latin squares, {sq['distinct']} distinct "
              f"permutations of {sq['configurations']} configurations, each in exactly one square"),
        Claim("Figure 5.5 (translates of M^(0,6) on GFT(2,2,2)) is a Latin square and matches",
              fig["ok"] and figure_match, "8 rows and 8 matrices compared cell by cell"),
        Claim("XOR steps (Massini 2003) and d-shift steps (Liu et al. 2007) route a Latin square on log_d N-stage "
              "MINs", mins_ok, "see the MIN table (straight and random bases)"),
        massini_partition_claim(ev["partition"]),
    ]


def massini_partition_claim(parts: dict) -> Claim:
    """3.2.4.1: all admissible permutations of a log2 N-stage MIN split into N^(N/2 - 1) Latin squares."""
    ok = all(p["squares"] == p["latin_squares"] == 8 ** 3
             and p["distinct_permutations"] == p["configurations"] == 8 ** 4 for p in parts.values())
    return Claim("The admissible permutations of a log2 N-stage MIN split into N^(N/2 - 1) Latin squares, one per "
                 "base with its first row straight (Massini 2003, thesis 3.2.4.1)", ok,
                 "exhaustive on 8 lines: " + "; ".join(
                     f"{fam}: {p['configurations']} configurations, {p['distinct_permutations']} distinct "
                     f"permutations, {p['latin_squares']} of {p['squares']} squares Latin (paper: 8^3 = 512)"
                     for fam, p in parts.items()))


def rls_claims(rows: list[dict]) -> list[Claim]:
    """Section 3.2.4.2: identity, first rotation and the whole RLS on the Butterfly-Butterfly."""
    checks = {r["n"]: r["check"] for r in rows}
    identity_ok = all(np.array_equal(c.perms[0], np.arange(2 ** n)) and c.conflicts == 0 for n, c in checks.items())
    first_ok = all(np.array_equal(c.perms[1], (np.arange(2 ** n) - 1) % 2 ** n) and c.first_stage_straight
                   for n, c in checks.items())
    lines = ", ".join(str(2 ** n) for n in checks)
    return [
        Claim("The identity is pi applied once in each butterfly of the Butterfly-Butterfly, pi(pi(x)) = x "
              "(3.2.4.2)", all(r["involution"] for r in rows) and identity_ok,
              f"N = {lines}: pi is an involution and row 0 traced is the identity with no link used twice"),
        Claim("First rotation: stage 0 straight, first butterfly pi(N/2 - i), stage log2 N complemented (3.2.4.2)",
              first_ok, f"N = {lines}: traced, configuration 1 is i -> i - 1 with no conflict"),
        Claim("With the second butterfly fixed (identity's settings, stage log2 N complemented for odd "
              "rotations) the N configurations route the RLS", all(c.ok for c in checks.values()),
              f"N = {lines}: every row equals its rotation, conflicts "
              f"{sum(c.conflicts for c in checks.values())}, Latin square in every case: "
              f"{'yes' if all(c.latin_square for c in checks.values()) else 'no'}"),
    ]


def clos_claims(clos: dict) -> list[Claim]:
    """Sections 2.1.4 and 2.1.5: blocking below 2n-1 middle switches; a folded Clos is a fat tree."""
    ex = clos["blocking"]
    folds = clos["folds"]
    return [
        Claim("A Clos C(n,m,r) with m < 2n-1 blocks: C(3,4,4)", ex.new_blocked and ex.rearranged is not None,
              f"requests in place on middle switches {ex.middle.tolist()}; request {int(ex.src[-1])} -> "
              f"{int(ex.dst[-1])} finds every middle switch busy; after rearranging, middle switches "
              f"{ex.rearranged.tolist()} route all {len(ex.src)} requests"),
        Claim("A Clos network folded at its middle stage is a fat tree (2.1.5)", all(r[1] for r in folds),
              "; ".join(f"folded {n} ~ {s}: {'isomorphic' if ok else 'not isomorphic'}" for n, ok, s in folds)),
    ]


def claims(ev: dict) -> list[Claim]:
    return scheme_claims(ev) + square_claims(ev) + rls_claims(ev["rls"]) + clos_claims(ev["clos"])


# -- write -------------------------------------------------------------------------------------
def draw_configuration(out: Path) -> Path:
    """The opened GFT(2,2,2) with the thesis's configuration for k = 5 (our rotation 3)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..infra.fileio import save_figure

    shape = GFTShape(2, 2, 2)
    net = shape.network
    route = ft.lls_routes(shape, [3])[0]
    fig, ax = plt.subplots(figsize=(10, 5))
    gap = 3.0
    ports = int(net.ins.max())
    for s in range(net.num_stages):
        for a in range(int(net.switches[s])):
            ax.add_patch(plt.Rectangle((s * gap, a * ports - 0.4), 1.0, ports - 0.2, fill=False))
            state = (route[net.in_off[s] + a * net.ins[s]] - 0) % net.outs[s]
            ax.text(s * gap + 0.5, a * ports + ports - 0.5, str(int(state)), ha="center", fontsize=7)
        ax.text(s * gap + 0.5, -1.4, net.stage_names[s], ha="center", fontsize=8)
    colours = plt.cm.tab10(np.linspace(0, 1, net.num_inputs))
    for i in range(net.num_inputs):
        g = int(net.net_in[i])
        ax.plot([-1.0, 0.0], [g, g], color=colours[i])
        ax.text(-1.4, g, str(i), va="center", fontsize=8)
        for s in range(net.num_stages):
            local = g - int(net.in_off[s])
            sw, port = divmod(local, int(net.ins[s]))
            port_out = int(route[g])
            y_in, y_out = sw * ports + port, sw * ports + port_out
            ax.plot([s * gap, s * gap + 1.0], [y_in, y_out], color=colours[i])
            go = int(net.out_off[s]) + sw * int(net.outs[s]) + port_out
            if s == net.num_stages - 1:
                dest = int(net.net_out[go - int(net.out_off[s])])
                ax.plot([s * gap + 1.0, s * gap + 2.0], [y_out, dest], color=colours[i])
                ax.text(s * gap + 2.2, dest, f"{dest}", va="center", fontsize=8)
                break
            g = int(net.next_in[go])
            nxt = g - int(net.in_off[s + 1])
            sw2, port2 = divmod(nxt, int(net.ins[s + 1]))
            ax.plot([s * gap + 1.0, (s + 1) * gap], [y_out, sw2 * ports + port2], color=colours[i], lw=0.8)
    ax.set_title("Opened GFT(2,2,2): thesis rotation k = 5 (i -> i - 5 = i + 3); numbers are shift states")
    ax.axis("off")
    return save_figure(fig, out / "fattree_gft222_k5.png")


def run_fattree(quick: bool = True, out: Path | None = None, progress: Progress | None = None) -> Report:
    """Magliocca (2021) chapters 2-5 with the MIN and Clos background: compute, tables, claims, one figure."""
    ev = measure(quick, progress or Progress(enabled=False))
    report = Report("fattree", "All-to-all personalized exchange on fat trees by Latin squares (Magliocca 2021)",
                    tables(ev), claims(ev))
    report.notes += [
        "Conventions: our shift state s sends input u to output u + s and our rotation k sends i to i + k; "
        "the thesis numbers states the other way and lists a permutation as the source reaching each output "
        "(its Figure 5.5 rows are the inverses of the maps we trace). Its configuration for k is ours for -k.",
        "4.1.1 defines state i as input k -> output (i - k) mod m; that is not straight at i = 0 for m > 2. "
        "4.2.1's explicit down-switch states (k -> k - i) are the reading that reproduces the examples.",
        "The slimmed down-switch state for w <= i < m (k -> k + w - (i mod w)) equals k - i mod m only when "
        "m = 2w; we use k - i (ours: k + s) for every m/w.",
    ]
    if out is not None:
        report.figures.append(draw_configuration(Path(out)))
    return report


register_experiment(Experiment(
    "fattree", run_fattree,
    "fat trees, MINs and Clos: LLS/CLS all-to-all personalized exchange by Latin squares",
    paper=PAPER, weight=1.2))
