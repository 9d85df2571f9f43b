/* The kernel's view of a local rank (runtime/linux/kview.c): the rule on
 * its own, then real processes: a holder whose heartbeat-like thread beats
 * is runnable or sleeping (alive), stopped with SIGSTOP (dead), a zombie
 * (dead), reaped (gone); and this thread's run-queue wait. */
#include "cmocka_inc.h"

#include "runtime/linux/alive.h"
#include "runtime/linux/kview.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ull

static rt_kview_verdict_t judge_s(char state, int progressed, int started,
                                  uint64_t silent)
{
    rt_kview_limits_t lim = {.limit_ns = 5000 * MS,
                             .start_limit_ns = 60000 * MS};
    rt_kview_obs_t o = {.state = state,
                        .progressed = progressed,
                        .started = started,
                        .silent_ns = silent};
    const char *why = NULL;
    rt_kview_verdict_t v = rt_kview_judge(&o, &lim, &why);
    assert_non_null(why);
    return v;
}

static rt_kview_verdict_t judge(char state, int progressed, uint64_t silent)
{
    return judge_s(state, progressed, 1, silent);
}

static void test_kview_rule(void **state)
{
    /* Stopped, traced, zombie, gone: declared after the timeout as ever. */
    assert_int_equal(judge('T', 0, 150 * MS), RT_KVIEW_DEAD);
    assert_int_equal(judge('T', 1, 150 * MS), RT_KVIEW_DEAD);
    assert_int_equal(judge('t', 0, 150 * MS), RT_KVIEW_DEAD);
    assert_int_equal(judge('Z', 0, 150 * MS), RT_KVIEW_DEAD);
    assert_int_equal(judge('X', 0, 150 * MS), RT_KVIEW_DEAD);
    assert_int_equal(judge(0, 0, 150 * MS), RT_KVIEW_DEAD);
    /* Runnable, sleeping, in a disk wait, or turning its loop: held. */
    assert_int_equal(judge('R', 0, 150 * MS), RT_KVIEW_ALIVE);
    assert_int_equal(judge('S', 0, 900 * MS), RT_KVIEW_ALIVE);
    assert_int_equal(judge('D', 0, 900 * MS), RT_KVIEW_ALIVE);
    assert_int_equal(judge('S', 1, 900 * MS), RT_KVIEW_ALIVE);
    /* ... but not beyond the limit. */
    assert_int_equal(judge('R', 1, 5001 * MS), RT_KVIEW_DEAD);
    assert_int_equal(judge('S', 0, 5001 * MS), RT_KVIEW_DEAD);
    assert_int_equal(judge('R', 0, 5000 * MS), RT_KVIEW_ALIVE);
    /* A heartbeat thread still starting (no beat yet): the start bound. */
    assert_int_equal(judge_s('S', 0, 0, 20000 * MS), RT_KVIEW_ALIVE);
    assert_int_equal(judge_s('S', 0, 0, 60001 * MS), RT_KVIEW_DEAD);
    assert_int_equal(judge_s('T', 0, 0, 150 * MS), RT_KVIEW_DEAD);
    /* Unreadable: the timeout decides. */
    assert_int_equal(judge('?', 0, 150 * MS), RT_KVIEW_UNKNOWN);
}

/* A child that holds slots (all but slot 0) and beats; it spins when
 * `spin`, else sleeps between beats. Reports its memfd, runs until
 * killed. */
static pid_t start_beater(int spin, int *fd)
{
    int info[2];
    assert_int_equal(pipe(info), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        rt_alive_t a;
        close(info[0]);
        if (rt_alive_create(&a, 2) != UCFT_OK)
            _exit(2);
        int f = rt_alive_hold(&a, 0) == UCFT_OK ? a.fd : -1;
        if (write(info[1], &f, sizeof(f)) != sizeof(f))
            _exit(3);
        for (;;) {
            rt_alive_beat(&a);
            if (!spin)
                nanosleep(&(struct timespec){0, 2 * MS}, NULL);
        }
    }
    close(info[1]);
    assert_int_equal(read(info[0], fd, sizeof(*fd)), sizeof(*fd));
    close(info[0]);
    assert_true(*fd >= 0);
    return pid;
}

/* Polls the state of `pid`'s thread `tid` until it is `want` (5 s). */
static char wait_state(pid_t pid, pid_t tid, const char *want)
{
    char s = 0;
    for (int i = 0; i < 5000; i++) {
        s = rt_kview_state(pid, tid);
        if (s != 0 && strchr(want, s) != NULL)
            return s;
        nanosleep(&(struct timespec){0, MS}, NULL);
    }
    return s;
}

static void test_kview_processes(void **state)
{
    int fd;
    pid_t pid = start_beater(0, &fd);
    rt_alive_peer_t p;
    assert_int_equal(rt_alive_attach(&p, pid, fd, 2, 1), UCFT_OK);
    /* The lock word names the holding thread (the child's only one). */
    assert_int_equal(rt_alive_holder_tid(&p), pid);
    uint64_t b0 = rt_alive_beats(&p);
    nanosleep(&(struct timespec){0, 50 * MS}, NULL);
    assert_true(rt_alive_beats(&p) > b0);
    /* Sleeping between beats: S (or R when caught running). */
    assert_true(strchr("SR", wait_state(pid, pid, "S")) != NULL);
    /* Stopped: T, and the counter stands still. */
    assert_int_equal(kill(pid, SIGSTOP), 0);
    assert_int_equal(wait_state(pid, pid, "T"), 'T');
    uint64_t b1 = rt_alive_beats(&p);
    nanosleep(&(struct timespec){0, 30 * MS}, NULL);
    assert_int_equal(rt_alive_beats(&p), b1);
    assert_int_equal(kill(pid, SIGCONT), 0);
    assert_true(strchr("SR", wait_state(pid, pid, "SR")) != NULL);
    /* Killed, not reaped: a zombie; reaped: gone. */
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(wait_state(pid, 0, "Z"), 'Z');
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    assert_int_equal(rt_kview_state(pid, pid), 0);
    rt_alive_detach(&p);

    /* A spinning child is runnable. */
    pid = start_beater(1, &fd);
    assert_int_equal(wait_state(pid, pid, "R"), 'R');
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* This thread's run-queue wait: readable and never going back. */
static void test_kview_own_delay(void **state)
{
    int fd = rt_kview_delay_open();
    if (fd < 0) {
        fprintf(stderr, "# no schedstat on this kernel\n");
        return;
    }
    uint64_t a = rt_kview_delay(fd);
    for (int i = 0; i < 200; i++)
        sched_yield();
    assert_true(rt_kview_delay(fd) >= a);
    close(fd);
    assert_int_equal(rt_kview_delay(-1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kview_rule),
        cmocka_unit_test(test_kview_processes),
        cmocka_unit_test(test_kview_own_delay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
