/* Loci from PMIx locality strings and from cpusets on synthetic hwloc
 * topologies (placement/topo_hwloc.c). */
#include "cmocka_inc.h"
#include "placement/placement.h"
#include "placement/topo_hwloc.h"

#include <stdio.h>
#include <string.h>

#define SENTINEL ((placement_locus_t){7, 77, 777, 7777})

static void expect_locus(const placement_locus_t *l, int node, int pkg,
                         int numa, int core)
{
    assert_int_equal(l->node, node);
    assert_int_equal(l->package, pkg);
    assert_int_equal(l->numa, numa);
    assert_int_equal(l->core, core);
}

static void expect_parse(const char *s, int pkg, int numa, int core)
{
    placement_locus_t l = SENTINEL;
    assert_int_equal(placement_locus_parse(s, &l), UCFT_OK);
    expect_locus(&l, 7, pkg, numa, core); /* node left alone */
}

static void test_topo_hwloc_locality_string(void **state)
{
    expect_parse("SK0:L30:L20:L10:CR0:HT0:NM0", 0, 0, 0);
    expect_parse("SK1:L31:L213:L113:CR13:HT26-27:NM3", 1, 3, 13);
    expect_parse("hwloc:SK1:L31:L29:L19:CR9:HT18:NM2", 1, 2, 9);
    expect_parse("NM2:CR9:SK1", 1, 2, 9); /* any field order */
    /* Several objects: -1 at that level and below. */
    expect_parse("SK0:L30:CR0-3:HT0-7:NM0", 0, 0, -1);
    expect_parse("SK0:L30:CR0-15:HT0-31:NM0-1", 0, -1, -1);
    expect_parse("SK0-1:L30-1:CR0-31:HT0-63:NM0-3", -1, -1, -1);
    expect_parse("SK0-1:CR3:NM0", -1, -1, -1);
    expect_parse("SK0,2:CR3:NM0", -1, -1, -1);
    /* A missing field: -1 at that level only. */
    expect_parse("CR3:HT6-7", -1, -1, 3);
    expect_parse("SK1:CR12", 1, -1, 12);
    /* Unbound: NULL or "" (PMIx gives a NULL string for unbound ranks). */
    expect_parse(NULL, -1, -1, -1);
    expect_parse("", -1, -1, -1);
}

static void test_topo_hwloc_locality_malformed(void **state)
{
    const char *bad[] = {
        "SK",
        "SKx",
        "SK0:",
        ":SK0",
        "SK0::CR1",
        "XX0",
        "SK0:SK1",
        "SK-3",
        "SK3-1",
        "SK0,",
        "SK0 :CR1",
        "sk0",
        "SK99999999",
        "SK1x",
        "SK0;CR1",
        "SK0-",
        "SK0--2",
        "hwloc:",
        "SK0:CR1:L",
        "SK1048576",
        "SK,1",
        "CR0-3-5",
        "hwloc:hwloc:SK0",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        placement_locus_t l = SENTINEL;
        if (placement_locus_parse(bad[i], &l) != UCFT_ERR_INVALID_PARAM)
            fail_msg("accepted \"%s\"", bad[i]);
        expect_locus(&l, 7, 77, 777, 7777); /* untouched */
    }
    assert_int_equal(placement_locus_parse("SK0", NULL),
                     UCFT_ERR_INVALID_PARAM);
}

static void expect_cpuset(hwloc_topology_t t, const char *s, int pkg, int numa,
                          int core)
{
    placement_locus_t l = SENTINEL;
    assert_int_equal(topo_cpuset_locus(t, s, &l), UCFT_OK);
    expect_locus(&l, 7, pkg, numa, core);
}

/* 2 packages x 2 NUMA nodes x 8 cores x 2 PUs: core c is on NUMA c / 8 and
 * package c / 16, PUs 2c and 2c + 1. */
static void test_topo_hwloc_cpuset_big(void **state)
{
    hwloc_topology_t t;
    assert_int_equal(topo_synthetic_load("pack:2 numa:2 core:8 pu:2", &t),
                     UCFT_OK);
    char buf[64], pmix[80];
    for (int c = 0; c < 32; c++) {
        assert_int_equal(topo_core_cpuset(t, c, buf, sizeof buf), UCFT_OK);
        expect_cpuset(t, buf, c / 16, c / 8, c);
        snprintf(pmix, sizeof pmix, "hwloc:%s", buf);
        expect_cpuset(t, pmix, c / 16, c / 8, c);
        snprintf(pmix, sizeof pmix, "%d", 2 * c + 1); /* one PU */
        expect_cpuset(t, pmix, c / 16, c / 8, c);
    }
    expect_cpuset(t, "0-3", 0, 0, -1);     /* two cores, one NUMA */
    expect_cpuset(t, "0-31", 0, -1, -1);   /* one package */
    expect_cpuset(t, "15-16", 0, -1, -1);  /* cores 7, 8: two NUMA */
    expect_cpuset(t, "31-32", -1, -1, -1); /* two packages */
    expect_cpuset(t, "0-63", -1, -1, -1);  /* unbound: whole machine */
    expect_cpuset(t, "2,40", -1, -1, -1);  /* scattered */
    expect_cpuset(t, "48,49", 1, 3, 24);   /* core 24's two PUs */

    const char *bad[] = {"",   "hwloc:", "64",   "0-64", "abc",
                         "-3", "1-0",    "0,,1", "0-1 ", "0x3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        placement_locus_t l = SENTINEL;
        if (topo_cpuset_locus(t, bad[i], &l) != UCFT_ERR_INVALID_PARAM)
            fail_msg("accepted cpuset \"%s\"", bad[i]);
        expect_locus(&l, 7, 77, 777, 7777);
    }
    placement_locus_t l = SENTINEL;
    assert_int_equal(topo_cpuset_locus(t, NULL, &l), UCFT_ERR_INVALID_PARAM);
    assert_int_equal(topo_cpuset_locus(NULL, "0", &l), UCFT_ERR_INVALID_PARAM);
    assert_int_equal(topo_cpuset_locus(t, "0", NULL), UCFT_ERR_INVALID_PARAM);
    assert_int_equal(topo_core_cpuset(t, 32, buf, sizeof buf),
                     UCFT_ERR_INVALID_PARAM);
    assert_int_equal(topo_core_cpuset(t, -1, buf, sizeof buf),
                     UCFT_ERR_INVALID_PARAM);
    assert_int_equal(topo_core_cpuset(t, 31, buf, 3), /* "62-63" */
                     UCFT_ERR_INVALID_PARAM);
    hwloc_topology_destroy(t);
}

/* A locality string written from hwloc objects (what PMIx generates for a
 * binding) parses to the same locus as the cpuset it describes. */
static void test_topo_hwloc_string_matches_cpuset(void **state)
{
    hwloc_topology_t t;
    assert_int_equal(topo_synthetic_load("pack:2 numa:2 core:4 pu:2", &t),
                     UCFT_OK);
    int npu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    for (int a = 0; a < npu; a++)
        for (int b = a; b < npu; b += 3) {
            char set[32], str[256];
            snprintf(set, sizeof set, "%d-%d", a, b);
            hwloc_bitmap_t cs = hwloc_bitmap_alloc(),
                           ids = hwloc_bitmap_alloc();
            assert_int_equal(topo_list_parse(cs, set), 0);
            const hwloc_obj_type_t types[] = {HWLOC_OBJ_PACKAGE, HWLOC_OBJ_CORE,
                                              HWLOC_OBJ_PU, HWLOC_OBJ_NUMANODE};
            const char *codes[] = {"SK", "CR", "HT", "NM"};
            size_t len = 0;
            for (int k = 0; k < 4; k++) {
                hwloc_bitmap_zero(ids);
                hwloc_obj_t o = NULL;
                while ((o = hwloc_get_next_obj_covering_cpuset_by_type(
                            t, cs, types[k], o)) != NULL)
                    hwloc_bitmap_set(ids, o->logical_index);
                len += (size_t)snprintf(str + len, sizeof str - len, "%s%s",
                                        k ? ":" : "", codes[k]);
                len += (size_t)hwloc_bitmap_list_snprintf(
                    str + len, sizeof str - len, ids);
            }
            placement_locus_t x = SENTINEL, y = SENTINEL;
            assert_int_equal(placement_locus_parse(str, &x), UCFT_OK);
            assert_int_equal(topo_cpuset_locus(t, set, &y), UCFT_OK);
            assert_memory_equal(&x, &y, sizeof x);
            hwloc_bitmap_free(cs);
            hwloc_bitmap_free(ids);
        }
    hwloc_topology_destroy(t);
}

/* Small machines: one package; and no package objects at all (-1 at the
 * package level only, NUMA and core still known). */
static void test_topo_hwloc_cpuset_small(void **state)
{
    hwloc_topology_t t;
    assert_int_equal(topo_synthetic_load("pack:1 core:4 pu:1", &t), UCFT_OK);
    expect_cpuset(t, "2", 0, 0, 2);
    expect_cpuset(t, "hwloc:3", 0, 0, 3);
    expect_cpuset(t, "0-3", 0, 0, -1);
    placement_locus_t l = SENTINEL;
    assert_int_equal(topo_cpuset_locus(t, "4", &l), UCFT_ERR_INVALID_PARAM);
    hwloc_topology_destroy(t);

    assert_int_equal(topo_synthetic_load("core:4 pu:1", &t), UCFT_OK);
    expect_cpuset(t, "2", -1, 0, 2);
    expect_cpuset(t, "1-2", -1, 0, -1);
    hwloc_topology_destroy(t);

    const char *bad[] = {"pack:x", "bogus:2", "", "pack:2 numa:2 core:0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        hwloc_topology_t u = NULL;
        if (topo_synthetic_load(bad[i], &u) != UCFT_ERR_INVALID_PARAM)
            fail_msg("accepted topology \"%s\"", bad[i]);
        assert_null(u);
    }
    assert_int_equal(topo_synthetic_load(NULL, &t), UCFT_ERR_INVALID_PARAM);
}

/* The strict list parser: what it accepts is exactly what hwloc prints. */
static void test_topo_hwloc_list_parse(void **state)
{
    hwloc_bitmap_t s = hwloc_bitmap_alloc();
    const char *good[] = {"0", "0-3,8", "1,3,5", "2-3", "1048575"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        assert_int_equal(topo_list_parse(s, good[i]), 0);
        char out[64];
        hwloc_bitmap_list_snprintf(out, sizeof out, s);
        assert_string_equal(out, good[i]);
    }
    const char *bad[] = {"",  "-3",   "3-",    "1x",      " 1",          "1 ",
                         ",", "1,,2", "0-3-5", "1048576", "99999999999", "3-1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (topo_list_parse(s, bad[i]) != -1)
            fail_msg("accepted list \"%s\"", bad[i]);
    assert_int_equal(topo_list_parse(s, NULL), -1);
    hwloc_bitmap_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topo_hwloc_locality_string),
        cmocka_unit_test(test_topo_hwloc_locality_malformed),
        cmocka_unit_test(test_topo_hwloc_cpuset_big),
        cmocka_unit_test(test_topo_hwloc_string_matches_cpuset),
        cmocka_unit_test(test_topo_hwloc_cpuset_small),
        cmocka_unit_test(test_topo_hwloc_list_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
