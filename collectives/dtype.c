/*
 * The reduction kernel: one loop per (datatype, operation), generated from
 * two X-macro lists so that every combination is the same few lines.
 * Signed integers are combined in the unsigned type of the same width
 * (wrap-around, no undefined behaviour), then stored back bit for bit.
 */
#include "dtype.h"

#include <stdint.h>
#include <string.h>

/* name, C type, unsigned twin (for wrap-around arithmetic), integer? */
#define DTYPE_LIST(X)                                                          \
    X(INT8, int8_t, uint8_t, 1)                                                \
    X(INT16, int16_t, uint16_t, 1)                                             \
    X(INT32, int32_t, uint32_t, 1)                                             \
    X(INT64, int64_t, uint64_t, 1)                                             \
    X(UINT8, uint8_t, uint8_t, 1)                                              \
    X(UINT16, uint16_t, uint16_t, 1)                                           \
    X(UINT32, uint32_t, uint32_t, 1)                                           \
    X(UINT64, uint64_t, uint64_t, 1)                                           \
    X(FLOAT, float, float, 0)                                                  \
    X(DOUBLE, double, double, 0)

static const struct {
    size_t size;
    int integer;
    const char *name;
} dtype_info[COLL_DTYPE_LAST] = {
#define X(N, T, U, I) [COLL_DTYPE_##N] = {sizeof(T), I, #N},
    DTYPE_LIST(X)
#undef X
};

static const char *const op_names[COLL_REDOP_LAST] = {
    "sum", "prod", "min", "max", "band", "bor", "bxor",
};

size_t dtype_size(int dtype)
{
    if (dtype < 0 || dtype >= COLL_DTYPE_LAST)
        return 0;
    return dtype_info[dtype].size;
}

const char *dtype_name(int dtype)
{
    return dtype_size(dtype) ? dtype_info[dtype].name : "?";
}

const char *dtype_op_name(int op)
{
    return op >= 0 && op < COLL_REDOP_LAST ? op_names[op] : "?";
}

ucft_status_t dtype_validate(int dtype, int op)
{
    if (dtype_size(dtype) == 0 || op < 0 || op >= COLL_REDOP_LAST)
        return UCFT_ERR_INVALID_PARAM;
    if (!dtype_info[dtype].integer &&
        (op == COLL_REDOP_BAND || op == COLL_REDOP_BOR ||
         op == COLL_REDOP_BXOR))
        return UCFT_ERR_INVALID_PARAM;
    return UCFT_OK;
}

/* One element: x = x op y, both of the arithmetic type A (the unsigned twin
 * for integers); `cmp` in the signed type T for min and max. */
#define OP_SUM(A, T, x, y)  x = (A)(x + y)
#define OP_PROD(A, T, x, y) x = (A)(x * y)
#define OP_MIN(A, T, x, y)  x = ((T)y < (T)x) ? y : x
#define OP_MAX(A, T, x, y)  x = ((T)y > (T)x) ? y : x
#define OP_BAND(A, T, x, y) x = (A)(x & y)
#define OP_BOR(A, T, x, y)  x = (A)(x | y)
#define OP_BXOR(A, T, x, y) x = (A)(x ^ y)

#define LOOP(T, A, OPM)                                                        \
    for (size_t i = 0; i < count; i++) {                                       \
        T tx, ty;                                                              \
        A x, y;                                                                \
        memcpy(&tx, d + i * sizeof(T), sizeof(T));                             \
        memcpy(&ty, s + i * sizeof(T), sizeof(T));                             \
        memcpy(&x, &tx, sizeof(T));                                            \
        memcpy(&y, &ty, sizeof(T));                                            \
        OPM(A, T, x, y);                                                       \
        memcpy(d + i * sizeof(T), &x, sizeof(T));                              \
    }                                                                          \
    break

/* Bitwise operations on floating-point types are rejected by
 * dtype_validate() before the switch, so FLOAT_CASES has none. */
#define INT_CASES(T, A)                                                        \
    switch (op) {                                                              \
    case COLL_REDOP_SUM:                                                       \
        LOOP(T, A, OP_SUM);                                                    \
    case COLL_REDOP_PROD:                                                      \
        LOOP(T, A, OP_PROD);                                                   \
    case COLL_REDOP_MIN:                                                       \
        LOOP(T, A, OP_MIN);                                                    \
    case COLL_REDOP_MAX:                                                       \
        LOOP(T, A, OP_MAX);                                                    \
    case COLL_REDOP_BAND:                                                      \
        LOOP(T, A, OP_BAND);                                                   \
    case COLL_REDOP_BOR:                                                       \
        LOOP(T, A, OP_BOR);                                                    \
    case COLL_REDOP_BXOR:                                                      \
        LOOP(T, A, OP_BXOR);                                                   \
    }                                                                          \
    break
#define FLOAT_CASES(T, A)                                                      \
    switch (op) {                                                              \
    case COLL_REDOP_SUM:                                                       \
        LOOP(T, A, OP_SUM);                                                    \
    case COLL_REDOP_PROD:                                                      \
        LOOP(T, A, OP_PROD);                                                   \
    case COLL_REDOP_MIN:                                                       \
        LOOP(T, A, OP_MIN);                                                    \
    case COLL_REDOP_MAX:                                                       \
        LOOP(T, A, OP_MAX);                                                    \
    }                                                                          \
    break

ucft_status_t dtype_reduce(void *dst, const void *src, size_t count, int dtype,
                           int op)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    ucft_status_t st = dtype_validate(dtype, op);

    if (st != UCFT_OK)
        return st;
    switch (dtype) {
    case COLL_DTYPE_INT8:
        INT_CASES(int8_t, uint8_t);
    case COLL_DTYPE_INT16:
        INT_CASES(int16_t, uint16_t);
    case COLL_DTYPE_INT32:
        INT_CASES(int32_t, uint32_t);
    case COLL_DTYPE_INT64:
        INT_CASES(int64_t, uint64_t);
    case COLL_DTYPE_UINT8:
        INT_CASES(uint8_t, uint8_t);
    case COLL_DTYPE_UINT16:
        INT_CASES(uint16_t, uint16_t);
    case COLL_DTYPE_UINT32:
        INT_CASES(uint32_t, uint32_t);
    case COLL_DTYPE_UINT64:
        INT_CASES(uint64_t, uint64_t);
    case COLL_DTYPE_FLOAT:
        FLOAT_CASES(float, float);
    case COLL_DTYPE_DOUBLE:
        FLOAT_CASES(double, double);
    }
    return UCFT_OK;
}

/* Bytes of each aligned copy handed to a user-defined operation. */
#define USER_BLOCK 1024

ucft_status_t dtype_reduce_user(void *dst, const void *src, size_t count,
                                int dtype, const coll_user_op_t *op)
{
    size_t es = dtype_size(dtype);
    if (op == NULL || op->cb == NULL || es == 0)
        return UCFT_ERR_INVALID_PARAM;
    if ((uintptr_t)dst % es == 0 && (uintptr_t)src % es == 0) {
        op->cb(dst, src, count, dtype, op->arg);
        return UCFT_OK;
    }
    /* A value inside a message, after a 4-byte header: the function gets
     * aligned copies, a block of whole elements at a time. */
    _Alignas(16) unsigned char d[USER_BLOCK], s[USER_BLOCK];
    size_t per = USER_BLOCK / es;
    for (size_t i = 0; i < count; i += per) {
        size_t k = count - i < per ? count - i : per;
        memcpy(d, (unsigned char *)dst + i * es, k * es);
        memcpy(s, (const unsigned char *)src + i * es, k * es);
        op->cb(d, s, k, dtype, op->arg);
        memcpy((unsigned char *)dst + i * es, d, k * es);
    }
    return UCFT_OK;
}
