"""Communicators: the world communicator of a context (include/ucft.h).

Every operation exists in three forms that share one starting function:
blocking (allreduce), non-blocking (iallreduce -> Request) and awaitable
(allreduce_async, ucft.aio). Buffers are NumPy arrays passed by address,
never copied (ucft.h R4 says when the library reads and writes them).
"""
import ctypes

import numpy as np

from ._lib import lib, ANY_SOURCE, ANY_TAG, TAG_UB
from ._errors import error
from ._request import Request
from . import _buffers as B


def _rank_arg(name, r, size, wildcard=False):
    if not isinstance(r, (int, np.integer)) or isinstance(r, bool):
        raise TypeError("%s must be an int, not %s" % (name, type(r).__name__))
    if wildcard and r == ANY_SOURCE:
        return int(r)
    if not 0 <= r < size:
        raise ValueError("%s %d is out of range (0..%d)" % (name, r, size - 1))
    return int(r)


def _tag_arg(tag, wildcard=False):
    if not isinstance(tag, (int, np.integer)) or isinstance(tag, bool):
        raise TypeError("tag must be an int, not %s" % type(tag).__name__)
    if wildcard and tag == ANY_TAG:
        return int(tag)
    if not 0 <= tag <= TAG_UB:
        raise ValueError("tag %d is out of range (0..%d)" % (tag, TAG_UB))
    return int(tag)


class Comm:
    """A communicator. rank, size and f (the failures each collective
    tolerates) are attributes; the operations below raise ucft.ProcFailed
    (with .ranks) and the other UcftError subclasses on failure."""

    def __init__(self, ctx, handle):
        self._ctx = ctx
        self._c = handle
        self.rank = lib.ucft_comm_rank(handle)
        self.size = lib.ucft_comm_size(handle)

    @property
    def context(self):
        return self._ctx

    @property
    def f(self):
        return lib.ucft_comm_get_f(self._comm())

    @f.setter
    def f(self, value):
        st = lib.ucft_comm_set_f(self._comm(), int(value))
        if st != 0:
            raise error(st, "ucft_comm_set_f(%d)" % value)

    def _comm(self):
        self._ctx._handle()
        return self._c

    def _start(self, what, fn, args, keep, result):
        """Calls a ucft_i* function; returns a Request."""
        req = ctypes.c_void_p()
        st = fn(self._comm(), *args, ctypes.byref(req))
        self._ctx._raise_cb_error()
        if st != 0:
            raise error(st, what, self._ctx)
        return Request(self._ctx, req.value, keep, result, what)

    # -- collectives: non-blocking -------------------------------------
    def iallreduce(self, sendbuf, recvbuf=None, op="sum"):
        """recvbuf (allocated when None; may be sendbuf) = op over every
        live rank's sendbuf."""
        sendbuf, dt = B.array("sendbuf", sendbuf)
        recvbuf = np.empty_like(sendbuf) if recvbuf is None else \
            B.output("recvbuf", recvbuf, sendbuf)
        o = B.op_code(op)
        return self._start("allreduce", lib.ucft_iallreduce,
                           (B.addr(sendbuf), B.addr(recvbuf), sendbuf.size,
                            dt, o), (sendbuf, recvbuf), recvbuf)

    def ireduce(self, sendbuf, recvbuf=None, op="sum", root=0):
        """At root, recvbuf (allocated when None) = op over sendbufs;
        elsewhere the result is None and recvbuf is not touched."""
        root = _rank_arg("root", root, self.size)
        sendbuf, dt = B.array("sendbuf", sendbuf)
        if self.rank == root:
            recvbuf = np.empty_like(sendbuf) if recvbuf is None else \
                B.output("recvbuf", recvbuf, sendbuf)
        else:
            recvbuf = None
        o = B.op_code(op)
        return self._start("reduce", lib.ucft_ireduce,
                           (B.addr(sendbuf), B.addr(recvbuf)
                            if recvbuf is not None else None,
                            sendbuf.size, dt, o, root),
                           (sendbuf, recvbuf), recvbuf)

    def ibcast(self, buf, root=0):
        """The root's buf to every rank, in place; the result is buf."""
        root = _rank_arg("root", root, self.size)
        buf, dt = B.array("buf", buf, writable=self.rank != root)
        return self._start("bcast", lib.ucft_ibcast,
                           (B.addr(buf), buf.size, dt, root), (buf,), buf)

    def ibarrier(self):
        return self._start("barrier", lib.ucft_ibarrier, (), (), None)

    def iallgather(self, sendbuf, recvbuf=None, present=None):
        """recvbuf (allocated when None: size x sendbuf.size elements)
        holds every rank's sendbuf, in rank order. present (None, or a
        writable uint8 array of `size` elements) gets 1 per block that
        holds its rank's data, 0 per absent one (a failed rank's, under
        the corrected algorithm; the block is zero)."""
        sendbuf, dt = B.array("sendbuf", sendbuf)
        n = self.size
        if recvbuf is None:
            recvbuf = np.empty(n * sendbuf.size, dtype=sendbuf.dtype)
        else:
            recvbuf = B.output("recvbuf", recvbuf, sendbuf)
            if recvbuf.size < n * sendbuf.size:
                raise ValueError("recvbuf is too small: %d elements, "
                                 "allgather needs %d" %
                                 (recvbuf.size, n * sendbuf.size))
        if present is not None:
            present, _ = B.array("present", present, writable=True)
            if present.dtype != np.uint8 or present.size < n:
                raise ValueError("present must be a uint8 array of at "
                                 "least %d elements" % n)
        return self._start("allgather", lib.ucft_iallgather,
                           (B.addr(sendbuf), B.addr(recvbuf), sendbuf.size,
                            dt, B.addr(present) if present is not None
                            else None),
                           (sendbuf, recvbuf, present), recvbuf)

    def ireduce_scatter(self, sendbuf, recvbuf=None, op="sum"):
        """sendbuf holds `size` equal blocks; recvbuf (allocated when
        None) = op over every rank's block number `rank`."""
        sendbuf, dt = B.array("sendbuf", sendbuf)
        n = self.size
        if sendbuf.size % n != 0:
            raise ValueError("sendbuf has %d elements, not %d equal blocks"
                             % (sendbuf.size, n))
        count = sendbuf.size // n
        if recvbuf is None:
            recvbuf = np.empty(count, dtype=sendbuf.dtype)
        else:
            recvbuf, _ = B.array("recvbuf", recvbuf, writable=True)
            if recvbuf.dtype != sendbuf.dtype or recvbuf.size < count:
                raise ValueError("recvbuf must be %d elements of %s" %
                                 (count, sendbuf.dtype))
        return self._start("reduce_scatter", lib.ucft_ireduce_scatter,
                           (B.addr(sendbuf), B.addr(recvbuf), count, dt,
                            B.op_code(op)), (sendbuf, recvbuf), recvbuf)

    # -- point-to-point ----------------------------------------------------
    def isend(self, buf, dest, tag=0):
        """Sends the bytes of buf (an array or bytes-like object)."""
        dest = _rank_arg("dest", dest, self.size)
        tag = _tag_arg(tag)
        a = B.raw("buf", buf)
        return self._start("send to %d" % dest, lib.ucft_isend,
                           (B.addr(a), a.size, dest, tag), (buf, a), None)

    def irecv(self, buf, source=ANY_SOURCE, tag=ANY_TAG):
        """Receives into buf; the result is Status(source, tag, nbytes)."""
        source = _rank_arg("source", source, self.size, wildcard=True)
        tag = _tag_arg(tag, wildcard=True)
        a = B.raw("buf", buf, writable=True)
        return self._start("recv", lib.ucft_irecv,
                           (B.addr(a), a.size, source, tag), (buf, a),
                           "status")

    # -- blocking forms ------------------------------------------------
    def allreduce(self, sendbuf, recvbuf=None, op="sum"):
        sendbuf, dt = B.array("sendbuf", sendbuf)
        recvbuf = np.empty_like(sendbuf) if recvbuf is None else \
            B.output("recvbuf", recvbuf, sendbuf)
        st = lib.ucft_allreduce(self._comm(), B.addr(sendbuf),
                                B.addr(recvbuf), sendbuf.size, dt,
                                B.op_code(op))
        self._ctx._raise_cb_error()
        if st != 0:
            raise error(st, "allreduce", self._ctx)
        return recvbuf

    def reduce(self, sendbuf, recvbuf=None, op="sum", root=0):
        return self.ireduce(sendbuf, recvbuf, op, root).wait()

    def bcast(self, buf, root=0):
        return self.ibcast(buf, root).wait()

    def barrier(self):
        self.ibarrier().wait()

    def allgather(self, sendbuf, recvbuf=None, present=None):
        return self.iallgather(sendbuf, recvbuf, present).wait()

    def reduce_scatter(self, sendbuf, recvbuf=None, op="sum"):
        return self.ireduce_scatter(sendbuf, recvbuf, op).wait()

    def send(self, buf, dest, tag=0):
        self.isend(buf, dest, tag).wait()

    def recv(self, buf, source=ANY_SOURCE, tag=ANY_TAG):
        return self.irecv(buf, source, tag).wait()

    # -- failures ----------------------------------------------------------
    def failure_ack(self):
        st = lib.ucft_comm_failure_ack(self._comm())
        self._ctx._raise_cb_error()
        if st != 0:
            raise error(st, "failure_ack")

    # -- asyncio (ucft.aio drives the context fd) ---------------------
    async def allreduce_async(self, sendbuf, recvbuf=None, op="sum"):
        from . import aio
        return await aio.wait(self.iallreduce(sendbuf, recvbuf, op))

    async def reduce_async(self, sendbuf, recvbuf=None, op="sum", root=0):
        from . import aio
        return await aio.wait(self.ireduce(sendbuf, recvbuf, op, root))

    async def bcast_async(self, buf, root=0):
        from . import aio
        return await aio.wait(self.ibcast(buf, root))

    async def barrier_async(self):
        from . import aio
        return await aio.wait(self.ibarrier())

    async def send_async(self, buf, dest, tag=0):
        from . import aio
        return await aio.wait(self.isend(buf, dest, tag))

    async def recv_async(self, buf, source=ANY_SOURCE, tag=ANY_TAG):
        from . import aio
        return await aio.wait(self.irecv(buf, source, tag))

    def __repr__(self):
        return "<ucft.Comm rank %d of %d>" % (self.rank, self.size)
