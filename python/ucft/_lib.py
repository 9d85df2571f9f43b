"""Loads libucft.so through ctypes and declares the C prototypes.

Where the library comes from, first match wins:
  1. the environment variable UCFT_LIBRARY (a path to libucft.so), for the
     build tree and tests;
  2. _config.py, written by `cmake --install`, which names the installed
     library relative to this package (so `--prefix` relocates both);
  3. the dynamic linker's search path ("libucft.so.0").
Only the names of include/ucft.h are used, never the deprecated aliases.
"""
import ctypes
import os

c_int_p = ctypes.POINTER(ctypes.c_int)
c_size_p = ctypes.POINTER(ctypes.c_size_t)
ctx_h = ctypes.c_void_p
comm_h = ctypes.c_void_p
req_h = ctypes.c_void_p
req_p = ctypes.POINTER(ctypes.c_void_p)

FAILURE_CB = ctypes.CFUNCTYPE(None, ctx_h, ctypes.c_int, ctypes.c_int,
                              ctypes.c_void_p)

UCFT_PARAM_FIELD_FAILURE_CB = 1
ANY_SOURCE = -1
ANY_TAG = -1
TAG_UB = (1 << 24) - 1


class Params(ctypes.Structure):
    _fields_ = [("field_mask", ctypes.c_uint64),
                ("failure_cb", FAILURE_CB),
                ("failure_cb_arg", ctypes.c_void_p)]


class ContextAttr(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int), ("size", ctypes.c_int),
                ("local_rank", ctypes.c_int), ("local_size", ctypes.c_int),
                ("node_id", ctypes.c_int), ("singleton", ctypes.c_int),
                ("hostname", ctypes.c_char_p), ("nspace", ctypes.c_char_p)]


class Info(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("source", ctypes.c_int),
                ("tag", ctypes.c_int), ("length", ctypes.c_size_t)]


def _library_path():
    env = os.environ.get("UCFT_LIBRARY")
    if env:
        return env
    try:
        from . import _config  # written at install time
        return os.path.normpath(os.path.join(os.path.dirname(__file__),
                                             _config.LIBRARY))
    except ImportError:
        return "libucft.so.0"


# (name, return type, argument types)
_PROTOS = [
    ("ucft_status_string", ctypes.c_char_p, [ctypes.c_int]),
    ("ucft_status_name", ctypes.c_char_p, [ctypes.c_int]),
    ("ucft_init", ctypes.c_int, [ctypes.POINTER(Params),
                                 ctypes.POINTER(ctx_h)]),
    ("ucft_finalize", ctypes.c_int, [ctx_h]),
    ("ucft_context_query", ctypes.c_int, [ctx_h,
                                          ctypes.POINTER(ContextAttr)]),
    ("ucft_comm_world", comm_h, [ctx_h]),
    ("ucft_comm_rank", ctypes.c_int, [comm_h]),
    ("ucft_comm_size", ctypes.c_int, [comm_h]),
    ("ucft_comm_set_f", ctypes.c_int, [comm_h, ctypes.c_int]),
    ("ucft_comm_get_f", ctypes.c_int, [comm_h]),
    ("ucft_context_progress", ctypes.c_int, [ctx_h]),
    ("ucft_context_get_fd", ctypes.c_int, [ctx_h, c_int_p]),
    ("ucft_context_arm", ctypes.c_int, [ctx_h, c_int_p]),
    ("ucft_context_get_failed_ranks", ctypes.c_int,
     [ctx_h, c_int_p, ctypes.c_size_t, c_size_p]),
    ("ucft_context_set_failure_cb", ctypes.c_int,
     [ctx_h, FAILURE_CB, ctypes.c_void_p]),
    ("ucft_comm_failure_ack", ctypes.c_int, [comm_h]),
    ("ucft_isend", ctypes.c_int, [comm_h, ctypes.c_void_p, ctypes.c_size_t,
                                  ctypes.c_int, ctypes.c_int, req_p]),
    ("ucft_irecv", ctypes.c_int, [comm_h, ctypes.c_void_p, ctypes.c_size_t,
                                  ctypes.c_int, ctypes.c_int, req_p]),
    ("ucft_test", ctypes.c_int, [req_p, c_int_p, ctypes.POINTER(Info)]),
    ("ucft_wait", ctypes.c_int, [req_p, ctypes.POINTER(Info)]),
    ("ucft_cancel", ctypes.c_int, [req_h]),
    ("ucft_request_free", ctypes.c_int, [req_p]),
    ("ucft_ibcast", ctypes.c_int, [comm_h, ctypes.c_void_p, ctypes.c_size_t,
                                   ctypes.c_int, ctypes.c_int, req_p]),
    ("ucft_ireduce", ctypes.c_int,
     [comm_h, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
      ctypes.c_int, ctypes.c_int, ctypes.c_int, req_p]),
    ("ucft_iallreduce", ctypes.c_int,
     [comm_h, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
      ctypes.c_int, ctypes.c_int, req_p]),
    ("ucft_ibarrier", ctypes.c_int, [comm_h, req_p]),
    ("ucft_iallgather", ctypes.c_int,
     [comm_h, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
      ctypes.c_int, ctypes.c_void_p, req_p]),
    ("ucft_ireduce_scatter", ctypes.c_int,
     [comm_h, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
      ctypes.c_int, ctypes.c_int, req_p]),
    ("ucft_allreduce", ctypes.c_int,
     [comm_h, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
      ctypes.c_int, ctypes.c_int]),
]


def load():
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(
            "ucft: cannot load libucft (%s): %s; set UCFT_LIBRARY to the path "
            "of libucft.so" % (path, e)) from None
    for name, restype, argtypes in _PROTOS:
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


lib = load()
