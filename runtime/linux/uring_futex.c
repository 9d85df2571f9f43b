/* A minimal io_uring for futex waits (see uring_futex.h). */
#include "runtime/linux/uring_futex.h"

#include <errno.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Newer than the headers of some distributions (Linux 6.7 uapi). */
#ifndef URING_OP_FUTEX_WAIT
#define URING_OP_FUTEX_WAIT 51
#endif
#define URING_FUTEX2_SIZE_U32 0x02 /* FUTEX2_SIZE_U32: shared, 32 bits */
#define URING_MAX_ENTRIES     4096u

static int sys_setup(unsigned entries, struct io_uring_params *p)
{
    return (int)syscall(__NR_io_uring_setup, entries, p);
}

static int sys_enter(int fd, unsigned submit)
{
    return (int)syscall(__NR_io_uring_enter, fd, submit, 0, 0, NULL, 0);
}

/* Does the kernel know the futex wait op? */
static int probe_futex(int fd)
{
    size_t len =
        sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
    struct io_uring_probe *pr = calloc(1, len);
    if (pr == NULL)
        return 0;
    int ok = syscall(__NR_io_uring_register, fd, IORING_REGISTER_PROBE, pr,
                     256) == 0 &&
             pr->last_op >= URING_OP_FUTEX_WAIT &&
             (pr->ops[URING_OP_FUTEX_WAIT].flags & IO_URING_OP_SUPPORTED);
    free(pr);
    return ok;
}

static void *map_ring(int fd, size_t len, off_t off)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                   fd, off);
    return p == MAP_FAILED ? NULL : p;
}

ucft_status_t rt_uring_open(rt_uring_t *u, unsigned entries)
{
    struct io_uring_params p;
    unsigned want = 1;

    memset(u, 0, sizeof(*u));
    u->fd = -1;
    while (want < entries && want < URING_MAX_ENTRIES)
        want <<= 1;
    memset(&p, 0, sizeof(p));
    p.flags = IORING_SETUP_CQSIZE;
    p.cq_entries = 2 * want;
    u->fd = sys_setup(want, &p);
    if (u->fd < 0 || !(p.features & IORING_FEAT_SINGLE_MMAP) ||
        !probe_futex(u->fd)) {
        rt_uring_close(u);
        return UCFT_ERR_NOT_SUPPORTED;
    }
    u->entries = p.sq_entries;
    u->sq_ring_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    u->cq_ring_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    if (u->cq_ring_len > u->sq_ring_len)
        u->sq_ring_len = u->cq_ring_len;
    u->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
    u->sq_ring = map_ring(u->fd, u->sq_ring_len, IORING_OFF_SQ_RING);
    u->sqes = map_ring(u->fd, u->sqes_len, IORING_OFF_SQES);
    if (u->sq_ring == NULL || u->sqes == NULL) {
        rt_uring_close(u);
        return UCFT_ERR_NO_RESOURCE;
    }
    u->cq_ring = u->sq_ring; /* one mapping (IORING_FEAT_SINGLE_MMAP) */
    char *sq = u->sq_ring, *cq = u->cq_ring;
    u->sq_head = (unsigned *)(sq + p.sq_off.head);
    u->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    u->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    u->sq_array = (unsigned *)(sq + p.sq_off.array);
    u->cq_head = (unsigned *)(cq + p.cq_off.head);
    u->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    u->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    u->cqes = cq + p.cq_off.cqes;
    return UCFT_OK;
}

int rt_uring_fd(const rt_uring_t *u)
{
    return u->fd;
}

ucft_status_t rt_uring_futex_wait(rt_uring_t *u, uint32_t *addr, uint32_t val,
                                  uint64_t tag)
{
    if (u->fd < 0)
        return UCFT_ERR_NOT_SUPPORTED;
    if (u->inflight >= u->entries)
        return UCFT_ERR_NO_RESOURCE;
    unsigned tail = *u->sq_tail; /* only this thread writes it */
    unsigned idx = tail & *u->sq_mask;
    struct io_uring_sqe *sqe = (struct io_uring_sqe *)u->sqes + idx;
    memset(sqe, 0, sizeof(*sqe));
    sqe->opcode = URING_OP_FUTEX_WAIT;
    sqe->fd = URING_FUTEX2_SIZE_U32;
    sqe->addr = (uint64_t)(uintptr_t)addr;
    sqe->off = val; /* addr2: the expected value */
    sqe->addr3 = FUTEX_BITSET_MATCH_ANY;
    sqe->user_data = tag;
    u->sq_array[idx] = idx;
    __atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
    int r;
    do
        r = sys_enter(u->fd, 1);
    while (r < 0 && errno == EINTR);
    if (r != 1) {
        /* Not consumed: take the entry back. */
        __atomic_store_n(u->sq_tail, tail, __ATOMIC_RELEASE);
        return r < 0 && errno == EBUSY ? UCFT_ERR_NO_RESOURCE : UCFT_ERR_IO;
    }
    u->inflight++;
    return UCFT_OK;
}

size_t rt_uring_reap(rt_uring_t *u, uint64_t *tags, int *res, size_t max)
{
    size_t got = 0;
    if (u->fd < 0)
        return 0;
    unsigned head = *u->cq_head;
    unsigned tail = __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE);
    while (head != tail && got < max) {
        const struct io_uring_cqe *c =
            (const struct io_uring_cqe *)u->cqes + (head & *u->cq_mask);
        tags[got] = c->user_data;
        res[got] = c->res;
        got++;
        head++;
        if (u->inflight > 0)
            u->inflight--;
    }
    __atomic_store_n(u->cq_head, head, __ATOMIC_RELEASE);
    return got;
}

void rt_uring_close(rt_uring_t *u)
{
    if (u->sqes != NULL)
        munmap(u->sqes, u->sqes_len);
    if (u->sq_ring != NULL)
        munmap(u->sq_ring, u->sq_ring_len);
    if (u->fd >= 0)
        close(u->fd);
    memset(u, 0, sizeof(*u));
    u->fd = -1;
}
