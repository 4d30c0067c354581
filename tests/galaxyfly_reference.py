"""SFATA and RFATA (Zhuang et al. 2023, Algorithms 1-4) as the paper's loops, one transfer at a time, with plain
Python sets: the oracle the vectorised Galaxyfly planner is tested against."""

from topocast.algorithms.galaxyfly_plan import halving_tree, spc_tree
from topocast.topology.galaxyfly import supernode_view


class ReferencePlan:
    """The algorithms as loops, one transfer at a time.

    A transfer carries what its receiver lacks of what is offered and waits
    for the transfers that brought those packets to its sender.  ``packet``:
    the RPD that spreads a branch arriving during SPC moves one packet per
    transfer (``forwarding=packet``).
    """

    def __init__(self, topology, root, packet=False):
        self.view = supernode_view(topology)
        self.root, self.packet = root, packet
        n = topology.num_nodes
        self.held = [{r} for r in range(n)]
        self.brought = [dict() for _ in range(n)]  # packet -> transfer that delivered it
        self.transfers = []  # (src, dst, carried, after)
        self.parent, self.order = spc_tree(self.view, root)
        self.sub = {s: set(self.routers(s)) for s in range(self.view.num_supernodes)}
        for s in reversed(self.order[1:]):
            self.sub[int(self.parent[s])] |= self.sub[s]

    def routers(self, s):
        return list(self.view.routers(s))

    def send(self, u, v, offered):
        carried = set(offered) - self.held[v]
        if carried:
            after = sorted({self.brought[u][p] for p in carried if p in self.brought[u]})
            for p in carried:
                self.brought[v][p] = len(self.transfers)
            self.held[v] |= carried
            self.transfers.append((u, v, frozenset(carried), after))

    def rpc(self, s, root):
        for child, parent in halving_tree(self.routers(s), root):
            self.send(child, parent, set(self.held[child]))

    def rpd(self, s, root, offered, per_packet=False):
        for part in ([{p} for p in sorted(offered)] if per_packet else [offered]):
            for child, parent in reversed(halving_tree(self.routers(s), root)):
                self.send(parent, child, part)

    def gather(self, s):
        self.rpc(s, s * self.view.a)
        self.rpd(s, s * self.view.a, set(self.routers(s)))

    def spc(self, router_first):
        for s in reversed(self.order[1:]):
            p = int(self.parent[s])
            exit_router, entry = self.view.router_to(s, p), self.view.router_to(p, s)
            if not router_first:
                self.rpc(s, exit_router)
            self.send(exit_router, entry, self.sub[s])
            if router_first or p == self.root:
                self.rpd(p, entry, self.sub[s], per_packet=self.packet)

    def spd(self, offered):
        for s in self.order[1:]:
            p = int(self.parent[s])
            entry = self.view.router_to(s, p)
            self.send(self.view.router_to(p, s), entry, offered)
            self.rpd(s, entry, offered)

    def run(self, router_first):
        """SFATA (``router_first`` False: gather at the root only) or RFATA (every supernode gathers first)."""
        for s in (range(self.view.num_supernodes) if router_first else [self.root]):
            self.gather(s)
        self.spc(router_first)
        self.spd(set(range(len(self.held))))
        return self.transfers


def schedule_transfers(schedule):
    """A schedule's transfers in the reference's form: (src, dst, packets, the transfers waited for)."""
    return [(int(schedule.src[t]), int(schedule.dst[t]), frozenset(schedule.messages_of(t).tolist()),
             schedule.after_ids[schedule.after_ptr[t]:schedule.after_ptr[t + 1]].tolist())
            for t in range(schedule.num_transfers)]
