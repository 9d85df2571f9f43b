"""ucft status codes as Python exceptions.

Every negative ucft_status_t raises a subclass of UcftError chosen by its
name (ucft_status_name), so the table in include/ucft.h stays the only
list of codes. Bad arguments found in Python raise TypeError or
ValueError before any C call; UCFT_ERR_INVALID_PARAM from the library
raises InvalidParam, which is also a ValueError.
"""
from ._lib import lib


class UcftError(Exception):
    """A ucft call failed; .status is the ucft_status_t, .name its name."""

    def __init__(self, status, what=""):
        self.status = status
        self.name = lib.ucft_status_name(status).decode()
        text = lib.ucft_status_string(status).decode()
        msg = "%s: %s (%s)" % (what, text, self.name) if what else \
            "%s (%s)" % (text, self.name)
        super().__init__(msg)


class ProcFailed(UcftError):
    """UCFT_ERR_PROC_FAILED: a peer the operation needed failed.
    .ranks: the job ranks known to have failed when it was raised."""

    def __init__(self, status, what="", ranks=()):
        super().__init__(status, what)
        self.ranks = list(ranks)


class ProcFailedPending(ProcFailed):
    """UCFT_ERR_PROC_FAILED_PENDING: an ANY_SOURCE receive stays pending
    until the failure is acknowledged (Comm.failure_ack)."""


class Revoked(UcftError):
    """UCFT_ERR_REVOKED: the communicator was revoked."""


class SelfFailed(UcftError):
    """UCFT_ERR_SELF_FAILED: the job declared this process failed."""


class Canceled(UcftError):
    """UCFT_ERR_CANCELED."""


class Truncated(UcftError):
    """UCFT_ERR_TRUNCATED: a message or payload of another size."""


class TimedOut(UcftError):
    """UCFT_ERR_TIMED_OUT."""


class InvalidParam(UcftError, ValueError):
    """UCFT_ERR_INVALID_PARAM (the library's log names the argument)."""


_BY_NAME = {
    "ERR_PROC_FAILED": ProcFailed,
    "ERR_PROC_FAILED_PENDING": ProcFailedPending,
    "ERR_REVOKED": Revoked,
    "ERR_SELF_FAILED": SelfFailed,
    "ERR_CANCELED": Canceled,
    "ERR_TRUNCATED": Truncated,
    "ERR_TIMED_OUT": TimedOut,
    "ERR_INVALID_PARAM": InvalidParam,
}


def error(status, what="", ctx=None):
    """The exception for a negative status; `ctx` supplies failed ranks."""
    cls = _BY_NAME.get(lib.ucft_status_name(status).decode(), UcftError)
    if issubclass(cls, ProcFailed):
        return cls(status, what, ctx.failed_ranks() if ctx else ())
    return cls(status, what)
