/*
 * ucft-bench coll: every rank's result to one reporting rank, which may be
 * any survivor (coll.h, coll_gather()).
 *
 * A kill can take any rank, rank 0 too, and the ranks need not agree yet
 * on who is dead when they finish. So no rank picks "the" reporter: every
 * rank sends its result to each of the first f + 1 ranks (the candidates;
 * at most f of them can fail within the tolerance), and each live
 * candidate receives from every other rank. A receive from a dead rank
 * ends with UCFT_ERR_PROC_FAILED (the runtime learns of every failure),
 * so nothing waits for ever. A candidate reports when every candidate
 * below it is dead, which it knows from its own failed receives or from
 * the runtime's failure list. Small messages: the sends complete at once.
 */
#include "tools/bench/coll.h"

#include <stdlib.h>
#include <string.h>

static int known_failed(ucft_context_h ctx, int rank, int size)
{
    int *ranks = malloc((size_t)size * sizeof(*ranks));
    size_t n = 0;
    int found = 0;

    if (ranks == NULL ||
        ucft_failed_ranks(ctx, ranks, (size_t)size, &n) != UCFT_OK)
        n = 0;
    for (size_t i = 0; i < n && i < (size_t)size; i++)
        found |= ranks[i] == rank;
    free(ranks);
    return found;
}

/* Receives every other rank's result; marks the dead ones in `gone`.
 * Returns 0, or -1 when a receive failed for another reason. */
static int receive_all(ucft_comm_h w, size_t len, unsigned char *all,
                       unsigned char *gone)
{
    int rank = ucft_comm_rank(w), size = ucft_comm_size(w), rc = 0;

    for (int q = 0; q < size; q++) {
        ucft_info_t info = {0};
        if (q == rank)
            continue;
        ucft_status_t st =
            ucft_recv(w, all + (size_t)q * len, len, q, COLL_TAG_RESULT, &info);
        gone[q] = st != UCFT_OK;
        if (st == UCFT_OK && info.length != len) {
            bench_err("coll", "rank %d's result has %zu bytes, not %zu", q,
                      info.length, len);
            gone[q] = 1;
            rc = -1;
        } else if (st != UCFT_OK && st != UCFT_ERR_PROC_FAILED) {
            bench_err("coll", "no result from rank %d: %s", q,
                      ucft_status_string(st));
            rc = -1;
        }
    }
    return rc;
}

int coll_gather(ucft_context_h ctx, const void *mine, size_t len, void *all,
                unsigned char **gone_p, int *reporter)
{
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(w), size = ucft_comm_size(w);
    int f = ucft_comm_get_f(w), rc = 0;
    int ncand = f + 1 < size ? f + 1 : size;
    ucft_request_h *req = calloc((size_t)ncand, sizeof(*req));
    ucft_info_t *info = calloc((size_t)ncand, sizeof(*info));
    unsigned char *gone = calloc((size_t)size, 1);

    *reporter = 0;
    *gone_p = gone;
    if (req == NULL || info == NULL || gone == NULL) {
        free(req);
        free(info);
        bench_err("coll", "rank %d: out of memory", rank);
        return -1;
    }
    for (int c = 0; c < ncand; c++)
        if (c != rank &&
            ucft_isend(w, mine, len, c, COLL_TAG_RESULT, &req[c]) != UCFT_OK)
            req[c] = NULL; /* a dead candidate: nothing to wait for */
    if (rank < ncand) {
        memcpy((unsigned char *)all + (size_t)rank * len, mine, len);
        rc = receive_all(w, len, all, gone);
        *reporter = 1;
        for (int c = 0; c < rank; c++)
            if (!gone[c] && !known_failed(ctx, c, size))
                *reporter = 0; /* a live candidate below reports */
    }
    (void)ucft_waitall((size_t)ncand, req, info);
    for (int c = 0; c < ncand; c++)
        if (c != rank && info[c].status != UCFT_OK &&
            info[c].status != UCFT_ERR_PROC_FAILED) {
            bench_err("coll", "rank %d: result to rank %d: %s", rank, c,
                      ucft_status_string(info[c].status));
            rc = -1;
        }
    free(req);
    free(info);
    return rc;
}
