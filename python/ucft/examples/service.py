"""service: a small asyncio service that answers requests on a local
socket while its ranks keep a fault-tolerant sum going.

    ucftrun -n 4 --times-from connected --kill 2@2 python3 -m ucft.examples.service

Each rank runs, on one event loop and one thread:
  - a TCP server on 127.0.0.1 (an ephemeral port) that answers "sum?"
    with the latest result;
  - a client that asks it every 10 ms and records how long each answer
    took (it would see the loop blocked by the reduction);
  - the reduction: ITERS awaited allreduces (comm.allreduce_async, driven
    by the context fd through loop.add_reader), checked as in
    ucft.examples.allreduce, and a timer tick between them.
A killed rank drops out of the sums; the others keep serving and summing.
Exit status 0 when every sum was right and requests were answered while
the reductions ran.
"""
import asyncio
import sys
import time

import ucft

ITERS = 100


class Service:
    def __init__(self, ctx):
        import numpy as np  # after ucft_init: see ucft/__init__.py
        self.np = np
        self.ctx = ctx
        self.world = ctx.world
        self.latest = b"none"
        self.answered = 0
        self.worst_ms = 0.0
        self.wrong = 0
        self.done = False

    async def handle(self, reader, writer):
        while (line := await reader.readline()):
            if line.strip() == b"sum?":
                writer.write(self.latest + b"\n")
                await writer.drain()
        writer.close()

    async def client(self, port):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while not self.done:
            t = time.monotonic()
            writer.write(b"sum?\n")
            await writer.drain()
            await reader.readline()
            self.worst_ms = max(self.worst_ms, (time.monotonic() - t) * 1e3)
            self.answered += 1
            await asyncio.sleep(0.01)
        writer.close()

    async def reduce(self):
        np, world = self.np, self.world
        rank, size = world.rank, world.size
        full = (1 << size) - 1
        for it in range(ITERS):
            inp = np.array([rank + 1, 1 << rank], dtype=np.int64)
            try:
                out = await world.allreduce_async(inp, op="sum")
            except ucft.UcftError as e:
                print("iteration %d: allreduce failed: %s" % (it, e.name))
                self.wrong += 1
                continue
            mask, dead = int(out[1]), 0
            for _ in range(2001):  # the news of a death may come later
                dead = sum(1 << r for r in self.ctx.failed_ranks())
                if (mask | dead) == full:
                    break
                await asyncio.sleep(0.001)
            expect = sum(r + 1 for r in range(size) if mask >> r & 1)
            ok = (mask | dead) == full and int(out[0]) == expect
            self.wrong += not ok
            self.latest = b"%d %d" % (it, int(out[0]))
            if it % 10 == 0 or not ok or it == ITERS - 1:
                print("iteration %2d: sum %3d of %d live ranks %s" %
                      (it, int(out[0]), bin(mask).count("1"),
                       "(correct)" if ok else "(WRONG)"), flush=True)
            await asyncio.sleep(0.04)  # the timer between reductions
        self.done = True

    async def run(self):
        server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            await asyncio.gather(self.reduce(), self.client(port))
        print("served %d requests while reducing (slowest answer %.1f ms)" %
              (self.answered, self.worst_ms), flush=True)
        return self.wrong == 0 and self.answered > 0


def main():
    with ucft.init() as ctx:
        ctx.world.f = 2
        ok = asyncio.run(Service(ctx).run())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
