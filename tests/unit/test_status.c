#include "cmocka_inc.h"
#include "ucft.h"

#include <string.h>

static void test_status_every_code_has_a_distinct_string(void **state)
{
    (void)state;
    static const ucft_status_t all[] = {
#define X_(name, value, text) UCFT_##name,
        UCFT_FOREACH_STATUS(X_)
#undef X_
    };
    size_t n = sizeof(all) / sizeof(all[0]);
    for (size_t i = 0; i < n; i++) {
        const char *s = ucft_status_string(all[i]);
        assert_non_null(s);
        assert_string_not_equal(s, "unknown status");
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(all[i], all[j]);
            assert_string_not_equal(s, ucft_status_string(all[j]));
        }
    }
}

static void test_status_groups_by_blast_radius(void **state)
{
    (void)state;
    assert_int_equal(UCFT_OK, 0);
    assert_true(UCFT_INPROGRESS > 0);
    assert_true(UCFT_ERR_PROC_FAILED <= -10 && UCFT_ERR_PROC_FAILED > -20);
    assert_true(UCFT_ERR_PROC_FAILED_PENDING <= -10 &&
                UCFT_ERR_PROC_FAILED_PENDING > -20);
    assert_true(UCFT_ERR_REVOKED <= -20 && UCFT_ERR_REVOKED > -30);
    assert_true(UCFT_ERR_INVALID_PARAM <= -30 && UCFT_ERR_INVALID_PARAM > -40);
    assert_true(UCFT_ERR_TRUNCATED < 0 && UCFT_ERR_TIMED_OUT < 0);
}

static void test_status_names_and_unknown(void **state)
{
    (void)state;
    assert_string_equal(ucft_status_name(UCFT_ERR_PROC_FAILED),
                        "ERR_PROC_FAILED");
    assert_string_equal(ucft_status_name(UCFT_ERR_TRUNCATED), "ERR_TRUNCATED");
    assert_string_equal(ucft_status_string((ucft_status_t)-999),
                        "unknown status");
    assert_string_equal(ucft_status_name((ucft_status_t)-999), "UNKNOWN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_every_code_has_a_distinct_string),
        cmocka_unit_test(test_status_groups_by_blast_radius),
        cmocka_unit_test(test_status_names_and_unknown),
    };
    return cmocka_run_group_tests_name("status", tests, NULL, NULL);
}
