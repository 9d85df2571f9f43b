"""NumPy arrays as ucft buffers, without copies.

A buffer is passed to C as the address of its data: it must be an
ndarray (or, for point-to-point, any object with the buffer protocol,
viewed as bytes) that is C-contiguous, in native byte order, of a dtype
ucft has, and writable where ucft writes. Anything else raises TypeError
(the type or dtype) or ValueError (layout, size), naming the argument.
"""
import numpy as np

# numpy dtype -> ucft_datatype_t (include/ucft.h)
DTYPES = {
    np.dtype(np.int8): 0, np.dtype(np.int16): 1,
    np.dtype(np.int32): 2, np.dtype(np.int64): 3,
    np.dtype(np.uint8): 4, np.dtype(np.uint16): 5,
    np.dtype(np.uint32): 6, np.dtype(np.uint64): 7,
    np.dtype(np.float32): 8, np.dtype(np.float64): 9,
}

OPS = {"sum": 0, "prod": 1, "min": 2, "max": 3,
       "band": 4, "bor": 5, "bxor": 6}


def op_code(op):
    if isinstance(op, str):
        try:
            return OPS[op.lower()]
        except KeyError:
            raise ValueError("op %r is not one of %s" %
                             (op, ", ".join(OPS))) from None
    raise TypeError("op must be a string (%s), not %s" %
                    (", ".join(OPS), type(op).__name__))


def array(name, a, writable=False):
    """Checks `a` as a collective buffer; returns (a, ucft datatype)."""
    if not isinstance(a, np.ndarray):
        raise TypeError("%s must be a numpy.ndarray, not %s" %
                        (name, type(a).__name__))
    dt = DTYPES.get(a.dtype)
    if dt is None or not a.dtype.isnative:
        raise TypeError("%s has dtype %s, which ucft has no datatype for "
                        "(int8..int64, uint8..uint64, float32, float64, "
                        "native byte order)" % (name, a.dtype))
    if not a.flags.c_contiguous:
        raise ValueError("%s is not C-contiguous (pass "
                         "numpy.ascontiguousarray(%s))" % (name, name))
    if writable and not a.flags.writeable:
        raise ValueError("%s is read-only" % name)
    return a, dt


def output(name, out, like):
    """Checks an output array against the input array `like`."""
    out, _ = array(name, out, writable=True)
    if out.dtype != like.dtype:
        raise TypeError("%s has dtype %s, the input has %s" %
                        (name, out.dtype, like.dtype))
    if out.size < like.size:
        raise ValueError("%s is too small: %d elements, the input has %d" %
                         (name, out.size, like.size))
    return out


def raw(name, buf, writable=False):
    """Any contiguous buffer as a byte array (no copy)."""
    if isinstance(buf, np.ndarray):
        if not buf.flags.c_contiguous:
            raise ValueError("%s is not C-contiguous" % name)
        if writable and not buf.flags.writeable:
            raise ValueError("%s is read-only" % name)
        return buf.reshape(-1).view(np.uint8) if buf.size else \
            np.empty(0, np.uint8)
    try:
        m = memoryview(buf)
    except TypeError:
        raise TypeError("%s must be a numpy array or a bytes-like object, "
                        "not %s" % (name, type(buf).__name__)) from None
    if not m.c_contiguous:
        raise ValueError("%s is not C-contiguous" % name)
    if writable and m.readonly:
        raise ValueError("%s is read-only" % name)
    a = np.frombuffer(m.cast("B"), dtype=np.uint8)
    return a


def addr(a):
    return a.ctypes.data if a.size else None
