"""The context: one per process and job (include/ucft.h)."""
import ctypes
import sys
import threading

from ._lib import lib, Params, ContextAttr, FAILURE_CB, \
    UCFT_PARAM_FIELD_FAILURE_CB, ctx_h
from ._errors import error


class Context:
    """ucft_init on creation, ucft_finalize on finalize() or on leaving a
    `with` block. `failure_cb(rank)` is called once per failed job rank,
    on the thread that drives the context, inside the calls that progress
    it (a blocking call, Request.test/wait, progress(), the asyncio
    driver), never on ucft's heartbeat thread (R7). An exception it raises
    is re-raised by the ucft call it ran in."""

    def __init__(self, failure_cb=None):
        self._h = None
        self._cb = failure_cb
        self._cb_error = None
        self._cb_c = FAILURE_CB(self._on_failure)  # alive as long as self
        self._orphans = []   # arrays of released requests (R4)
        self._drivers = {}   # asyncio loop -> driver (ucft.aio)
        params = Params()
        if failure_cb is not None:
            params.field_mask = UCFT_PARAM_FIELD_FAILURE_CB
            params.failure_cb = self._cb_c
        h = ctx_h()
        st = lib.ucft_init(ctypes.byref(params), ctypes.byref(h))
        if st != 0:
            raise error(st, "ucft_init")
        self._h = h.value
        self._owner = threading.get_ident()
        attr = ContextAttr()
        lib.ucft_context_query(self._h, ctypes.byref(attr))
        self.rank = attr.rank
        self.size = attr.size
        self.local_rank = attr.local_rank
        self.local_size = attr.local_size
        self.hostname = attr.hostname.decode()
        self.singleton = bool(attr.singleton)
        try:
            from ._comm import Comm
        except ImportError as e:  # NumPy missing from this interpreter
            self.finalize()
            raise ImportError(
                "ucft needs NumPy, which %s cannot import (%s); on Debian: "
                "apt-get install python3-numpy, and run /usr/bin/python3" %
                (sys.executable, e)) from None
        self.world = Comm(self, lib.ucft_comm_world(self._h))

    # -- internal helpers ------------------------------------------------
    def _handle(self):
        if self._h is None:
            raise RuntimeError("ucft context is finalized")
        return self._h

    def _on_failure(self, _ctx, rank, _reason, _arg):
        try:
            if self._cb is not None:
                self._cb(rank)
        except BaseException as e:  # re-raised by the calling wrapper
            if self._cb_error is None:
                self._cb_error = e

    def _raise_cb_error(self):
        e = self._cb_error
        if e is not None:
            self._cb_error = None
            raise e

    # -- public ----------------------------------------------------------
    def set_failure_cb(self, cb):
        """Replaces the failure callback (None removes it); the new one
        gets every failure not reported yet."""
        self._cb = cb
        st = lib.ucft_context_set_failure_cb(
            self._handle(), self._cb_c if cb is not None else FAILURE_CB(),
            None)
        if st != 0:
            raise error(st, "ucft_context_set_failure_cb")

    def progress(self):
        """One round of progress; returns the number of events."""
        n = lib.ucft_context_progress(self._handle())
        self._raise_cb_error()
        return n

    def fileno(self):
        """The context fd (an epoll fd) for an event loop: wait on it,
        never read, write or close it (R3)."""
        fd = ctypes.c_int(-1)
        st = lib.ucft_context_get_fd(self._handle(), ctypes.byref(fd))
        if st != 0:
            raise error(st, "ucft_context_get_fd")
        return fd.value

    def arm(self):
        """None: work is pending, progress again at once. Otherwise the
        number of milliseconds the caller may sleep on fileno()."""
        ms = ctypes.c_int(0)
        st = lib.ucft_context_arm(self._handle(), ctypes.byref(ms))
        if st == 1:
            return None
        if st != 0:
            raise error(st, "ucft_context_arm")
        return ms.value

    def failed_ranks(self):
        """Job ranks known to have failed, in the order they were learnt."""
        if self._h is None:
            return []
        n = ctypes.c_size_t(0)
        lib.ucft_context_get_failed_ranks(self._h, None, 0, ctypes.byref(n))
        arr = (ctypes.c_int * max(n.value, 1))()
        lib.ucft_context_get_failed_ranks(self._h, arr, n.value,
                                          ctypes.byref(n))
        return list(arr[:n.value])

    def finalize(self):
        """Collective over the live ranks (ucft_finalize). Idempotent."""
        if self._h is None:
            return
        for d in list(self._drivers.values()):
            d.close()
        h, self._h = self._h, None
        st = lib.ucft_finalize(h)
        self._orphans.clear()
        if st != 0:
            raise error(st, "ucft_finalize")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finalize()
        return False

    def __repr__(self):
        return "<ucft.Context rank %d of %d%s>" % (
            self.rank, self.size, "" if self._h else " finalized")


def init(failure_cb=None):
    """ucft.init(): a new Context (also a context manager)."""
    return Context(failure_cb)
