"""A toy frontier rule's one transfer, shared by the frontier engine tests."""

import numpy as np

from topocast.sim.frontier import FIRST_BAD, RECEIVERS, REDUNDANT, TRANSFERS


def send_bit(v, t, label, held, fresh, stats, label_counts, record, rs, rd, rl, nrec):
    """A toy three-bitmap rule's transfer v -> t under ``label``: count it, record it, mark t fresh and held
    (redundant if it held already), as :mod:`topocast.sim.frontier` expects of ``expand``."""
    tw, tb = t >> 6, np.uint64(1) << np.uint64(t & 63)
    stats[TRANSFERS] += 1
    label_counts[label] += 1
    if record:
        rs[nrec], rd[nrec], rl[nrec] = v, t, label
        nrec += 1
    if not fresh[tw] & tb:
        fresh[tw] |= tb
        stats[RECEIVERS] += 1
    if held[tw] & tb:
        stats[REDUNDANT] += 1
        if stats[FIRST_BAD] < 0:
            stats[FIRST_BAD] = t
    else:
        held[tw] |= tb
    return nrec
