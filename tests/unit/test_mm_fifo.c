/*
 * The shared-memory FIFO as mm_fifo.c reads and writes it, on a segment
 * laid out by hand as UCX 1.13 lays its own (the real FIFOs are covered by
 * tool.shmkill.claim* and the hold=1 jobs), and fifo_quiet.c's verdict on
 * a real second process that maps the segment: stopped, asleep, gone.
 */
#include "transport/ucp/fifo_quiet.h"
#include "transport/ucp/mm_fifo.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define SEG_SIZE (3 * 4096) /* 192 + 64 * 128, rounded up */

typedef struct seg {
    int fd;
    uint8_t *base;
} seg_t;

/* A FIFO of this process: 64 slots of 128 bytes, none written yet (UCX
 * starts every owner flag at 1: not written in round 0). */
static void seg_make(seg_t *s, const char *name, pid_t owner)
{
    s->fd = memfd_create(name, 0);
    assert_true(s->fd >= 0);
    assert_int_equal(ftruncate(s->fd, SEG_SIZE), 0);
    s->base =
        mmap(NULL, SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    assert_true(s->base != MAP_FAILED);
    memset(s->base, 0, SEG_SIZE);
    memcpy(s->base + 136, &owner, sizeof(owner));
    for (int i = 0; i < 64; i++)
        s->base[192 + i * 128] = MM_FIFO_FLAG_OWNER;
}

static void seg_free(seg_t *s)
{
    munmap(s->base, SEG_SIZE);
    close(s->fd);
}

static int take(const mm_fifo_t *f, void *arg)
{
    *(mm_fifo_t *)arg = *f;
    return 1;
}

static void test_found_by_owner(void **state)
{
    (void)state;
    seg_t s;
    seg_make(&s, "ucx_shm_posix_test", getpid());
    mm_fifo_t f = {0};
    assert_int_equal(mm_fifo_each(getpid(), take, &f), 1);
    assert_ptr_equal(f.ctl, s.base);
    assert_int_equal(f.size, 64);
    assert_int_equal(f.elem_size, 128);
    assert_int_equal(f.shift, 6);
    assert_true(f.inode != 0);
    /* Not another process's, and not found for another owner. */
    assert_int_equal(mm_fifo_each(0, take, &f), 0);
    assert_int_equal(mm_fifo_each(getpid() + 1, take, &f), 0);
    seg_free(&s);
}

static void test_too_small_or_inconsistent(void **state)
{
    (void)state;
    seg_t s;
    seg_make(&s, "ucx_shm_posix_test", getpid());
    mm_fifo_t f;
    uint64_t head = 70, tail = 2; /* more than 64 ahead: not a FIFO */
    memcpy(s.base, &head, sizeof(head));
    memcpy(s.base + 128, &tail, sizeof(tail));
    assert_int_equal(mm_fifo_each(getpid(), take, &f), 0);
    tail = 6;
    memcpy(s.base + 128, &tail, sizeof(tail));
    assert_int_equal(mm_fifo_each(getpid(), take, &f), 1);
    assert_int_equal(mm_fifo_head(&f), 70);
    assert_int_equal(mm_fifo_tail(&f), 6);
    /* The "receiver asleep" bit is not part of the head. */
    head |= 1ull << 63;
    memcpy(s.base, &head, sizeof(head));
    assert_int_equal(mm_fifo_head(&f), 70);
    seg_free(&s);
}

static void test_claim_write_rounds(void **state)
{
    (void)state;
    seg_t s;
    seg_make(&s, "ucx_shm_posix_test", getpid());
    mm_fifo_t f;
    assert_int_equal(mm_fifo_each(getpid(), take, &f), 1);
    /* Claims up to the size, then full until the receiver consumes. */
    for (int i = 0; i < 64; i++)
        assert_int_equal(mm_fifo_claim(&f), 0);
    assert_int_equal(mm_fifo_head(&f), 64);
    assert_int_equal(mm_fifo_claim(&f), -1);
    assert_false(mm_fifo_written(&f, 0));
    const char msg[] = "0123456789abcdef";
    mm_fifo_write(&f, 0, 2, msg, 16);
    assert_true(mm_fifo_written(&f, 0));
    assert_false(mm_fifo_written(&f, 1));
    uint8_t *slot = mm_fifo_slot(&f, 0);
    uint16_t len;
    memcpy(&len, slot + 2, sizeof(len));
    assert_int_equal(slot[0], MM_FIFO_FLAG_INLINE); /* owner bit 0: round 0 */
    assert_int_equal(slot[1], 2);
    assert_int_equal(len, 16);
    assert_memory_equal(slot + MM_FIFO_DATA, msg, 16);
    /* The receiver's descriptor fields (bytes 4..27) are left alone. */
    for (int b = 4; b < MM_FIFO_DATA; b++)
        assert_int_equal(slot[b], 0);
    /* Round 1 uses the same place with the owner bit 1: slot 64 is not
     * written by what round 0 left there, and is once written. */
    uint64_t tail = 32;
    memcpy(s.base + 128, &tail, sizeof(tail));
    assert_int_equal(mm_fifo_claim(&f), 0);
    assert_ptr_equal(mm_fifo_slot(&f, 64), slot);
    assert_false(mm_fifo_written(&f, 64));
    mm_fifo_write(&f, 64, 2, msg, 16);
    assert_true(mm_fifo_written(&f, 64));
    assert_int_equal(slot[0], MM_FIFO_FLAG_INLINE | MM_FIFO_FLAG_OWNER);
    seg_free(&s);
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* A child that maps the segment: stopped, then asleep, then gone. */
static void test_quiet_verdicts(void **state)
{
    (void)state;
    seg_t s;
    seg_make(&s, "ucx_shm_posix_quiet", getpid());
    mm_fifo_t f;
    assert_int_equal(mm_fifo_each(getpid(), take, &f), 1);
    static fifo_quiet_t q;
    pid_t who = 0;
    /* Nobody else maps it. */
    assert_int_equal(fifo_quiet_look(&q, f.dev, f.inode, &who), FIFO_QUIET);

    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) { /* inherits the mapping */
        raise(SIGSTOP);
        for (;;)
            pause();
    }
    int st;
    assert_int_equal(waitpid(child, &st, WUNTRACED), child);
    assert_true(WIFSTOPPED(st));
    assert_int_equal(fifo_quiet_look(&q, f.dev, f.inode, &who),
                     FIFO_QUIET_STOPPED);
    assert_int_equal(who, child);
    /* Running again, then asleep in pause(): not inside a send. */
    kill(child, SIGCONT);
    fifo_quiet_verdict_t v = FIFO_QUIET_WAIT;
    for (int i = 0; i < 200 && v != FIFO_QUIET; i++) {
        sleep_ms(5);
        v = fifo_quiet_look(&q, f.dev, f.inode, &who);
    }
    assert_int_equal(v, FIFO_QUIET);
    kill(child, SIGKILL);
    assert_int_equal(waitpid(child, &st, 0), child);
    assert_int_equal(fifo_quiet_look(&q, f.dev, f.inode, &who), FIFO_QUIET);
    seg_free(&s);
}

/* A child that maps the segment and spins: it has run between two looks,
 * so it is clear at the second (the first knows nothing of it yet). */
static void test_quiet_running(void **state)
{
    (void)state;
    seg_t s;
    seg_make(&s, "ucx_shm_posix_spin", getpid());
    mm_fifo_t f;
    assert_int_equal(mm_fifo_each(getpid(), take, &f), 1);
    static fifo_quiet_t q;
    q.n = 0;
    pid_t who = 0;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        for (volatile uint64_t x = 0;; x++)
            ;
    }
    sleep_ms(20);
    fifo_quiet_verdict_t v = fifo_quiet_look(&q, f.dev, f.inode, &who);
    assert_int_equal(v, FIFO_QUIET_WAIT);
    assert_int_equal(who, child);
    for (int i = 0; i < 200 && v != FIFO_QUIET; i++) {
        sleep_ms(10);
        v = fifo_quiet_look(&q, f.dev, f.inode, &who);
    }
    assert_int_equal(v, FIFO_QUIET);
    int st;
    kill(child, SIGKILL);
    assert_int_equal(waitpid(child, &st, 0), child);
    seg_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found_by_owner),
        cmocka_unit_test(test_too_small_or_inconsistent),
        cmocka_unit_test(test_claim_write_rounds),
        cmocka_unit_test(test_quiet_verdicts),
        cmocka_unit_test(test_quiet_running),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
