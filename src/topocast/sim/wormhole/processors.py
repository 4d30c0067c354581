"""The processors of the wormhole kernels, and the timing of their deadlock watchdog.

Both kernels (:mod:`~topocast.sim.wormhole.kernel`,
:mod:`~topocast.sim.wormhole.rigid`) keep the processors' state in a few
arrays of rows (``nodes``, ``jobs``, ``worms``: the row indices below; the
group :class:`~topocast.sim.wormhole.state.Procs`) rather than one array per
quantity.  :func:`_processors` is the per-cycle step of the nodes (jobs
released, start-ups, injection); a start-up in progress waits on a timer
wheel of :data:`WHEEL` buckets.
"""

from __future__ import annotations

import numba as nb

#: rows of the kernels' per-node state ``nodes`` (a column per node): the processor's queue of jobs (head,
#: tail), its job (-1: none), batch and end of start-up, its injection queue of worms (head, tail), its work
#: (queued jobs + running job + queued worms), free injection and ejection channels, the nodes to visit next
#: cycle (PEND) and this cycle (WORK), each row followed by the cycle a node was last put on it, and the
#: start-up in progress on the timer wheel (next node in its bucket, cycle it ends)
(Q_HEAD, Q_TAIL, P_JOB, P_BATCH, P_END, I_HEAD, I_TAIL, N_WORK, INJ_FREE, EJ_FREE, PEND, PEND_AT, WORK, WORK_AT,
 T_NEXT, T_AT) = range(16)
NODE_ROWS = 16
#: rows of ``jobs`` (a column per job and one more): node, release cycle (-1: released by a delivery),
#: preparation, first worm (the plan's ``job_worm_ptr``), next job in its node's queue, cycle it started, and
#: the jobs released by time in order of release
J_NODE, J_RELEASE, J_PREP, J_WORMS, J_NEXT, J_START, J_ORDER = range(7)
JOB_ROWS = 7
#: buckets of the timer wheel of start-ups in progress (a power of two): a node whose start-up ends in cycle
#: ``c`` waits in bucket ``c % WHEEL`` (a node has at most one start-up in progress)
WHEEL = 1024
#: rows of ``worms``: next worm in its node's injection queue, header and tail positions, injection and
#: completion cycles, cycle of its last move (or injection), and the first and last-plus-one path positions of
#: the route it runs (the plan's ``path_ptr[w]``, ``path_ptr[w + 1]``, or its alternate route's when the source
#: chose that, ``routing=ugal``)
W_NEXT, W_POS, W_TAIL, W_INJECT, W_DONE, W_MOVED, W_START, W_END = range(8)
WORM_ROWS = 8


@nb.njit(cache=True, inline="always")
def _append(x, v, nodes, head, tail, links, link_row):
    """Append ``x`` to a list of node ``v`` (first and last in ``nodes[head, v]``, ``nodes[tail, v]``, -1: empty;
    linked through ``links[link_row]``) and count it in the node's work."""
    if nodes[tail, v] < 0:
        nodes[head, v] = x
    else:
        links[link_row, nodes[tail, v]] = x
    nodes[tail, v] = x
    nodes[N_WORK, v] += 1


@nb.njit(cache=True, inline="always")
def _enqueue(j, v, nodes, jobs):
    """Append job ``j`` to node ``v``'s FIFO; True if the node was idle until now."""
    _append(j, v, nodes, Q_HEAD, Q_TAIL, jobs, J_NEXT)
    return nodes[N_WORK, v] == 1


@nb.njit(cache=True, inline="always")
def _mark(v, when, nodes, row, n):
    """Add node ``v`` to the list ``nodes[row, :n]`` unless already there for cycle ``when`` (noted in
    ``nodes[row + 1, v]``); the new count."""
    if nodes[row + 1, v] != when:
        nodes[row + 1, v] = when
        nodes[row, n] = v
        n += 1
    return n


@nb.njit(cache=True)
def _sift(a, i, n):
    """Move ``a[i]`` down the max-heap ``a[:n]`` to its place."""
    v = a[i]
    while 2 * i + 1 < n:
        c = 2 * i + 1
        if c + 1 < n and a[c + 1] > a[c]:
            c += 1
        if a[c] <= v:
            break
        a[i] = a[c]
        i = c
    a[i] = v


@nb.njit(cache=True)
def _heap_sort(a, n):
    """Sort ``a[:n]`` in place (heapsort: numba's own sort costs most of a second to compile)."""
    for i in range(n // 2 - 1, -1, -1):
        _sift(a, i, n)
    for end in range(n - 1, 0, -1):
        a[0], a[end] = a[end], a[0]
        _sift(a, 0, end)


@nb.njit(cache=True, inline="always")
def _processors_due(t, n_pend, rp, procs):
    """Whether :func:`_processors` has something to do in cycle ``t``: nodes pending, a start-up ending, a job
    released."""
    jobs = procs.jobs
    return (n_pend > 0 or procs.wheel[t & (WHEEL - 1)] >= 0
            or (rp < procs.n_timed and jobs[J_RELEASE, jobs[J_ORDER, rp]] <= t))


@nb.njit(cache=True, inline="always")
def _nodes_due(t, busy, rp, n_pend, procs):
    """The nodes whose processor has something to do in cycle ``t``, in increasing order in ``nodes[WORK, :n]``:
    a job released now (queued here), a node named in ``nodes[PEND, :n_pend]`` (a relay job enqueued or an
    injection channel freed last cycle, or jobs left waiting), a processor whose start-up ends now (bucket
    ``t % WHEEL`` of the timer wheel, a list linked through ``nodes[T_NEXT]``).  Returns ``(n, busy nodes,
    next timed job)``."""
    jobs, nodes, wheel = procs.jobs, procs.nodes, procs.wheel
    n = 0
    while rp < procs.n_timed and jobs[J_RELEASE, jobs[J_ORDER, rp]] <= t:
        j = jobs[J_ORDER, rp]
        rp += 1
        if _enqueue(j, jobs[J_NODE, j], nodes, jobs):
            busy += 1
        n = _mark(jobs[J_NODE, j], t, nodes, WORK, n)
    for i in range(n_pend):
        n = _mark(nodes[PEND, i], t, nodes, WORK, n)
    b = t & (WHEEL - 1)
    v = wheel[b]
    wheel[b] = -1
    while v >= 0:
        after = nodes[T_NEXT, v]
        if nodes[T_AT, v] <= t:
            n = _mark(v, t, nodes, WORK, n)
        else:                   # ends in a later turn of the wheel
            nodes[T_NEXT, v] = wheel[b]
            wheel[b] = v
        v = after
    if n <= 16:
        for i in range(1, n):   # insertion sort: usually a handful of nodes
            v = nodes[WORK, i]
            k = i
            while k > 0 and nodes[WORK, k - 1] > v:
                nodes[WORK, k] = nodes[WORK, k - 1]
                k -= 1
            nodes[WORK, k] = v
    else:
        _heap_sort(nodes[WORK], n)
    return n, busy, rp


@nb.njit(cache=True, inline="always")
def _start_ups(t, v, run, procs):
    """Node ``v``'s processor in cycle ``t``: a batch whose start-up ends now puts its worms in the injection
    queue, and an idle processor starts the next job of its queue (whose start-up may end at once)."""
    jobs, nodes, worms, batch = procs.jobs, procs.nodes, procs.worms, run.batch
    for _ in range(2):  # finish a batch, start the next job (which may finish at once)
        j = nodes[P_JOB, v]
        if j >= 0 and nodes[P_END, v] <= t:
            first = jobs[J_WORMS, j] + nodes[P_BATCH, v] * batch
            last = min(first + batch, jobs[J_WORMS, j + 1])
            for w in range(first, last):
                _append(w, v, nodes, I_HEAD, I_TAIL, worms, W_NEXT)   # into the injection queue
            nodes[P_BATCH, v] += 1
            if jobs[J_WORMS, j] + nodes[P_BATCH, v] * batch < jobs[J_WORMS, j + 1]:
                nodes[P_END, v] = t + run.startup
            else:
                nodes[P_JOB, v] = -1
                nodes[N_WORK, v] -= 1
        if nodes[P_JOB, v] < 0 and nodes[Q_HEAD, v] >= 0:
            j = nodes[Q_HEAD, v]
            nodes[Q_HEAD, v] = jobs[J_NEXT, j]
            if nodes[Q_HEAD, v] < 0:
                nodes[Q_TAIL, v] = -1
            jobs[J_START, j] = t
            nodes[P_JOB, v] = j
            nodes[P_BATCH, v] = 0
            nodes[P_END, v] = t + jobs[J_PREP, j] + run.startup
            if jobs[J_WORMS, j + 1] == jobs[J_WORMS, j]:
                nodes[P_JOB, v] = -1
                nodes[N_WORK, v] -= 1


@nb.njit(cache=True, inline="always")
def _inject_queued(t, v, n_active, procs):
    """Inject: the worms of node ``v``'s injection queue take its free injection channels in cycle ``t``, their
    headers in them, appended to ``active``; returns the worms in flight."""
    nodes, worms = procs.nodes, procs.worms
    while nodes[INJ_FREE, v] > 0 and nodes[I_HEAD, v] >= 0:
        w = nodes[I_HEAD, v]
        nodes[I_HEAD, v] = worms[W_NEXT, w]
        if nodes[I_HEAD, v] < 0:
            nodes[I_TAIL, v] = -1
        nodes[INJ_FREE, v] -= 1
        worms[W_POS, w] = 0
        worms[W_INJECT, w] = t
        worms[W_MOVED, w] = t
        procs.active[n_active] = w
        n_active += 1
        nodes[N_WORK, v] -= 1
    return n_active


@nb.njit(cache=True, inline="always")
def _processors(t, counts, run, procs):
    """Steps 1 and 2 of a cycle: jobs released by time, processors, injection (new worms appended to ``active``).

    Only the nodes where something can happen are visited
    (:func:`_nodes_due`), in increasing order; any other node's visit would
    change nothing (the kernels call this only when one of these is due,
    :func:`_processors_due`).  ``counts`` = (busy nodes, next timed job,
    worms in flight, pending nodes), returned updated; ``run`` and ``procs``
    the groups of :mod:`topocast.sim.wormhole.state`.
    """
    busy, rp, n_active, n_pend = counts
    nodes, wheel = procs.nodes, procs.wheel
    n, busy, rp = _nodes_due(t, busy, rp, n_pend, procs)
    n_pend = 0
    for i in range(n):
        v = nodes[WORK, i]
        if nodes[N_WORK, v] == 0:
            continue
        was_job = nodes[P_JOB, v]
        was_batch = nodes[P_BATCH, v]
        _start_ups(t, v, run, procs)
        n_active = _inject_queued(t, v, n_active, procs)
        if nodes[N_WORK, v] == 0:
            busy -= 1
        if nodes[P_JOB, v] >= 0 and (nodes[P_JOB, v] != was_job or nodes[P_BATCH, v] != was_batch):
            # its new start-up goes on the wheel (the node had none: a start-up changes only when it ends)
            at = max(nodes[P_END, v], t + 1)
            nodes[T_AT, v] = at
            nodes[T_NEXT, v] = wheel[at & (WHEEL - 1)]
            wheel[at & (WHEEL - 1)] = v
        elif nodes[P_JOB, v] < 0 and nodes[Q_HEAD, v] >= 0:
            n_pend = _mark(v, t + 1, nodes, PEND, n_pend)
    return busy, rp, n_active, n_pend


@nb.njit(cache=True, inline="always")
def _watch_due(t, moved_any, n_active, last_move, last_check, watchdog):
    """The deadlock watchdog at the end of cycle ``t``: ``(due, last_move, last_check)`` with ``due`` 0 (nothing
    to do), 1 (no worm moved for ``watchdog`` cycles: a deadlock) or 2 (time to look for a worm that has not
    moved for ``watchdog`` cycles, :func:`_stuck`, and then for a knot)."""
    if moved_any or n_active == 0:
        last_move = t
    elif t - last_move >= watchdog:
        return 1, last_move, last_check
    if t - last_check >= watchdog:
        # a knot of worms can be stuck while traffic elsewhere keeps moving
        return 2, last_move, t
    return 0, last_move, last_check


@nb.njit(cache=True)
def _stuck(t, watchdog, n_active, active, moved_at):
    """Whether some worm in flight has not moved for ``watchdog`` cycles."""
    stuck = False
    for idx in range(n_active):
        if t - moved_at[active[idx]] >= watchdog:
            stuck = True
            break
    return stuck


@nb.njit(cache=True)
def _stall_cycle(due, t, last_move, n_active, active, moved_at, dead):
    """The cycle the deadlock began: the last move (global stall) or the longest-stuck knotted worm's."""
    if due == 1:
        return last_move
    stall = t
    for idx in range(n_active):
        w = active[idx]
        if dead[w] and moved_at[w] < stall:
            stall = moved_at[w]
    return stall
