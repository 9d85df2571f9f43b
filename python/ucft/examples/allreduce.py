"""allreduce: examples/allreduce/allreduce.c in Python, line for line.
Every rank contributes rank+1 to a sum, every iteration. Kill ranks while
it runs:

    ucftrun -n 8 --times-from connected --kill 3@1.5 --kill 6@2.5 python3 -m ucft.examples.allreduce

and every survivor keeps getting the right sum of the live ranks, with no
error handling and no recovery step. The example loses two ranks, so it
asks for f = 2. Each rank also adds 1<<rank in a second element, so it can
check which ranks were included: every live rank exactly once, a rank that
died during the operation entirely or not at all.
"""
import sys
import time

import ucft

ITERS = 80


def main():
    try:
        ctx = ucft.init()
    except ucft.UcftError as e:
        print("ucft_init: %s" % e, file=sys.stderr)
        return 1
    import numpy as np  # after ucft_init: see ucft/__init__.py

    world = ctx.world
    rank, size = world.rank, world.size
    world.f = 2
    wrong = 0
    if size > 63:
        print("this example checks its results for <= 63 ranks",
              file=sys.stderr)
        ctx.finalize()
        return 2
    for it in range(ITERS):
        inp = np.array([rank + 1, 1 << rank], dtype=np.int64)
        try:
            out = world.allreduce(inp, op="sum")
        except ucft.UcftError as e:
            print("iteration %d: allreduce failed: %s" % (it, e.name))
            wrong += 1
            continue
        # Which ranks are in the sum, and is it theirs exactly? A rank left
        # out must have failed; this rank may learn that a moment after the
        # others, so give the news up to 2 s to arrive.
        full = (1 << size) - 1
        mask = int(out[1])
        dead = 0
        for _ in range(2001):
            ctx.progress()
            dead = 0
            for r in ctx.failed_ranks():
                dead |= 1 << r
            if (mask | dead) == full:
                break
            time.sleep(0.001)
        expect = sum(r + 1 for r in range(size) if mask >> r & 1)
        ok = (mask & ~full) == 0 and (mask | dead) == full and \
            int(out[0]) == expect
        wrong += not ok
        if it % 10 == 0 or not ok or it == ITERS - 1:
            print("iteration %2d: sum %3d of %d live ranks %s" %
                  (it, int(out[0]), bin(mask).count("1"),
                   "(correct)" if ok else "(WRONG)"), flush=True)
        time.sleep(0.04)
    try:
        ctx.finalize()
        st_ok = True
    except ucft.UcftError:
        st_ok = False
    return 0 if wrong == 0 and st_ok else 1


if __name__ == "__main__":
    sys.exit(main())
