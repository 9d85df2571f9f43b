/*
 * Failure-injection schedule: the --kill/--stop plan of opts.h sorted by
 * time, consumed by the main loop as time passes. Pure bookkeeping: the
 * main loop sends the signals (it knows which ranks are still alive).
 */
#ifndef UCFTRUN_INJECT_H
#define UCFTRUN_INJECT_H

#include "launcher/opts.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ucftrun_inject_sched {
    ucftrun_inject_t *events; /* owned copy, sorted by at_ns (stable) */
    size_t n;
    size_t next; /* first event not yet due */
} ucftrun_inject_sched_t;

/* Copies and sorts `n` events. Returns 0, or -1 when out of memory. */
int ucftrun_inject_sched_init(ucftrun_inject_sched_t *s,
                              const ucftrun_inject_t *events, size_t n);
void ucftrun_inject_sched_free(ucftrun_inject_sched_t *s);

/* Time (since start) of the next event, or UINT64_MAX when none is left. */
uint64_t ucftrun_inject_next_ns(const ucftrun_inject_sched_t *s);

/* Returns the next event due at `elapsed_ns` and consumes it, or NULL. */
const ucftrun_inject_t *ucftrun_inject_pop_due(ucftrun_inject_sched_t *s,
                                               uint64_t elapsed_ns);

/* The signal an injection sends (SIGKILL, SIGSTOP) and its option name. */
int ucftrun_inject_signal(ucftrun_inject_kind_t kind);
const char *ucftrun_inject_name(ucftrun_inject_kind_t kind);

#endif
