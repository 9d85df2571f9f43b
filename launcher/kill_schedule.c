/*
 * Failure-injection schedule (see inject.h).
 */
#include "launcher/kill_schedule.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ucftrun_inject_sched_init(ucftrun_inject_sched_t *s,
                              const ucftrun_inject_t *events, size_t n)
{
    memset(s, 0, sizeof(*s));
    if (n == 0)
        return 0;
    s->events = malloc(n * sizeof(*s->events));
    if (s->events == NULL)
        return -1;
    /* Insertion sort: stable (same-time events keep command-line order)
     * and the lists are short. */
    for (size_t i = 0; i < n; i++) {
        size_t j = i;

        while (j > 0 && s->events[j - 1].at_ns > events[i].at_ns) {
            s->events[j] = s->events[j - 1];
            j--;
        }
        s->events[j] = events[i];
    }
    s->n = n;
    return 0;
}

void ucftrun_inject_sched_free(ucftrun_inject_sched_t *s)
{
    free(s->events);
    memset(s, 0, sizeof(*s));
}

uint64_t ucftrun_inject_next_ns(const ucftrun_inject_sched_t *s)
{
    return s->next < s->n ? s->events[s->next].at_ns : UINT64_MAX;
}

const ucftrun_inject_t *ucftrun_inject_pop_due(ucftrun_inject_sched_t *s,
                                               uint64_t elapsed_ns)
{
    if (s->next < s->n && s->events[s->next].at_ns <= elapsed_ns)
        return &s->events[s->next++];
    return NULL;
}

int ucftrun_inject_signal(ucftrun_inject_kind_t kind)
{
    switch (kind) {
    case UCFTRUN_INJECT_KILL:
        return SIGKILL;
    case UCFTRUN_INJECT_STOP:
        return SIGSTOP;
    default:
        return 0; /* a network fault: no signal */
    }
}

const char *ucftrun_inject_name(ucftrun_inject_kind_t kind)
{
    switch (kind) {
    case UCFTRUN_INJECT_KILL:
        return "kill";
    case UCFTRUN_INJECT_STOP:
        return "stop";
    case UCFTRUN_INJECT_CUT:
        return "cut";
    case UCFTRUN_INJECT_HEAL:
        return "heal";
    case UCFTRUN_INJECT_PARTITION:
        return "partition";
    }
    return "?";
}

int ucftrun_inject_log_open(ucftrun_inject_log_t *lg, const char *dir,
                            char *err, size_t errlen)
{
    lg->fd = -1;
    if ((size_t)snprintf(lg->path, sizeof(lg->path), "%s/inject.log", dir) >=
        sizeof(lg->path)) {
        snprintf(err, errlen, "injection log path too long");
        return -1;
    }
    lg->fd = open(lg->path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
                  0600);
    if (lg->fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", lg->path,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int ucftrun_inject_log_append(ucftrun_inject_log_t *lg,
                              ucftrun_inject_kind_t kind, int rank,
                              uint64_t mono_ns)
{
    char line[64];
    int len;

    if (lg->fd < 0)
        return -1;
    len =
        snprintf(line, sizeof(line), "%s %d %llu\n", ucftrun_inject_name(kind),
                 rank, (unsigned long long)mono_ns);
    /* One write on an O_APPEND fd, newline last: a reader that takes only
     * complete lines never sees half of one. */
    return write(lg->fd, line, (size_t)len) == len ? 0 : -1;
}

void ucftrun_inject_log_close(ucftrun_inject_log_t *lg)
{
    if (lg->fd >= 0)
        close(lg->fd);
    lg->fd = -1;
}
