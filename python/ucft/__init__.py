"""ucft for Python: fault-tolerant collectives and point-to-point on NumPy
arrays, over libucft (ctypes; no compiler needed).

    import numpy as np, ucft
    with ucft.init() as ctx:
        world = ctx.world
        total = world.allreduce(np.array([world.rank + 1]), op="sum")

Blocking calls (allreduce, reduce, bcast, barrier, send, recv), requests
(iallreduce ... -> Request.test/wait/free) and asyncio
(await world.allreduce_async(...), driven by the context fd: ucft.aio).
Failures raise ucft.ProcFailed (.ranks) and the other UcftError
subclasses; bad arguments raise TypeError or ValueError naming them.
The C contract (include/ucft.h, rules R1-R12) holds: one thread drives a
context, and the failure callback runs on it.
"""
from ._lib import ANY_SOURCE, ANY_TAG, TAG_UB
from ._errors import (UcftError, ProcFailed, ProcFailedPending, Revoked,
                      SelfFailed, Canceled, Truncated, TimedOut,
                      InvalidParam)
from ._context import Context, init
from ._request import Request, Status

# NumPy is imported by the first Context, after ucft_init has returned: a
# job of many ranks on few cores then joins before each rank spends its
# share of a second importing NumPy (a rank that dies before ucft_init
# returns fails the others' ucft_init).


def __getattr__(name):
    if name == "Comm":
        from ._comm import Comm
        return Comm
    raise AttributeError("module 'ucft' has no attribute %r" % name)

__all__ = ["init", "Context", "Comm", "Request", "Status", "UcftError",
           "ProcFailed", "ProcFailedPending", "Revoked", "SelfFailed",
           "Canceled", "Truncated", "TimedOut", "InvalidParam",
           "ANY_SOURCE", "ANY_TAG", "TAG_UB"]
__version__ = "0.1.0"
