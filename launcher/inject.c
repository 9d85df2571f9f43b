/*
 * Failure-injection schedule (see inject.h).
 */
#include "launcher/inject.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

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
    return kind == UCFTRUN_INJECT_STOP ? SIGSTOP : SIGKILL;
}

const char *ucftrun_inject_name(ucftrun_inject_kind_t kind)
{
    return kind == UCFTRUN_INJECT_STOP ? "stop" : "kill";
}
