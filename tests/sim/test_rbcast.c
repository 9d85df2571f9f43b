/* The reliable broadcast of revokes (collectives/rbcast.h) on the sim:
 * rank `src` publishes a fact; every rank that learns it passes it on.
 *   - no failure, n = 1..40: every rank learns it, n (n - 1) messages;
 *   - the publisher dies before its k-th send, k = 1..n (k = n: right
 *     after its last), n = 2..16: when at least one message left it, every
 *     live rank learns the fact; with none, nobody does;
 *   - with that, a second rank dies before any of its sends: the same;
 *   - random campaigns up to n = 512, a third of the ranks dying at random
 *     times: every live rank learns it whenever one message left the
 *     publisher.
 * Every run must go quiet (no hang) and leave no request pending. */
#include "collectives/rbcast.h"
#include "transport/ctrl_kinds.h"
#include "transport/sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define KIND 7 /* UCFT_CTRL_REVOKE */

typedef struct rank_st {
    rbcast_t rb;
    int knows;
    int n;
} rank_st_t;

static int deliver(void *arg, const uint32_t fact[2], const int **to, int *n)
{
    rank_st_t *r = arg;
    if (r->knows || fact[0] != 5 || fact[1] != 77)
        return 0;
    r->knows = 1;
    *to = NULL;
    *n = r->n;
    return 1;
}

typedef struct kill {
    int rank;
    unsigned k;    /* before its k-th send (0: use time) */
    uint64_t time; /* ns */
} kill_t;

/* Runs one broadcast from `src`; returns 1 when every live rank knows the
 * fact, 0 when none does; fails the test on anything else. */
static int run(int n, int src, const kill_t *kills, int nk, uint64_t *messages)
{
    sim_params_t sp;
    sim_world_t *w;
    sim_params_default(&sp, n);
    assert_int_equal(sim_world_create(&sp, &w), UCFT_OK);
    rank_st_t *st = calloc((size_t)n, sizeof(*st));
    assert_non_null(st);
    uint64_t tag = ucft_ctrl_tag(0, KIND);
    for (int i = 0; i < nk; i++) {
        if (kills[i].k > 0)
            assert_int_equal(sim_world_kill_before_send(w, kills[i].rank,
                                                        kills[i].k, tag,
                                                        ucft_tag_mask(1, 0)),
                             UCFT_OK);
        else
            assert_int_equal(sim_world_kill_at(w, kills[i].rank, kills[i].time),
                             UCFT_OK);
    }
    for (int r = 0; r < n; r++) {
        st[r].n = n;
        rbc_init(&st[r].rb, sim_world_tp(w, r), KIND, deliver, &st[r]);
        rbc_start(&st[r].rb);
    }
    uint32_t fact[2] = {5, 77};
    st[src].knows = 1;
    assert_int_equal(rbc_publish(&st[src].rb, fact, NULL, n), UCFT_OK);
    sim_world_run(w, UINT64_MAX, 50000000);
    assert_true(sim_world_quiescent(w));
    int live = 0, know = 0, src_sent = 0;
    for (int r = 0; r < n; r++) {
        if (sim_world_is_dead(w, r))
            continue;
        live++;
        know += st[r].knows && r != src;
        assert_true(rbc_sent(&st[r].rb));
    }
    (void)src_sent;
    sim_stats_t ss;
    sim_world_stats(w, &ss);
    if (messages != NULL)
        *messages = ss.messages;
    int src_live = !sim_world_is_dead(w, src);
    int others = live - src_live;
    for (int r = 0; r < n; r++) {
        rbc_stop(&st[r].rb);
    }
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    for (int r = 0; r < n; r++)
        rbc_destroy(&st[r].rb);
    sim_world_destroy(w);
    free(st);
    if (know == others)
        return 1;
    if (know == 0)
        return 0;
    fail_msg("n %d: %d of %d live ranks learnt the fact", n, know, others);
    return -1;
}

static void test_failure_free(void **unused)
{
    (void)unused;
    for (int n = 1; n <= 40; n++) {
        uint64_t m = 0;
        assert_int_equal(run(n, n / 2, NULL, 0, &m), 1);
        assert_int_equal(m, (uint64_t)n * (uint64_t)(n - 1));
    }
}

static void test_publisher_dies(void **unused)
{
    (void)unused;
    for (int n = 2; n <= 16; n++)
        for (int src = 0; src < n; src += 3)
            for (unsigned k = 1; k <= (unsigned)n; k++) {
                kill_t kl = {.rank = src, .k = k};
                int got = run(n, src, &kl, 1, NULL);
                /* k = 1: it died before its first message */
                assert_int_equal(got, k > 1);
                for (int o = 0; o < n; o++) {
                    if (o == src)
                        continue;
                    for (unsigned j = 1; j <= (unsigned)n; j += 2) {
                        kill_t two[2] = {kl, {.rank = o, .k = j}};
                        got = run(n, src, two, 2, NULL);
                        if (k > 1 && !(k == 2 && o == (src == 0 ? 1 : 0)))
                            assert_int_equal(got, 1);
                    }
                }
            }
}

static void test_random(void **unused)
{
    (void)unused;
    static const int ns[] = {32, 128, 512};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        int n = ns[i], nk = n / 3;
        kill_t *k = calloc((size_t)nk, sizeof(*k));
        assert_non_null(k);
        for (int s = 0; s < 6; s++) {
            uint64_t x = (uint64_t)s * 0x9e3779b97f4a7c15ull + (uint64_t)n;
            for (int j = 0; j < nk; j++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                k[j].rank = (int)((x >> 33) % (uint64_t)n);
                k[j].k = 0;
                k[j].time = (x >> 11) % (uint64_t)(2000 * n);
            }
            run(n, 0, k, nk, NULL); /* all or none: checked inside */
        }
        free(k);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failure_free),
        cmocka_unit_test(test_publisher_dies),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
