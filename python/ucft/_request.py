"""Requests: one non-blocking operation each (include/ucft.h R4, R5).

A Request keeps the arrays it borrows alive until the operation is
complete. Released with free() before that, the operation runs on inside
the library (R4): its arrays then stay referenced by the context until
finalize, so the memory the library writes stays valid.
"""
import collections
import ctypes

from ._lib import lib, Info
from ._errors import error

Status = collections.namedtuple("Status", "source tag nbytes")

INPROGRESS = 1


class Request:
    """A pending operation. test() / wait() return its result (the output
    array of a collective, a Status for a receive, None for a send or a
    barrier) or raise its error; either releases it."""

    def __init__(self, ctx, handle, keep, result, what):
        self._ctx = ctx
        self._h = ctypes.c_void_p(handle)
        self._keep = keep
        self._result = result
        self._what = what
        self._done = False
        self._value = None
        self._error = None

    @property
    def done(self):
        return self._done

    def _finish(self, st, info):
        self._done = True
        self._keep = None
        if st < 0:
            self._error = error(st, self._what, self._ctx)
        elif isinstance(self._result, str):  # "status": a receive
            self._value = Status(info.source, info.tag, info.length)
        else:
            self._value = self._result
        self._result = None

    def _outcome(self):
        if self._error is not None:
            raise self._error
        return self._value

    def test(self):
        """True once complete (then result() has the outcome)."""
        if self._done:
            return True
        self._ctx._handle()
        done = ctypes.c_int(0)
        info = Info()
        st = lib.ucft_test(ctypes.byref(self._h), ctypes.byref(done),
                           ctypes.byref(info))
        self._ctx._raise_cb_error()
        if done.value:
            self._finish(st, info)
            return True
        if st == INPROGRESS:
            return False
        if st < 0:  # ERR_PROC_FAILED_PENDING: stays pending
            raise error(st, self._what, self._ctx)
        return False

    def result(self):
        """The outcome of a complete request (raises its error)."""
        if not self._done:
            raise ValueError("%s: the request is not complete" % self._what)
        return self._outcome()

    def wait(self):
        """Waits for completion; returns the result or raises its error.
        ProcFailedPending leaves the request pending (acknowledge, then
        wait again, or cancel)."""
        if not self._done:
            self._ctx._handle()
            info = Info()
            st = lib.ucft_wait(ctypes.byref(self._h), ctypes.byref(info))
            self._ctx._raise_cb_error()
            if self._h.value is not None and st < 0:
                raise error(st, self._what, self._ctx)
            self._finish(st, info)
        return self._outcome()

    def cancel(self):
        """Asks a pending receive to end with Canceled; a collective is not
        interrupted (it completes as it would have). Wait or free it."""
        if not self._done and self._h.value is not None:
            lib.ucft_cancel(self._h)

    def free(self):
        """Releases the request unseen; the operation runs on and its arrays
        stay referenced by the context until finalize (R4)."""
        if self._done:
            return
        if self._h.value is not None:
            self._ctx._handle()
            lib.ucft_request_free(ctypes.byref(self._h))
            self._ctx._orphans.append(self._keep)
        self._done = True
        self._keep = None
        self._error = RuntimeError("%s: the request was released" %
                                   self._what)

    def __repr__(self):
        return "<ucft.Request %s %s>" % (self._what,
                                         "done" if self._done else "pending")
