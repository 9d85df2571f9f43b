/*
 * Before a blocked FIFO is mended (fifo_probe.h): can a live process still
 * be inside the send that claimed the slot? Writing over a slot that its
 * sender later finishes writing would corrupt a message, so the slot is
 * mended only when no other process that maps the FIFO's segment can be
 * in the middle of a send (Linux /proc):
 *
 *   - a thread asleep (S), idle (I), a zombie or dead is not inside one:
 *     nothing in a send to shared memory sleeps between claiming a slot
 *     and writing it;
 *   - a thread running, runnable (R) or in uninterruptible sleep (D) is
 *     clear once it has run at least FIFO_QUIET_RUN_NS since the previous
 *     look: a send in progress ends within microseconds of running (the
 *     caller starts the looks after the slot was claimed: n = 0);
 *   - a stopped or traced thread (T, t) may be the sender: it may wake and
 *     finish the write at any time, so nothing is mended while it stays
 *     stopped.
 * The FIFO's owner (this process) is not looked at: its own probe worker
 * writes nothing that is left unwritten. Processes whose maps cannot be
 * read (another user's) are taken as not mapping the segment.
 */
#ifndef UCFT_FIFO_QUIET_H
#define UCFT_FIFO_QUIET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FIFO_QUIET_MAX    512 /* threads remembered between looks */
#define FIFO_QUIET_RUN_NS 50000ull

typedef enum fifo_quiet_verdict {
    FIFO_QUIET = 0,     /* no other process can be inside a send to it */
    FIFO_QUIET_WAIT,    /* look again later: a thread has not run since */
    FIFO_QUIET_STOPPED, /* a stopped thread maps it */
} fifo_quiet_verdict_t;

typedef struct fifo_quiet_thread {
    pid_t tid;
    uint64_t run_ns;
} fifo_quiet_thread_t;

typedef struct fifo_quiet {
    size_t n;
    fifo_quiet_thread_t th[FIFO_QUIET_MAX];
} fifo_quiet_t;

/* One look at the processes that map the segment `dev` ("MAJ:MIN" as in
 * /proc/PID/maps) and `inode`; remembers what each thread had run for the
 * next look (the first look finds every running thread WAIT). `who` gets
 * the pid that decided a verdict other than FIFO_QUIET. */
fifo_quiet_verdict_t fifo_quiet_look(fifo_quiet_t *q, const char *dev,
                                     unsigned long inode, pid_t *who);

#endif
