"""The wormhole kernels' state: the groups their stages pass, the worm record's fields, the counters.

Every group is a named tuple of arrays or numbers (numba passes it by value
and, in a stage inlined into the kernel, unpacks it at no cost), so a stage
takes a few groups named for what they hold rather than dozens of arrays.
Each kernel gets the first five from :func:`topocast.sim.wormhole.engine.simulate`:

* :class:`Run`: the run (cycles, start-up, batch, watchdog);
* :class:`Net`: the router and the worm's length;
* :class:`Procs`: the processors' state (:mod:`topocast.sim.wormhole.processors`);
* :class:`Paths`: the plan's routes;
* :class:`Out`: what the kernel fills in.

and :class:`Fifo` (``tail-sent`` VC release: the shared buffers) or None,
:class:`Ugal` (UGAL-L routes) or None.  The flit-level kernel makes the rest,
its :class:`Kernel`: registers, :class:`Channels`, a :class:`Pool` of worm
records, and :class:`Flits` (every flit on its own) or :class:`Trains` (one
VC per link).

The worm record of the flit-level kernel is one row of ``Pool.rs``, its
fields the ``R_*`` columns below, each documented once where it is defined.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

#: the run: cycles to simulate at most, cycles of a start-up, worms per start-up, cycles without a move (or
#: between knot searches) before the watchdog acts, whether to stop when nothing is left to do
Run = namedtuple("Run", "cycles startup batch watchdog stop_idle")
#: the router: flits per worm, VCs per link (1 on the rigid path), flits of buffer per VC, router delay, link
#: latency, credit delay (cycles), ejection channels per node (0: unlimited), whether intermediate destinations
#: hold an ejection channel, and the trains' horizon (a power of two, :func:`~.engine._train_span`)
Net = namedtuple("Net", "flits vcs depth router_delay link_latency credit_delay ej_channels inter_ej span")
#: the processors: ``jobs`` and ``nodes`` (rows ``J_*``, ``Q_HEAD`` ..), the jobs released by time, ``worms``
#: (rows ``W_*``), the worms in flight (``active``: their records in the flit-level kernel) and the timer wheel
Procs = namedtuple("Procs", "jobs n_timed nodes worms active wheel")
#: the plan's routes: per worm its first path position (``ptr``), per path position its node, the arc entering
#: it (-1 at a source), its VC, its destination slot (-1: none); per slot the job its delivery releases (-1: none)
Paths = namedtuple("Paths", "ptr node arc vc slot slot_job")
#: filled in by a kernel: per slot its delivery cycle and copies, per channel its owner, the worms of a
#: deadlock, the counters (``S_*``)
Out = namedtuple("Out", "slot_time slot_count owner dead stats")
#: ``tail-sent`` VC release, per channel: the flits sent in, the flits out (trains: whose departures are known),
#: a ring of the last departures and of their worms' ages (``ring`` slots per channel, a power of two >= the
#: buffer depth); per path position the header's index in its channel's order of entry
Fifo = namedtuple("Fifo", "ch_in ch_out dep age p_in ring")
#: UGAL-L: per worm its alternate route (first and end path position, -1: none), per link the flits in the
#: buffers at its far end, and the threshold of the choice (:func:`~.allocate._choose_route`)
Ugal = namedtuple("Ugal", "alt occ threshold")
#: the channels of the flit-level kernel: per VC its owner (-1: free) and the first cycle it can be allocated,
#: per node its free ejection and injection channels, and (trains) per VC, then per node's ejection channels,
#: the first record waiting for it to be freed (a list linked through ``R_WAITS``, -1: empty)
Channels = namedtuple("Channels", "owner avail ej_free inj_free waiting")
#: the pool of worm records: ``rs`` (a row per record, the ``R_*`` fields), the free records (a stack) and,
#: for the watchdog, the worms of the records in flight
Pool = namedtuple("Pool", "rs free in_flight")
#: every flit on its own (several VCs per link, UGAL, or ``tail-sent`` beyond the trains' horizon): per flit
#: (``record * flits + j``) its position (-1: still at the processor), the cycle it arrives (arrived) in that
#: position's buffer and, for the first flit of a *run* (the worm's flits in one buffer), the run's length;
#: with a credit delay its departures by position mod ``credit_delay + 1``; per record the first flit not yet
#: ejected; per link the cycle it last carried a flit (one flit per cycle)
Flits = namedtuple("Flits", "pos arr run hist first link_used")
#: trains (one VC per link): per row ``j`` of the recursion ``grp[j] = j // depth``; per record (``record *
#: (flits + depth)``) ``depth`` virtual rows (``tail-sent``: the departures of the flits ahead of rows ``j <
#: depth``, else FAR) then per flit its last departure computed; per record the moves due in each of the next
#: ``span`` cycles and the tail's departures by position (both mod ``span``)
Trains = namedtuple("Trains", "grp cur sched tail_at")
#: the flit-level kernel's own state besides its form's (``Flits`` or ``Trains``): its registers (``G_*``), its
#: channels and its pool of records
Kernel = namedtuple("Kernel", "regs chans pool")
#: the record a stage works on in one visit: its index in the pool (``sl``), its worm, the first path position of
#: the route it runs and its hops, its first flit's index in the per-flit arrays (``Flits``, ``Trains.cur``)
Visit = namedtuple("Visit", "sl w base h fb")

#: a kernel's status: running or done, deadlocked, a train's departure beyond its horizon (run again flit by flit)
OK, DEADLOCK, BROKEN = 0, 1, 2
#: a kernel's registers (``Kernel.regs``), kept in an array while its cycle loop hands over to the watchdog: the
#: cycle, the worms in flight, the nodes with work, the next job released by time, the nodes pending, the free
#: records, the next train's age, the cycle of the last move and of the last knot search; the counters (flit
#: moves, header advances, most worms in flight, worms done), the status, and whether the watchdog is due (1:
#: nothing moved for ``watchdog`` cycles; 2: some worm has not)
(G_T, G_ACTIVE, G_BUSY, G_RP, G_PEND, G_FREE, G_AGE, G_MOVE, G_CHECK, G_FLIT_MOVES, G_ADVANCES, G_MAX_ACTIVE, G_DONE,
 G_STATUS, G_DUE) = range(15)
NUM_G = 15
#: the counters a kernel leaves in ``Out.stats``
S_CYCLES, S_FLIT_MOVES, S_ADVANCES, S_STATUS, S_MAX_ACTIVE, S_WORMS_DONE, S_STALL_CYCLE = range(7)
NUM_STATS = 7

#: a cycle later than any run: "not by waiting" (blocked by a flit or a channel, not by the clock)
NEVER = np.iinfo(np.int64).max
#: long before any run (a train's departure no wait reaches back to)
FAR = -(1 << 30)

# The worm record of the flit-level kernel: a row of ``Pool.rs`` (one matrix row, so that a record's fields
# share cache lines), taken by a worm when it enters its injection channel and freed when it is done.  "trains"
# marks a field only trains use, "flits" one only the flit-by-flit form uses, "tail-sent" one only used with
# ``tail-sent`` VC release; the others are every record's.
R_NEXT = 0      # trains: first cycle the header needs a full visit (NEVER: when the channel it waits for is freed)
R_WORM = 1      # the worm
R_BASE = 2      # the first path position of the route it runs
R_H = 3         # the route's hops
R_MOVED = 4     # the cycle it last moved (or entered its injection channel)
R_SLEEP = 5     # flits: if nothing of it moved last visit, the first cycle the clock alone may let it move
R_HPREV = 6     # trains: the header's departure before its last
R_HPOS = 7      # trains: the header's position
R_HARR = 8      # trains: the cycle the header arrived (arrives) in its buffer
R_COL = 9       # trains: the last column of the recursion computed
R_GOAL = 10     # trains: the last column the header's departures determine
R_TK = 11       # trains: the next position the tail leaves
R_TLAST = 12    # trains: the last position whose tail departure is computed
R_TIN = 13      # trains: the cycle the tail entered the injection channel (NEVER: not known yet)
R_TNEXT = 14    # trains: the cycle the tail leaves position R_TK (NEVER: not known yet)
R_LAST = 15     # trains: the latest departure computed
R_AGE = 16      # trains: the worm's age (its order among the records: the order of visits)
R_PART = 17     # tail-sent trains: the rows done of a partial step (-1: none)
R_AHEAD = 18    # tail-sent trains: the header's entry into its channel while the departure of the flit ahead of
#                 it is not known (0: known, counted in R_HARR)
R_VSET = 19     # tail-sent trains: whether its virtual rows hold departures (1) or FAR (0)
R_WAITS = 20    # trains: the next record waiting for the same channel (Channels.waiting)
NUM_R = 21
