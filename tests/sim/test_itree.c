/* The I(f)-tree and up-correction group arithmetic of collectives/itree.h,
 * checked against brute force for every n up to 300 and f up to 6. */
#include "collectives/itree.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#define NMAX 300

/* Every v > 0 reaches the root through parents that stay in its subtree;
 * parent and child lists agree; n - 1 edges in all; the flat shape has
 * depth 2 at most, the binomial one log2 n + 1, and flat = 0 is the
 * binomial tree of itree_parent / itree_child. */
static void check_shape(int flat)
{
    static int seen[NMAX];
    for (int f = 0; f <= 6; f++)
        for (int n = 1; n <= NMAX; n++) {
            unsigned edges = 0;
            for (int v = 0; v < n; v++)
                seen[v] = 0;
            for (int v = 0; v < n; v++) {
                unsigned before = edges;
                for (unsigned i = 0;; i++) {
                    int c = itree_child_in(v, i, n, f, flat);
                    if (!flat)
                        assert_int_equal(c, itree_child(v, i, n, f));
                    if (c < 0)
                        break;
                    assert_true(c > 0 && c < n);
                    assert_int_equal(itree_parent_in(c, f, flat), v);
                    seen[c]++;
                    edges++;
                }
                assert_int_equal(itree_nchildren_in(v, n, f, flat),
                                 edges - before);
            }
            assert_int_equal(edges, (unsigned)(n - 1));
            for (int v = 1; v < n; v++) {
                assert_int_equal(seen[v], 1);
                int p = v, steps = 0;
                while (p != 0) {
                    int q = itree_parent_in(p, f, flat);
                    if (!flat)
                        assert_int_equal(q, itree_parent(p, f));
                    if (q != 0)
                        assert_int_equal(itree_subtree(q, f),
                                         itree_subtree(v, f));
                    assert_true(q < p);
                    p = q;
                    steps++;
                }
                assert_true(steps <= (flat ? 2 : 25));
            }
        }
}

static void test_itree_parent_child_consistent(void **state)
{
    check_shape(0);
}

static void test_itree_flat_consistent(void **state)
{
    check_shape(1);
    assert_int_equal(itree_flat(ITREE_FLAT_MAX), 1);
    assert_int_equal(itree_flat(ITREE_FLAT_MAX + 1), 0);
    /* Seven ranks, f = 1: subtrees {1, 3, 5} and {2, 4, 6}. */
    assert_int_equal(itree_parent_in(5, 1, 1), 1);
    assert_int_equal(itree_parent_in(6, 1, 1), 2);
    assert_int_equal(itree_child_in(1, 1, 7, 1, 1), 5);
    assert_int_equal(itree_child_in(3, 0, 7, 1, 1), -1);
}

/* The root has min(f+1, n-1) children; subtree sizes differ by at most one
 * and add up to n - 1 (Definition of the I(f)-tree). */
static void test_itree_subtrees_balanced(void **state)
{
    for (int f = 0; f <= 6; f++)
        for (int n = 1; n <= NMAX; n++) {
            int nc = itree_root_nchildren(n, f), lo = n, hi = 0, sum = 0;
            assert_int_equal(itree_nchildren(0, n, f), (unsigned)nc);
            for (int k = 0; k < nc; k++) {
                int s = itree_subtree_size(k, n, f), cnt = 0;
                for (int v = 1; v < n; v++)
                    cnt += itree_subtree(v, f) == k;
                assert_int_equal(s, cnt);
                lo = s < lo ? s : lo;
                hi = s > hi ? s : hi;
                sum += s;
            }
            assert_int_equal(sum, n - 1);
            if (nc > 0)
                assert_true(hi - lo <= 1);
        }
}

/* Groups: one member per subtree, f+1 members when full, the short last
 * group joined by the root; Theorem 5's up-correction count equals the sum
 * of size * (size - 1) over the groups. */
static void test_itree_groups_and_theorem5(void **state)
{
    for (int f = 0; f <= 6; f++)
        for (int n = 1; n <= NMAX; n++) {
            int full = itree_full_groups(n, f), a = itree_a(n, f);
            int ngroups = full + (a > 1);
            uint64_t msgs = 0;
            for (int g = 0; g < ngroups; g++) {
                int size = 0;
                for (int k = 0; k <= f; k++) {
                    int v = itree_member(g, k, n, f);
                    if (v < 0)
                        continue;
                    assert_int_equal(itree_group(v, f), g);
                    assert_int_equal(itree_subtree(v, f), k);
                    assert_int_equal(itree_grouped_with_root(v, n, f),
                                     g == full);
                    size++;
                }
                if (g < full) {
                    assert_int_equal(size, f + 1);
                } else {
                    assert_int_equal(size, a - 1);
                    size++; /* the root */
                }
                msgs += (uint64_t)size * (uint64_t)(size - 1);
            }
            assert_int_equal(msgs, itree_up_messages(n, f));
            /* The root adds its own value exactly for the subtrees without
             * a member of its group. */
            for (int k = 0; k < itree_root_nchildren(n, f); k++) {
                int has = a > 1 && itree_member(full, k, n, f) >= 0;
                assert_int_equal(itree_root_adds_own(k, n, f), !has);
            }
        }
}

/* The example of section 4.3: seven processes, f = 1. */
static void test_itree_paper_example(void **state)
{
    assert_int_equal(itree_a(7, 1), 1); /* the root is in no group */
    assert_int_equal(itree_group(3, 1), itree_group(4, 1));
    assert_int_equal(itree_group(5, 1), itree_group(6, 1));
    assert_int_equal(itree_parent(3, 1), 1);
    assert_int_equal(itree_parent(5, 1), 1);
    assert_int_equal(itree_parent(4, 1), 2);
    assert_int_equal(itree_parent(6, 1), 2);
    assert_int_equal(itree_up_messages(7, 1), 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_itree_parent_child_consistent),
        cmocka_unit_test(test_itree_flat_consistent),
        cmocka_unit_test(test_itree_subtrees_balanced),
        cmocka_unit_test(test_itree_groups_and_theorem5),
        cmocka_unit_test(test_itree_paper_example),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
