/* A collective called with different sizes at different ranks (a user
 * error): rank 1 passes twice the count of the others. No rank may use a
 * payload of another size or hang: the ranks that see the mismatch end
 * their call with UCFT_ERR_TRUNCATED (and a warning), and leave; the
 * others end when their failure is detected. Each rank prints
 * "rank R: OP STATUS" and exits 0 on UCFT_OK, 3 otherwise.
 * Usage: it_mismatch bcast|reduce|allreduce */
#include <ucft.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *op = argc > 1 ? argv[1] : "allreduce";
    ucft_context_h ctx;
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
