"""Hand-built wormhole traffic for the engine's tests: explicit worms, their paths, slots, VCs and jobs."""

from __future__ import annotations

import numpy as np

from topocast.plans.wormhole import WormTraffic


def worm_traffic(topology, worms, release, prep=0, vcs=None, job_of=None) -> WormTraffic:
    """One worm per entry of ``worms`` = [(path of nodes, slot positions)], VC ``vcs[i][k]`` on hop ``k`` (VC 0
    when None); worm ``i`` in job ``job_of[i]`` (default: its own job; jobs in order), job ``j`` released at
    ``release[j]`` after ``prep`` cycles of preparation."""
    job_of = list(range(len(worms))) if job_of is None else list(job_of)
    node, arc, slot, vc, ptr, slot_node = [], [], [], [], [0], []
    for i, (path, slots) in enumerate(worms):
        for k, v in enumerate(path):
            node.append(v)
            arc.append(-1 if k == 0 else topology.arc_index(path[k - 1], v))
            slot.append(len(slot_node) if k in slots else -1)
            if k in slots:
                slot_node.append(v)
            vc.append(0 if vcs is None else vcs[i][k])
        ptr.append(len(node))
    jobs = len(release)

    def a(x):
        return np.asarray(x, dtype=np.int64)

    return WormTraffic(job_node=a([worms[job_of.index(j)][0][0] for j in range(jobs)]), job_release=a(release),
                       job_prep=np.full(jobs, prep, np.int64),
                       job_worm_ptr=a(np.searchsorted(job_of, np.arange(jobs + 1))), path_ptr=a(ptr),
                       path_node=a(node), path_arc=a(arc), path_slot=a(slot), slot_node=a(slot_node),
                       slot_job=np.full(len(slot_node), -1, np.int64), path_vc=None if vcs is None else a(vc))
