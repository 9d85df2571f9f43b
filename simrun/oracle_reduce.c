/*
 * The oracle of the reducing collectives (simrun/oracle.h): the encoding
 * of every rank's input and the check of its output.
 */
#include "simrun/oracle.h"
#include "collectives/dtype.h"

#include <stdlib.h>
#include <string.h>

static size_t elems(const coll_args_t *a)
{
    size_t es = dtype_size(a->dtype);
    if (es == 0)
        return 0;
    return a->count ? a->count : a->len / es;
}

static int is_int(int dt)
{
    return dt != COLL_DTYPE_FLOAT && dt != COLL_DTYPE_DOUBLE;
}

/* Multiplicity mode: each rank's value is a 1 at its own position(s). */
static int counting(const coll_args_t *a, int size)
{
    return is_int(a->dtype) && a->redop == COLL_REDOP_SUM &&
           elems(a) >= (size_t)size;
}

static void put(unsigned char *b, size_t i, int dt, uint64_t v)
{
    size_t es = dtype_size(dt);
    if (dt == COLL_DTYPE_FLOAT) {
        float x = (float)v;
        memcpy(b + i * es, &x, es);
    } else if (dt == COLL_DTYPE_DOUBLE) {
        double x = (double)v;
        memcpy(b + i * es, &x, es);
    } else {
        /* Little or big endian: copy the low bytes of v. */
        uint8_t u8 = (uint8_t)v;
        uint16_t u16 = (uint16_t)v;
        uint32_t u32 = (uint32_t)v;
        const void *src = es == 1   ? (const void *)&u8
                          : es == 2 ? (const void *)&u16
                          : es == 4 ? (const void *)&u32
                                    : (const void *)&v;
        memcpy(b + i * es, src, es);
    }
}

static uint64_t get_uint(const unsigned char *b, size_t i, int dt)
{
    size_t es = dtype_size(dt);
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (es) {
    case 1:
        memcpy(&u8, b + i, 1);
        return u8;
    case 2:
        memcpy(&u16, b + 2 * i, 2);
        return u16;
    case 4:
        memcpy(&u32, b + 4 * i, 4);
        return u32;
    default:
        memcpy(&u64, b + 8 * i, 8);
        return u64;
    }
}

static uint64_t gen(const coll_args_t *a, int rank, size_t i)
{
    if (a->redop == COLL_REDOP_PROD)
        return 1 + (((size_t)rank + i) & 1);
    return ((uint64_t)rank * 7 + i * 3 + a->seq) % 11 + 1;
}

void rc_fill(void *buf, const coll_args_t *a, int rank, int size)
{
    size_t n = elems(a);
    unsigned char *b = buf;

    if (counting(a, size)) {
        memset(b, 0, a->len);
        put(b, (size_t)rank, a->dtype, 1);
        if (n >= 2 * (size_t)size)
            put(b, (size_t)size + (size_t)rank, a->dtype, 1);
        return;
    }
    for (size_t i = 0; i < n; i++)
        put(b, i, a->dtype, gen(a, rank, i));
}

/* Generic mode: does buf equal the reduction over the live ranks plus some
 * subset of the dead ones? */
static int check_subsets(const unsigned char *buf, const coll_args_t *a,
                         int size, const uint8_t *dead)
{
    size_t n = elems(a), bytes = a->len;
    int nd = 0, d[12], ok = 0;
    unsigned char *acc = malloc(bytes ? 2 * bytes : 1), *tmp = acc + bytes;

    if (acc == NULL)
        return 0;
    for (int r = 0; r < size; r++)
        if (dead[r]) {
            if (nd == 12) {
                free(acc);
                return 1; /* too many to enumerate: accept */
            }
            d[nd++] = r;
        }
    for (uint32_t m = 0; m < (1u << nd) && !ok; m++) {
        int first = 1;
        for (int r = 0; r < size; r++) {
            int in = !dead[r];
            for (int j = 0; j < nd; j++)
                if (d[j] == r)
                    in = (m >> j) & 1;
            if (!in)
                continue;
            unsigned char *dst = first ? acc : tmp;
            for (size_t i = 0; i < n; i++)
                put(dst, i, a->dtype, gen(a, r, i));
            if (!first)
                dtype_reduce(acc, tmp, n, a->dtype, a->redop);
            first = 0;
        }
        ok = !first && memcmp(acc, buf, bytes) == 0;
    }
    free(acc);
    return ok;
}

/* Sum of gen(r, i) over r < size in O(1): 7 is invertible mod 11, so any
 * 11 consecutive ranks add up to 0 + 1 + ... + 10 plus 11. */
static uint64_t gen_sum(const coll_args_t *a, int size, size_t i)
{
    uint64_t q = (uint64_t)size / 11, t = 66 * q;
    for (int r = (int)(11 * q); r < size; r++)
        t += gen(a, r, i);
    return t;
}

/* Sum in O(count * 2^dead) per rank (a check per rank of a million-rank
 * run must not be O(size)): total minus the excluded dead ranks. */
static int check_sum(const unsigned char *buf, const coll_args_t *a, int size,
                     const uint8_t *dead)
{
    size_t n = elems(a), es = dtype_size(a->dtype);
    int nd = 0, d[12];
    unsigned char one[8];

    /* Every rank included is always acceptable; only otherwise is the
     * dead set (an O(size) scan) needed. */
    for (int pass = 0; pass < 2; pass++) {
        nd = 0;
        /* memchr: vectorized, this scan runs once per rank. */
        for (const uint8_t *q = dead; pass == 1 && q < dead + size; q++) {
            q = memchr(q, 1, (size_t)(dead + size - q));
            if (q == NULL)
                break;
            if (nd == 12)
                return 1; /* too many to enumerate: accept */
            d[nd++] = (int)(q - dead);
        }
        if (pass == 1 && nd == 0)
            return 0;
        for (uint32_t m = 0; m < (1u << nd); m++) {
            size_t i = 0;
            for (; i < n; i++) {
                uint64_t t = gen_sum(a, size, i);
                for (int j = 0; j < nd; j++)
                    if (!((m >> j) & 1))
                        t -= gen(a, d[j], i);
                put(one, 0, a->dtype, t);
                if (memcmp(one, buf + i * es, es) != 0)
                    break;
            }
            if (i == n)
                return 1;
        }
    }
    return 0;
}

int rc_check_all(const void *buf, const coll_args_t *a, int rank, int size,
                 const uint8_t *dead)
{
    const unsigned char *b = buf;
    size_t n = elems(a);

    (void)rank;
    if (!counting(a, size) && a->redop == COLL_REDOP_SUM)
        return check_sum(b, a, size, dead);
    if (!counting(a, size))
        return size > 4096 ? 1 : check_subsets(b, a, size, dead);
    for (size_t i = 0; i < n; i++) {
        uint64_t m = get_uint(b, i, a->dtype);
        size_t r = i < (size_t)size ? i : i - (size_t)size;
        if (i >= 2 * (size_t)size ||
            (i >= (size_t)size && n < 2 * (size_t)size))
            continue;
        if (i >= (size_t)size) {
            if (m != get_uint(b, r, a->dtype)) /* all or nothing */
                return 0;
            continue;
        }
        if (dead[r] ? m > 1 : m != 1)
            return 0;
    }
    for (size_t i = 2 * (size_t)size; i < n; i++)
        if (get_uint(b, i, a->dtype) != 0)
            return 0;
    return 1;
}

int rc_check_root(const void *buf, const coll_args_t *a, int rank, int size,
                  const uint8_t *dead)
{
    if (rank != a->root)
        return 1; /* only the root has an output */
    return rc_check_all(buf, a, rank, size, dead);
}
