/* collectives/rankset.h: membership against a reference bitmap while the
 * set grows from inline to heap, duplicates, order, free. */
#include "collectives/rankset.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_rankset_grows_and_finds(void **state)
{
    enum { R = 5000 };
    static uint8_t ref[R];
    coll_rankset_t s = {0};
    uint64_t x = 12345;
    uint32_t members = 0;

    assert_false(coll_rankset_has(&s, 0));
    for (int i = 0; i < 3000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int v = (int)((x >> 33) % R);
        assert_int_equal(coll_rankset_add(&s, v), 0);
        members += !ref[v];
        ref[v] = 1;
        assert_int_equal(s.n, members);
        if (members <= COLL_RANKSET_INLINE)
            assert_null(s.heap);
        else
            assert_non_null(s.heap);
    }
    for (int v = -1; v <= R; v++)
        assert_int_equal(coll_rankset_has(&s, v), v >= 0 && v < R && ref[v]);
    const int *d = coll_rankset_items(&s);
    for (uint32_t i = 1; i < s.n; i++)
        assert_true(d[i - 1] < d[i]);
    coll_rankset_free(&s);
    assert_int_equal(s.n, 0);
    assert_null(s.heap);
    assert_false(coll_rankset_has(&s, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rankset_grows_and_finds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
