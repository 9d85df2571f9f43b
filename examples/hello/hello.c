/*
 * hello: every rank says where it runs, then a token goes once around the
 * ring of ranks, each adding its rank. Run: ucftrun -n 4 build/examples/hello
 */
#include <stdio.h>
#include <ucft.h>

int main(void)
{
    ucft_context_h ctx;
    ucft_context_attr_t attr;
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 1;
    }
    ucft_context_query(ctx, &attr);
    printf("hello from rank %d of %d on %s\n", attr.rank, attr.size,
           attr.hostname);
    fflush(stdout);

    ucft_comm_h world = ucft_comm_world(ctx);
    int rank = attr.rank, size = attr.size, rc = 0;
    long token = 0, expect = (long)size * (size - 1) / 2;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    if (rank == 0) {
        st = ucft_send(world, &token, sizeof(token), right, 7);
        if (st == UCFT_OK)
            st = ucft_recv(world, &token, sizeof(token), left, 7, NULL);
        if (st == UCFT_OK) {
            printf("ring: token came back to rank 0 with %ld (expected "
                   "%ld)\n",
                   token, expect);
            rc = token == expect ? 0 : 1;
        }
    } else {
        st = ucft_recv(world, &token, sizeof(token), left, 7, NULL);
        token += rank;
        if (st == UCFT_OK)
            st = ucft_send(world, &token, sizeof(token), right, 7);
    }
    if (st != UCFT_OK) {
        fprintf(stderr, "rank %d: ring failed: %s\n", rank,
                ucft_status_string(st));
        rc = 1;
    }
    st = ucft_finalize(ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "rank %d: finalize: %s\n", rank,
                ucft_status_string(st));
        rc = 1;
    }
    return rc;
}
