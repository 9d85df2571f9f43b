/* The kernel's view of a local rank and of this thread (see kview.h). */
#include "runtime/linux/kview.h"
#include "runtime/base/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

rt_kview_verdict_t rt_kview_judge(const rt_kview_obs_t *o,
                                  const rt_kview_limits_t *lim,
                                  const char **why)
{
    switch (o->state) {
    case 0:
        *why = "its heartbeat thread is gone";
        return RT_KVIEW_DEAD;
    case 'T':
        *why = "stopped";
        return RT_KVIEW_DEAD;
    case 't':
        *why = "stopped by a tracer";
        return RT_KVIEW_DEAD;
    case 'Z':
    case 'X':
        *why = "dead";
        return RT_KVIEW_DEAD;
    case '?':
        *why = "its state cannot be read";
        return RT_KVIEW_UNKNOWN;
    default:
        break;
    }
    uint64_t limit = lim->limit_ns;
    if (!o->started && lim->start_limit_ns > limit)
        limit = lim->start_limit_ns;
    if (limit > 0 && o->silent_ns > limit) {
        *why = "alive for the kernel but silent beyond UCFT_HB_LOCAL_LIMIT";
        return RT_KVIEW_DEAD;
    }
    if (o->progressed) {
        *why = "its heartbeat thread runs";
        return RT_KVIEW_ALIVE;
    }
    *why = o->state == 'R'   ? "runnable, waiting for a core"
           : o->state == 'D' ? "in an uninterruptible wait"
                             : "waiting in the kernel";
    return RT_KVIEW_ALIVE;
}

char rt_kview_state(pid_t pid, pid_t tid)
{
    char path[80], buf[512], state;
    int pgrp;
    if (tid > 0)
        snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
                 (int)tid);
    else
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    errno = 0;
    const char *after = ucft__procstat_read(path, buf, sizeof(buf));
    if (after == NULL && (errno == ENOENT || errno == ESRCH))
        return 0;
    if (ucft__procstat_state_pgrp(after, &state, &pgrp) != 0)
        return '?';
    return state;
}

int rt_kview_delay_open(void)
{
    return open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

uint64_t rt_kview_delay(int fd)
{
    char buf[96];
    if (fd < 0)
        return 0;
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "<cpu time> <run-queue wait> <timeslices>" */
    char *p = NULL;
    (void)strtoull(buf, &p, 10);
    if (p == NULL || *p != ' ')
        return 0;
    return strtoull(p + 1, NULL, 10);
}
