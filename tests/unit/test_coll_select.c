/* Size-based algorithm selection (comm/coll_select.h): names, tables and
 * the "fast" presets parse into the algorithms they name and pick by
 * payload size; malformed ones are refused with a reason. */
#include "comm/coll_select.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static const coll_op_ops_t *op(const char *o, const char *a)
{
    const coll_op_ops_t *p = coll_op_find(o, a);
    assert_non_null(p);
    return p;
}

static void test_coll_select_single(void **state)
{
    cm_sel_t t;
    char err[96];
    (void)state;
    assert_int_equal(
        cm_sel_parse("corrected", "allreduce", &t, err, sizeof(err)), UCFT_OK);
    assert_int_equal(t.n, 1);
    assert_ptr_equal(cm_sel_pick(&t, 0), op("allreduce", "corrected"));
    assert_ptr_equal(cm_sel_pick(&t, SIZE_MAX), op("allreduce", "corrected"));
    assert_int_equal(cm_sel_parse("ring", "allgather", &t, err, sizeof(err)),
                     UCFT_OK);
    assert_ptr_equal(cm_sel_pick(&t, 5), op("allgather", "ring"));
}

static void test_coll_select_table(void **state)
{
    cm_sel_t t;
    char err[96];
    (void)state;
    assert_int_equal(cm_sel_parse("0:linear,4k:recdbl,1m:ring", "allreduce", &t,
                                  err, sizeof(err)),
                     UCFT_OK);
    assert_int_equal(t.n, 3);
    assert_ptr_equal(cm_sel_pick(&t, 0), op("allreduce", "linear"));
    assert_ptr_equal(cm_sel_pick(&t, 4095), op("allreduce", "linear"));
    assert_ptr_equal(cm_sel_pick(&t, 4096), op("allreduce", "recdbl"));
    assert_ptr_equal(cm_sel_pick(&t, (1u << 20) - 1),
                     op("allreduce", "recdbl"));
    assert_ptr_equal(cm_sel_pick(&t, 1u << 20), op("allreduce", "ring"));
    assert_int_equal(
        cm_sel_state_size(&t) >= op("allreduce", "ring")->state_size, 1);
    assert_int_equal(cm_sel_buf_mult(&t), 2);
    /* fast: the preset table */
    assert_int_equal(cm_sel_parse("fast", "allreduce", &t, err, sizeof(err)),
                     UCFT_OK);
    assert_int_equal(t.n, 2);
    assert_ptr_equal(cm_sel_pick(&t, 8), op("allreduce", "recdbl"));
    assert_ptr_equal(cm_sel_pick(&t, 1u << 24), op("allreduce", "ring"));
    assert_int_equal(cm_sel_parse("fast", "bcast", &t, err, sizeof(err)),
                     UCFT_OK);
    assert_ptr_equal(cm_sel_pick(&t, 8), op("bcast", "binomial"));
}

static void test_coll_select_bad(void **state)
{
    static const char *const bad[] = {
        "nope",
        "4k:ring",
        "0:ring,0:recdbl",
        "0:ring,x:recdbl",
        "0:",
        "0:ring,",
        "0:nope",
        "0:ring,1q:recdbl",
        ":ring",
        "0:a,1:b,2:c,3:d,4:e,5:f,6:g,7:h,8:i",
    };
    cm_sel_t t;
    char err[96];
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (cm_sel_parse(bad[i], "allreduce", &t, err, sizeof(err)) !=
            UCFT_ERR_INVALID_PARAM)
            fail_msg("'%s' accepted", bad[i]);
        assert_true(strlen(err) > 0);
    }
    /* An algorithm of another operation is not one of this. */
    assert_int_equal(
        cm_sel_parse("0:recdbl,1k:ring", "bcast", &t, err, sizeof(err)),
        UCFT_ERR_INVALID_PARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coll_select_single),
        cmocka_unit_test(test_coll_select_table),
        cmocka_unit_test(test_coll_select_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
