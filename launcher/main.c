/*
 * ucftrun: a PMIx server on one machine (which can pretend to be several
 * nodes, --nodes) that starts N ranks, forwards their output, injects
 * failures and tells survivors when a rank dies. See docs/launcher.md for
 * the user's view. Job control (what happens on a death, a signal, an
 * abort, a deadline) is in job.c.
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
#include "launcher/job.h"
#include "launcher/tmpdir.h"
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

/* --- Setup, loop, cleanup ---------------------------------------------- */

/* --netns: the namespaces and links, the loss asked for, then the
 * launcher into the hub (so that its PMIx listener is there); each rank
 * enters its node's namespace when it starts. */
static int setup_netns(launcher_t *L)
{
    char err[512];

    if (ucftrun_netns_create(&L->netns, L->opts.nnodes, err, sizeof(err)) !=
        0) {
        fprintf(stderr, "ucftrun: %s\n", err);
        return -1;
    }
    for (size_t i = 0; i < L->opts.nnetem; i++) {
        const ucftrun_netem_t *m = &L->opts.netem[i];
        if ((m->loss_pct > 0 &&
             ucftrun_netns_loss(&L->netns, m->node, m->loss_pct) != 0) ||
            (m->delay_ns > 0 &&
             ucftrun_netns_delay(&L->netns, m->node, m->delay_ns,
                                 m->jitter_ns) != 0))
            return -1;
    }
    if (ucftrun_netns_enter_hub(&L->netns, err, sizeof(err)) != 0) {
        fprintf(stderr, "ucftrun: %s\n", err);
        return -1;
    }
    for (int r = 0; r < L->nprocs; r++)
        L->procs[r].netns_fd = L->netns.node_fd[L->nodes.node_of[r]];
    ucft_debug(&L->log, "%d network namespaces %s*, bridge %s.0/24",
               L->opts.nnodes, L->netns.prefix, UCFTRUN_NETNS_SUBNET);
    return 0;
}

/* --netns: UCX over TCP on the node's link only. Shared memory would
 * still work between the namespaces (one IPC namespace, one machine),
 * so ranks of different pretend nodes would bypass the links that the
 * faults cut; the ranks of one node talk TCP too (inside their
 * namespace, never crossing its link). */
static int netns_env(char ***env)
{
    /* UCX 1.13 connects TCP endpoints with a blocking connect() unless
     * told otherwise: a first message to a peer behind a cut or a
     * partition then blocks the sending thread (the heartbeat thread, so
     * its own heartbeats stop and its observer declares it) for as long
     * as the kernel retries the SYN. */
    return ucftrun_env_set(env, "UCX_TLS", "tcp") != 0 ||
                   ucftrun_env_set(env, "UCX_NET_DEVICES", "eth0") != 0 ||
                   ucftrun_env_set(env, "UCX_TCP_CONN_NB", "y") != 0
               ? -1
               : 0;
}

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
        L->procs[r].netns_fd = -1;
    }
    {
        char host[256] = "localhost";

        (void)gethostname(host, sizeof(host) - 1);
        if (ucftrun_nodes_init(&L->nodes, L->nprocs, L->opts.nnodes,
                               L->opts.map_by, host) != 0)
            return -1;
    }
    if (L->opts.bind == UCFTRUN_BIND_CORE) {
        if (ucftrun_topo_init(&L->topo, err, sizeof(err)) != 0) {
            fprintf(stderr, "ucftrun: --bind-to core: %s\n", err);
            return -1;
        }
        /* Each pretend node is a copy of this machine: a rank's core is
         * its local rank on its node mod ncores (without --nodes: its
         * rank). */
        for (int r = 0; r < L->nprocs; r++)
            L->procs[r].cpuset =
                ucftrun_topo_core_of(&L->topo, L->nodes.local_rank_of[r]);
    }
    if (L->opts.netns && setup_netns(L) != 0)
        return -1;
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
    if (ucftrun_server_init(&L->srv, L->tmpdir, L->opts.netns ? "br0" : NULL,
                            &L->log, err, sizeof(err)) != 0 ||
        ucftrun_server_register_job(&L->srv, L->procs, &L->nodes, err,
                                    sizeof(err)) != 0) {
        fprintf(stderr, "ucftrun: %s\n", err);
        return -1;
    }
    for (int r = 0; r < L->nprocs; r++) {
        char **env = ucftrun_env_dup(environ);
        int rc;

        if (env == NULL || ucftrun_server_setup_fork(&L->srv, r, &env) != 0 ||
            ucftrun_env_set(&env, UCFTRUN_INJECT_LOG_ENV, L->inject_log.path) !=
                0 ||
            (L->opts.netns && netns_env(&env) != 0)) {
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
        ucft_debug(&L->log, "rank %d is pid %d on node %d", r,
                   (int)L->procs[r].pid, L->nodes.node_of[r]);
    }
    L->t0 = ucft_clock_now_ns();
    L->inject_t0 = L->opts.times_from_connected ? NO_DEADLINE : L->t0;
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
        ucftrun_job_arm_timer(L);
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
            ucftrun_job_on_abort(L);
        if (pfd[n - 2].revents != 0)
            ucftrun_job_on_signals(L);
        if (pfd[n - 1].revents != 0)
            ucftrun_job_on_timers(L);
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
        ucftrun_netns_stop_relays(&L->netns); /* not ranks: reaped here */
        reap_all(L);
        for (int r = 0; r < L->nprocs; r++) {
            ucftrun_output_close(&L->procs[r].out);
            ucftrun_output_close(&L->procs[r].err);
        }
    }
    /* The namespaces go before the PMIx server: its finalize has crashed
     * in libpmix after a partitioned job was killed (docs/launcher.md),
     * and nothing may be left behind then. */
    ucftrun_netns_destroy(&L->netns);
    stuck = ucftrun_server_fini(&L->srv);
    if (L->procs != NULL) {
        for (int r = 0; r < L->nprocs; r++) {
            if (L->procs[r].cpuset != NULL)
                hwloc_bitmap_free(L->procs[r].cpuset);
        }
        free(L->procs);
    }
    ucftrun_topo_fini(&L->topo);
    ucftrun_nodes_free(&L->nodes);
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
    ucft__log_init(&L.log, L.opts.verbose ? UCFT_LOG_DEBUG : UCFT_LOG_WARN,
                   "ucftrun");
    if (setup(&L) != 0 || run(&L) != 0) {
        /* Signal whatever is already running, then clean up. */
        if (L.procs != NULL)
            ucftrun_job_signal_alive(&L, SIGKILL);
        return finish(&L, EXIT_LAUNCH_ERROR);
    }
    status = exit_status(&L);
    return finish(&L, status);
}
