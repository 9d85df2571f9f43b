/*
 * Datatypes and reduction operations of the reducing collectives, and the
 * reduction kernel they share.
 *
 * A value is `count` elements of one datatype in host byte order. The
 * kernel reads and writes elements through memcpy, so buffers need no
 * alignment (a value may sit right after a wire header). Integer sums and
 * products wrap modulo 2^bits for signed types too (computed in unsigned
 * arithmetic: no undefined behaviour, and the result does not depend on
 * the order in which values are combined). Floating-point sums and products
 * are IEEE operations: commutative but not associative, so two algorithms
 * (or two failure patterns) may round differently; allreduce is still
 * identical at every survivor because one root computes the value.
 *
 * Enum value 0 is the default of a zeroed coll_args_t: int8 elements,
 * combined with sum.
 */
#ifndef UCFT_COLL_DTYPE_H
#define UCFT_COLL_DTYPE_H

#include "ucft.h"

#include <stddef.h>

typedef enum coll_dtype {
    COLL_DTYPE_INT8 = 0,
    COLL_DTYPE_INT16,
    COLL_DTYPE_INT32,
    COLL_DTYPE_INT64,
    COLL_DTYPE_UINT8,
    COLL_DTYPE_UINT16,
    COLL_DTYPE_UINT32,
    COLL_DTYPE_UINT64,
    COLL_DTYPE_FLOAT,
    COLL_DTYPE_DOUBLE,
    COLL_DTYPE_LAST
} coll_dtype_t;

typedef enum coll_redop {
    COLL_REDOP_SUM = 0,
    COLL_REDOP_PROD,
    COLL_REDOP_MIN,
    COLL_REDOP_MAX,
    COLL_REDOP_BAND, /* bitwise: integer types only */
    COLL_REDOP_BOR,
    COLL_REDOP_BXOR,
    COLL_REDOP_LAST
} coll_redop_t;

/*
 * A user-defined operation: combines `count` elements of `src` into `dst`
 * (dst = dst op src), must be associative and commutative, and is called
 * from the progress thread (no blocking, no calls back into the library).
 */
typedef void (*coll_user_op_cb)(void *dst, const void *src, size_t count,
                                int dtype, void *arg);

typedef struct coll_user_op {
    coll_user_op_cb cb;
    void *arg;
} coll_user_op_t;

/* Size of one element in bytes, 0 for an unknown datatype. */
size_t dtype_size(int dtype);

/* UCFT_OK if `op` applies to `dtype`, else UCFT_ERR_INVALID_PARAM (unknown
 * datatype or op, bitwise op on a floating-point type). */
ucft_status_t dtype_validate(int dtype, int op);

/* dst[i] = dst[i] op src[i] for i < count. UCFT_ERR_INVALID_PARAM (and dst
 * untouched) when the combination is invalid. dst and src must not
 * overlap unless equal. */
ucft_status_t dtype_reduce(void *dst, const void *src, size_t count, int dtype,
                           int op);

/* The same through a user-defined operation. */
ucft_status_t dtype_reduce_user(void *dst, const void *src, size_t count,
                                int dtype, const coll_user_op_t *op);

const char *dtype_name(int dtype);
const char *dtype_op_name(int op);

#endif
