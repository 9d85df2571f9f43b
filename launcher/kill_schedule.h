/*
 * Failure-injection schedule: the --kill/--stop plan of opts.h sorted by
 * time, consumed by the main loop as time passes. Pure bookkeeping: the
 * main loop sends the signals (it knows which ranks are still alive).
 *
 * The injection log tells the ranks *when* a failure was injected (for
 * detection-latency measurements): a file in the job's private rendezvous
 * directory, named to every rank by UCFTRUN_INJECT_LOG, with one line
 *     kill|stop RANK MONOTONIC_NS
 * per injected signal, appended just before the signal is sent.
 * CLOCK_MONOTONIC is system-wide on one machine, so a rank can subtract
 * the value from its own clock readings.
 */
#ifndef UCFTRUN_KILL_SCHEDULE_H
#define UCFTRUN_KILL_SCHEDULE_H

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

/* The environment variable naming the injection log to the ranks. */
#define UCFTRUN_INJECT_LOG_ENV "UCFTRUN_INJECT_LOG"

typedef struct ucftrun_inject_log {
    int fd; /* -1 when closed */
    char path[4096];
} ucftrun_inject_log_t;

/* Creates an empty "<dir>/inject.log" (mode 0600, append-only writes).
 * Returns 0, or -1 with a message in err (lg->fd stays -1). */
int ucftrun_inject_log_open(ucftrun_inject_log_t *lg, const char *dir,
                            char *err, size_t errlen);

/* Appends "kill|stop RANK NS\n" with one write(2): other processes on
 * this machine can read it as soon as this returns. Returns 0 or -1. */
int ucftrun_inject_log_append(ucftrun_inject_log_t *lg,
                              ucftrun_inject_kind_t kind, int rank,
                              uint64_t mono_ns);

void ucftrun_inject_log_close(ucftrun_inject_log_t *lg);

#endif
