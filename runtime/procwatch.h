/*
 * Watching the processes of the ranks on this node (Linux pidfds).
 *
 * A SIGKILLed rank is gone for the kernel at once, but the launcher's death
 * event reaches the survivors only after several thread wake-ups (the
 * launcher reaps the child, its PMIx server sends one message per client,
 * each client's PMIx thread hands it on), and UCX's shared-memory transport
 * notices only through keepalive. A pidfd (pidfd_open(2), Linux >= 5.3)
 * becomes readable the moment its process terminates, so each rank watches
 * the other ranks of its node directly and hands a death to the detector
 * as outside evidence, like a launcher event.
 *
 * Each rank publishes {pid, start time, boot id, pid namespace} in the
 * start-up exchange. After it, a rank opens a pidfd for every local peer
 * (PMIX_LOCAL_PEERS) whose boot id and pid namespace equal its own (the
 * pid means the same process), and checks the start time after opening
 * (the pid was not reused). Anything unavailable (old kernel, another
 * namespace, a launcher without PMIX_LOCAL_PEERS) just leaves that peer to
 * the other detection paths.
 *
 * A rank that finalizes exits only after every rank has stopped its
 * detector (runtime/context.c), so a clean exit is never taken for a
 * failure: the owner ignores this evidence once its detector has stopped.
 * Owned by the heartbeat thread once started; no thread of its own.
 */
#ifndef UCFT_RT_PROCWATCH_H
#define UCFT_RT_PROCWATCH_H

#include "ucft.h"
#include "runtime/base/log.h"

#include <stddef.h>

struct rt_boot;

typedef struct rt_procwatch {
    int epfd; /* -1: nothing watched */
    int *fds; /* pidfds, -1 once reported */
    int *ranks;
    size_t n;
    const ucft_log_t *log;
} rt_procwatch_t;

/* Publishes this process's identity (before the start-up fence). */
ucft_status_t rt_procwatch_publish(struct rt_boot *b);
/* After the fence: opens pidfds for the local peers. Never fails: a peer
 * that cannot be watched is left out (logged at debug level). */
void rt_procwatch_open(rt_procwatch_t *w, struct rt_boot *b,
                       const ucft_log_t *log);
/* An fd readable when a watched process has ended (-1: none watched). */
int rt_procwatch_fd(const rt_procwatch_t *w);
/* The ranks whose processes ended since the last call (each reported
 * once), at most max. Non-blocking. */
size_t rt_procwatch_take(rt_procwatch_t *w, int *ranks, size_t max);
void rt_procwatch_close(rt_procwatch_t *w);

#endif
