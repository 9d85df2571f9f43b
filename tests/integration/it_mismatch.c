/* A collective called with different sizes at different ranks (a user
 * error): rank 1 passes twice the count of the others. No rank may use a
 * payload of another size or hang: the ranks that see the mismatch end
 * their call with UCFT_ERR_TRUNCATED (and a warning), and leave; the
 * others end when their failure is detected. Each rank prints
 * "rank R: OP STATUS" and exits 0 on UCFT_OK, 3 otherwise.
 * Usage: it_mismatch bcast|reduce|allreduce
 *
 * it_mismatch config NAME VALUE: rank 1 (PMIX_RANK) sets UCFT_NAME=VALUE
 * before ucft_init, the others do not. A variable that must be the same at
 * every rank: every rank's ucft_init must fail with
 * UCFT_ERR_INVALID_PARAM (printed "rank R: init ERR_INVALID_PARAM"); one
 * that may differ: every rank's succeeds, and an allreduce gives 1 + 2 +
 * ... over the ranks. */
#include <ucft.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int config(int argc, char **argv)
{
    const char *r = getenv("PMIX_RANK");
    char var[128];
    if (argc < 4 || r == NULL) {
        fprintf(stderr, "usage: it_mismatch config NAME VALUE (under a "
                        "launcher)\n");
        return 2;
    }
    snprintf(var, sizeof(var), "UCFT_%s", argv[2]);
    if (atoi(r) == 1 && setenv(var, argv[3], 1) != 0)
        return 2;
    ucft_context_h ctx;
    ucft_status_t st = ucft_init(NULL, &ctx);
    printf("rank %s: init %s\n", r, ucft_status_name(st));
    if (st != UCFT_OK)
        return 3;
    ucft_comm_h w = ucft_comm_world(ctx);
    int64_t in = ucft_comm_rank(w) + 1, out = 0, n = ucft_comm_size(w);
    st = ucft_allreduce(w, &in, &out, 1, UCFT_INT64, UCFT_SUM);
    printf("rank %s: allreduce %s %lld\n", r, ucft_status_name(st),
           (long long)out);
    ucft_finalize(ctx);
    return st == UCFT_OK && out == n * (n + 1) / 2 ? 0 : 4;
}

int main(int argc, char **argv)
{
    const char *op = argc > 1 ? argv[1] : "allreduce";
    ucft_context_h ctx;
    if (strcmp(op, "config") == 0)
        return config(argc, argv);
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 2;
    }
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(w);
    int64_t in[2] = {1, 1}, out[2] = {0, 0};
    size_t count = rank == 1 ? 2 : 1;

    if (strcmp(op, "bcast") == 0)
        st = ucft_bcast(w, in, count * sizeof(in[0]), UCFT_UINT8, 0);
    else if (strcmp(op, "reduce") == 0)
        st = ucft_reduce(w, in, out, count, UCFT_INT64, UCFT_SUM, 0);
    else if (strcmp(op, "allreduce") == 0)
        st = ucft_allreduce(w, in, out, count, UCFT_INT64, UCFT_SUM);
    else {
        fprintf(stderr, "it_mismatch: unknown operation '%s'\n", op);
        ucft_finalize(ctx);
        return 2;
    }
    printf("rank %d: %s %s\n", rank, op, ucft_status_name(st));
    fflush(stdout);
    if (st != UCFT_OK)
        return 3; /* leave at once, as an application on an error would */
    ucft_finalize(ctx);
    return 0;
}
