/* The reduction kernel of collectives/dtype.c against a straightforward
 * typed loop, for every datatype and operation, on unaligned buffers. */
#include "collectives/dtype.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define COUNT 257

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Reference: x op y in the plain C type, integers through the unsigned
 * type of the same width for sum and product (wrap-around). */
#define REF(T, U, ISINT)                                                       \
    static void ref_##T(T *d, const T *s, size_t n, int op)                    \
    {                                                                          \
        for (size_t i = 0; i < n; i++) {                                       \
            T x = d[i], y = s[i];                                              \
            switch (op) {                                                      \
            case COLL_REDOP_SUM:                                               \
                d[i] = ISINT ? (T)(U)((U)x + (U)y) : (T)(x + y);               \
                break;                                                         \
            case COLL_REDOP_PROD:                                              \
                d[i] = ISINT ? (T)(U)((U)x * (U)y) : (T)(x * y);               \
                break;                                                         \
            case COLL_REDOP_MIN:                                               \
                d[i] = y < x ? y : x;                                          \
                break;                                                         \
            case COLL_REDOP_MAX:                                               \
                d[i] = y > x ? y : x;                                          \
                break;                                                         \
            default:                                                           \
                d[i] = (T)bitop((uint64_t)(U)x, (uint64_t)(U)y, op);           \
            }                                                                  \
        }                                                                      \
    }

static uint64_t bitop(uint64_t x, uint64_t y, int op)
{
    return op == COLL_REDOP_BAND ? x & y : op == COLL_REDOP_BOR ? x | y : x ^ y;
}

REF(int8_t, uint8_t, 1)
REF(int16_t, uint16_t, 1)
REF(int32_t, uint32_t, 1)
REF(int64_t, uint64_t, 1)
REF(uint8_t, uint8_t, 1)
REF(uint16_t, uint16_t, 1)
REF(uint32_t, uint32_t, 1)
REF(uint64_t, uint64_t, 1)
#define bitop(x, y, op) 0
REF(float, float, 0)
REF(double, double, 0)
#undef bitop

static void fill_random(void *p, size_t bytes, int dtype)
{
    unsigned char *b = p;
    for (size_t i = 0; i < bytes; i++)
        b[i] = (unsigned char)next_rand();
    /* Small exact values for floating point (no NaN: NaN != NaN). */
    if (dtype == COLL_DTYPE_FLOAT)
        for (size_t i = 0; i < bytes / 4; i++) {
            float v = (float)((int)(next_rand() % 2001) - 1000) / 8.0f;
            memcpy(b + 4 * i, &v, 4);
        }
    if (dtype == COLL_DTYPE_DOUBLE)
        for (size_t i = 0; i < bytes / 8; i++) {
            double v = (double)((int)(next_rand() % 20001) - 10000) / 16.0;
            memcpy(b + 8 * i, &v, 8);
        }
}

static void reference(void *d, const void *s, size_t n, int dtype, int op)
{
    switch (dtype) {
#define R(E, T)                                                                \
    case E:                                                                    \
        ref_##T(d, s, n, op);                                                  \
        break;
        R(COLL_DTYPE_INT8, int8_t)
        R(COLL_DTYPE_INT16, int16_t)
        R(COLL_DTYPE_INT32, int32_t)
        R(COLL_DTYPE_INT64, int64_t)
        R(COLL_DTYPE_UINT8, uint8_t)
        R(COLL_DTYPE_UINT16, uint16_t)
        R(COLL_DTYPE_UINT32, uint32_t)
        R(COLL_DTYPE_UINT64, uint64_t)
        R(COLL_DTYPE_FLOAT, float)
        R(COLL_DTYPE_DOUBLE, double)
#undef R
    }
}

static int is_float(int dt)
{
    return dt == COLL_DTYPE_FLOAT || dt == COLL_DTYPE_DOUBLE;
}

static int is_bitwise(int op)
{
    return op == COLL_REDOP_BAND || op == COLL_REDOP_BOR ||
           op == COLL_REDOP_BXOR;
}

static void test_dtype_kernel_matches_loop(void **state)
{
    /* Aligned storage for the reference; the kernel runs at offset 1. */
    static uint64_t da[COUNT + 1], sa[COUNT + 1], ref[COUNT + 1];
    static unsigned char du[8 * COUNT + 1], su[8 * COUNT + 1];

    for (int dt = 0; dt < COLL_DTYPE_LAST; dt++)
        for (int op = 0; op < COLL_REDOP_LAST; op++) {
            size_t es = dtype_size(dt);
            if (is_float(dt) && is_bitwise(op)) {
                assert_int_equal(dtype_validate(dt, op),
                                 UCFT_ERR_INVALID_PARAM);
                memcpy(du + 1, da, es);
                assert_int_equal(dtype_reduce(du + 1, su + 1, 1, dt, op),
                                 UCFT_ERR_INVALID_PARAM);
                continue;
            }
            for (int round = 0; round < 20; round++) {
                size_t n = (size_t)(next_rand() % COUNT) + 1;
                fill_random(da, n * es, dt);
                fill_random(sa, n * es, dt);
                memcpy(ref, da, n * es);
                reference(ref, sa, n, dt, op);
                memcpy(du + 1, da, n * es);
                memcpy(su + 1, sa, n * es);
                assert_int_equal(dtype_reduce(du + 1, su + 1, n, dt, op),
                                 UCFT_OK);
                assert_memory_equal(du + 1, ref, n * es);
                assert_memory_equal(su + 1, sa, n * es); /* src untouched */
            }
        }
}

static void test_dtype_invalid_rejected(void **state)
{
    unsigned char a[8] = {1}, b[8] = {2};
    assert_int_equal(dtype_size(COLL_DTYPE_LAST), 0);
    assert_int_equal(dtype_size(-1), 0);
    assert_int_equal(dtype_validate(COLL_DTYPE_LAST, COLL_REDOP_SUM),
                     UCFT_ERR_INVALID_PARAM);
    assert_int_equal(dtype_validate(COLL_DTYPE_INT8, COLL_REDOP_LAST),
                     UCFT_ERR_INVALID_PARAM);
    assert_int_equal(dtype_reduce(a, b, 1, COLL_DTYPE_DOUBLE, COLL_REDOP_BXOR),
                     UCFT_ERR_INVALID_PARAM);
    assert_int_equal(a[0], 1); /* untouched */
    assert_int_equal(dtype_reduce(a, b, 0, COLL_DTYPE_INT8, COLL_REDOP_SUM),
                     UCFT_OK);
    assert_int_equal(dtype_size(COLL_DTYPE_INT64), 8);
    assert_int_equal(dtype_size(COLL_DTYPE_FLOAT), 4);
}

static void user_sum(void *dst, const void *src, size_t count, int dtype,
                     void *arg)
{
    (*(int *)arg)++;
    dtype_reduce(dst, src, count, dtype, COLL_REDOP_SUM);
}

static void test_dtype_user_op(void **state)
{
    int calls = 0;
    coll_user_op_t op = {user_sum, &calls};
    int32_t a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    assert_int_equal(dtype_reduce_user(a, b, 3, COLL_DTYPE_INT32, &op),
                     UCFT_OK);
    assert_int_equal(a[2], 33);
    assert_int_equal(calls, 1);
    assert_int_equal(dtype_reduce_user(a, b, 3, COLL_DTYPE_INT32, NULL),
                     UCFT_ERR_INVALID_PARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_kernel_matches_loop),
        cmocka_unit_test(test_dtype_invalid_rejected),
        cmocka_unit_test(test_dtype_user_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
