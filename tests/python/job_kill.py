"""Rank program: blocking allreduces while the launcher kills rank K
(argv[1]); f = 1. Checks at every survivor: every sum is the sum of
exactly the ranks it counted, and counts every survivor; the failure
callback ran once, for K, on the main thread; point-to-point with K
raises ProcFailed naming K; reduce and bcast after the death are right.
With argv[2] == "beyond" a second rank (K+1) is killed too: beyond f the
allreduce must raise ProcFailed (never hang, never a wrong sum)."""
import sys
import threading
import time

import ucft

K = int(sys.argv[1])
beyond = len(sys.argv) > 2 and sys.argv[2] == "beyond"
killed = {K, K + 1} if beyond else {K}
calls = []
ctx = ucft.init(failure_cb=lambda rank: calls.append(
    (rank, threading.get_ident())))
import numpy as np  # noqa: E402

w = ctx.world
r, n = w.rank, w.size
w.f = 1
survivors = set(range(n)) - killed
errs = []
raised = None


def check(cond, what):
    if not cond:
        errs.append(what)


t0 = time.monotonic()
after = 0
# The ranks learn of the death at different times, so each one's count
# "after" differs: the loop ends when the allreduce itself says that every
# rank it counted is done (element 2), the same iteration everywhere, so
# the collectives after it match.
while True:
    done = after >= 20 or time.monotonic() - t0 > 30
    try:
        out = w.allreduce(np.array([r + 1, 1 << r, done], dtype=np.int64))
    except ucft.ProcFailed as e:
        raised = e
        break
    mask = int(out[1])
    expect = sum(q + 1 for q in range(n) if mask >> q & 1)
    check(int(out[0]) == expect, "sum %d for mask %x" % (out[0], mask))
    check(all(mask >> q & 1 for q in survivors), "mask %x" % mask)
    if int(out[2]) == bin(mask).count("1"):
        break
    if killed <= set(ctx.failed_ranks()):
        after += 1
    time.sleep(0.02)
ctx.progress()
if beyond:
    check(raised is not None, "no ProcFailed beyond f")
    check(raised is not None and killed <= set(raised.ranks),
          "ProcFailed.ranks %s" % (raised and raised.ranks))
else:
    check(raised is None, "unexpected %r" % raised)
    check(after >= 20, "%d allreduces after the kill" % after)
    check(sorted(calls) == [(K, threading.main_thread().ident)],
          "failure callback calls %s" % calls)
    check(ctx.failed_ranks() == [K], "failed ranks %s" % ctx.failed_ranks())
    for op in ("send", "recv"):
        try:
            if op == "send":
                w.send(np.zeros(1), K)
            else:
                w.recv(np.zeros(1), source=K)
            check(False, "%s with the dead rank did not raise" % op)
        except ucft.ProcFailed as e:
            check(K in e.ranks, "%s ProcFailed.ranks %s" % (op, e.ranks))
    root = min(survivors)
    red = w.reduce(np.array([r + 1], np.int64), root=root)
    want = sum(q + 1 for q in survivors)
    check(red[0] == want if r == root else red is None, "reduce %s" % red)
    b = np.array([42 if r == root else 0], np.int32)
    check(w.bcast(b, root=root)[0] == 42, "bcast after the kill")
ctx.finalize()
print("RESULT %d %s" % (r, "ok" if not errs else errs), flush=True)
sys.exit(0 if not errs else 1)
