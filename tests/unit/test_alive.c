/* Alive slots (runtime/linux/alive.c) and io_uring futex waits
 * (runtime/linux/uring_futex.c) between real processes: a killed holder is
 * reported as dying, a clean release as ended, bad attachments fail. */
#include "cmocka_inc.h"

#include "runtime/linux/alive.h"
#include "runtime/linux/uring_futex.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NSLOTS   3u
#define MY_SLOT  1u
#define BOUND_MS 5000
#define BALLAST  (128u << 20) /* makes the holder's teardown slow */

typedef struct holder {
    pid_t pid;
    int fd;      /* the holder's memfd number */
    int go[2];   /* parent -> child: release and exit */
    int info[2]; /* child -> parent: fd number */
} holder_t;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Child: creates and holds the slots (all but slot 0), touches ballast,
 * reports its fd, then releases them cleanly when told to. */
static void holder_main(int go, int info)
{
    rt_alive_t a;
    char *ballast = malloc(BALLAST);
    if (ballast == NULL || rt_alive_create(&a, NSLOTS) != UCFT_OK)
        _exit(2);
    memset(ballast, 1, BALLAST);
    int fd = rt_alive_hold(&a, 0) == UCFT_OK ? a.fd : -1;
    if (write(info, &fd, sizeof(fd)) != sizeof(fd))
        _exit(3);
    char c;
    if (read(go, &c, 1) != 1)
        _exit(4);
    rt_alive_release(&a);
    rt_alive_destroy(&a);
    free(ballast);
    _exit(0);
}

static void start_holder(holder_t *h)
{
    assert_int_equal(pipe(h->go), 0);
    assert_int_equal(pipe(h->info), 0);
    h->pid = fork();
    assert_true(h->pid >= 0);
    if (h->pid == 0) {
        close(h->go[1]);
        close(h->info[0]);
        holder_main(h->go[0], h->info[1]);
    }
    close(h->go[0]);
    close(h->info[1]);
    assert_int_equal(read(h->info[0], &h->fd, sizeof(h->fd)), sizeof(h->fd));
    assert_true(h->fd >= 0); /* rt_alive_hold recognised the lock word */
}

static void end_holder(holder_t *h, int expect_status)
{
    int st = 0;
    assert_int_equal(waitpid(h->pid, &st, 0), h->pid);
    if (expect_status >= 0) {
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), expect_status);
    } else {
        assert_true(WIFSIGNALED(st));
    }
    close(h->go[1]);
    close(h->info[0]);
}

/* Waits for one completion of `u`; returns its result. */
static int wait_one(rt_uring_t *u, uint64_t expect_tag)
{
    struct pollfd p = {.fd = rt_uring_fd(u), .events = POLLIN};
    assert_int_equal(poll(&p, 1, BOUND_MS), 1);
    uint64_t tag = 0;
    int res = 0;
    assert_int_equal(rt_uring_reap(u, &tag, &res, 1), 1);
    assert_int_equal(tag, expect_tag);
    return res;
}

static int ring_or_skip(rt_uring_t *u)
{
    if (rt_uring_open(u, 4) != UCFT_OK) {
        fprintf(stderr, "# no io_uring futex waits on this kernel\n");
        return 0;
    }
    return 1;
}

/* A holder process, our slot of it mapped, a futex wait on it posted. */
static void watch_holder(holder_t *h, rt_uring_t *u, rt_alive_peer_t *p,
                         uint64_t tag)
{
    start_holder(h);
    assert_int_equal(rt_alive_attach(p, h->pid, h->fd, NSLOTS, MY_SLOT),
                     UCFT_OK);
    assert_int_equal(rt_alive_state(p, 0), RT_ALIVE_HELD);
    uint32_t val = rt_alive_prepare_wait(p);
    assert_int_equal(rt_uring_futex_wait(u, p->word, val, tag), UCFT_OK);
}

/* A pidfd of the holder, then SIGKILL. */
static int kill_holder(const holder_t *h)
{
    int pidfd = (int)syscall(SYS_pidfd_open, h->pid, 0);
    assert_true(pidfd >= 0);
    assert_int_equal(kill(h->pid, SIGKILL), 0);
    return pidfd;
}

static void finish(holder_t *h, rt_uring_t *u, rt_alive_peer_t *p, int pidfd,
                   int expect_status)
{
    if (pidfd >= 0)
        close(pidfd);
    rt_alive_detach(p);
    rt_uring_close(u);
    end_holder(h, expect_status);
}

static void test_killed_holder_is_dying(void **state)
{
    (void)state;
    holder_t h;
    rt_uring_t u;
    rt_alive_peer_t p;
    if (!ring_or_skip(&u))
        skip();
    watch_holder(&h, &u, &p, 7);
    double t0 = now_ms();
    int pidfd = kill_holder(&h);
    int res = wait_one(&u, 7);
    double t1 = now_ms();
    assert_true(res == 0 || res == -EAGAIN);
    assert_int_equal(rt_alive_state(&p, 1), RT_ALIVE_DYING);
    struct pollfd pp = {.fd = pidfd, .events = POLLIN};
    int exited_already = poll(&pp, 1, 0);
    assert_int_equal(poll(&pp, 1, BOUND_MS), 1);
    double t2 = now_ms();
    fprintf(stderr,
            "# kill -> slot dying %.3f ms, -> process ended %.3f ms "
            "(ended already when the slot woke: %d)\n",
            t1 - t0, t2 - t0, exited_already);
    finish(&h, &u, &p, pidfd, -1);
}

static void test_clean_release_is_ended(void **state)
{
    (void)state;
    holder_t h;
    rt_uring_t u;
    rt_alive_peer_t p;
    if (!ring_or_skip(&u))
        skip();
    watch_holder(&h, &u, &p, 9);
    assert_int_equal(write(h.go[1], "x", 1), 1);
    int res = wait_one(&u, 9);
    assert_true(res == 0 || res == -EAGAIN);
    assert_int_equal(rt_alive_state(&p, 1), RT_ALIVE_ENDED);
    finish(&h, &u, &p, -1, 0);
}

/* The holder dies between our look at its slot and our wait: the wait
 * must not sleep on the dead word (it would never be woken again). */
static void test_dead_before_wait(void **state)
{
    (void)state;
    holder_t h;
    rt_uring_t u;
    rt_alive_peer_t p;
    if (!ring_or_skip(&u))
        skip();
    start_holder(&h);
    assert_int_equal(rt_alive_attach(&p, h.pid, h.fd, NSLOTS, MY_SLOT),
                     UCFT_OK);
    assert_int_equal(rt_alive_state(&p, 0), RT_ALIVE_HELD);
    /* A first waiter mark, then taken back (as when a post fails). */
    uint32_t val = rt_alive_prepare_wait(&p);
    assert_true(val & 0x80000000u);
    rt_alive_cancel_wait(&p, val);
    assert_int_equal(*p.word & 0x80000000u, 0);
    int pidfd = kill_holder(&h);
    struct pollfd pp = {.fd = pidfd, .events = POLLIN};
    assert_int_equal(poll(&pp, 1, BOUND_MS), 1); /* gone for sure */
    val = rt_alive_prepare_wait(&p);
    assert_int_equal(val, RT_ALIVE_NO_WAIT);
    assert_int_equal(rt_uring_futex_wait(&u, p.word, val, 5), UCFT_OK);
    assert_int_equal(wait_one(&u, 5), -EAGAIN);
    assert_int_equal(rt_alive_state(&p, 1), RT_ALIVE_DYING);
    finish(&h, &u, &p, pidfd, -1);
}

/* A wait on a value that is no longer there completes at once. */
static void test_stale_value_completes(void **state)
{
    (void)state;
    rt_uring_t u;
    if (!ring_or_skip(&u))
        skip();
    uint32_t word = 5;
    assert_int_equal(rt_uring_futex_wait(&u, &word, 4, 3), UCFT_OK);
    assert_int_equal(wait_one(&u, 3), -EAGAIN);
    rt_uring_close(&u);
}

/* Own slots: the skipped one stays unheld, the others carry our tid. */
static void test_hold_and_release(void **state)
{
    (void)state;
    rt_alive_t a;
    rt_alive_peer_t self0, self2;
    assert_int_equal(rt_alive_create(&a, NSLOTS), UCFT_OK);
    assert_int_equal(rt_alive_attach(&self0, getpid(), a.fd, NSLOTS, 0),
                     UCFT_OK);
    assert_int_equal(rt_alive_attach(&self2, getpid(), a.fd, NSLOTS, 2),
                     UCFT_OK);
    assert_int_equal(rt_alive_state(&self2, 0), RT_ALIVE_UNHELD);
    /* Nothing held: a value no word takes, so a wait completes at once. */
    assert_int_equal(rt_alive_prepare_wait(&self2), RT_ALIVE_NO_WAIT);
    assert_int_equal(rt_alive_hold(&a, 0), UCFT_OK);
    assert_int_equal(rt_alive_state(&self0, 0), RT_ALIVE_UNHELD);
    assert_int_equal(rt_alive_state(&self2, 0), RT_ALIVE_HELD);
    assert_int_equal(*self2.word & 0x3fffffffu, (uint32_t)syscall(SYS_gettid));
    rt_alive_release(&a);
    assert_int_equal(rt_alive_state(&self2, 1), RT_ALIVE_ENDED);
    rt_alive_detach(&self0);
    rt_alive_detach(&self2);
    rt_alive_destroy(&a);
}

static void test_bad_input(void **state)
{
    (void)state;
    rt_alive_t a;
    rt_alive_peer_t p;
    assert_int_equal(rt_alive_create(&a, 0), UCFT_ERR_INVALID_PARAM);
    assert_int_equal(rt_alive_create(&a, RT_ALIVE_MAX_SLOTS + 1),
                     UCFT_ERR_INVALID_PARAM);
    assert_int_equal(rt_alive_create(&a, NSLOTS), UCFT_OK);
    /* Wrong announced size, slot out of range, no such fd. */
    assert_int_equal(rt_alive_attach(&p, getpid(), a.fd, NSLOTS + 1, 0),
                     UCFT_ERR_INVALID_PARAM);
    assert_int_equal(rt_alive_attach(&p, getpid(), a.fd, NSLOTS, NSLOTS),
                     UCFT_ERR_INVALID_PARAM);
    assert_int_equal(rt_alive_attach(&p, getpid(), 999, NSLOTS, 0),
                     UCFT_ERR_NOT_SUPPORTED);
    assert_int_equal(rt_alive_attach(&p, getpid(), -1, NSLOTS, 0),
                     UCFT_ERR_INVALID_PARAM);
    /* Not a memfd of the right size: stdin-like fds are refused. */
    assert_int_equal(rt_alive_attach(&p, getpid(), 0, NSLOTS, 0) == UCFT_OK, 0);
    rt_alive_destroy(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_killed_holder_is_dying),
        cmocka_unit_test(test_clean_release_is_ended),
        cmocka_unit_test(test_dead_before_wait),
        cmocka_unit_test(test_stale_value_completes),
        cmocka_unit_test(test_hold_and_release),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
