/*
 * ucftrun job control (see job.h).
 */
#include "launcher/job.h"
#include "launcher/handshake.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* How often a deferred --kill looks whether its rank has connected. */
#define HANDSHAKE_POLL_NS (1000ull * 1000)

static const char *sig_name(int sig, char *buf, size_t len)
{
    const char *abbrev = sigabbrev_np(sig);

    snprintf(buf, len, "SIG%s", abbrev != NULL ? abbrev : "?");
    return buf;
}

/* --- Job control ------------------------------------------------------- */

void ucftrun_job_signal_alive(launcher_t *L, int sig)
{
    for (int r = 0; r < L->nprocs; r++) {
        if (L->procs[r].alive)
            ucftrun_proc_signal(&L->procs[r], sig);
    }
}

/* Ends the job for `why`: deaths from now on are the launcher's doing and
 * are neither failures nor notified. */
static void start_teardown(launcher_t *L, teardown_t why, int status, int sig)
{
    if (L->teardown == TEARDOWN_NONE || why == TEARDOWN_SIGNAL) {
        L->teardown = why;
        L->teardown_status = status;
    }
    ucftrun_job_signal_alive(L, sig);
    if (sig != SIGKILL) {
        ucftrun_job_signal_alive(L,
                                 SIGCONT); /* stopped ranks must see it too */
        L->grace_at = ucft_clock_now_ns() + GRACE_NS;
    }
}

/* Once every remaining rank is one that --stop froze, nobody will wake
 * them: kill them, on purpose. */
static void kill_stopped_leftovers(launcher_t *L)
{
    int nstopped = 0;

    for (int r = 0; r < L->nprocs; r++)
        nstopped += L->procs[r].alive && L->procs[r].stopped;
    if (nstopped == 0 || nstopped != L->nalive)
        return;
    for (int r = 0; r < L->nprocs; r++) {
        ucftrun_proc_t *p = &L->procs[r];
        if (p->alive && p->stopped) {
            ucft_debug(&L->log, "rank %d is still stopped: killing it", r);
            p->injected = 1;
            ucftrun_proc_signal(p, SIGKILL);
        }
    }
}

/* A rank was reaped: classify, report, notify the survivors. */
static void on_rank_exit(launcher_t *L, ucftrun_proc_t *p, int wstatus)
{
    char sbuf[16], how[64];
    pmix_status_t code;
    int exit_code, abnormal;

    p->alive = 0;
    p->wstatus = wstatus;
    L->nalive--;
    if (WIFSIGNALED(wstatus)) {
        code = PMIX_ERR_PROC_ABORTED_BY_SIG;
        exit_code = 128 + WTERMSIG(wstatus);
        snprintf(how, sizeof(how), "killed by signal %d (%s)",
                 WTERMSIG(wstatus),
                 sig_name(WTERMSIG(wstatus), sbuf, sizeof(sbuf)));
    } else {
        exit_code = WEXITSTATUS(wstatus);
        if (exit_code != 0)
            code = PMIX_ERR_EXIT_NONZERO_TERM;
        else if (!atomic_load(&p->finalized))
            code = PMIX_ERR_PROC_TERM_WO_SYNC;
        else
            code = PMIX_EVENT_PROC_TERMINATED;
        snprintf(how, sizeof(how), "exited with status %d", exit_code);
    }
    abnormal = exit_code != 0;

    if (L->teardown != TEARDOWN_NONE) {
        ucft_debug(&L->log, "rank %d %s (job ending)", p->rank, how);
        return;
    }
    if (p->injected) {
        ucft_debug(&L->log, "rank %d %s (injected)", p->rank, how);
    } else if (abnormal) {
        fprintf(stderr, "ucftrun: rank %d %s\n", p->rank, how);
        if (L->failure_status == 0)
            L->failure_status = exit_code;
        if (L->opts.abort_on_failure) {
            if (L->nalive > 0)
                fprintf(stderr,
                        "ucftrun: --abort-on-failure: killing the other %d "
                        "rank%s\n",
                        L->nalive, L->nalive == 1 ? "" : "s");
            start_teardown(L, TEARDOWN_FAILURE, exit_code, SIGKILL);
            return;
        }
    } else {
        ucft_debug(&L->log, "rank %d %s (%s)", p->rank, how,
                   code == PMIX_EVENT_PROC_TERMINATED ? "finalized"
                                                      : "not finalized");
    }
    if (L->nalive > 0)
        (void)ucftrun_server_notify_death(&L->srv, p->rank, code, exit_code);
    kill_stopped_leftovers(L);
}

static void reap(launcher_t *L)
{
    for (;;) {
        int wstatus;
        pid_t pid = waitpid(-1, &wstatus, WNOHANG);

        if (pid <= 0)
            return;
        for (int r = 0; r < L->nprocs; r++) {
            if (L->procs[r].alive && L->procs[r].pid == pid) {
                on_rank_exit(L, &L->procs[r], wstatus);
                break;
            }
        }
    }
}

void ucftrun_job_on_signals(launcher_t *L)
{
    struct signalfd_siginfo si;
    char sbuf[16];

    while (read(L->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;

        if (sig == SIGCHLD)
            continue; /* reaped below, all at once */
        if (L->teardown == TEARDOWN_SIGNAL) {
            ucft_debug(&L->log, "second signal: killing the ranks now");
            ucftrun_job_signal_alive(L, SIGKILL);
            continue;
        }
        fprintf(stderr, "ucftrun: received %s, forwarding it to the ranks\n",
                sig_name(sig, sbuf, sizeof(sbuf)));
        start_teardown(L, TEARDOWN_SIGNAL, 128 + sig, sig);
    }
    reap(L);
}

void ucftrun_job_on_abort(launcher_t *L)
{
    uint64_t cnt;
    ucftrun_abort_t ab;

    (void)!read(L->srv.wake_fd, &cnt, sizeof(cnt));
    if (!ucftrun_server_take_abort(&L->srv, &ab))
        return;
    if (L->teardown == TEARDOWN_NONE) {
        int status = ab.status >= 1 && ab.status <= 255 ? ab.status : 1;

        fprintf(stderr,
                "ucftrun: rank %d called PMIx_Abort with status %d%s%s\n",
                ab.rank, ab.status, ab.msg[0] ? ": " : "", ab.msg);
        start_teardown(L, TEARDOWN_ABORT, status, SIGKILL);
    }
    if (ab.cbfunc != NULL)
        ab.cbfunc(PMIX_SUCCESS, ab.cbdata);
}

static void log_inject(launcher_t *L, ucftrun_inject_kind_t kind, int rank,
                       uint64_t now)
{
    /* Logged right before the signal. Not fsync'ed: readers on this
     * machine see the write at once, the file dies with the job, and an
     * fdatasync on a disk-backed TMPDIR (~3 ms on ext4) would delay the
     * death notice that fast-path detection waits for. */
    if (ucftrun_inject_log_append(&L->inject_log, kind, rank, now) != 0)
        ucft_warn(&L->log, "cannot append to %s", L->inject_log.path);
}

/* A kill that must wait for the rank's PMIx handshake (handshake.h). */
static int kill_must_wait(launcher_t *L, ucftrun_proc_t *p, uint64_t now)
{
    if (p->kill_deferred)
        return 1; /* an earlier kill already waits */
    if (p->stopped || !ucftrun_handshake_open(p))
        return 0;
    p->kill_deferred = 1;
    p->kill_by = now + UCFTRUN_HANDSHAKE_BOUND_NS;
    ucft_debug(&L->log,
               "--kill of rank %d waits for the end of its PMIx handshake",
               p->rank);
    return 1;
}

static int deferred_kills(const launcher_t *L)
{
    int n = 0;
    for (int r = 0; r < L->nprocs; r++)
        n += L->procs[r].kill_deferred;
    return n;
}

/* The deferred kills whose rank has connected (or whose bound passed). */
static void kill_after_handshake(launcher_t *L, uint64_t now)
{
    for (int r = 0; r < L->nprocs; r++) {
        ucftrun_proc_t *p = &L->procs[r];
        if (!p->kill_deferred)
            continue;
        int up = atomic_load(&p->connected);
        if (p->alive && !up && now < p->kill_by)
            continue;
        p->kill_deferred = 0;
        if (!p->alive)
            continue;
        if (up)
            ucft_debug(&L->log, "rank %d connected: its --kill now", r);
        else
            ucft_warn(&L->log,
                      "rank %d is still in its PMIx handshake %.1f s after "
                      "its --kill was due: killing it now",
                      r, UCFTRUN_HANDSHAKE_BOUND_NS / 1e9);
        log_inject(L, UCFTRUN_INJECT_KILL, r, now);
        ucftrun_proc_signal(p, SIGKILL);
    }
}

/* Signals the alive ranks an injection targets: one rank, or every rank of
 * a pretend node at once (all logged first, then all signalled, so that
 * the node goes down as one). A kill that would land in a rank's PMIx
 * handshake waits for its end. */
/* A network fault (--netns): the cut node's ranks are logged as "cut"
 * injections first, so that a reader of the log (ucft-bench detector)
 * sees them as victims, then the links change. The processes run on. */
static void fire_net_fault(launcher_t *L, const ucftrun_inject_t *inj)
{
    uint64_t now = ucft_clock_now_ns();
    int rc;

    switch (inj->kind) {
    case UCFTRUN_INJECT_CUT:
        for (int r = 0; r < L->nprocs; r++)
            if (L->nodes.node_of[r] == inj->target && L->procs[r].alive)
                log_inject(L, inj->kind, r, now);
        rc = ucftrun_netns_cut(&L->netns, inj->target);
        break;
    case UCFTRUN_INJECT_HEAL:
        rc = ucftrun_netns_heal(&L->netns, inj->target);
        break;
    default:
        rc = ucftrun_netns_partition(&L->netns, inj->side);
        break;
    }
    if (rc != 0)
        ucft_warn(&L->log, "--%s at %.3f s could not be applied",
                  ucftrun_inject_name(inj->kind), (double)inj->at_ns / 1e9);
    ucft_debug(&L->log, "--%s %d@%.3f applied in %.1f ms",
               ucftrun_inject_name(inj->kind), inj->target,
               (double)inj->at_ns / 1e9,
               (double)(ucft_clock_now_ns() - now) / 1e6);
}

static void fire_inject(launcher_t *L, const ucftrun_inject_t *inj)
{
    if (ucftrun_inject_signal(inj->kind) == 0) {
        fire_net_fault(L, inj);
        return;
    }
    int sig = ucftrun_inject_signal(inj->kind), n = 0;
    uint64_t now = ucft_clock_now_ns();
    int kill = inj->kind == UCFTRUN_INJECT_KILL;

    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < L->nprocs; r++) {
            ucftrun_proc_t *p = &L->procs[r];
            int hit = inj->target_kind == UCFTRUN_TARGET_NODE
                          ? L->nodes.node_of[r] == inj->target
                          : r == inj->target;

            if (!hit || !p->alive)
                continue;
            if (pass == 1) {
                if (!(kill && p->kill_deferred))
                    ucftrun_proc_signal(p, sig);
                continue;
            }
            n++;
            if (kill)
                p->injected = 1;
            else
                p->stopped = 1;
            if (!(kill && kill_must_wait(L, p, now)))
                log_inject(L, inj->kind, r, now);
        }
    }
    ucft_debug(&L->log, "--%s%s %d@%.3f: signalled %d rank(s)",
               ucftrun_inject_name(inj->kind),
               inj->target_kind == UCFTRUN_TARGET_NODE ? "-node" : "",
               inj->target, (double)inj->at_ns / 1e9, n);
    kill_stopped_leftovers(L);
}

/* --times-from connected: the injections' clock starts once every rank
 * has connected or ended. Checked where the timer is armed, at every turn
 * of the main loop (the server wakes it at each connection). */
static void inject_clock(launcher_t *L, uint64_t now)
{
    if (L->inject_t0 != NO_DEADLINE)
        return;
    for (int r = 0; r < L->nprocs; r++)
        if (L->procs[r].alive && !atomic_load(&L->procs[r].connected))
            return;
    L->inject_t0 = now;
    ucft_debug(&L->log,
               "every rank connected or ended %.3f s after the start: the "
               "injection times count from now",
               (double)(now - L->t0) / 1e9);
}

void ucftrun_job_on_timers(launcher_t *L)
{
    uint64_t now = ucft_clock_now_ns(), ticks;
    const ucftrun_inject_t *inj;

    (void)!read(L->timerfd, &ticks, sizeof(ticks));
    kill_after_handshake(L, now);
    while (L->inject_t0 <= now &&
           (inj = ucftrun_inject_pop_due(&L->sched, now - L->inject_t0)) !=
               NULL) {
        if (L->teardown == TEARDOWN_NONE)
            fire_inject(L, inj);
    }
    if (now >= L->timeout_at && L->teardown == TEARDOWN_NONE) {
        L->timeout_at = NO_DEADLINE;
        fprintf(stderr, "ucftrun: timeout after %.3g s, killing the job\n",
                (double)L->opts.timeout_ns / 1e9);
        start_teardown(L, TEARDOWN_TIMEOUT, EXIT_TIMEOUT, SIGKILL);
    }
    if (now >= L->grace_at) {
        L->grace_at = NO_DEADLINE;
        if (L->nalive > 0)
            ucft_debug(&L->log, "grace period over: killing %d rank(s)",
                       L->nalive);
        ucftrun_job_signal_alive(L, SIGKILL);
    }
    if (now >= L->drain_at) {
        L->drain_at = NO_DEADLINE;
        for (int r = 0; r < L->nprocs; r++) {
            ucftrun_output_close(&L->procs[r].out);
            ucftrun_output_close(&L->procs[r].err);
        }
    }
}

void ucftrun_job_arm_timer(launcher_t *L)
{
    uint64_t next = ucftrun_inject_next_ns(&L->sched);
    struct itimerspec its = {{0, 0}, {0, 0}};

    inject_clock(L, ucft_clock_now_ns());
    next = next == NO_DEADLINE || L->inject_t0 == NO_DEADLINE
               ? NO_DEADLINE
               : L->inject_t0 + next;
    if (L->timeout_at < next)
        next = L->timeout_at;
    if (L->grace_at < next)
        next = L->grace_at;
    if (L->drain_at < next)
        next = L->drain_at;
    if (deferred_kills(L) > 0) {
        uint64_t poll_at = ucft_clock_now_ns() + HANDSHAKE_POLL_NS;
        if (poll_at < next)
            next = poll_at;
    }
    if (next != NO_DEADLINE) {
        if (next == 0)
            next = 1; /* 0 would disarm */
        its.it_value.tv_sec = (time_t)(next / UCFT_NSEC_PER_SEC);
        its.it_value.tv_nsec = (long)(next % UCFT_NSEC_PER_SEC);
    }
    (void)timerfd_settime(L->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}
