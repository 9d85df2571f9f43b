/*
 * Corrected broadcast with batched copies (corrected-batched), instances
 * back to back on one sim world (simrun/simseq.h): every rank loops
 * over the broadcasts with seeded compute times between its calls, its
 * copy channel lives across them and holds copies (UCFT_COLL_BATCH) until
 * a batch is full or the rank waits. The single-instance campaigns of
 * test_bcast_corrected*.c cannot hold a copy (nothing to batch it with);
 * these check what holding adds:
 *  - without failures every rank gets every instance's data, with fewer
 *    messages than one per copy; after a death too (only the copies to
 *    the ranks it cut off go one by one);
 *  - a rank killed before any one of its sends of the whole run (a tree
 *    message, or a batch that carries copies of several instances), f = 1:
 *    every survivor gets every instance's data, every state finishes;
 *  - f = 2, pairs of such deaths; random plans up to f deaths, at send
 *    boundaries or at times, roots fixed or rotating (errors only in
 *    instances whose root died), blocking loops or up to 5 broadcasts
 *    called before waiting;
 *  - beyond f: every run ends, never with wrong data.
 */
#include "simrun/simseq.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

/* Sanitizer builds run the same campaigns with fewer runs (these tests
 * are single-threaded: TSan has nothing to find in them). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BB_SCALE 3
#else
#define BB_SCALE 1
#endif

static const coll_op_ops_t *batched(void)
{
    const coll_op_ops_t *op = coll_op_find("bcast", "corrected-batched");
    assert_non_null(op);
    return op;
}

static void run(simseq_params_t *p, simseq_result_t *r)
{
    if (p->max_events == 0)
        p->max_events = 20000000;
    assert_int_equal(simseq_run(p, r), UCFT_OK);
}

/* The outcome when every instance's root is alive and at most f ranks
 * died: all through, all data right. */
static void assert_all_ok(const simseq_params_t *p, const simseq_result_t *r,
                          const char *what)
{
    if (r->bounded || r->unfinished_ranks || r->running_states || r->errors ||
        r->data_errors || r->not_idle ||
        r->ok != (unsigned long)r->live * (unsigned long)p->instances)
        fail_msg("%s: n %d batch %u f %d: live %d, ok %lu of %lu, errors "
                 "%lu, wrong %lu, unfinished %d, running %d, not idle %d, "
                 "bounded %d",
                 what, p->sim.nranks, p->batch, p->f, r->live, r->ok,
                 (unsigned long)r->live * (unsigned long)p->instances,
                 r->errors, r->data_errors, r->unfinished_ranks,
                 r->running_states, r->not_idle, r->bounded);
}

/* Anything but a hang, wrong data, or an error where the root lives
 * (strict) / anything but a hang or wrong data (!strict). */
static void assert_ended(const simseq_params_t *p, const simseq_result_t *r,
                         int strict, const char *what)
{
    if (r->bounded || r->unfinished_ranks || r->running_states ||
        r->data_errors || r->not_idle || (strict && r->errors_root_alive))
        fail_msg("%s: n %d batch %u f %d: live %d, ok %lu, errors %lu (%lu "
                 "with the root alive), wrong %lu, unfinished %d, running "
                 "%d, not idle %d, bounded %d",
                 what, p->sim.nranks, p->batch, p->f, r->live, r->ok, r->errors,
                 r->errors_root_alive, r->data_errors, r->unfinished_ranks,
                 r->running_states, r->not_idle, r->bounded);
}

static void test_bcast_batched_failure_free(void **state)
{
    const int ns[] = {1, 2, 3, 4, 5, 8, 13, 16, 33, 64};
    const unsigned batches[] = {1, 4, 32};
    (void)state;
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
        for (int root = -1; root <= 1; root++) {
            uint64_t per_copy = 0;
            for (size_t b = 0; b < 3; b++) {
                simseq_params_t p;
                simseq_result_t r;
                simseq_params_default(&p, batched(), ns[i], 60);
                /* root -1: rotating; 0: rank 0; 1: rank 0, and every
                 * rank calls four broadcasts before it waits */
                p.root = root < 0 ? -1 : 0;
                p.window = root == 1 ? 4 : 1;
                p.batch = batches[b];
                /* A rank flushes only after a long wait: copies stay
                 * held until their batch is full. */
                p.wait_flush_ns = 50000;
                p.sim.seed = (uint64_t)ns[i] * 31 + b;
                run(&p, &r);
                assert_all_ok(&p, &r, "failure-free");
                if (b == 0)
                    per_copy = r.stats.messages;
                else if (ns[i] >= 4 && r.stats.messages >= per_copy)
                    fail_msg("n %d batch %u: %llu messages, %llu with one "
                             "copy per message",
                             ns[i], p.batch,
                             (unsigned long long)r.stats.messages,
                             (unsigned long long)per_copy);
            }
        }
}

/* After a death the copies to the ranks it cut off from the tree go at
 * once, the others are still batched: rank 3 of 16 dies at the start
 * (its subtree 7, 11, 15 is cut off in every instance) and everyone knows
 * within 1 us; every survivor gets every instance's data, with far fewer
 * messages than one per copy. */
static void test_bcast_batched_after_a_death(void **state)
{
    uint64_t msgs[2];
    (void)state;
    for (int b = 0; b < 2; b++) {
        simseq_params_t p;
        simseq_result_t r;
        simrun_fail_t fl = {.kind = SIMRUN_FAIL_AT_TIME, .rank = 3, .time = 0};
        simseq_params_default(&p, batched(), 16, 60);
        p.root = 0;
        p.batch = b ? 32 : 1;
        p.wait_flush_ns = 50000;
        p.sim.detect_delay_ns = 1000;
        p.fails = &fl;
        p.nfails = 1;
        run(&p, &r);
        assert_all_ok(&p, &r, "rank 3 dead from the start");
        assert_int_equal(r.live, 15);
        msgs[b] = r.stats.messages;
    }
    print_message("after a death: %llu messages with batches of 32, %llu with "
                  "one copy each\n",
                  (unsigned long long)msgs[1], (unsigned long long)msgs[0]);
    assert_true(msgs[1] * 4 < msgs[0] * 3);
}

/* Kills `victim` before its k-th send, k = 1, 2, ... until it survives
 * the run (its sends are all passed). Returns the runs made. */
static unsigned every_send(simseq_params_t *p, int victim, int strict)
{
    unsigned runs = 0;
    for (unsigned k = 1;; k++) {
        simrun_fail_t fl = {
            .kind = SIMRUN_FAIL_BEFORE_SEND, .rank = victim, .k = k};
        simseq_result_t r;
        char what[96];
        p->fails = &fl;
        p->nfails = 1;
        run(p, &r);
        runs++;
        snprintf(what, sizeof(what), "rank %d dies before its send %u", victim,
                 k);
        if (r.live == p->sim.nranks) {
            assert_all_ok(p, &r, what);
            return runs;
        }
        if (strict)
            assert_all_ok(p, &r, what);
        else
            assert_ended(p, &r, 1, what);
    }
}

/* f = 1, fixed root 0: every non-root rank dies before each of its sends
 * in turn; detection slow (1 ms: the copies must do it) or fast (5 us:
 * later instances know of the death). */
static void test_bcast_batched_every_send_f1(void **state)
{
    unsigned runs = 0;
    (void)state;
    for (int n = 3; n <= 12; n += BB_SCALE)
        for (int fast = 0; fast <= 1; fast++)
            for (int v = 1; v < n; v++) {
                simseq_params_t p;
                simseq_params_default(&p, batched(), n, 24);
                p.root = 0;
                p.batch = 8;
                p.wait_flush_ns = 30000; /* copies held for a batch */
                p.sim.seed = (uint64_t)(n * 100 + v);
                p.sim.detect_delay_ns = fast ? 5000 : 1000000;
                runs += every_send(&p, v, 1);
            }
    print_message("%u runs, every send boundary of every non-root rank\n",
                  runs);
}

/* f = 1, rotating roots: any rank dies before any of its sends; errors
 * only in instances rooted at it. */
static void test_bcast_batched_every_send_rotating(void **state)
{
    unsigned runs = 0;
    (void)state;
    for (int n = 4; n <= 9; n += BB_SCALE)
        for (int v = 0; v < n; v++) {
            simseq_params_t p;
            simseq_params_default(&p, batched(), n, 20);
            p.root = -1;
            p.batch = 4;
            p.window = 1 + v % 3; /* some ranks' loops are non-blocking */
            p.wait_flush_ns = 30000;
            p.sim.seed = (uint64_t)(n * 1000 + v);
            p.sim.detect_delay_ns = 20000;
            runs += every_send(&p, v, 0);
        }
    print_message("%u runs, rotating roots\n", runs);
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 17;
}

/* Up to `nf` distinct victims (never `spare`, -1: any), each before a
 * random send of the run or at a random time. */
static size_t draw(uint64_t *seed, int n, int nf, int spare, simrun_fail_t *fl)
{
    size_t m = 0;
    for (int tries = 0; (int)m < nf && tries < 100; tries++) {
        int v = (int)(lcg(seed) % (uint64_t)n);
        int dup = v == spare;
        for (size_t j = 0; j < m; j++)
            dup |= fl[j].rank == v;
        if (dup)
            continue;
        if (lcg(seed) % 2)
            fl[m++] = (simrun_fail_t){.kind = SIMRUN_FAIL_BEFORE_SEND,
                                      .rank = v,
                                      .k = 1 + (unsigned)(lcg(seed) % 120)};
        else
            fl[m++] = (simrun_fail_t){.kind = SIMRUN_FAIL_AT_TIME,
                                      .rank = v,
                                      .time = lcg(seed) % 200000};
    }
    return m;
}

static void random_params(simseq_params_t *p, uint64_t *seed, int nmax)
{
    int n = 2 + (int)(lcg(seed) % (uint64_t)(nmax - 1));
    simseq_params_default(p, batched(), n, 30 + (int)(lcg(seed) % 40));
    p->batch = 1 + (unsigned)(lcg(seed) % 64);
    p->compute_max_ns = lcg(seed) % 6000;
    p->wait_flush_ns = 500 + lcg(seed) % 60000;
    p->sim.detect_delay_ns = lcg(seed) % 2 ? 1000000 : 3000 + lcg(seed) % 50000;
    p->sim.seed = lcg(seed);
    p->root = lcg(seed) % 3 == 0 ? -1 : (int)(lcg(seed) % (uint64_t)n);
    /* Half the runs call up to 2..5 broadcasts before waiting. */
    p->window = lcg(seed) % 2 ? 1 : 2 + (int)(lcg(seed) % 4);
}

/* A seeded campaign of random plans. Up to f deaths (beyond = 0; f =
 * 1..3, a fixed root spared, or rotating roots): no error where the root
 * lives, and with a fixed root every instance correct everywhere. 2..7
 * deaths with f = 1 (beyond = 1): every run ends, never with wrong data.
 * Adds the deaths to *deaths; returns the runs that had errors. */
static unsigned campaign(uint64_t seed, int runs, int beyond, unsigned *deaths)
{
    unsigned with_errors = 0;
    for (int it = 0; it < runs; it++) {
        simseq_params_t p;
        simseq_result_t r;
        simrun_fail_t fl[8];
        random_params(&p, &seed, beyond ? 40 : 64);
        p.f = beyond ? 1 : 1 + it % 3;
        p.fails = fl;
        p.nfails = draw(&seed, p.sim.nranks, beyond ? 2 + it % 6 : 1 + it % p.f,
                        beyond ? -1 : p.root, fl);
        run(&p, &r);
        assert_ended(&p, &r, !beyond, beyond ? "beyond f" : "up to f deaths");
        if (!beyond && p.root >= 0 &&
            r.ok != (unsigned long)r.live * p.instances)
            fail_msg("random: fixed root %d alive, ok %lu of %d x %d", p.root,
                     r.ok, r.live, p.instances);
        *deaths += (unsigned)(p.sim.nranks - r.live);
        with_errors += r.errors > 0;
    }
    return with_errors;
}

static void test_bcast_batched_random(void **state)
{
    unsigned deaths = 0;
    (void)state;
    campaign(0xba7c4ull, 600 / BB_SCALE, 0, &deaths);
    print_message("%d random runs, %u deaths\n", 600 / BB_SCALE, deaths);
}

/* f = 2, two deaths at send boundaries, fixed root. */
static void test_bcast_batched_pairs_f2(void **state)
{
    uint64_t seed = 0xf2f2ull;
    unsigned runs = 0;
    (void)state;
    for (int n = 5; n <= 12; n++)
        for (int it = 0; it < 60 / BB_SCALE; it++) {
            simseq_params_t p;
            simseq_result_t r;
            simrun_fail_t fl[2];
            simseq_params_default(&p, batched(), n, 24);
            p.f = 2;
            p.root = 0;
            p.batch = 1 + (unsigned)(lcg(&seed) % 16);
            p.wait_flush_ns = 20000;
            p.sim.seed = lcg(&seed);
            p.sim.detect_delay_ns = it % 2 ? 1000000 : 10000;
            for (int i = 0; i < 2; i++) {
                int v;
                do
                    v = 1 + (int)(lcg(&seed) % (uint64_t)(n - 1));
                while (i == 1 && v == fl[0].rank);
                fl[i] = (simrun_fail_t){.kind = SIMRUN_FAIL_BEFORE_SEND,
                                        .rank = v,
                                        .k = 1 + (unsigned)(lcg(&seed) % 60)};
            }
            p.fails = fl;
            p.nfails = 2;
            run(&p, &r);
            assert_all_ok(&p, &r, "f = 2, two deaths");
            runs++;
        }
    print_message("%u runs with two deaths, f = 2\n", runs);
}

static void test_bcast_batched_beyond_f(void **state)
{
    unsigned deaths = 0;
    (void)state;
    unsigned with_errors = campaign(0xbe40ull, 300 / BB_SCALE, 1, &deaths);
    print_message("%d runs beyond f, %u with errors\n", 300 / BB_SCALE,
                  with_errors);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bcast_batched_failure_free),
        cmocka_unit_test(test_bcast_batched_after_a_death),
        cmocka_unit_test(test_bcast_batched_every_send_f1),
        cmocka_unit_test(test_bcast_batched_every_send_rotating),
        cmocka_unit_test(test_bcast_batched_random),
        cmocka_unit_test(test_bcast_batched_pairs_f2),
        cmocka_unit_test(test_bcast_batched_beyond_f),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
