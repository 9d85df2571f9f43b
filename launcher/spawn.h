/*
 * Ranks as processes: the per-rank record, binding to cores with hwloc, and
 * fork/exec with stdout/stderr pipes.
 *
 * Each rank runs in its own process group (pgid = its pid), so that a
 * signal sent by the launcher (injection, forwarding, cleanup) also reaches
 * whatever the rank started, e.g. when the program is a shell script.
 */
#ifndef UCFTRUN_SPAWN_H
#define UCFTRUN_SPAWN_H

#include "launcher/output.h"

#include <hwloc.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

struct ucftrun_server;

typedef struct ucftrun_proc {
    int rank;
    pid_t pid;            /* also the process group */
    int alive;            /* started and not yet reaped */
    int wstatus;          /* from waitpid, valid once reaped */
    atomic_int connected; /* set by the PMIx thread */
    atomic_int finalized; /* set by the PMIx thread (client_finalized) */
    int injected;         /* killed on purpose (--kill, or a --stop leftover) */
    int stopped;          /* SIGSTOP sent by --stop */
    int kill_deferred;    /* --kill waits for the PMIx handshake's end */
    uint64_t kill_by;     /* ... at most until then (launcher clock) */
    hwloc_cpuset_t cpuset; /* binding, or NULL when unbound */
    int netns_fd;          /* --netns: its node's network namespace, or -1 */
    struct ucftrun_server *srv;
    ucftrun_output_t out; /* the rank's stdout */
    ucftrun_output_t err; /* the rank's stderr */
} ucftrun_proc_t;

/* The hwloc view used for --bind-to core. */
typedef struct ucftrun_topo {
    hwloc_topology_t topo;
    int ncores;
} ucftrun_topo_t;

/* Loads the topology of this machine. Returns 0 or -1 (message in err). */
int ucftrun_topo_init(ucftrun_topo_t *t, char *err, size_t errlen);
void ucftrun_topo_fini(ucftrun_topo_t *t);

/* Core `index mod ncores` as a new bitmap (caller frees), or NULL. */
hwloc_cpuset_t ucftrun_topo_core_of(const ucftrun_topo_t *t, int index);

/*
 * Starts one rank: pipes for stdout/stderr, fork, then in the child: own
 * process group, stdin from /dev/null, its node's network namespace
 * (p->netns_fd, when >= 0), binding (p->cpuset), signal mask
 * `child_mask`, execve(path, argv, env). The child does only
 * async-signal-safe calls (the launcher has the PMIx thread). Returns 0 and
 * sets p->pid, p->alive and the output streams; -1 with a message in err.
 */
int ucftrun_spawn(ucftrun_proc_t *p, const ucftrun_topo_t *topo,
                  const char *path, char *const argv[], char *const env[],
                  const sigset_t *child_mask, int tag_output, char *err,
                  size_t errlen);

/* Sends `sig` to the rank's process group (or, while the rank is alive
 * and the group is not set up yet, to its pid). */
void ucftrun_proc_signal(const ucftrun_proc_t *p, int sig);

/* Copies `env` (e.g. environ) into a malloc'ed array of malloc'ed strings,
 * as PMIx_server_setup_fork() expects; NULL when out of memory. */
char **ucftrun_env_dup(char *const env[]);
void ucftrun_env_free(char **env);

/* Sets NAME=VALUE in such an array (replacing an existing NAME), growing
 * it with realloc. Returns 0, or -1 when out of memory (*env unchanged). */
int ucftrun_env_set(char ***env, const char *name, const char *value);

#endif
