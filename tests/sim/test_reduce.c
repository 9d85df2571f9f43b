/* Corrected reduce (section 4 of papers/corrected-reduce-allreduce.txt) on
 * the sim: Theorem 5's message count, the semantics of section 4.1 under
 * every placement of up to f failures before and during the operation, an
 * end (never a hang) with more, and seeded random campaigns. */
#include "test_reduce_common.h"

static const char *const algs[] = {"corrected", "corrected-list",
                                   "corrected-countbit", "corrected-bit"};

static void test_reduce_theorem5_failure_free(void **state)
{
    static uint8_t ok[300];
    for (int a = 0; a < 4; a++)
        for (int f = 1; f <= 4; f++)
            for (int n = 1; n <= 300; n += n < 70 ? 1 : 37) {
                simrun_result_t r;
                int root = (n * 7) % n;
                run_case(find_op("reduce", algs[a]), n, f, root, NULL, 0, &r,
                         ok);
                assert_int_equal(r.completed, n);
                assert_int_equal(r.stats.messages, reduce_msgs(n, f));
            }
}

static void test_reduce_f1_exhaustive(void **state)
{
    for (int a = 1; a < 4; a++)
        sweep(find_op("reduce", algs[a]), 1, 2, a == 1 ? 32 : 16,
              SW_PRE | SW_IN);
}

static void test_reduce_f2_exhaustive_slow(void **state)
{
    for (int a = 1; a < 4; a++)
        sweep(find_op("reduce", algs[a]), 2, 2, a == 1 ? 20 : 10,
              SW_PRE | SW_IN | SW_MIXED);
}

/* f = 2, both failures before the op: every pair, every n up to 32. */
static void test_reduce_f2_preop_pairs(void **state)
{
    for (int a = 1; a < 4; a++)
        sweep(find_op("reduce", algs[a]), 2, 2, 32, SW_PRE);
}

static void test_reduce_more_than_f_ends(void **state)
{
    for (int a = 1; a < 4; a++) {
        sweep_over(find_op("reduce", algs[a]), 1, 2, 20);
        sweep_over(find_op("reduce", algs[a]), 2, 3, 12);
    }
}

static void test_reduce_random_campaign(void **state)
{
    for (int a = 1; a < 4; a++)
        for (int f = 1; f <= 3; f++)
            campaign(find_op("reduce", algs[a]), f, 40, 1000u * a + f);
}

static void test_reduce_other_dtypes(void **state)
{
    static const int dts[] = {COLL_DTYPE_INT32, COLL_DTYPE_DOUBLE,
                              COLL_DTYPE_UINT16, COLL_DTYPE_FLOAT};
    for (int d = 0; d < 4; d++)
        for (int op = 0; op < COLL_REDOP_LAST; op++) {
            if (dtype_validate(dts[d], op) != UCFT_OK)
                continue;
            for (int n = 2; n <= 20; n += 3) {
                simrun_params_t p;
                simrun_result_t r;
                simrun_fail_t fl = {SIMRUN_FAIL_BEFORE_SEND, n - 1, 1, 0, 0};
                simrun_params_default(&p, find_op("reduce", "corrected"), n);
                p.args.f = 1;
                p.args.dtype = dts[d];
                p.args.redop = op;
                p.args.count = 5;
                p.len = 5 * dtype_size(dts[d]);
                p.root = n / 2;
                p.fails = &fl;
                p.nfails = (size_t)(n % 2);
                assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
                assert_int_equal(r.data_errors, 0);
                assert_int_equal(r.unfinished, 0);
                assert_int_equal(r.completed, r.live);
            }
        }
}

static void test_reduce_invalid_args(void **state)
{
    simrun_params_t p;
    simrun_result_t r;
    simrun_params_default(&p, find_op("reduce", "corrected"), 4);
    p.args.dtype = COLL_DTYPE_DOUBLE;
    p.args.redop = COLL_REDOP_BXOR;
    assert_int_equal(simrun_run(&p, &r, NULL), UCFT_ERR_INVALID_PARAM);
    p.args.redop = COLL_REDOP_SUM;
    p.args.f = 16;
    assert_int_equal(simrun_run(&p, &r, NULL), UCFT_ERR_INVALID_PARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_theorem5_failure_free),
        cmocka_unit_test(test_reduce_f1_exhaustive),
        cmocka_unit_test(test_reduce_f2_exhaustive_slow),
        cmocka_unit_test(test_reduce_f2_preop_pairs),
        cmocka_unit_test(test_reduce_more_than_f_ends),
        cmocka_unit_test(test_reduce_random_campaign),
        cmocka_unit_test(test_reduce_other_dtypes),
        cmocka_unit_test(test_reduce_invalid_args),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fprintf(stderr, "%llu simulated runs\n", runs_total);
    return rc;
}
