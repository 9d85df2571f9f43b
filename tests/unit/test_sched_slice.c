/* Per-thread time slices (runtime/linux/sched_slice.c): asked for, kept to the
 * calling thread, given back only by that thread. Kernels without
 * per-thread slices (before Linux 6.12) skip the checks that need them. */
#include "cmocka_inc.h"

#include "runtime/linux/sched_slice.h"
#include "tests/thread_slice.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>

static uint64_t my_slice(void)
{
    uint64_t v = test_thread_slice();
    assert_true(v != UINT64_MAX);
    return v;
}

static ucft_log_t g_log;

static int slices_supported(void)
{
    return my_slice() != 0;
}

static void test_set_and_restore(void **state)
{
    (void)state;
    if (!slices_supported())
        skip();
    uint64_t before = my_slice();
    rt_slice_t saved;
    rt_slice_set(&g_log, "test", 300000, &saved);
    assert_true(saved.set);
    assert_int_equal(saved.old_ns, before);
    assert_int_equal(my_slice(), 300000);
    rt_slice_restore(&g_log, &saved);
    assert_int_equal(my_slice(), before);
}

static void test_zero_leaves_alone(void **state)
{
    (void)state;
    uint64_t before = my_slice();
    rt_slice_t saved = {.set = 1};
    rt_slice_set(&g_log, "test", 0, &saved);
    assert_false(saved.set);
    assert_int_equal(my_slice(), before);
    rt_slice_restore(&g_log, &saved); /* nothing to give back */
    assert_int_equal(my_slice(), before);
    rt_slice_restore(&g_log, NULL);
}

typedef struct other {
    const rt_slice_t *saved;
    uint64_t before, after;
} other_t;

static void *other_thread(void *arg)
{
    other_t *o = arg;
    o->before = my_slice();
    rt_slice_restore(&g_log, o->saved); /* not this thread's: no effect */
    o->after = my_slice();
    return NULL;
}

static void test_only_the_same_thread(void **state)
{
    (void)state;
    if (!slices_supported())
        skip();
    uint64_t before = my_slice();
    rt_slice_t saved;
    rt_slice_set(&g_log, "test", 200000, &saved);
    assert_true(saved.set);

    /* A thread started now inherits the slice; a restore from it changes
     * neither thread. */
    other_t o = {.saved = &saved};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread, &o), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(o.before, 200000);
    assert_int_equal(o.after, 200000);
    assert_int_equal(my_slice(), 200000);

    rt_slice_restore(&g_log, &saved);
    assert_int_equal(my_slice(), before);
}

/* A thread's SCHED_RESET_ON_FORK survives both calls (its policy and
 * flags are not ours to change). */
static void test_keeps_reset_on_fork(void **state)
{
    (void)state;
    if (!slices_supported())
        skip();
    struct sched_param p = {0};
    assert_int_equal(
        sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &p), 0);
    rt_slice_t saved;
    rt_slice_set(&g_log, "test", 150000, &saved);
    assert_true(saved.set);
    assert_int_equal(my_slice(), 150000);
    assert_int_equal(sched_getscheduler(0), SCHED_OTHER | SCHED_RESET_ON_FORK);
    rt_slice_restore(&g_log, &saved);
    assert_int_equal(sched_getscheduler(0), SCHED_OTHER | SCHED_RESET_ON_FORK);
    assert_int_equal(sched_setscheduler(0, SCHED_OTHER, &p), 0);
}

int main(void)
{
    ucft__log_init(&g_log, UCFT_LOG_WARN, "test");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_and_restore),
        cmocka_unit_test(test_zero_leaves_alone),
        cmocka_unit_test(test_only_the_same_thread),
        cmocka_unit_test(test_keeps_reset_on_fork),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
