/* Rank arithmetic of the interleaved binomial tree (collectives/). */
#include "collectives/coll_op.h"
#include "collectives/tree_binomial.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

static void test_tree_binomial_example_16(void **state)
{
    static const int kids[4][4] = {
        {1, 2, 4, 8}, {3, 5, 9, -1}, {6, 10, -1, -1}, {7, 11, -1, -1}};
    for (int v = 0; v < 4; v++)
        for (unsigned i = 0; i < 4; i++)
            assert_int_equal(coll_binomial_child(v, i, 16), kids[v][i]);
    assert_int_equal(coll_binomial_parent(0), -1);
    assert_int_equal(coll_binomial_parent(1), 0);
    assert_int_equal(coll_binomial_parent(12), 4);
    assert_int_equal(coll_binomial_parent(11), 3);
    assert_int_equal(coll_binomial_parent(15), 7);
    assert_int_equal(coll_binomial_nchildren(0, 16), 4);
    assert_int_equal(coll_binomial_nchildren(8, 16), 0);
    assert_int_equal(coll_binomial_nchildren(0, 1), 0);
    assert_int_equal(coll_binomial_nchildren(0, 13), 4);
}

/* For every n: each non-root vrank is the child of its parent exactly
 * once, children come in increasing order, the depth is the popcount. */
static void test_tree_binomial_is_a_tree(void **state)
{
    for (int n = 1; n <= 300; n++) {
        int *seen = calloc((size_t)n, sizeof(int));
        int edges = 0;
        assert_non_null(seen);
        for (int v = 0; v < n; v++) {
            int prev = v;
            for (unsigned i = 0;; i++) {
                int c = coll_binomial_child(v, i, n);
                if (c < 0)
                    break;
                assert_true(c > prev && c < n);
                assert_int_equal(coll_binomial_parent(c), v);
                assert_int_equal(coll_binomial_depth(c),
                                 coll_binomial_depth(v) + 1);
                seen[c]++;
                edges++;
                prev = c;
            }
        }
        assert_int_equal(edges, n - 1);
        for (int v = 1; v < n; v++)
            assert_int_equal(seen[v], 1);
        free(seen);
    }
}

/* The subtree of the root's child 2^j is the vranks whose lowest set bit
 * is j: interleaved around the ring. */
static void test_tree_binomial_subtrees_interleave(void **state)
{
    const int n = 64;
    for (int v = 1; v < n; v++) {
        int a = v;
        while (coll_binomial_parent(a) != 0)
            a = coll_binomial_parent(a);
        assert_int_equal(a, v & -v);
    }
}

/* Identity and a permuted placement (position p held by rank
 * (p * 7 + 3) mod n for n prime to 7): vrank and rank are inverse, the
 * root is vrank 0, and vrank order follows the position order. */
static void test_tree_binomial_vrank_roundtrip(void **state)
{
    int rank_at[20], pos_of[20];

    for (int n = 1; n < 20; n++) {
        coll_map_t map = {n, rank_at, pos_of};
        for (int p = 0; p < n; p++) {
            rank_at[p] = n % 7 ? (p * 7 + 3) % n : p;
            pos_of[rank_at[p]] = p;
        }
        for (int m = 0; m < 2; m++) {
            coll_args_t a = {.map = m ? &map : NULL};
            for (int root = 0; root < n; root++)
                for (int r = 0; r < n; r++) {
                    int v = coll_vrank_of(&a, r, root, n);
                    assert_true(v >= 0 && v < n);
                    assert_int_equal(coll_rank_of(&a, v, root, n), r);
                    assert_int_equal(v == 0, r == root);
                    int p = m ? pos_of[root] : root;
                    assert_int_equal(coll_rank_of(&a, 1 % n, root, n),
                                     m ? rank_at[(p + 1) % n] : (p + 1) % n);
                }
        }
    }
    assert_int_equal(coll_bitlen(0), 0);
    assert_int_equal(coll_bitlen(1), 1);
    assert_int_equal(coll_bitlen(1u << 23), 24);
    assert_int_equal(coll_binomial_child(1 << 23, 0, 1 << 24), -1);
    assert_int_equal(coll_binomial_child(0, 23, 1 << 24), 1 << 23);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_binomial_example_16),
        cmocka_unit_test(test_tree_binomial_is_a_tree),
        cmocka_unit_test(test_tree_binomial_subtrees_interleave),
        cmocka_unit_test(test_tree_binomial_vrank_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
