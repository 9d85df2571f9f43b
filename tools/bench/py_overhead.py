"""What the Python wrapper costs on top of the C call, in the same run.

    ucftrun -n 2 python3 tools/bench/py_overhead.py [--iters K] [--rounds R] [--json]

For an allreduce of 8 B (one int64) and of 1 MiB (131072 int64) every
rank times, in the same process and interleaved round by round:
  c        ucft_allreduce called directly (ctypes, arguments prepared
           once): the C call and the one foreign-call boundary any Python
           caller pays;
  python   comm.allreduce(a, out): argument checks, dtype and op
           mapping, exception mapping;
  alloc    comm.allreduce(a): the same, allocating the output;
  asyncio  await comm.allreduce_async(a, out) in a running loop, driven
           by the context fd.
Each round times K back-to-back operations of each variant (after a
barrier); a variant's figure is its median over rounds of the per-op
mean, max over ranks. The cost of an empty foreign call (ucft_comm_rank)
is printed too, to tell the boundary from the wrapper.
"""
import argparse
import asyncio
import json
import statistics
import sys
import time

import ucft
from ucft._lib import lib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    ctx = ucft.init()
    import numpy as np

    w = ctx.world
    c = w._c
    loop = asyncio.new_event_loop()
    results = []
    t = time.perf_counter
    n0 = t()
    for _ in range(100000):
        lib.ucft_comm_rank(c)
    boundary_us = (t() - n0) / 100000 * 1e6
    for size in (8, 1 << 20):
        a = np.ones(size // 8, dtype=np.int64)
        out = np.empty_like(a)
        pa, po, cnt = a.ctypes.data, out.ctypes.data, a.size
        iters = args.iters if size == 8 else max(args.iters // 20, 20)

        def c_call():
            for _ in range(iters):
                if lib.ucft_allreduce(c, pa, po, cnt, 3, 0) != 0:
                    raise RuntimeError("allreduce failed")

        def py_call():
            for _ in range(iters):
                w.allreduce(a, out)

        def alloc_call():
            for _ in range(iters):
                w.allreduce(a)

        async def aio():
            for _ in range(iters):
                await w.allreduce_async(a, out)

        def aio_call():
            loop.run_until_complete(aio())

        variants = [("c", c_call), ("python", py_call),
                    ("alloc", alloc_call), ("asyncio", aio_call)]
        per = {name: [] for name, _ in variants}
        for name, fn in variants:  # warm-up
            w.barrier()
            fn()
        for _ in range(args.rounds):
            for name, fn in variants:
                w.barrier()
                s = t()
                fn()
                per[name].append((t() - s) / iters * 1e6)
        if int(out[0]) != w.size:
            raise RuntimeError("wrong sum %d" % out[0])
        mine = np.array([statistics.median(per[n]) for n, _ in variants])
        worst = w.allreduce(mine, op="max")
        row = {"size": size, "ranks": w.size, "iters": iters,
               "rounds": args.rounds}
        for (name, _), v in zip(variants, worst):
            row[name + "_us"] = round(float(v), 2)
        row["python_overhead_us"] = round(row["python_us"] - row["c_us"], 2)
        row["asyncio_overhead_us"] = round(row["asyncio_us"] - row["c_us"],
                                           2)
        results.append(row)
    boundary = float(w.allreduce(np.array([boundary_us]), op="max")[0])
    loop.close()
    if w.rank == 0:
        if args.json:
            for row in results:
                row["ctypes_call_us"] = round(boundary, 3)
                print(json.dumps(row))
        else:
            print("# allreduce int64 sum, %d ranks; us per op, median of %d "
                  "rounds, max over ranks; empty ctypes call %.2f us" %
                  (w.size, args.rounds, boundary))
            print("%8s %9s %9s %9s %9s %10s %10s" %
                  ("size", "c", "python", "alloc", "asyncio", "py-c",
                   "aio-c"))
            for r in results:
                print("%8d %9.2f %9.2f %9.2f %9.2f %10.2f %10.2f" %
                      (r["size"], r["c_us"], r["python_us"], r["alloc_us"],
                       r["asyncio_us"], r["python_overhead_us"],
                       r["asyncio_overhead_us"]))
    ctx.finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
