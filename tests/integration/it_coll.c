/*
 * Collectives on a real job: ITERS rounds of allreduce and reduce with a
 * user-defined operation, allreduce (sum, max, bxor on several datatypes),
 * broadcast (one of 1000 bytes, then eight small ones in flight at once)
 * and reduce from a rotating root, and a barrier; every rank
 * checks every result. Usage: it_coll [ITERS [COUNT]]
 * With COUNT, the rounds are of vectors of COUNT int64 instead (allreduce
 * sum, broadcast of the same bytes, reduce sum): large messages, which
 * UCX would send by rendezvous.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucft.h>

#include "it_check.h"

int g_rank = -1;

/* A user-defined operation: the greatest common divisor of int64
 * elements (commutative and associative, not built in). Counts its calls. */
static int64_t gcd64(int64_t a, int64_t b)
{
    while (b != 0) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a < 0 ? -a : a;
}

static void gcd_op(const void *in, void *inout, size_t count,
                   ucft_datatype_t dtype, void *arg)
{
    const int64_t *a = in;
    int64_t *b = inout;
    CHECK(dtype == UCFT_INT64, "user op: dtype %d", (int)dtype);
    for (size_t i = 0; i < count; i++)
        b[i] = gcd64(a[i], b[i]);
    ++*(long *)arg;
}

/* Element i of rank r's input in round it. */
static int64_t vec_in(int r, size_t i, int it)
{
    return (int64_t)(r + 1) * (int64_t)(i % 7 + 1) + it;
}

/* Element i of the sum over n ranks in round it. */
static int64_t vec_sum(int n, size_t i, int it)
{
    return (int64_t)n * (n + 1) / 2 * (int64_t)(i % 7 + 1) + (int64_t)n * it;
}

/* Rounds of vectors of `count` int64 (see the usage). */
static void large_rounds(ucft_comm_h w, int iters, size_t count)
{
    int rank = ucft_comm_rank(w), n = ucft_comm_size(w);
    int64_t *v = malloc(count * sizeof(*v)), *s = malloc(count * sizeof(*s));
    CHECK(v != NULL && s != NULL, "out of memory for %zu elements", count);
    for (int it = 0; it < iters; it++) {
        int root = it % n;
        for (size_t i = 0; i < count; i++) {
            v[i] = vec_in(rank, i, it);
            s[i] = -1;
        }
        ucft_status_t st = ucft_allreduce(w, v, s, count, UCFT_INT64, UCFT_SUM);
        CHECK(st == UCFT_OK, "allreduce of %zu: %s", count,
              ucft_status_name(st));
        for (size_t i = 0; i < count; i++) {
            int64_t want = vec_sum(n, i, it);
            CHECK(s[i] == want, "it %d allreduce[%zu] %lld want %lld", it, i,
                  (long long)s[i], (long long)want);
            /* Large blocking calls work in the caller's output (R4): the
             * input stays as it was. */
            CHECK(v[i] == vec_in(rank, i, it), "it %d allreduce input[%zu]", it,
                  i);
        }
        /* In place: the output buffer is the input. */
        memcpy(s, v, count * sizeof(*s));
        st = ucft_allreduce(w, s, s, count, UCFT_INT64, UCFT_SUM);
        CHECK(st == UCFT_OK, "in-place allreduce of %zu: %s", count,
              ucft_status_name(st));
        for (size_t i = 0; i < count; i++)
            CHECK(s[i] == vec_sum(n, i, it), "it %d in-place allreduce[%zu]",
                  it, i);
        for (size_t i = 0; i < count; i++)
            s[i] = rank == root ? vec_in(root, i, it) : 0;
        st = ucft_bcast(w, s, count * sizeof(*s), UCFT_BYTE, root);
        CHECK(st == UCFT_OK, "bcast of %zu: %s", count, ucft_status_name(st));
        for (size_t i = 0; i < count; i++)
            CHECK(s[i] == vec_in(root, i, it), "it %d bcast[%zu]", it, i);
        st = ucft_reduce(w, v, s, count, UCFT_INT64, UCFT_SUM, root);
        CHECK(st == UCFT_OK, "reduce of %zu: %s", count, ucft_status_name(st));
        for (size_t i = 0; rank == root && i < count; i++)
            CHECK(s[i] == vec_sum(n, i, it), "it %d reduce[%zu]", it, i);
    }
    free(v);
    free(s);
    if (rank == 0)
        printf("it_coll: %d rounds of allreduce, bcast, reduce of %zu int64 "
               "correct on %d ranks\n",
               iters, count, n);
}

int main(int argc, char **argv)
{
    ucft_context_h ctx;
    int iters = argc > 1 ? atoi(argv[1]) : 100;
    if (ucft_init(NULL, &ctx) != UCFT_OK)
        return 1;
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = g_rank = ucft_comm_rank(w);
    int n = ucft_comm_size(w);
    ucft_status_t st;
    if (argc > 2) {
        large_rounds(w, iters, strtoul(argv[2], NULL, 10));
        iters = 0;
    }
    long user_calls = 0;
    ucft_op_t gcd;
    st = ucft_op_create(ctx, gcd_op, &user_calls, &gcd);
    CHECK(st == UCFT_OK, "ucft_op_create: %s", ucft_status_name(st));
    for (int it = 0; it < iters; it++) {
        int root = it % n;
        /* a user-defined operation (gcd): allreduce and reduce */
        int64_t p[2] = {6 * (it + 1) * (rank + 1), 10 * (rank + 2)};
        int64_t q[2] = {-1, -1}, want[2] = {6 * (it + 1), n > 1 ? 10 : 20};
        st = ucft_allreduce(w, p, q, 2, UCFT_INT64, gcd);
        CHECK(st == UCFT_OK && q[0] == want[0] && q[1] == want[1],
              "it %d gcd allreduce: %s, %lld %lld", it, ucft_status_name(st),
              (long long)q[0], (long long)q[1]);
        q[0] = q[1] = -1;
        st = ucft_reduce(w, p, q, 2, UCFT_INT64, gcd, root);
        CHECK(st == UCFT_OK &&
                  (rank != root || (q[0] == want[0] && q[1] == want[1])),
              "it %d gcd reduce: %s", it, ucft_status_name(st));
        /* allreduce: int64 sum over a vector, double max, uint32 bxor */
        int64_t v[5], s[5];
        for (int i = 0; i < 5; i++)
            v[i] = (int64_t)(rank + 1) * (i + 1) + it;
        st = ucft_allreduce(w, v, s, 5, UCFT_INT64, UCFT_SUM);
        CHECK(st == UCFT_OK, "allreduce sum: %s", ucft_status_name(st));
        for (int i = 0; i < 5; i++) {
            int64_t want = (int64_t)n * (n + 1) / 2 * (i + 1) + (int64_t)n * it;
            CHECK(s[i] == want, "it %d sum[%d] %lld want %lld", it, i,
                  (long long)s[i], (long long)want);
        }
        double d = rank * 1.5 + it, dm = -1;
        st = ucft_allreduce(w, &d, &dm, 1, UCFT_DOUBLE, UCFT_MAX);
        CHECK(st == UCFT_OK && dm == (n - 1) * 1.5 + it, "max %g", dm);
        uint32_t x = 1u << (rank % 32), xr = 0;
        st = ucft_allreduce(w, &x, &xr, 1, UCFT_UINT32, UCFT_BXOR);
        uint32_t xw = 0;
        for (int r = 0; r < n; r++)
            xw ^= 1u << (r % 32);
        CHECK(st == UCFT_OK && xr == xw, "bxor %x want %x", xr, xw);
        /* broadcast from a rotating root, 1000 bytes */
        unsigned char b[1000];
        for (int i = 0; i < 1000; i++)
            b[i] = rank == root ? (unsigned char)(i * 7 + it) : 0;
        st = ucft_bcast(w, b, sizeof(b), UCFT_BYTE, root);
        CHECK(st == UCFT_OK, "bcast: %s", ucft_status_name(st));
        for (int i = 0; i < 1000; i++)
            CHECK(b[i] == (unsigned char)(i * 7 + it), "bcast byte %d", i);
        /* eight small broadcasts in flight at once (0 to 63 bytes, roots
         * rotating from this round's), completed by one waitall: several
         * instances of one algorithm running together (the batched
         * broadcast's copies of all of them share its copy channel) */
        enum { NB = 8 };
        unsigned char sb[NB][64];
        ucft_request_h br[NB];
        for (int j = 0; j < NB; j++) {
            size_t len = (size_t)(j * 9);
            int rt = (root + j) % n;
            for (size_t i = 0; i < len; i++)
                sb[j][i] = rank == rt ? (unsigned char)(i + 3 * j + it) : 0;
            st = ucft_ibcast(w, sb[j], len, UCFT_BYTE, rt, &br[j]);
            CHECK(st == UCFT_OK, "ibcast %d: %s", j, ucft_status_name(st));
        }
        st = ucft_waitall(NB, br, NULL);
        CHECK(st == UCFT_OK, "waitall of %d ibcasts: %s", (int)NB,
              ucft_status_name(st));
        for (int j = 0; j < NB; j++)
            for (size_t i = 0; i < (size_t)(j * 9); i++)
                CHECK(sb[j][i] == (unsigned char)(i + 3 * j + it),
                      "it %d ibcast %d byte %zu", it, j, i);
        /* reduce to the same root: int32 min */
        int32_t m = 100 - rank, mr = 0;
        st = ucft_reduce(w, &m, &mr, 1, UCFT_INT32, UCFT_MIN, root);
        CHECK(st == UCFT_OK, "reduce: %s", ucft_status_name(st));
        CHECK(rank != root || mr == 100 - (n - 1), "reduce min %d", mr);
        st = ucft_barrier(w);
        CHECK(st == UCFT_OK, "barrier: %s", ucft_status_name(st));
    }
    /* Bad input: an error, not a crash. */
    int64_t z = 0;
    CHECK(ucft_allreduce(w, &z, &z, 1, UCFT_DOUBLE, UCFT_BAND) ==
              UCFT_ERR_INVALID_PARAM,
          "bitwise op on double accepted");
    CHECK(ucft_bcast(w, &z, 1, UCFT_INT64, n) == UCFT_ERR_INVALID_PARAM,
          "root out of range accepted");
    CHECK(ucft_comm_set_f(w, 0) == UCFT_ERR_INVALID_PARAM, "f=0 accepted");
    CHECK(n == 1 || iters == 0 || user_calls > 0, "the user op never ran");
    CHECK(ucft_op_free(ctx, gcd) == UCFT_OK, "ucft_op_free");
    CHECK(ucft_allreduce(w, &z, &z, 1, UCFT_INT64, gcd) ==
              UCFT_ERR_INVALID_PARAM,
          "a freed user op accepted");
    CHECK(ucft_op_free(ctx, gcd) == UCFT_ERR_INVALID_PARAM,
          "a double ucft_op_free accepted");
    if (rank == 0 && iters > 0)
        printf("it_coll: %d rounds of allreduce x3, bcast, reduce, barrier "
               "correct on %d ranks\n",
               iters, n);
    return ucft_finalize(ctx) == UCFT_OK ? 0 : 1;
}
