/* A thread's time slice (Linux 6.12+, EEVDF): how long it may run before
 * a waiting thread of its core is picked, and how soon it is picked after
 * waking. Older kernels and other systems ignore it. */
#ifndef UCFT_RT_LINUX_SCHED_SLICE_H
#define UCFT_RT_LINUX_SCHED_SLICE_H

#include "runtime/base/log.h"

#include <stdint.h>
#include <sys/types.h>

typedef struct rt_slice {
    int set;         /* the slice was changed (and may be given back) */
    pid_t tid;       /* of the thread it was changed for */
    uint64_t old_ns; /* its slice before (0: the kernel's default) */
} rt_slice_t;

/* Ask for a slice of `ns` for the calling thread (0: do nothing), keeping
 * its policy and nice value; only a time-sharing thread (SCHED_OTHER,
 * SCHED_BATCH) has one, other policies are left alone. Remembers what it
 * replaced in *saved (may be NULL). A refusal is logged at debug level,
 * naming `who`: the thread runs on as it was. */
void rt_slice_set(ucft_log_t *log, const char *who, uint64_t ns,
                  rt_slice_t *saved);

/* Give the slice back, if *saved changed it and the caller is the same
 * thread (a thread cannot set another's slice through this call). */
void rt_slice_restore(ucft_log_t *log, const rt_slice_t *saved);

#endif
