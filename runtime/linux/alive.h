/*
 * "Alive" slots: learning that a process on this machine is dying before
 * the kernel has finished tearing it down.
 *
 * A pidfd (procwatch.h) becomes readable only after the dead process's
 * memory is unmapped and its files are closed: 2-7 ms for an idle rank on
 * a small VM, more when the cores are busy, because the dying rank must be
 * scheduled for all of it. The kernel releases a thread's robust mutexes
 * much earlier: a dying thread walks its robust list at the start of its
 * exit (before its memory goes), marks each mutex it held OWNER_DIED and
 * wakes one waiter. So each rank holds, from its heartbeat thread, one
 * robust process-shared mutex per local peer ("slot"), in a memfd that the
 * peers map through /proc/<pid>/fd; each peer waits on the lock word of its
 * own slot with an io_uring futex wait (uring_futex.h), which the
 * heartbeat thread polls with its other fds. Woken with OWNER_DIED set:
 * the holder is dying. Woken with the word 0: the holder released the slot
 * in a clean finalize, not a failure.
 *
 * Only the heartbeat thread holds slots: it lives as long as the context,
 * and its end releases them first. The lock word is glibc's robust mutex
 * word (owner tid, FUTEX_WAITERS, FUTEX_OWNER_DIED: the kernel's robust
 * futex protocol); rt_alive_hold checks that the word really holds the
 * caller's tid after locking and otherwise gives the slots up, so a C
 * library with another layout only loses this fast path. Anything missing
 * (io_uring futex waits need Linux 6.7, /proc access to the peer) leaves
 * the pidfd watch alone in charge.
 *
 * After the slots, one more line holds a beat counter that the holding
 * thread bumps once per turn of its loop (rt_alive_beat): a watcher whose
 * heartbeats from the holder are late reads it to tell a thread that still
 * runs (only its messages are late) from one that does not
 * (runtime/linux/kview.h).
 */
#ifndef UCFT_RT_LINUX_ALIVE_H
#define UCFT_RT_LINUX_ALIVE_H

#include "ucft.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RT_ALIVE_MAX_SLOTS 1024u /* the kernel walks 2048 robust entries */
/* A value no lock word takes (no tid is 0x3fffffff): a futex wait on it
 * completes at once. */
#define RT_ALIVE_NO_WAIT 0xffffffffu

/* The slots one process holds for its watchers. */
typedef struct rt_alive {
    int fd; /* memfd, -1: none */
    void *mem;
    size_t len;
    unsigned nslots;
    unsigned skip;  /* the slot not held (the holder's own position) */
    int held;       /* locked by rt_alive_hold, by the holding thread */
    uint64_t *beat; /* the holder's beat counter (after the slots) */
} rt_alive_t;

/* Creates `nslots` unlocked slots (fd -1 and an error on failure).
 * Checks first, from the calling thread, that a locked slot's word holds
 * the locker's tid (the robust futex word this relies on):
 * UCFT_ERR_NOT_SUPPORTED otherwise, so nothing is ever published. */
ucft_status_t rt_alive_create(rt_alive_t *a, unsigned nslots);
/* Locks every slot except `skip` (the caller's own position) from the
 * calling thread, which must outlive the watch. UCFT_ERR_NOT_SUPPORTED,
 * with every slot unlocked again, when the lock word is not the robust
 * futex word this relies on. */
ucft_status_t rt_alive_hold(rt_alive_t *a, unsigned skip);
/* Unlocks (the holding thread): watchers see a clean end. */
void rt_alive_release(rt_alive_t *a);
/* One more beat (the holding thread, once per turn of its loop): watchers
 * read the counter to tell a thread that runs from one that does not. */
void rt_alive_beat(rt_alive_t *a);
void rt_alive_destroy(rt_alive_t *a);

/* A watcher's view of slot `slot` of another process's slots. */
typedef struct rt_alive_peer {
    void *map; /* all of the holder's slots */
    size_t len;
    unsigned nslots;
    uint32_t *word;       /* ours; NULL: not watched */
    const uint64_t *beat; /* the holder's beat counter */
    int armed;            /* a futex wait is outstanding */
} rt_alive_peer_t;

/* Maps slot `slot` of the slots `pid` exported as memfd `fd` (nslots
 * long). Call while holding a pidfd of `pid` and check it is still alive
 * afterwards, so the fd belonged to that process. */
ucft_status_t rt_alive_attach(rt_alive_peer_t *p, pid_t pid, int fd,
                              unsigned nslots, unsigned slot);
void rt_alive_detach(rt_alive_peer_t *p);

typedef enum rt_alive_state {
    RT_ALIVE_UNHELD, /* not locked yet (the holder is starting) */
    RT_ALIVE_HELD,   /* locked: alive */
    RT_ALIVE_DYING,  /* the holding thread died */
    RT_ALIVE_ENDED,  /* released after being held: a clean end */
} rt_alive_state_t;

/* What the word says now. `seen_held` tells 0 after a hold (ENDED) from 0
 * before it (UNHELD). */
rt_alive_state_t rt_alive_state(const rt_alive_peer_t *p, int seen_held);
/* When held: marks a waiter on the word and returns the value it now
 * holds, to wait on (the holder's unlock or death then wakes the waiter).
 * Not held (unheld, dying, ended, or it changed meanwhile):
 * RT_ALIVE_NO_WAIT, so that the wait completes at once and the state is
 * read again. */
uint32_t rt_alive_prepare_wait(rt_alive_peer_t *p);
/* The wait on `val` could not be posted: take the waiter mark back (one
 * watcher per slot), so that the slot does not claim a waiter. */
void rt_alive_cancel_wait(rt_alive_peer_t *p, uint32_t val);
/* 1 when the holder died while another watcher waited on slot `slot`:
 * the kernel woke that watcher as it woke us. */
int rt_alive_other_woken(const rt_alive_peer_t *p, unsigned slot);
/* The holder's beat counter (0 when not mapped). */
uint64_t rt_alive_beats(const rt_alive_peer_t *p);
/* The holding thread's id, from the lock word (0: not held). */
pid_t rt_alive_holder_tid(const rt_alive_peer_t *p);

#endif
