"""asyncio integration: the context fd in the event loop.

One driver per (context, loop) adds the context fd to the loop with
loop.add_reader and follows the loop of include/ucft.h:

    progress until nothing is left; test the awaited requests;
    arm: pending work -> run again at once (call_soon),
         else sleep on the fd, at most the bound arm gives (call_later).

So an awaited operation moves only when the fd says there is work or
the bound expires: the loop sleeps in between and serves its sockets.
Everything runs on the loop's thread, which therefore drives the context
(R1): failure callbacks run there too (R7).

Cancelling a task that awaits an operation releases the operation's
request (ucft_request_free) at once; a pending receive is first asked to
cancel (ucft_cancel). A collective is not interrupted (ucft.h): it
finishes in the background, driven by this loop and by any later ucft
call, and its arrays stay referenced by the context until finalize (R4).
The other ranks see a normal collective; this rank must still call the
next collectives in the same order (R12).
"""
import asyncio
import os


class _Driver:
    def __init__(self, ctx, loop):
        self.ctx = ctx
        self.loop = loop
        self.fd = ctx.fileno()
        self.pending = []  # (Request, Future)
        self.timer = None
        self.soon = None
        loop.add_reader(self.fd, self._run)

    def add(self, req):
        fut = self.loop.create_future()
        fut.add_done_callback(lambda f, r=req: self._done(r, f))
        self.pending.append((req, fut))
        self._run_soon()
        return fut

    def _done(self, req, fut):
        if fut.cancelled() and not req.done and self.ctx._h is not None:
            req.cancel()
            req.free()

    def _run_soon(self):
        if self.soon is None:
            self.soon = self.loop.call_soon(self._run)

    def _run(self):
        self.soon = None
        if self.ctx._h is None:
            return
        events = 0
        try:
            while True:
                n = self.ctx.progress()
                if n <= 0:
                    break
                events += n
        except BaseException as e:  # the failure callback raised
            self.loop.call_exception_handler(
                {"message": "ucft failure callback raised", "exception": e})
        still = []
        for req, fut in self.pending:
            if fut.done():
                continue
            try:
                if not req.test():
                    still.append((req, fut))
                    continue
                fut.set_result(req.result())
            except Exception as e:
                fut.set_exception(e)
        self.pending = still
        if self.ctx._h is None:
            return
        ms = self.ctx.arm()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if ms is None:
            # Work pending (a large transfer moving): run again at once,
            # but give the core away first when this turn found nothing,
            # as ucft's own waits do (UCFT_WAIT=hybrid), so that the peer
            # ranks and the heartbeat thread on a busy node get to run.
            if events == 0:
                os.sched_yield()
            self._run_soon()
        else:
            self.timer = self.loop.call_later(ms / 1000.0, self._run)

    def close(self):
        self.loop.remove_reader(self.fd)
        for h in (self.timer, self.soon):
            if h is not None:
                h.cancel()
        for req, fut in self.pending:
            if not fut.done():
                fut.set_exception(RuntimeError("ucft context finalized"))
        self.pending = []
        self.ctx._drivers.pop(self.loop, None)


def driver(ctx, loop=None):
    """The driver of `ctx` in `loop` (the running loop by default),
    created on first use; it lives until the context is finalized."""
    loop = loop or asyncio.get_running_loop()
    d = ctx._drivers.get(loop)
    if d is None:
        d = ctx._drivers[loop] = _Driver(ctx, loop)
    return d


async def wait(req):
    """Awaits a Request: its result, or its error raised."""
    if req.test():
        return req.result()
    return await driver(req._ctx).add(req)
