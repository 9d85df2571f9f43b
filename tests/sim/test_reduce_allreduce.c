/* Corrected allreduce and barrier (section 5 of
 * papers/corrected-reduce-allreduce.txt) on the sim: failure-free message
 * count, the semantics of section 5.1 (every live value once, a dead one
 * entirely or not at all, the same result at every survivor) under every
 * placement of up to f failures before and during the operation, the
 * candidate roots included, an end with more, random campaigns. */
#include "test_reduce_common.h"

static const char *const algs[] = {"corrected-list", "corrected-countbit",
                                   "corrected-bit"};

static void test_allreduce_failure_free_count(void **state)
{
    static uint8_t ok[300];
    for (int a = 0; a < 3; a++)
        for (int f = 1; f <= 4; f++)
            for (int n = 1; n <= 300; n += n < 70 ? 1 : 37) {
                simrun_result_t r;
                run_case(find_op("allreduce", algs[a]), n, f, n / 2, NULL, 0,
                         &r, ok);
                assert_int_equal(r.completed, n);
                assert_int_equal(r.stats.messages, allreduce_msgs(n, f));
            }
}

static void test_allreduce_f1_exhaustive(void **state)
{
    for (int a = 0; a < 3; a++)
        sweep(find_op("allreduce", algs[a]), 1, 2, a == 0 ? 32 : 16,
              SW_PRE | SW_IN);
}

/* Teardown of the tests that change rd_release, rd_detect_ns or
 * rd_user_op. */
static int rd_reset(void **state)
{
    (void)state;
    rd_release = 0;
    rd_detect_ns = 0;
    rd_spread_ns = 0;
    rd_user_op = NULL;
    return 0;
}

/* A user-defined sum of uint8 elements that counts its calls. */
static void user_sum(void *dst, const void *src, size_t count, int dtype,
                     void *arg)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    assert_int_equal(dtype, COLL_DTYPE_UINT8);
    for (size_t i = 0; i < count; i++)
        d[i] = (unsigned char)(d[i] + s[i]);
    ++*(unsigned long *)arg;
}

/* Reduce and allreduce with a user-defined operation (what ucft_op_create
 * registers): every placement of one failure before and during the
 * operation, every root, up to 12 ranks; the semantics hold and every
 * combination went through the user's function. */
static void test_user_op_f1_exhaustive(void **state)
{
    static unsigned long calls;
    static coll_user_op_t op = {user_sum, &calls};
    (void)state;
    rd_user_op = &op;
    sweep(find_op("reduce", "corrected"), 1, 2, 12, SW_PRE | SW_IN);
    unsigned long after_reduce = calls;
    sweep(find_op("allreduce", "corrected"), 1, 2, 12, SW_PRE | SW_IN);
    static uint8_t ok[16];
    for (int n = 1; n <= 12; n++) {
        simrun_result_t r;
        run_case(find_op("allreduce", "recdbl"), n, 1, 0, NULL, 0, &r, ok);
        assert_int_equal(r.completed, n);
    }
    print_message("user-defined sum: %lu calls in reduce, %lu in allreduce\n",
                  after_reduce, calls - after_reduce);
    assert_true(after_reduce > 0);
    assert_true(calls > after_reduce);
}

/* As the runtime runs it: a rank whose operation completed is released
 * (no more failure news, cleaned up) unless the operation asks to be kept
 * (keep_after_done). A candidate root that dies during its broadcast
 * leaves some ranks with the value and sends the others to the next
 * attempt, which waits for the first ones: released, they never come
 * (a hang at n >= 4 with f = 1 once the news of the death outruns the
 * value, and with f = 2 at the sim's default delay). Every single failure
 * with notification delays of 1 ms, 3 us and 5 us. */
static void test_allreduce_f1_released(void **state)
{
    static const uint64_t delays[] = {0, 3000, 5000};
    rd_release = 1;
    for (int i = 0; i < 3; i++) {
        rd_detect_ns = delays[i];
        sweep(find_op("allreduce", "corrected"), 1, 2, 16, SW_PRE | SW_IN);
    }
}

static void test_allreduce_f2_released(void **state)
{
    rd_release = 1;
    sweep(find_op("allreduce", "corrected"), 2, 2, 10, SW_PRE | SW_IN);
}

static void test_allreduce_f2_exhaustive_slow(void **state)
{
    sweep(find_op("allreduce", "corrected"), 2, 2, 16,
          SW_PRE | SW_IN | SW_MIXED);
}

static void test_allreduce_f2_preop_pairs(void **state)
{
    for (int a = 0; a < 3; a++)
        sweep(find_op("allreduce", algs[a]), 2, 2, 32, SW_PRE);
}

static void test_allreduce_more_than_f_ends(void **state)
{
    sweep_over(find_op("allreduce", "corrected"), 1, 2, 16);
    sweep_over(find_op("allreduce", "corrected-bit"), 2, 3, 10);
}

static void test_allreduce_random_campaign(void **state)
{
    for (int a = 0; a < 3; a++)
        for (int f = 1; f <= 3; f++)
            campaign(find_op("allreduce", algs[a]), f, 25, 7000u * a + f);
}

/* Staggered starts: ranks enter up to 20 us apart and hear of a death
 * 5 us after it, so some start knowing of it (their sends to the dead
 * rank fail at once, their state is told right after its start); up to
 * f failures before the operation or before a send, as the runtime runs
 * it (released at completion) and with every state kept: every live rank
 * still ends with the correct result. */
static void test_allreduce_staggered(void **state)
{
    static uint8_t ok[64];
    uint64_t x = 4242;
    int knowing = 0;
    rd_detect_ns = 5000;
    rd_spread_ns = 20000;
    for (int i = 0; i < 600 / RD_SCALE; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int n = 2 + (int)((x >> 33) % 39);
        int f = 1 + (int)((x >> 60) % 2);
        int allreduce = i % 2;
        int root = allreduce ? 0 : (int)((x >> 8) % (uint64_t)n);
        simrun_fail_t fl[2];
        size_t nf = 0;
        int root_dead = 0;
        for (int j = 0; j < 1 + (int)((x >> 40) % (uint64_t)f); j++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            unsigned k = (unsigned)((x >> 50) % 4);
            fl[nf] = (simrun_fail_t){k ? SIMRUN_FAIL_BEFORE_SEND
                                       : SIMRUN_FAIL_BEFORE_OP,
                                     (int)((x >> 25) % (uint64_t)n), k, 0, 0};
            root_dead |= fl[nf++].rank == root;
        }
        rd_release = (i >> 1) % 2;
        simrun_result_t r;
        run_case(find_op(allreduce ? "allreduce" : "reduce", algs[i % 3]), n, f,
                 root, fl, nf, &r, ok);
        expect_delivery(&r, ok, root, allreduce, root_dead);
        knowing += r.started_knowing > 0;
    }
    print_message("%d runs with a rank that started knowing of a death\n",
                  knowing);
    assert_true(knowing > 600 / RD_SCALE / 10);
}

/* Barrier: everyone completes; a dead rank before the op is tolerated. */
static void test_allreduce_barrier(void **state)
{
    for (int n = 1; n <= 40; n++)
        for (int dead = -1; dead < n; dead += 5) {
            simrun_params_t p;
            simrun_result_t r;
            simrun_fail_t fl = {SIMRUN_FAIL_BEFORE_OP, dead, 0, 0, 0};
            simrun_params_default(&p, find_op("barrier", "corrected"), n);
            p.fails = &fl;
            p.nfails = dead >= 0;
            assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
            assert_int_equal(r.unfinished, 0);
            assert_int_equal(r.completed, r.live);
            if (dead < 0)
                assert_int_equal(r.stats.messages, allreduce_msgs(n, 1));
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allreduce_failure_free_count),
        cmocka_unit_test(test_allreduce_f1_exhaustive),
        cmocka_unit_test_teardown(test_allreduce_f1_released, rd_reset),
        cmocka_unit_test_teardown(test_user_op_f1_exhaustive, rd_reset),
        cmocka_unit_test_teardown(test_allreduce_f2_released, rd_reset),
        cmocka_unit_test(test_allreduce_f2_exhaustive_slow),
        cmocka_unit_test(test_allreduce_f2_preop_pairs),
        cmocka_unit_test(test_allreduce_more_than_f_ends),
        cmocka_unit_test(test_allreduce_random_campaign),
        cmocka_unit_test(test_allreduce_barrier),
        cmocka_unit_test_teardown(test_allreduce_staggered, rd_reset),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fprintf(stderr, "%llu simulated runs\n", runs_total);
    return rc;
}
