/*
 * ucftrun: a single-node PMIx server that starts N ranks, forwards their
 * output, injects failures and tells survivors when a rank dies. See
 * docs/launcher.md for the user's view.
 *
 * Structure: setup (block signals, rendezvous dir, PMIx server, job, fork
 * the ranks), then one poll() loop over
 *   1. the ranks' stdout/stderr pipes (forward whole lines),
 *   2. the PMIx wake eventfd (a rank called PMIx_Abort),
 *   3. a signalfd (SIGCHLD: reap and notify; SIGINT/TERM/HUP/QUIT: forward),
 *   4. a timerfd armed at the earliest deadline (injections, --timeout,
 *      the grace period after a forwarded signal, the output drain),
 * until every rank is reaped and its pipes are drained; then cleanup.
 *
 * Signals are blocked before PMIx_server_init so that the PMIx progress
 * thread inherits the mask; the children get the original mask back before
 * exec. No signal handlers, no globals.
 */
#include "launcher/inject.h"
#include "launcher/opts.h"
#include "launcher/server.h"
#include "launcher/spawn.h"
#include "launcher/tmpdir.h"
#include "runtime/base/clock.h"
#include "runtime/base/log.h"
#include "ucft.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

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
    uint64_t timeout_at, grace_at, drain_at;
    teardown_t teardown;
    int teardown_status; /* exit status decided by the teardown cause */
    int failure_status;  /* first failing rank's status, 0 if none */
} launcher_t;

static const char *sig_name(int sig, char *buf, size_t len)
{
    const char *abbrev = sigabbrev_np(sig);

    snprintf(buf, len, "SIG%s", abbrev != NULL ? abbrev : "?");
    return buf;
}

/* --- Job control ------------------------------------------------------- */

static void signal_alive(launcher_t *L, int sig)
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
    signal_alive(L, sig);
    if (sig != SIGKILL) {
        signal_alive(L, SIGCONT); /* stopped ranks must see it too */
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

static void on_signals(launcher_t *L)
{
    struct signalfd_siginfo si;
    char sbuf[16];

    while (read(L->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;

        if (sig == SIGCHLD)
            continue; /* reaped below, all at once */
        if (L->teardown == TEARDOWN_SIGNAL) {
            ucft_debug(&L->log, "second signal: killing the ranks now");
            signal_alive(L, SIGKILL);
            continue;
        }
        fprintf(stderr, "ucftrun: received %s, forwarding it to the ranks\n",
                sig_name(sig, sbuf, sizeof(sbuf)));
        start_teardown(L, TEARDOWN_SIGNAL, 128 + sig, sig);
    }
    reap(L);
}

static void on_abort(launcher_t *L)
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

static void on_timers(launcher_t *L)
{
    uint64_t now = ucft_clock_now_ns(), ticks;
    const ucftrun_inject_t *inj;

    (void)!read(L->timerfd, &ticks, sizeof(ticks));
    while ((inj = ucftrun_inject_pop_due(&L->sched, now - L->t0)) != NULL) {
        ucftrun_proc_t *p = &L->procs[inj->target];

        if (!p->alive || L->teardown != TEARDOWN_NONE)
            continue;
        ucft_debug(&L->log, "--%s %d@%.3f: signalling rank %d",
                   ucftrun_inject_name(inj->kind), inj->target,
                   (double)inj->at_ns / 1e9, inj->target);
        if (inj->kind == UCFTRUN_INJECT_KILL)
            p->injected = 1;
        else
            p->stopped = 1;
        /* Logged right before the signal. Not fsync'ed: readers on this
         * machine see the write at once, the file dies with the job, and
         * an fdatasync on a disk-backed TMPDIR (~3 ms on ext4) would delay
         * the death notice that fast-path detection waits for. */
        if (ucftrun_inject_log_append(&L->inject_log, inj->kind, inj->target,
                                      ucft_clock_now_ns()) != 0)
            ucft_warn(&L->log, "cannot append to %s", L->inject_log.path);
        ucftrun_proc_signal(p, ucftrun_inject_signal(inj->kind));
        kill_stopped_leftovers(L);
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
        signal_alive(L, SIGKILL);
    }
    if (now >= L->drain_at) {
        L->drain_at = NO_DEADLINE;
        for (int r = 0; r < L->nprocs; r++) {
            ucftrun_output_close(&L->procs[r].out);
            ucftrun_output_close(&L->procs[r].err);
        }
    }
}

static void arm_timer(launcher_t *L)
{
    uint64_t next = ucftrun_inject_next_ns(&L->sched);
    struct itimerspec its = {{0, 0}, {0, 0}};

    next = next == NO_DEADLINE ? NO_DEADLINE : L->t0 + next;
    if (L->timeout_at < next)
        next = L->timeout_at;
    if (L->grace_at < next)
        next = L->grace_at;
    if (L->drain_at < next)
        next = L->drain_at;
    if (next != NO_DEADLINE) {
        if (next == 0)
            next = 1; /* 0 would disarm */
        its.it_value.tv_sec = (time_t)(next / UCFT_NSEC_PER_SEC);
        its.it_value.tv_nsec = (long)(next % UCFT_NSEC_PER_SEC);
    }
    (void)timerfd_settime(L->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* --- Setup, loop, cleanup ---------------------------------------------- */

static int setup(launcher_t *L)
{
    sigset_t old;
    char err[256];
    static const int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT};

    sigemptyset(&L->handled);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaddset(&L->handled, sigs[i]);
    {
        /* SIGPIPE too: a closed stdout must not kill the launcher. */
        sigset_t block = L->handled;
        sigaddset(&block, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        L->child_mask = old;
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
            sigdelset(&L->child_mask, sigs[i]);
        sigdelset(&L->child_mask, SIGPIPE);
    }
    /* Orphans of the ranks (a script's children) become our children, so
     * that we reap them instead of leaving zombies to an init that may not
     * reap. */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
    L->sigfd = signalfd(-1, &L->handled, SFD_CLOEXEC | SFD_NONBLOCK);
    L->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (L->sigfd < 0 || L->timerfd < 0) {
        fprintf(stderr, "ucftrun: signalfd/timerfd: %s\n", strerror(errno));
        return -1;
    }
    if (ucftrun_inject_sched_init(&L->sched, L->opts.injects,
                                  L->opts.ninjects) != 0)
        return -1;
    L->procs = calloc((size_t)L->nprocs, sizeof(*L->procs));
    if (L->procs == NULL)
        return -1;
    for (int r = 0; r < L->nprocs; r++) {
        L->procs[r].rank = r;
        L->procs[r].out.fd = L->procs[r].err.fd = -1;
    }
    if (L->opts.bind == UCFTRUN_BIND_CORE) {
        if (ucftrun_topo_init(&L->topo, err, sizeof(err)) != 0) {
            fprintf(stderr, "ucftrun: --bind-to core: %s\n", err);
            return -1;
        }
        for (int r = 0; r < L->nprocs; r++)
            L->procs[r].cpuset = ucftrun_topo_core_of(&L->topo, r);
    }
    if (ucftrun_tmpdir_create(L->tmpdir, sizeof(L->tmpdir), err, sizeof(err)) !=
        0) {
        fprintf(stderr, "ucftrun: %s\n", err);
        return -1;
    }
    ucft_debug(&L->log, "rendezvous directory %s", L->tmpdir);
    if (ucftrun_inject_log_open(&L->inject_log, L->tmpdir, err, sizeof(err)) !=
        0) {
        fprintf(stderr, "ucftrun: %s\n", err);
        return -1;
    }
    if (ucftrun_server_init(&L->srv, L->tmpdir, &L->log, err, sizeof(err)) !=
            0 ||
        ucftrun_server_register_job(&L->srv, L->procs, L->nprocs, err,
                                    sizeof(err)) != 0) {
        fprintf(stderr, "ucftrun: %s\n", err);
        return -1;
    }
    for (int r = 0; r < L->nprocs; r++) {
        char **env = ucftrun_env_dup(environ);
        int rc;

        if (env == NULL || ucftrun_server_setup_fork(&L->srv, r, &env) != 0 ||
            ucftrun_env_set(&env, UCFTRUN_INJECT_LOG_ENV, L->inject_log.path) !=
                0) {
            ucftrun_env_free(env);
            fprintf(stderr,
                    "ucftrun: cannot set up the environment of rank "
                    "%d\n",
                    r);
            return -1;
        }
        rc = ucftrun_spawn(&L->procs[r], &L->topo, L->path, L->opts.prog_argv,
                           env, &L->child_mask, L->opts.tag_output, err,
                           sizeof(err));
        ucftrun_env_free(env);
        if (rc != 0) {
            fprintf(stderr, "ucftrun: %s\n", err);
            return -1;
        }
        L->nalive++;
        ucft_debug(&L->log, "rank %d is pid %d", r, (int)L->procs[r].pid);
    }
    L->t0 = ucft_clock_now_ns();
    if (L->opts.timeout_ns > 0)
        L->timeout_at = L->t0 + L->opts.timeout_ns;
    return 0;
}

static int outputs_open(const launcher_t *L)
{
    for (int r = 0; r < L->nprocs; r++) {
        if (L->procs[r].out.fd >= 0 || L->procs[r].err.fd >= 0)
            return 1;
    }
    return 0;
}

static int run(launcher_t *L)
{
    size_t cap = 3 + 2 * (size_t)L->nprocs;
    struct pollfd *pfd = calloc(cap, sizeof(*pfd));
    ucftrun_output_t **pout = calloc(cap, sizeof(*pout));

    if (pfd == NULL || pout == NULL) {
        free(pfd);
        free(pout);
        return -1;
    }
    while (L->nalive > 0 || outputs_open(L)) {
        size_t n = 0;

        if (L->nalive == 0 && L->drain_at == NO_DEADLINE)
            L->drain_at = ucft_clock_now_ns() + DRAIN_NS;
        arm_timer(L);
        for (int r = 0; r < L->nprocs; r++) {
            ucftrun_output_t *o[2] = {&L->procs[r].out, &L->procs[r].err};
            for (int k = 0; k < 2; k++) {
                if (o[k]->fd >= 0) {
                    pfd[n] = (struct pollfd){.fd = o[k]->fd, .events = POLLIN};
                    pout[n++] = o[k];
                }
            }
        }
        pfd[n++] = (struct pollfd){.fd = L->srv.wake_fd, .events = POLLIN};
        pfd[n++] = (struct pollfd){.fd = L->sigfd, .events = POLLIN};
        pfd[n++] = (struct pollfd){.fd = L->timerfd, .events = POLLIN};
        if (poll(pfd, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "ucftrun: poll: %s\n", strerror(errno));
            free(pfd);
            free(pout);
            return -1;
        }
        for (size_t i = 0; i + 3 < n; i++) {
            if (pfd[i].revents != 0)
                (void)ucftrun_output_progress(pout[i]);
        }
        if (pfd[n - 3].revents != 0)
            on_abort(L);
        if (pfd[n - 2].revents != 0)
            on_signals(L);
        if (pfd[n - 1].revents != 0)
            on_timers(L);
    }
    free(pfd);
    free(pout);
    return 0;
}

/* Reaps every child (ranks and orphans adopted as subreaper) after they
 * were SIGKILLed; bounded, in case one escaped into another group. */
static void reap_all(launcher_t *L)
{
    uint64_t until = ucft_clock_now_ns() + DRAIN_NS;
    struct timespec ms = {0, 1000 * 1000};

    for (;;) {
        int wstatus;
        pid_t pid = waitpid(-1, &wstatus, WNOHANG);

        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            return; /* ECHILD: nobody left */
        for (int r = 0; pid > 0 && r < L->nprocs; r++) {
            if (L->procs[r].alive && L->procs[r].pid == pid) {
                L->procs[r].alive = 0;
                L->nalive--;
            }
        }
        if (pid == 0) {
            if (ucft_clock_now_ns() > until)
                return;
            nanosleep(&ms, NULL);
        }
    }
}

/* Returns 0, or -1 when the PMIx server could not be finalized (the
 * process must then end with _exit). */
static int cleanup(launcher_t *L)
{
    int stuck;

    if (L->procs != NULL) {
        /* Whatever the ranks left behind in their process groups. */
        for (int r = 0; r < L->nprocs; r++) {
            ucftrun_proc_t *p = &L->procs[r];
            if (p->pid > 0)
                ucftrun_proc_signal(p, SIGKILL);
        }
        reap_all(L);
        for (int r = 0; r < L->nprocs; r++) {
            ucftrun_output_close(&L->procs[r].out);
            ucftrun_output_close(&L->procs[r].err);
        }
    }
    stuck = ucftrun_server_fini(&L->srv);
    if (L->procs != NULL) {
        for (int r = 0; r < L->nprocs; r++) {
            if (L->procs[r].cpuset != NULL)
                hwloc_bitmap_free(L->procs[r].cpuset);
        }
        free(L->procs);
    }
    ucftrun_topo_fini(&L->topo);
    if (L->tmpdir[0] != '\0') {
        ucftrun_tmpdir_remove(L->tmpdir);
        ucft_debug(&L->log, "removed %s", L->tmpdir);
    }
    ucftrun_inject_sched_free(&L->sched);
    ucftrun_inject_log_close(&L->inject_log);
    if (L->sigfd >= 0)
        close(L->sigfd);
    if (L->timerfd >= 0)
        close(L->timerfd);
    ucftrun_opts_free(&L->opts);
    return stuck;
}

/* Ends the launcher with `status` once cleaned up; after a stuck PMIx
 * finalize without running exit handlers (they would wait for it). */
static int finish(launcher_t *L, int status)
{
    if (cleanup(L) != 0) {
        fflush(NULL);
        _exit(status);
    }
    return status;
}

static int exit_status(const launcher_t *L)
{
    if (L->teardown != TEARDOWN_NONE)
        return L->teardown_status;
    return L->failure_status;
}

int main(int argc, char **argv)
{
    launcher_t L;
    char err[512];
    int status;

    memset(&L, 0, sizeof(L));
    L.sigfd = L.timerfd = L.srv.wake_fd = L.inject_log.fd = -1;
    L.timeout_at = L.grace_at = L.drain_at = NO_DEADLINE;
    switch (ucftrun_opts_parse(argc, argv, &L.opts, err, sizeof(err))) {
    case UCFTRUN_ACTION_HELP:
        fputs(ucftrun_opts_usage(), stdout);
        ucftrun_opts_free(&L.opts);
        return 0;
    case UCFTRUN_ACTION_VERSION:
        printf("ucftrun (ucft) %d.%d.%d, PMIx %s\n", UCFT_VERSION_MAJOR,
               UCFT_VERSION_MINOR, UCFT_VERSION_PATCH, PMIx_Get_version());
        ucftrun_opts_free(&L.opts);
        return 0;
    case UCFTRUN_ACTION_ERROR:
        fprintf(stderr,
                "ucftrun: %s\nTry 'ucftrun --help' for more information.\n",
                err);
        ucftrun_opts_free(&L.opts);
        return UCFTRUN_EXIT_USAGE;
    case UCFTRUN_ACTION_RUN:
        break;
    }
    if (ucftrun_opts_find_program(L.opts.prog_argv[0], getenv("PATH"), L.path,
                                  sizeof(L.path), err, sizeof(err)) != 0) {
        fprintf(stderr,
                "ucftrun: %s\nTry 'ucftrun --help' for more information.\n",
                err);
        ucftrun_opts_free(&L.opts);
        return UCFTRUN_EXIT_USAGE;
    }
    L.nprocs = L.opts.nprocs;
    ucft_log_init(&L.log, L.opts.verbose ? UCFT_LOG_DEBUG : UCFT_LOG_WARN,
                  "ucftrun");
    if (setup(&L) != 0 || run(&L) != 0) {
        /* Signal whatever is already running, then clean up. */
        if (L.procs != NULL)
            signal_alive(&L, SIGKILL);
        return finish(&L, EXIT_LAUNCH_ERROR);
    }
    status = exit_status(&L);
    return finish(&L, status);
}
