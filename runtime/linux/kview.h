/*
 * The kernel's view of a rank on this node whose heartbeats are overdue,
 * and of this thread's own scheduling.
 *
 * A heartbeat timeout says only "nothing came for delta". On a node with
 * many more ranks than cores that is also what a live but starved rank
 * looks like, and a false declaration there fences a live rank (which
 * aborts) and, on a loaded node, cascades. For a rank on the same kernel
 * the runtime can ask the kernel instead (procwatch.h holds a pidfd of the
 * process and maps the alive slots its heartbeat thread holds):
 *
 *   - the process ended, or its heartbeat thread died (pidfd readable,
 *     slot OWNER_DIED), or the thread is gone: dead;
 *   - the thread is stopped or traced (state T or t: SIGSTOP, a debugger)
 *     or a zombie (Z, X): dead, as before (a stopped rank is declared and,
 *     if continued, fenced);
 *   - its beat counter (alive.h) moved since we last looked: the thread
 *     runs; only its messages are late: alive, hold;
 *   - runnable (R) or in an uninterruptible wait (D: page fault, memory
 *     reclaim): starved or held up by the kernel, alive, hold;
 *   - asleep (S) otherwise: alive, hold. Not "stuck": a heartbeat thread
 *     that opens a connection waits in the launcher's client library for
 *     the peer's address, over a second at 128 ranks on 2 cores (seen:
 *     start-up and the re-targeting after a kill), and a sleeping thread
 *     looks the same whether it waits for a reply or for ever;
 *   - silent for longer than limit_ns whatever the state: dead (nothing a
 *     live rank on this node does explains that much silence; the bound
 *     keeps a rank that spins without ever reaching its heartbeats from
 *     being held for ever); start_limit_ns instead while its heartbeat
 *     thread has not begun its loop (it is still connecting to the ranks
 *     it will talk to, one address lookup from the launcher each: over
 *     5 s at 256 ranks on 2 cores).
 *
 * rt_kview_judge is the rule alone, pure, so that it is tested on its own.
 */
#ifndef UCFT_RT_LINUX_KVIEW_H
#define UCFT_RT_LINUX_KVIEW_H

#include <stdint.h>
#include <sys/types.h>

typedef enum rt_kview_verdict {
    RT_KVIEW_UNKNOWN = 0, /* no view: the heartbeat timeout decides */
    RT_KVIEW_ALIVE,       /* the kernel shows it alive: hold */
    RT_KVIEW_DEAD,        /* stopped, dead or stuck: declare */
} rt_kview_verdict_t;

typedef struct rt_kview_limits {
    uint64_t limit_ns; /* silent this long: declared whatever the state */
    /* The same while its heartbeat thread has not turned its loop once
     * (it is still connecting to its peers: seconds at 256 ranks). */
    uint64_t start_limit_ns;
} rt_kview_limits_t;

/* What the kernel says, for the rule below. */
typedef struct rt_kview_obs {
    char state;         /* the heartbeat thread's /proc state, 0: gone */
    int progressed;     /* its beat counter moved since the last look */
    int started;        /* its heartbeat thread turned its loop (beats) */
    uint64_t silent_ns; /* no heartbeat for this long */
} rt_kview_obs_t;

/* The rule (above). `why` gets a short reason for the log. */
rt_kview_verdict_t rt_kview_judge(const rt_kview_obs_t *o,
                                  const rt_kview_limits_t *lim,
                                  const char **why);

/* The state letter of thread `tid` of process `pid` (tid 0: the process's
 * main thread) from /proc, 0 when it does not exist (any more), '?' when
 * it cannot be read (the rule then leaves the decision to the timeout). */
char rt_kview_state(pid_t pid, pid_t tid);

/* This thread's wait on run queues so far (ns), from its schedstat
 * (CONFIG_SCHED_INFO): time it was runnable but not running. `fd` from
 * rt_kview_delay_open (on the same thread); 0 when unknown. */
int rt_kview_delay_open(void);
uint64_t rt_kview_delay(int fd);

#endif
