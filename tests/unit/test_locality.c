/*
 * Unit tests of the pure parts of placement/locality.c: a rank's published
 * description (encode / decode, malformed input rejected) and the node ids
 * every rank derives from all descriptions (launcher ids kept when every
 * rank has one, else hostnames numbered in order of first appearance).
 */
#include "cmocka_inc.h"
#include "placement/locality.h"

#include <string.h>

static void test_locality_encode_decode(void **state)
{
    (void)state;
    placement_locus_t in = {3, 0, 1, 7}, out;
    char text[320], host[64];
    int len = locality_encode(&in, "vm-n3", text, sizeof(text));

    assert_int_equal(len, (int)strlen("3 0 1 7 vm-n3"));
    assert_string_equal(text, "3 0 1 7 vm-n3");
    /* The published bytes carry no NUL. */
    assert_int_equal(
        locality_decode(text, (size_t)len, &out, host, sizeof(host)), 0);
    assert_memory_equal(&in, &out, sizeof(in));
    assert_string_equal(host, "vm-n3");
    in = (placement_locus_t){-1, -1, -1, -1};
    len = locality_encode(&in, "h", text, sizeof(text));
    assert_int_equal(
        locality_decode(text, (size_t)len, &out, host, sizeof(host)), 0);
    assert_int_equal(out.node, -1);
    assert_int_equal(out.core, -1);
    /* A hostname that would not parse back is replaced. */
    assert_true(locality_encode(&in, "a b", text, sizeof(text)) > 0);
    assert_string_equal(text, "-1 -1 -1 -1 ?");
    assert_true(locality_encode(&in, "", text, sizeof(text)) > 0);
    assert_string_equal(text, "-1 -1 -1 -1 ?");
    assert_int_equal(locality_encode(&in, "host", text, 8), -1);
}

static void test_locality_decode_rejects(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",           "1 2 3",      "1 2 3 4",   "1 2 3 x h", "1 2 3 4 h extra",
        "-2 0 0 0 h", "1 -5 0 0 h", "a b c d e",
    };
    placement_locus_t l = {9, 9, 9, 9};
    char host[8], longtext[400];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(
            locality_decode(bad[i], strlen(bad[i]), &l, host, sizeof(host)),
            -1);
        assert_int_equal(l.node, 9); /* untouched */
    }
    /* A hostname longer than the caller's buffer, a text too long. */
    assert_int_equal(
        locality_decode("0 0 0 0 averylonghost", 21, &l, host, sizeof(host)),
        -1);
    memset(longtext, 'x', sizeof(longtext));
    assert_int_equal(
        locality_decode(longtext, sizeof(longtext), &l, host, sizeof(host)),
        -1);
}

static void test_locality_nodes_from_ids(void **state)
{
    (void)state;
    placement_locus_t l[4] = {
        {7, -1, -1, -1}, {3, 0, 0, 1}, {7, 0, 0, 0}, {0, -1, -1, -1}};
    const char *hosts[4] = {"x", "x", "x", "x"}; /* ignored */
    locality_source_t src;

    assert_int_equal(locality_assign_nodes(l, hosts, 4, &src), 3);
    assert_int_equal(src, RT_LOCALITY_NODEID);
    /* The launcher's ids stay as they are. */
    assert_int_equal(l[0].node, 7);
    assert_int_equal(l[1].node, 3);
    assert_int_equal(l[2].node, 7);
    assert_int_equal(l[3].node, 0);
    assert_int_equal(l[1].core, 1);
}

static void test_locality_nodes_from_hostnames(void **state)
{
    (void)state;
    /* One rank without an id: every rank falls back to hostnames, numbered
     * by first appearance in rank order. */
    placement_locus_t l[5] = {{0, -1, -1, -1},
                              {-1, -1, -1, -1},
                              {1, -1, -1, -1},
                              {0, -1, -1, -1},
                              {2, -1, -1, -1}};
    const char *hosts[5] = {"b", "a", "b", "c", "a"};
    locality_source_t src;

    assert_int_equal(locality_assign_nodes(l, hosts, 5, &src), 3);
    assert_int_equal(src, RT_LOCALITY_HOSTNAME);
    assert_int_equal(l[0].node, 0);
    assert_int_equal(l[1].node, 1);
    assert_int_equal(l[2].node, 0);
    assert_int_equal(l[3].node, 2);
    assert_int_equal(l[4].node, 1);
    placement_locus_t one = {-1, -1, -1, -1};
    const char *h1[1] = {"solo"};
    assert_int_equal(locality_assign_nodes(&one, h1, 1, &src), 1);
    assert_int_equal(one.node, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_locality_encode_decode),
        cmocka_unit_test(test_locality_decode_rejects),
        cmocka_unit_test(test_locality_nodes_from_ids),
        cmocka_unit_test(test_locality_nodes_from_hostnames),
    };
    return cmocka_run_group_tests_name("locality", tests, NULL, NULL);
}
