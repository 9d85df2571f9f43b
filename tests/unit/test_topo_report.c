/* The ucft-topo report (tools/topo/topo_report.c) with a given map, as the
 * online mode passes the runtime's: a given map equal to the computed one
 * gives the same report, a different one is what gets reported (not the
 * policy's), and a map that is not a permutation is refused before
 * anything is written. */
#include "cmocka_inc.h"
#include "tools/topo/topo_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TR_NODES 4
#define TR_PPN   4
#define TR_N     (TR_NODES * TR_PPN)

/* 4 nodes x 4 ranks by slot, nodes only. */
static void tr_loci(placement_locus_t *loci)
{
    for (int r = 0; r < TR_N; r++)
        loci[r] = (placement_locus_t){r / TR_PPN, -1, -1, -1};
}

/* The report of p into a fresh string (caller frees); *st its status. */
static char *tr_run(topo_report_params_t *p, topo_stats_t *s, ucft_status_t *st)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    p->out = out;
    *st = topo_report(p, s);
    assert_int_equal(fclose(out), 0);
    p->out = NULL;
    return text;
}

static void test_topo_report_given_equals_computed(void **state)
{
    (void)state;
    placement_locus_t loci[TR_N];
    int rank_at[TR_N], pos_of[TR_N];
    tr_loci(loci);
    for (int pl = 0; pl < 3; pl++) {
        assert_int_equal(placement_compute((placement_policy_t)pl, loci, TR_N,
                                           rank_at, pos_of),
                         UCFT_OK);
        topo_report_params_t p = {.loci = loci,
                                  .n = TR_N,
                                  .policy = (placement_policy_t)pl,
                                  .f = 1,
                                  .root = 5,
                                  .op = TOPO_OP_REDUCE};
        topo_stats_t a, b;
        ucft_status_t st;
        char *computed = tr_run(&p, &a, &st);
        assert_int_equal(st, UCFT_OK);
        p.rank_at = rank_at;
        char *given = tr_run(&p, &b, &st);
        assert_int_equal(st, UCFT_OK);
        assert_string_equal(computed, given);
        assert_memory_equal(&a, &b, sizeof a);
        free(computed);
        free(given);
    }
}

static void test_topo_report_given_map_is_reported(void **state)
{
    (void)state;
    placement_locus_t loci[TR_N];
    int ident[TR_N];
    tr_loci(loci);
    for (int i = 0; i < TR_N; i++)
        ident[i] = i;
    /* Named interleave, but the blocks of identity are what is shown:
     * n - m = 12 binomial edges across nodes instead of D - 1 = 3. */
    topo_report_params_t p = {.loci = loci,
                              .n = TR_N,
                              .policy = PLACEMENT_INTERLEAVE,
                              .f = 1,
                              .op = TOPO_OP_BCAST};
    topo_stats_t s;
    ucft_status_t st;
    char *text = tr_run(&p, &s, &st);
    assert_int_equal(st, UCFT_OK);
    assert_int_equal(s.tree_cross_node, TR_NODES - 1);
    free(text);
    p.rank_at = ident;
    text = tr_run(&p, &s, &st);
    assert_int_equal(st, UCFT_OK);
    assert_int_equal(s.tree_cross_node, TR_N - TR_PPN);
    assert_int_equal(s.ring_cross_node, TR_NODES);
    assert_non_null(strstr(text, "\npos 1 -> rank 1 -> node 0 (vrank 1)\n"));
    free(text);
}

static void test_topo_report_given_map_bad(void **state)
{
    (void)state;
    placement_locus_t loci[TR_N];
    int map[TR_N];
    tr_loci(loci);
    /* A repeated rank, a rank below 0, a rank beyond n. */
    const int bad_at[3] = {3, 7, 11}, bad_val[3] = {0, -1, TR_N};
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < TR_N; i++)
            map[i] = TR_N - 1 - i;
        map[bad_at[k]] = bad_val[k]; /* 0 is also at position 15 */
        topo_report_params_t p = {.loci = loci,
                                  .n = TR_N,
                                  .rank_at = map,
                                  .f = 1,
                                  .op = TOPO_OP_BCAST};
        topo_stats_t s = {.nodes = -7};
        ucft_status_t st;
        char *text = tr_run(&p, &s, &st);
        assert_int_equal(st, UCFT_ERR_INVALID_PARAM);
        assert_string_equal(text, ""); /* nothing written */
        assert_int_equal(s.nodes, -7); /* stats untouched */
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topo_report_given_equals_computed),
        cmocka_unit_test(test_topo_report_given_map_is_reported),
        cmocka_unit_test(test_topo_report_given_map_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
