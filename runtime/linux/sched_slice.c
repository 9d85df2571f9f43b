/* Per-thread time slice through sched_setattr(2) (see sched_slice.h). */
#include "runtime/linux/sched_slice.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* struct sched_attr of sched_setattr(2) (glibc has no wrapper). */
struct slice_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime; /* SCHED_OTHER/BATCH: the slice, 0 = default */
    uint64_t sched_deadline;
    uint64_t sched_period;
};

/* SCHED_FLAG_RESET_ON_FORK of <linux/sched.h>, which sched_getattr
 * reports in sched_flags. */
#define SLICE_RESET_ON_FORK 0x01

static int set_attr(uint64_t ns, uint64_t *old_ns)
{
    struct slice_attr a = {.size = sizeof(a)};

    /* sched_getattr: the policy and nice value to keep, and the slice in
     * use (the kernel reports its default when none was asked for). */
    if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) != 0)
        return -1;
    if (a.sched_policy != SCHED_OTHER && a.sched_policy != SCHED_BATCH)
        return 1;
    if (old_ns != NULL)
        *old_ns = a.sched_runtime;
    a.size = sizeof(a);
    a.sched_flags &= SLICE_RESET_ON_FORK; /* keep it; nothing else */
    a.sched_runtime = ns;
    return syscall(SYS_sched_setattr, 0, &a, 0) != 0 ? -1 : 0;
}

void rt_slice_set(ucft_log_t *log, const char *who, uint64_t ns,
                  rt_slice_t *saved)
{
    uint64_t old = 0;

    if (saved != NULL)
        saved->set = 0;
    if (ns == 0)
        return;
    int rc = set_attr(ns, &old);
    if (rc > 0)
        return; /* a real-time or idle policy: not ours to change */
    if (rc < 0) {
        ucft_debug(log, "%s: cannot set a %llu ns time slice (%s)", who,
                   (unsigned long long)ns, strerror(errno));
        return;
    }
    if (saved != NULL) {
        saved->set = 1;
        saved->tid = (pid_t)syscall(SYS_gettid);
        saved->old_ns = old;
    }
}

void rt_slice_restore(ucft_log_t *log, const rt_slice_t *saved)
{
    if (saved == NULL || !saved->set ||
        (pid_t)syscall(SYS_gettid) != saved->tid)
        return;
    if (set_attr(saved->old_ns, NULL) < 0)
        ucft_debug(log, "cannot give the time slice back (%s)",
                   strerror(errno));
}
