/*
 * ucftrun's job: the launcher's state (one struct, owned by main.c) and
 * job control, i.e. what the poll() loop of main.c does when something
 * happens: a rank ends (reap, classify, notify the survivors), a signal
 * reaches the launcher (forward it), a rank calls PMIx_Abort, a deadline
 * passes (injections, --timeout, grace period, output drain).
 */
#ifndef UCFTRUN_JOB_H
#define UCFTRUN_JOB_H

#include "launcher/kill_schedule.h"
#include "launcher/netns.h"
#include "launcher/nodes.h"
#include "launcher/opts.h"
#include "launcher/server.h"
#include "launcher/spawn.h"
#include "runtime/base/clock.h"
#include "runtime/base/log.h"

#include <limits.h>
#include <signal.h>
#include <stdint.h>

#define EXIT_LAUNCH_ERROR 1   /* the launcher itself could not start the job */
#define EXIT_TIMEOUT      124 /* like timeout(1) */
#define GRACE_NS          (2 * UCFT_NSEC_PER_SEC) /* after a forwarded signal */
#define DRAIN_NS          (1 * UCFT_NSEC_PER_SEC) /* output after last exit */
#define NO_DEADLINE       UINT64_MAX

/* Why the launcher is ending the job itself (first cause wins the exit
 * status, except that a signal to the launcher always wins). */
typedef enum teardown {
    TEARDOWN_NONE,
    TEARDOWN_FAILURE, /* --abort-on-failure */
    TEARDOWN_ABORT,   /* a rank called PMIx_Abort */
    TEARDOWN_TIMEOUT, /* --timeout */
    TEARDOWN_SIGNAL,  /* SIGINT/SIGTERM/... to the launcher */
} teardown_t;

typedef struct launcher {
    ucftrun_opts_t opts;
    ucft_log_t log;
    char path[PATH_MAX];
    char tmpdir[PATH_MAX]; /* empty until created */
    ucftrun_topo_t topo;
    ucftrun_nodes_t nodes; /* pretend nodes (--nodes, --map-by) */
    ucftrun_netns_t netns; /* --netns: the nodes' network namespaces */
    ucftrun_server_t srv;
    ucftrun_proc_t *procs;
    int nprocs;
    int nalive;
    ucftrun_inject_sched_t sched;
    ucftrun_inject_log_t inject_log; /* UCFTRUN_INJECT_LOG */
    int sigfd;
    int timerfd;
    sigset_t handled;    /* read through sigfd */
    sigset_t child_mask; /* the mask the ranks start with */
    uint64_t t0;         /* when the ranks were started */
    uint64_t inject_t0;  /* what the injections' times count from: t0, or
                          * (--times-from connected) when the last rank
                          * connected or ended; NO_DEADLINE until then */
    uint64_t timeout_at, grace_at, drain_at;
    teardown_t teardown;
    int teardown_status; /* exit status decided by the teardown cause */
    int failure_status;  /* first failing rank's status, 0 if none */
} launcher_t;

/* Sends `sig` to every rank not yet reaped. */
void ucftrun_job_signal_alive(launcher_t *L, int sig);

/* Reads the signalfd: SIGCHLD reaps, the others are forwarded. */
void ucftrun_job_on_signals(launcher_t *L);

/* Reads the server's wake eventfd: a rank called PMIx_Abort (or a rank
 * connected: the next turn's ucftrun_job_arm_timer sees it). */
void ucftrun_job_on_abort(launcher_t *L);

/* Reads the timerfd: due injections, timeout, grace period, drain. */
void ucftrun_job_on_timers(launcher_t *L);

/* Arms the timerfd at the earliest deadline (or disarms it). */
void ucftrun_job_arm_timer(launcher_t *L);

#endif
