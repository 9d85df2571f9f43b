/*
 * The oracle of allgather and reduce-scatter (simrun/oracle.h).
 *
 * Allgather: rank r's input is its block (coll_pattern of r), the other
 * blocks and the presence bytes zero; the buffer is the n blocks then n
 * presence bytes (coll_args_t.len = n (block bytes + 1)). An output is
 * right when every presence byte is 0 or 1, every live rank's block is
 * present, and every block is its rank's data when present and zero when
 * absent (only a dead rank's may be absent).
 *
 * Reduce-scatter: rank r's input is rc_fill's vector (oracle_reduce.c);
 * an output is right when block r equals the reduction over the live
 * ranks and some subset of the dead ones (enumerated up to 12 dead ranks;
 * jobs above 512 ranks are not checked: every rank's full vector is
 * generated).
 */
#include "simrun/oracle.h"
#include "collectives/dtype.h"

#include <stdlib.h>
#include <string.h>

void ag_fill(void *buf, const coll_args_t *a, int rank, int size)
{
    unsigned char *b = buf;
    size_t n = (size_t)size, bl = (a->len - n) / n;

    memset(b, 0, a->len);
    for (size_t i = 0; i < bl; i++)
        b[(size_t)rank * bl + i] = coll_pattern(a, rank, i);
    b[n * bl + (size_t)rank] = 1;
}

int ag_check(const void *buf, const coll_args_t *a, int rank, int size,
             const uint8_t *dead)
{
    const unsigned char *b = buf;
    size_t n = (size_t)size, bl = (a->len - n) / n;

    (void)rank;
    for (size_t q = 0; q < n; q++) {
        unsigned char p = b[n * bl + q];
        if (p > 1 || (p == 0 && !dead[q]))
            return 0;
        for (size_t i = 0; i < bl; i++)
            if (b[q * bl + i] != (p ? coll_pattern(a, (int)q, i) : 0))
                return 0;
    }
    return 1;
}

static size_t rs_elems(const coll_args_t *a)
{
    size_t es = dtype_size(a->dtype);
    return es == 0 ? 0 : a->count ? a->count : a->len / es;
}

int rs_check(const void *buf, const coll_args_t *a, int rank, int size,
             const uint8_t *dead)
{
    size_t es = dtype_size(a->dtype), cnt = rs_elems(a) / (size_t)size;
    size_t off = (size_t)rank * cnt * es, bytes = cnt * es;
    int nd = 0, d[12], ok = 0;

    if (size > 512 || a->len == 0)
        return 1;
    for (int r = 0; r < size; r++)
        if (dead[r]) {
            if (nd == 12)
                return 1; /* too many to enumerate: accept */
            d[nd++] = r;
        }
    unsigned char *acc = malloc(2 * a->len), *tmp = acc + a->len;
    if (acc == NULL)
        return 0;
    for (uint32_t m = 0; m < (1u << nd) && !ok; m++) {
        int first = 1;
        for (int r = 0; r < size; r++) {
            int in = !dead[r];
            for (int j = 0; j < nd; j++)
                if (d[j] == r)
                    in = (m >> j) & 1;
            if (!in)
                continue;
            rc_fill(first ? acc : tmp, a, r, size);
            if (!first)
                dtype_reduce(acc + off, tmp + off, cnt, a->dtype, a->redop);
            first = 0;
        }
        ok = !first &&
             memcmp(acc + off, (const unsigned char *)buf + off, bytes) == 0;
    }
    free(acc);
    return ok;
}
