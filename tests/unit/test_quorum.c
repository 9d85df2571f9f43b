/*
 * The majority rule (runtime/quorum.h): for every job of 1 to 10 ranks,
 * every set of up to 2 failures known before, every split of the live
 * ranks into two sides, and each side either having taken the earlier
 * failures as its agreed membership or not: never do both sides go on
 * (safety), and when both sides took them as agreed, exactly one goes on
 * (liveness), whatever the order of the declarations.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#include "runtime/quorum.h"

#define SETTLE 1000u
#define MAXN   10

/* One rank of `side` (a bit mask of ranks): it learns the failures in
 * `prior` first (each long after the last if `settled`, else all at
 * once), then, just after, every rank outside `side` and `prior` (in
 * ascending or descending order). Returns 1 if it still goes on, 0 if it
 * fenced, -1 if it fenced already on the prior failures. */
static int side_goes_on(int n, unsigned prior, unsigned side, int settled,
                        int descending)
{
    rt_quorum_t q;
    uint64_t now = 0;
    int ok = 1;

    assert_int_equal(rt_quorum_init(&q, n, SETTLE, now), UCFT_OK);
    for (int r = 0; r < n; r++) {
        if (!(prior >> r & 1))
            continue;
        now += settled ? 2 * SETTLE : 1;
        ok = rt_quorum_on_failed(&q, r, now);
        if (!ok)
            break;
    }
    if (!ok) {
        rt_quorum_cleanup(&q);
        return -1;
    }
    now += 2 * SETTLE; /* the partition comes long after */
    for (int i = 0; i < n; i++) {
        int r = descending ? n - 1 - i : i;
        if ((side | prior) >> r & 1)
            continue;
        ok = rt_quorum_on_failed(&q, r, ++now);
    }
    rt_quorum_cleanup(&q);
    return ok;
}

static void test_quorum_partitions_exhaustive(void **state)
{
    unsigned long cases = 0;

    for (int n = 1; n <= MAXN; n++) {
        unsigned all = (1u << n) - 1;
        for (unsigned prior = 0; prior <= all; prior++) {
            if (__builtin_popcount(prior) > 2 || prior == all)
                continue;
            unsigned live = all & ~prior;
            /* Every split of `live` into a (non-empty) and b = the rest. */
            for (unsigned a = live; a != 0; a = (a - 1) & live) {
                unsigned b = live & ~a;
                for (int sa = 0; sa < 2; sa++) {
                    for (int sb = 0; sb < 2; sb++) {
                        int ga = side_goes_on(n, prior, a, sa, 0);
                        int gb = b != 0 ? side_goes_on(n, prior, b, sb, 1) : 0;
                        assert_int_equal(ga, side_goes_on(n, prior, a, sa, 1));
                        cases++;
                        if (ga == 1 && gb == 1)
                            fail_msg("split brain: n %d prior %#x sides %#x "
                                     "%#x settled %d %d",
                                     n, prior, a, b, sa, sb);
                        /* Both agreed on the prior failures and survived
                         * them: exactly one side goes on. */
                        if (sa && sb && b != 0 && ga >= 0 && gb >= 0 &&
                            ga + gb != 1)
                            fail_msg("no side goes on: n %d prior %#x "
                                     "sides %#x %#x",
                                     n, prior, a, b);
                    }
                }
            }
        }
    }
    assert_true(cases > 100000);
}

/* The rule's named cases, and what it keeps. */
static void test_quorum_rules(void **state)
{
    rt_quorum_t q;

    /* 4 ranks, 2 + 2: the half with rank 0 goes on, the other fences. */
    assert_int_equal(rt_quorum_init(&q, 4, SETTLE, 0), UCFT_OK);
    assert_int_equal(rt_quorum_on_failed(&q, 2, 1), 1);
    assert_int_equal(rt_quorum_on_failed(&q, 3, 2), 1);
    rt_quorum_cleanup(&q);
    assert_int_equal(rt_quorum_init(&q, 4, SETTLE, 0), UCFT_OK);
    assert_int_equal(rt_quorum_on_failed(&q, 0, 1), 1); /* 3 of 4 */
    assert_int_equal(rt_quorum_on_failed(&q, 1, 2), 0); /* 2, no rank 0 */
    /* Sticky: nothing brings it back, nothing else counts. */
    assert_int_equal(rt_quorum_on_failed(&q, 1, 3), 0);
    assert_int_equal(rt_quorum_on_failed(&q, 3, 5000), 0);
    rt_quorum_cleanup(&q);

    /* Step by step: 5 ranks lose one at a time, each after the view
     * settled: 5 -> 4 -> 3 -> 2 (tie of 4 held by rank 0 alive) -> 1
     * (tie of 2: rank 0 holds it). */
    assert_int_equal(rt_quorum_init(&q, 5, SETTLE, 0), UCFT_OK);
    uint64_t t = 0;
    for (int r = 4; r >= 1; r--)
        assert_int_equal(rt_quorum_on_failed(&q, r, t += 2 * SETTLE), 1);
    assert_int_equal(q.live, 1);
    rt_quorum_cleanup(&q);

    /* The same failures at once: 1 of 5 is no majority. */
    assert_int_equal(rt_quorum_init(&q, 5, SETTLE, 0), UCFT_OK);
    assert_int_equal(rt_quorum_on_failed(&q, 4, 1), 1);
    assert_int_equal(rt_quorum_on_failed(&q, 3, 2), 1);
    assert_int_equal(rt_quorum_on_failed(&q, 2, 3), 0);
    rt_quorum_cleanup(&q);

    /* Duplicates and ranks outside the job change nothing. */
    assert_int_equal(rt_quorum_init(&q, 3, SETTLE, 0), UCFT_OK);
    assert_int_equal(rt_quorum_on_failed(&q, 2, 1), 1);
    assert_int_equal(rt_quorum_on_failed(&q, 2, 2), 1);
    assert_int_equal(rt_quorum_on_failed(&q, -1, 3), 1);
    assert_int_equal(rt_quorum_on_failed(&q, 3, 4), 1);
    assert_int_equal(q.live, 2);
    rt_quorum_cleanup(&q);

    assert_int_equal(rt_quorum_init(&q, 0, SETTLE, 0), UCFT_ERR_INVALID_PARAM);
}

/* The majority gate (rt_quorum_covers): for every job of 1 to 8 ranks,
 * every set of up to 2 earlier failures, taken as the agreed membership
 * or not, every set H of holders and every set W of ranks: if H covers
 * and W would go on (its members a strict majority of the membership, or
 * half with the tie holder), then W holds one of H. With the world as
 * membership, covering is exactly holding the quorum; the membership
 * itself always covers. */
static int goes_on(const rt_quorum_t *q, unsigned w)
{
    int k = 0;
    for (int r = 0; r < q->size; r++)
        k += q->member[r] && (w >> r & 1);
    return 2 * k > q->base ||
           (2 * k == q->base && q->member[q->lowest] && (w >> q->lowest & 1));
}

static void test_quorum_covers_exhaustive(void **state)
{
    unsigned long cases = 0;
    unsigned char held[8];
    (void)state;
    for (int n = 1; n <= 8; n++)
        for (unsigned prior = 0; prior < 1u << n; prior++) {
            if (__builtin_popcount(prior) > 2 ||
                2 * __builtin_popcount(prior) >= n)
                continue;
            for (int agreed = 0; agreed <= 1; agreed++) {
                rt_quorum_t q;
                unsigned members = 0;
                assert_int_equal(rt_quorum_init(&q, n, 0, 0), UCFT_OK);
                for (int r = 0; r < n; r++)
                    if (prior >> r & 1)
                        assert_int_equal(rt_quorum_on_failed(&q, r, 1), 1);
                if (agreed)
                    rt_quorum_agree(&q, 2);
                for (int r = 0; r < n; r++)
                    members |= (unsigned)q.member[r] << r;
                for (unsigned h = 0; h < 1u << n; h++) {
                    for (int r = 0; r < n; r++)
                        held[r] = h >> r & 1;
                    int c = rt_quorum_covers(&q, held);
                    if (h == members)
                        assert_int_equal(c, 1);
                    if (members == (1u << n) - 1)
                        assert_int_equal(c, goes_on(&q, h));
                    for (unsigned w = 0; c && w < 1u << n; w++, cases++)
                        if (goes_on(&q, w) && (w & h) == 0)
                            fail_msg("n=%d prior %#x agreed %d: holders %#x "
                                     "cover, yet %#x goes on without one",
                                     n, prior, agreed, h, w);
                }
                rt_quorum_cleanup(&q);
            }
        }
    printf("majority gate: %lu (holders, side) pairs, none goes on without "
           "a holder\n",
           cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quorum_partitions_exhaustive),
        cmocka_unit_test(test_quorum_rules),
        cmocka_unit_test(test_quorum_covers_exhaustive),
    };
    return cmocka_run_group_tests_name("quorum", tests, NULL, NULL);
}
