"""Rank program (no failures): every operation of the Python API, with
values checked at every rank. Prints "RESULT <rank> ok" or the list of
what was wrong, and exits 1 then. Run by test_jobs.py under ucftrun."""
import asyncio
import sys

import ucft

ctx = ucft.init()
import numpy as np  # noqa: E402  (after ucft_init: ucft/__init__.py)

w = ctx.world
r, n = w.rank, w.size
errs = []


def check(cond, what):
    if not cond:
        errs.append(what)


DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
          np.uint32, np.uint64, np.float32, np.float64]
for dt in DTYPES:
    for count in (1, 1000):
        a = np.full(count, r + 1, dtype=dt)
        check((w.allreduce(a) == n * (n + 1) // 2).all(), "sum %s" % dt)
        check((w.allreduce(a, op="max") == n).all(), "max %s" % dt)
        check((w.allreduce(a, op="min") == 1).all(), "min %s" % dt)
        red = w.reduce(a, op="sum", root=1)
        check((red == n * (n + 1) // 2).all() if r == 1 else red is None,
              "reduce %s" % dt)
        b = np.arange(count, dtype=dt) if r == 2 else np.zeros(count, dt)
        got = w.bcast(b, root=2)
        check(got is b and (b == np.arange(count, dtype=dt)).all(),
              "bcast %s" % dt)
# 1 MiB, into a given output (no copy: the same array comes back) and in
# place (send buffer = receive buffer).
big = np.full(1 << 17, float(r), dtype=np.float64)
out = np.empty_like(big)
res = w.allreduce(big, out)
check(res is out and (out == n * (n - 1) / 2).all(), "1 MiB allreduce")
w.allreduce(big, big, op="sum")
check((big == n * (n - 1) / 2).all(), "in-place allreduce")
# Allgather (with the presence bytes) and reduce-scatter.
for dt in (np.int32, np.float64):
    blk = np.arange(3, dtype=dt) + 10 * r
    pres = np.zeros(n, dtype=np.uint8)
    g = w.allgather(blk, present=pres)
    want = np.concatenate([np.arange(3, dtype=dt) + 10 * q for q in range(n)])
    check(g.dtype == dt and (g == want).all() and (pres == 1).all(),
          "allgather %s" % dt)
    v = np.arange(4 * n, dtype=dt) * (r + 1)
    rs = w.reduce_scatter(v)
    wantv = np.arange(4 * n, dtype=dt)[4 * r:4 * r + 4] * (n * (n + 1) // 2)
    check(rs.size == 4 and (rs == wantv).all(), "reduce_scatter %s" % dt)
try:
    w.reduce_scatter(np.zeros(4 * n + 1, dtype=np.int32))
    check(False, "reduce_scatter of uneven blocks accepted")
except ValueError:
    pass
bits = np.array([1 << r], dtype=np.uint32)
check(w.allreduce(bits, op="bor")[0] == (1 << n) - 1, "bor")
w.barrier()
# Point-to-point: a ring of arrays, then bytes into a bytearray.
nxt, prv = (r + 1) % n, (r - 1) % n
sreq = w.isend(np.full(10, r, dtype=np.int32), nxt, tag=5)
rbuf = np.zeros(10, dtype=np.int32)
st = w.recv(rbuf, source=prv, tag=5)
sreq.wait()
check((rbuf == prv).all() and st == ucft.Status(prv, 5, 40), "ring %s" % (st,))
w.send(b"hello from %d" % r, nxt, tag=6)
ba = bytearray(32)
st = w.recv(ba, source=ucft.ANY_SOURCE, tag=6)
check(bytes(ba[:st.nbytes]) == b"hello from %d" % prv and st.source == prv,
      "bytes %r" % bytes(ba))
# A message longer than the receive buffer: Truncated.
if r == 0:
    w.send(np.zeros(4, np.int32), 1, tag=7)
elif r == 1:
    try:
        w.recv(np.zeros(2, np.int32), source=0, tag=7)
        check(False, "no Truncated")
    except ucft.Truncated:
        pass
# Non-blocking requests and asyncio.
req = w.iallreduce(np.array([r], dtype=np.int64))
check(req.wait()[0] == n * (n - 1) // 2, "iallreduce")


async def aio():
    s = w.send_async(np.array([r], np.int64), nxt, tag=8)
    rb = np.zeros(1, np.int64)
    got = await asyncio.gather(
        w.allreduce_async(np.array([r + 1.0])), w.barrier_async(),
        w.recv_async(rb, source=prv, tag=8), s,
        w.bcast_async(np.array([7 if r == 0 else 0], np.int16), root=0),
        w.reduce_async(np.array([2], np.uint8), op="prod", root=3))
    check(got[0][0] == n * (n + 1) / 2, "allreduce_async")
    check(rb[0] == prv and got[2].source == prv, "recv_async")
    check(got[4][0] == 7, "bcast_async")
    check(got[5][0] == 2 ** n if r == 3 else got[5] is None, "reduce_async")


asyncio.run(aio())
ctx.finalize()
print("RESULT %d %s" % (r, "ok" if not errs else errs), flush=True)
sys.exit(0 if not errs else 1)
