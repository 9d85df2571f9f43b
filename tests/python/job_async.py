"""Rank program: the asyncio path under a kill of rank K (argv[1]).
One loop runs a 5 ms ticker and awaited allreduces (comm.allreduce_async)
until every survivor has seen 20 complete after the death; every survivor
checks each sum, that the ticker kept running while it awaited, that the
failure callback ran on the loop's thread, and that cancelling an awaited
collective and an awaited receive releases them: the next collective is
right and finalize completes."""
import asyncio
import sys
import threading
import time

import ucft

K = int(sys.argv[1])
calls = []
ctx = ucft.init(failure_cb=lambda rank: calls.append(
    (rank, threading.get_ident())))
import numpy as np  # noqa: E402

w = ctx.world
r, n = w.rank, w.size
errs = []


def check(cond, what):
    if not cond:
        errs.append(what)


async def main():
    ticks = 0
    stop = False

    async def ticker():
        nonlocal ticks
        while not stop:
            await asyncio.sleep(0.005)
            ticks += 1
    tick = asyncio.create_task(ticker())
    # Cancel an awaited allreduce at once on every rank but 0, which joins
    # only once each of them says it has cancelled (so none of them can
    # have completed it) and awaits it: it finishes in the background
    # where cancelled, and the next one is right.
    if r == 0:
        for q in range(1, n):
            try:
                await w.recv_async(np.zeros(1), source=q, tag=7)
            except ucft.ProcFailed:
                check(q == K, "rank %d failed before the cancel" % q)
        got = await w.allreduce_async(np.array([100], np.int64))
        check(int(got[0]) in (100 * n, 100 * (n - 1)),
              "first allreduce %d" % got[0])
    else:
        t = asyncio.create_task(w.allreduce_async(np.array([100], np.int64)))
        await asyncio.sleep(0)
        t.cancel()
        try:
            await t
            cancelled = False
        except asyncio.CancelledError:
            cancelled = True
        check(cancelled, "the task was not cancelled")
        await w.send_async(np.zeros(1), 0, tag=7)
    # A receive nobody answers, cancelled: released, never completes.
    t = asyncio.create_task(w.recv_async(np.zeros(4), source=(r + 1) % n,
                                         tag=99))
    await asyncio.sleep(0.01)
    t.cancel()
    await asyncio.gather(t, return_exceptions=True)
    check(t.cancelled(), "the receive was not cancelled")
    t0 = time.monotonic()
    after = 0
    survivors = set(range(n)) - {K}
    # Each rank learns of the death at its own time: the loop ends when
    # the allreduce says every rank it counted is done (element 2), the
    # same iteration everywhere.
    while True:
        done = after >= 20 or time.monotonic() - t0 > 30
        out = await w.allreduce_async(np.array([r + 1, 1 << r, done],
                                               np.int64))
        mask = int(out[1])
        expect = sum(q + 1 for q in range(n) if mask >> q & 1)
        check(int(out[0]) == expect, "sum %d for mask %x" % (out[0], mask))
        check(all(mask >> q & 1 for q in survivors), "mask %x" % mask)
        if int(out[2]) == bin(mask).count("1"):
            break
        if K in ctx.failed_ranks():
            after += 1
        await asyncio.sleep(0.02)
    elapsed = time.monotonic() - t0
    stop = True
    await tick
    check(after >= 20, "%d allreduces after the kill" % after)
    # The ticker ran while the loop awaited (at 5 ms a tick, at least a
    # fifth of the ticks an idle loop would have had).
    check(ticks > elapsed / 0.005 / 5, "%d ticks in %.1f s" % (ticks, elapsed))
    return elapsed, ticks


elapsed, ticks = asyncio.run(main())
check(calls == [(K, threading.main_thread().ident)],
      "failure callback calls %s" % calls)
ctx.finalize()
print("RESULT %d %s (%d ticks in %.1f s)" %
      (r, "ok" if not errs else errs, ticks, elapsed), flush=True)
sys.exit(0 if not errs else 1)
