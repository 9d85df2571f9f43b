/*
 * failure: rank N-1 kills itself with SIGKILL right after start-up; every
 * other rank was waiting for a message from it and reports how that receive
 * ended. Works under any launcher (ucftrun, prterun, mpirun with recovery).
 * Expected: UCFT_ERR_PROC_FAILED at every survivor, within seconds.
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <ucft.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void on_failure(ucft_context_h ctx, int rank, ucft_status_t why,
                       void *arg)
{
    (void)ctx;
    (void)arg;
    printf("failure callback: rank %d (%s)\n", rank, ucft_status_name(why));
    fflush(stdout);
}

int main(void)
{
    ucft_params_t params = {.field_mask = UCFT_PARAM_FIELD_FAILURE_CB,
                            .failure_cb = on_failure};
    ucft_context_h ctx;
    ucft_context_attr_t attr;
    ucft_status_t st = ucft_init(&params, &ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 1;
    }
    ucft_context_query(ctx, &attr);
    int victim = attr.size - 1;
    if (attr.size < 2) {
        fprintf(stderr, "failure: needs at least 2 ranks\n");
        ucft_finalize(ctx);
        return 2;
    }
    if (attr.rank == victim) {
        printf("rank %d: killing myself\n", attr.rank);
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    long v;
    ucft_info_t info;
    double t0 = now_s();
    st = ucft_recv(ucft_comm_world(ctx), &v, sizeof(v), victim, 1, &info);
    printf("rank %d: receive from rank %d ended with %s (%s) after %.3f s\n",
           attr.rank, victim, ucft_status_name(st), ucft_status_string(st),
           now_s() - t0);
    ucft_finalize(ctx);
    return st == UCFT_ERR_PROC_FAILED ? 0 : 1;
}
