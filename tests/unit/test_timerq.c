#include "cmocka_inc.h"
#include "runtime/base/timerq.h"

#include <stdlib.h>

typedef struct rec {
    uint64_t order[64];
    int n;
} rec_t;

static void record(ucft_timer_t *t)
{
    rec_t *r = t->arg;
    r->order[r->n++] = t->deadline;
}

static void test_timerq_fires_in_deadline_order(void **state)
{
    (void)state;
    ucft_timerq_t q;
    ucft_timer_t t[32];
    rec_t r = {.n = 0};
    ucft__timerq_init(&q);
    srand(7);
    for (int i = 0; i < 32; i++) {
        t[i] = (ucft_timer_t){.cb = record, .arg = &r};
        assert_int_equal(ucft__timerq_add(&q, &t[i], (uint64_t)(rand() % 1000)),
                         UCFT_OK);
    }
    assert_int_equal(ucft__timerq_expire(&q, 1000, 1000), 32);
    for (int i = 1; i < r.n; i++)
        assert_true(r.order[i - 1] <= r.order[i]);
    assert_int_equal(q.count, 0);
    ucft__timerq_cleanup(&q);
}

static void test_timerq_only_due_timers_fire(void **state)
{
    (void)state;
    ucft_timerq_t q;
    ucft_timer_t a = {.cb = record}, b = {.cb = record};
    rec_t r = {.n = 0};
    a.arg = b.arg = &r;
    ucft__timerq_init(&q);
    ucft__timerq_add(&q, &a, 10);
    ucft__timerq_add(&q, &b, 20);
    assert_int_equal(ucft__timerq_next(&q), 10);
    assert_int_equal(ucft__timerq_expire(&q, 15, 100), 1);
    assert_false(ucft_timer_armed(&a));
    assert_true(ucft_timer_armed(&b));
    assert_int_equal(ucft__timerq_next(&q), 20);
    ucft__timerq_cleanup(&q);
}

static void test_timerq_remove_and_rearm(void **state)
{
    (void)state;
    ucft_timerq_t q;
    ucft_timer_t t[5];
    rec_t r = {.n = 0};
    ucft__timerq_init(&q);
    for (int i = 0; i < 5; i++) {
        t[i] = (ucft_timer_t){.cb = record, .arg = &r};
        ucft__timerq_add(&q, &t[i], (uint64_t)(i + 1) * 10);
    }
    ucft__timerq_remove(&q, &t[0]);
    ucft__timerq_remove(&q, &t[0]);   /* harmless twice */
    ucft__timerq_add(&q, &t[4], 5);   /* re-arm earlier */
    ucft__timerq_add(&q, &t[1], 100); /* re-arm later */
    assert_int_equal(ucft__timerq_next(&q), 5);
    ucft__timerq_expire(&q, UINT64_MAX - 1, 100);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.order[0], 5);
    assert_int_equal(r.order[1], 30);
    assert_int_equal(r.order[2], 40);
    assert_int_equal(r.order[3], 100);
    assert_int_equal(ucft__timerq_next(&q), UINT64_MAX);
    ucft__timerq_cleanup(&q);
}

typedef struct periodic {
    ucft_timer_t t;
    ucft_timerq_t *q;
    int fired;
} periodic_t;

static void periodic_cb(ucft_timer_t *t)
{
    periodic_t *p = t->arg;
    p->fired++;
    ucft__timerq_add(p->q, t, t->deadline + 10);
}

static void test_timerq_callback_rearm_is_bounded(void **state)
{
    (void)state;
    ucft_timerq_t q;
    periodic_t p = {.q = &q};
    p.t = (ucft_timer_t){.cb = periodic_cb, .arg = &p};
    ucft__timerq_init(&q);
    ucft__timerq_add(&q, &p.t, 0);
    /* Due at 0, 10, ..., 100: 11 firings, but at most 5 per call. */
    assert_int_equal(ucft__timerq_expire(&q, 100, 5), 5);
    assert_int_equal(ucft__timerq_expire(&q, 100, 100), 6);
    assert_int_equal(p.fired, 11);
    assert_int_equal(ucft__timerq_next(&q), 110);
    ucft__timerq_cleanup(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timerq_fires_in_deadline_order),
        cmocka_unit_test(test_timerq_only_due_timers_fire),
        cmocka_unit_test(test_timerq_remove_and_rearm),
        cmocka_unit_test(test_timerq_callback_rearm_is_bounded),
    };
    return cmocka_run_group_tests_name("timerq", tests, NULL, NULL);
}
