/*
 * Futex waits that can sit in an event loop: a minimal io_uring (raw
 * system calls, no library) used only for IORING_OP_FUTEX_WAIT (Linux 6.7
 * and later). The ring's fd is readable when a wait has completed, so the
 * heartbeat thread polls it together with its other fds.
 *
 * Waits are shared (not private) futex waits: they are woken by a wake on
 * the same memory from any process mapping it, including the kernel's wake
 * when a dying thread releases a robust mutex it held.
 *
 * rt_uring_open fails with UCFT_ERR_NOT_SUPPORTED when the kernel has no
 * io_uring, forbids it (kernel.io_uring_disabled) or has no futex op; the
 * caller then does without. Not thread-safe: one thread owns a ring.
 */
#ifndef UCFT_RT_LINUX_URING_FUTEX_H
#define UCFT_RT_LINUX_URING_FUTEX_H

#include "ucft.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rt_uring {
    int fd; /* -1: closed */
    unsigned entries;
    unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
    unsigned *cq_head, *cq_tail, *cq_mask;
    void *sqes; /* struct io_uring_sqe[entries] */
    void *cqes; /* struct io_uring_cqe[] inside the CQ ring */
    void *sq_ring, *cq_ring;
    size_t sq_ring_len, cq_ring_len, sqes_len;
    unsigned inflight; /* submitted, not completed */
} rt_uring_t;

/* A ring for up to `entries` outstanding waits (rounded up to a power of
 * two, at most 4096). */
ucft_status_t rt_uring_open(rt_uring_t *u, unsigned entries);
int rt_uring_fd(const rt_uring_t *u);
/* Waits while *addr == val (32-bit, shared futex); the completion carries
 * `tag`. UCFT_ERR_NO_RESOURCE when `entries` waits are outstanding. */
ucft_status_t rt_uring_futex_wait(rt_uring_t *u, uint32_t *addr, uint32_t val,
                                  uint64_t tag);
/* Completed waits since the last call (at most max): their tags and
 * results (0: woken; -EAGAIN: the value differed at submission; other
 * negative errno: failed). Non-blocking. */
size_t rt_uring_reap(rt_uring_t *u, uint64_t *tags, int *res, size_t max);
void rt_uring_close(rt_uring_t *u);

#endif
