/* Calls each deprecated name of ucft.h once ("Deprecated names") through
 * the installed library, and checks that it behaves as its new name: a
 * program built against the old names still links and runs. Exits 0 when
 * every alias does. */
#include <stdio.h>
#include <ucft.h>

static int failures;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "consumer_compat: %s:%d: %s\n", __FILE__,          \
                    __LINE__, #cond);                                          \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static void on_failure(ucft_context_h ctx, int rank, ucft_status_t why,
                       void *arg)
{
    (void)ctx;
    (void)rank;
    (void)why;
    (void)arg;
}

int main(void)
{
    ucft_context_h ctx;
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 1;
    }
    int fd_old = -1, fd_new = -2, ranks[4];
    size_t n_old = 99, n_new = 98;

/* The deprecation warnings are the point of the aliases elsewhere; here
 * they are silenced for the four calls that test the aliases. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    int events = ucft_progress(ctx);
    st = ucft_context_fd(ctx, &fd_old);
    ucft_status_t failed_st = ucft_failed_ranks(ctx, ranks, 4, &n_old);
    ucft_status_t cb_st = ucft_set_failure_cb(ctx, on_failure, &failures);
#pragma GCC diagnostic pop

    CHECK(events >= 0);
    CHECK(ucft_context_progress(ctx) >= 0);
    CHECK(st == UCFT_OK && fd_old >= 0);
    CHECK(ucft_context_get_fd(ctx, &fd_new) == UCFT_OK && fd_new == fd_old);
    CHECK(failed_st == UCFT_OK && n_old == 0);
    CHECK(ucft_context_get_failed_ranks(ctx, ranks, 4, &n_new) == UCFT_OK &&
          n_new == n_old);
    CHECK(cb_st == UCFT_OK);
    CHECK(ucft_context_set_failure_cb(ctx, NULL, NULL) == UCFT_OK);

    st = ucft_finalize(ctx);
    CHECK(st == UCFT_OK);
    printf("consumer_compat: %s (4 deprecated names)\n",
           failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
