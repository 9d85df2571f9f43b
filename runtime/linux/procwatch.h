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
 * Each rank publishes {pid, start time, boot id, pid and network
 * namespaces, alive slots} in the start-up exchange. After it, a rank
 * opens a pidfd for every rank whose boot id, pid namespace and network
 * namespace equal its own (the pid means the same process, and nothing
 * but the kernel stands between them), and checks the start time after
 * opening (the pid was not reused). The candidates are every rank of a
 * job of up to 512 ranks (and a quarter of the open-file limit), else the
 * local peers (PMIX_LOCAL_PEERS): so the pretend nodes of a launcher on
 * one machine see each other's processes as the kernel does, and only
 * network namespaces (ucftrun --netns) or other machines leave a rank to
 * heartbeats alone. Anything unavailable (old kernel, another namespace, a
 * launcher without PMIX_LOCAL_PEERS) just leaves that peer to the other
 * detection paths.
 *
 * Earlier than the pidfd: each rank also holds one robust mutex per local
 * peer (PMIX_LOCAL_PEERS only) from its heartbeat thread (alive.h); a peer
 * waits on its slot and learns of the death as soon as the dying threads
 * release their robust mutexes, before the kernel unmaps the dead process's
 * memory. Both watches report a rank once, whichever is first.
 *
 * A rank that finalizes exits only after every rank has stopped its
 * detector (runtime/context.c), so a clean exit is never taken for a
 * failure: the owner ignores this evidence once its detector has stopped.
 * Owned by the heartbeat thread once started; no thread of its own.
 */
#ifndef UCFT_RT_LINUX_PROCWATCH_H
#define UCFT_RT_LINUX_PROCWATCH_H

#include "ucft.h"
#include "runtime/linux/alive.h"
#include "runtime/linux/kview.h"
#include "runtime/base/log.h"
#include "runtime/linux/uring_futex.h"

#include <stddef.h>

struct rt_boot;

/* One watched local peer. */
typedef struct rt_pw_peer {
    int rank;
    int pid;
    int pidfd;            /* -1 once reported */
    rt_alive_peer_t slot; /* slot.word NULL: no slot watched */
    int seen_held;
    int errors;      /* futex waits the kernel refused */
    int pending_arm; /* counted in unarmed: a wait is to be posted */
    uint64_t beats;  /* its beat counter at our last look */
} rt_pw_peer_t;

typedef struct rt_procwatch {
    int epfd;           /* -1: nothing watched */
    rt_pw_peer_t *peer; /* n of them */
    size_t n;
    size_t unarmed;  /* slots watched without a wait outstanding */
    rt_uring_t ring; /* fd -1: no futex waits (pidfds only) */
    rt_alive_t own;  /* the slots this process holds for its peers */
    unsigned own_slot;
    int *local; /* the local peers in rank order (slot i: local[i]) */
    size_t nlocal;
    const ucft_log_t *log;
} rt_procwatch_t;

/* Makes `w` safe to close (before publish). */
void rt_procwatch_init(rt_procwatch_t *w, const ucft_log_t *log);
/* Creates this process's slots and publishes its identity (before the
 * start-up fence). */
ucft_status_t rt_procwatch_publish(rt_procwatch_t *w, struct rt_boot *b);
/* After the fence: opens pidfds for the local peers (the list read by
 * rt_procwatch_publish) and maps their slots.
 * Never fails: a peer that cannot be watched is left out (logged at debug
 * level). */
void rt_procwatch_open(rt_procwatch_t *w, struct rt_boot *b);
/* From the heartbeat thread: hold this process's slots until
 * rt_procwatch_release (same thread), and wait on the peers' slots. */
void rt_procwatch_hold(rt_procwatch_t *w);
void rt_procwatch_release(rt_procwatch_t *w);
/* Starts waits on peer slots that became held since (cheap when none). */
void rt_procwatch_arm(rt_procwatch_t *w);
/* An fd readable when a watched process is dying or has ended (-1: none
 * watched). */
int rt_procwatch_fd(const rt_procwatch_t *w);
/* 1 when local peer `rank` was woken by the kernel about `dead` too (it
 * waited on its slot of `dead`, which died): it needs no message. */
int rt_procwatch_learns_alone(const rt_procwatch_t *w, int rank, int dead);
/* What the kernel says about local rank `rank`, silent for silent_ns
 * (kview.h): RT_KVIEW_UNKNOWN when it is not watched (another
 * node or pid namespace). `why` gets the reason, `state` the thread's
 * state letter. The heartbeat thread only. */
rt_kview_verdict_t rt_procwatch_judge(rt_procwatch_t *w, int rank,
                                      uint64_t silent_ns,
                                      const rt_kview_limits_t *lim,
                                      const char **why, char *state);
/* 1 when `rank` is watched (a local peer whose process this kernel
 * shows): evidence about it can be checked here. Any thread after
 * rt_procwatch_open (the list stays as it is until rt_procwatch_close). */
int rt_procwatch_sees(const rt_procwatch_t *w, int rank);
/* 1 when the kernel shows local rank `rank`'s process ended or its
 * heartbeat thread dead (or the watch reported it already): evidence from
 * elsewhere about it needs no fencing notice, which would only open a
 * connection to a dead process. The heartbeat thread only. */
int rt_procwatch_gone(const rt_procwatch_t *w, int rank);
/* One turn of the holding thread's loop (rt_alive_beat). */
void rt_procwatch_beat(rt_procwatch_t *w);
/* The ranks found dying or ended since the last call (each reported
 * once), at most max. Non-blocking. */
size_t rt_procwatch_take(rt_procwatch_t *w, int *ranks, size_t max);
void rt_procwatch_close(rt_procwatch_t *w);

#endif
