#include "cmocka_inc.h"
#include "transport/tag.h"

static void test_tag_fields_round_trip(void **state)
{
    (void)state;
    uint64_t t = ucft_tag_make(UCFT_TAG_CLASS_COLL, 0x2abc, 0xfedcba, 0x123456);
    assert_int_equal(ucft_tag_class(t), UCFT_TAG_CLASS_COLL);
    assert_int_equal(ucft_tag_ctx(t), 0x2abc);
    assert_int_equal(ucft_tag_src(t), 0xfedcba);
    assert_int_equal(ucft_tag_payload(t), 0x123456);
}

static void test_tag_supports_2_pow_20_ranks_and_more(void **state)
{
    (void)state;
    assert_true(UCFT_TAG_MAX_RANKS >= (1u << 20));
    uint32_t last = UCFT_TAG_MAX_RANKS - 1;
    uint64_t t = ucft_tag_make(UCFT_TAG_CLASS_P2P, 0, last, 0);
    assert_int_equal(ucft_tag_src(t), last);
    /* A rank beyond the field never spills into the context id. */
    assert_int_equal(ucft_tag_ctx(t), 0);
}

static void test_tag_fields_do_not_overlap(void **state)
{
    (void)state;
    uint64_t cls = ucft_tag_make(3, 0, 0, 0);
    uint64_t ctx = ucft_tag_make(0, UCFT_TAG_MAX_CTX, 0, 0);
    uint64_t src = ucft_tag_make(0, 0, UCFT_TAG_MAX_RANKS - 1, 0);
    uint64_t pay = ucft_tag_make(0, 0, 0, UCFT_TAG_MAX_PAYLOAD);
    assert_int_equal(cls & ctx, 0);
    assert_int_equal(ctx & src, 0);
    assert_int_equal(src & pay, 0);
    assert_int_equal(cls | ctx | src | pay, UINT64_MAX);
    assert_int_equal(src, UCFT_TAG_SRC_MASK);
}

static void test_tag_coll_seq_and_kind(void **state)
{
    (void)state;
    uint32_t p = ucft_tag_coll_payload(70000, 0x1ff);
    uint64_t t = ucft_tag_make(UCFT_TAG_CLASS_COLL, 5, 9, p);
    assert_int_equal(ucft_tag_coll_seq(t), 70000 & 0xffff);
    assert_int_equal(ucft_tag_coll_kind(t), 0xff);
    /* Two collectives that differ in sequence never match each other. */
    uint64_t a = ucft_tag_make(1, 0, 1, ucft_tag_coll_payload(1, 2));
    uint64_t b = ucft_tag_make(1, 0, 1, ucft_tag_coll_payload(2, 2));
    assert_true(a != b);
}

static int matches(uint64_t msg, uint64_t want, uint64_t mask)
{
    return ((msg ^ want) & mask) == 0;
}

static void test_tag_wildcards_keep_class_and_context(void **state)
{
    (void)state;
    uint64_t msg = ucft_tag_make(UCFT_TAG_CLASS_P2P, 3, 17, 42);
    uint64_t any = ucft_tag_mask(1, 1);
    assert_true(matches(msg, ucft_tag_make(UCFT_TAG_CLASS_P2P, 3, 0, 0), any));
    /* Other communicator or class never matches, even with wildcards. */
    assert_false(matches(msg, ucft_tag_make(UCFT_TAG_CLASS_P2P, 4, 0, 0), any));
    assert_false(
        matches(msg, ucft_tag_make(UCFT_TAG_CLASS_COLL, 3, 0, 0), any));
    /* ANY_SOURCE with a given tag. */
    uint64_t m = ucft_tag_mask(1, 0);
    assert_true(matches(msg, ucft_tag_make(0, 3, 99, 42), m));
    assert_false(matches(msg, ucft_tag_make(0, 3, 99, 43), m));
    /* A given source with ANY_TAG. */
    m = ucft_tag_mask(0, 1);
    assert_true(matches(msg, ucft_tag_make(0, 3, 17, 7), m));
    assert_false(matches(msg, ucft_tag_make(0, 3, 18, 42), m));
    /* Exact. */
    assert_true(matches(msg, msg, UCFT_TAG_FULL_MASK));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tag_fields_round_trip),
        cmocka_unit_test(test_tag_supports_2_pow_20_ranks_and_more),
        cmocka_unit_test(test_tag_fields_do_not_overlap),
        cmocka_unit_test(test_tag_coll_seq_and_kind),
        cmocka_unit_test(test_tag_wildcards_keep_class_and_context),
    };
    return cmocka_run_group_tests_name("tag", tests, NULL, NULL);
}
