/*
 * Starting ranks (see spawn.h).
 */
#include "launcher/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hwloc/glibc-sched.h>

int ucftrun_topo_init(ucftrun_topo_t *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    if (hwloc_topology_init(&t->topo) != 0) {
        snprintf(err, errlen, "hwloc_topology_init failed");
        return -1;
    }
    if (hwloc_topology_load(t->topo) != 0) {
        snprintf(err, errlen, "hwloc_topology_load failed");
        hwloc_topology_destroy(t->topo);
        t->topo = NULL;
        return -1;
    }
    t->ncores = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
    if (t->ncores <= 0) {
        snprintf(err, errlen, "hwloc found no cores to bind to");
        hwloc_topology_destroy(t->topo);
        t->topo = NULL;
        return -1;
    }
    return 0;
}

void ucftrun_topo_fini(ucftrun_topo_t *t)
{
    if (t->topo != NULL)
        hwloc_topology_destroy(t->topo);
    t->topo = NULL;
}

hwloc_cpuset_t ucftrun_topo_core_of(const ucftrun_topo_t *t, int index)
{
    hwloc_obj_t core;

    if (t == NULL || t->topo == NULL || t->ncores <= 0)
        return NULL;
    core = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_CORE, index % t->ncores);
    return core != NULL ? hwloc_bitmap_dup(core->cpuset) : NULL;
}

char **ucftrun_env_dup(char *const env[])
{
    size_t n = 0;
    char **copy;

    while (env != NULL && env[n] != NULL)
        n++;
    copy = calloc(n + 1, sizeof(*copy));
    if (copy == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        copy[i] = strdup(env[i]);
        if (copy[i] == NULL) {
            ucftrun_env_free(copy);
            return NULL;
        }
    }
    return copy;
}

void ucftrun_env_free(char **env)
{
    if (env == NULL)
        return;
    for (size_t i = 0; env[i] != NULL; i++)
        free(env[i]);
    free(env);
}

int ucftrun_env_set(char ***env, const char *name, const char *value)
{
    size_t nlen = strlen(name), n = 0;
    size_t len = nlen + strlen(value) + 2;
    char *entry = malloc(len), **grown;

    if (entry == NULL)
        return -1;
    snprintf(entry, len, "%s=%s", name, value);
    for (; (*env)[n] != NULL; n++) {
        if (strncmp((*env)[n], name, nlen) == 0 && (*env)[n][nlen] == '=') {
            free((*env)[n]);
            (*env)[n] = entry;
            return 0;
        }
    }
    grown = realloc(*env, (n + 2) * sizeof(*grown));
    if (grown == NULL) {
        free(entry);
        return -1;
    }
    grown[n] = entry;
    grown[n + 1] = NULL;
    *env = grown;
    return 0;
}

static void put_str(const char *t)
{
    size_t n = 0;
    while (t[n] != '\0')
        n++;
    (void)!write(2, t, n);
}

/* Why execve failed, with async-signal-safe calls only (no strerror). */
static void exec_failed(const char *path, int err)
{
    char num[16];
    int i = (int)sizeof(num) - 1;
    num[i] = '\0';
    for (unsigned v = (unsigned)err; i > 0 && (v > 0 || i == 15); v /= 10)
        num[--i] = (char)('0' + v % 10);
    put_str("ucftrun: cannot execute ");
    put_str(path);
    put_str(": ");
    put_str(err == ENOEXEC  ? "not an executable format"
            : err == ENOENT ? "not found (or its #! interpreter is missing)"
            : err == EACCES ? "permission denied"
            : err == ENOMEM ? "out of memory"
                            : "errno ");
    if (err != ENOEXEC && err != ENOENT && err != EACCES && err != ENOMEM)
        put_str(num + i);
    put_str("\n");
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void child_exec(int devnull, int out_w, int err_w, int netns_fd,
                       const cpu_set_t *cs, const sigset_t *mask,
                       const char *path, char *const argv[], char *const env[])
{
    (void)setpgid(0, 0);
    if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) != 0)
        _exit(126);
    if (dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0)
        _exit(127);
    /* Everything else (other ranks' pipes, PMIx sockets) stays with the
     * launcher. */
    if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
        for (int fd = 3; fd < 1024; fd++)
            (void)close(fd);
    }
    if (cs != NULL)
        (void)sched_setaffinity(0, sizeof(*cs), cs);
    (void)sigprocmask(SIG_SETMASK, mask, NULL);
    execve(path, argv, env);
    exec_failed(path, errno);
    _exit(127);
}

int ucftrun_spawn(ucftrun_proc_t *p, const ucftrun_topo_t *topo,
                  const char *path, char *const argv[], char *const env[],
                  const sigset_t *child_mask, int tag_output, char *err,
                  size_t errlen)
{
    int out_p[2] = {-1, -1}, err_p[2] = {-1, -1}, devnull = -1;
    cpu_set_t cs;
    const cpu_set_t *csp = NULL;
    pid_t pid;

    if (p->cpuset != NULL && topo != NULL && topo->topo != NULL) {
        CPU_ZERO(&cs);
        if (hwloc_cpuset_to_glibc_sched_affinity(topo->topo, p->cpuset, &cs,
                                                 sizeof(cs)) == 0)
            csp = &cs;
    }
    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0 || pipe2(out_p, O_CLOEXEC) != 0 ||
        pipe2(err_p, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "cannot create pipes for rank %d: %s", p->rank,
                 strerror(errno));
        goto err_close;
    }
    pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot fork rank %d: %s", p->rank,
                 strerror(errno));
        goto err_close;
    }
    if (pid == 0)
        child_exec(devnull, out_p[1], err_p[1], p->netns_fd, csp, child_mask,
                   path, argv, env);
    /* Also here, so that the group exists before we signal it. */
    (void)setpgid(pid, pid);
    close(devnull);
    close(out_p[1]);
    close(err_p[1]);
    p->pid = pid;
    p->alive = 1;
    ucftrun_output_init(&p->out, out_p[0], 1, p->rank, tag_output);
    ucftrun_output_init(&p->err, err_p[0], 2, p->rank, tag_output);
    return 0;

err_close:
    for (int i = 0; i < 2; i++) {
        if (out_p[i] >= 0)
            close(out_p[i]);
        if (err_p[i] >= 0)
            close(err_p[i]);
    }
    if (devnull >= 0)
        close(devnull);
    return -1;
}

void ucftrun_proc_signal(const ucftrun_proc_t *p, int sig)
{
    if (p->pid <= 0)
        return;
    /* The pid alone only while it is ours (not yet reaped): after that it
     * may belong to someone else. */
    if (kill(-p->pid, sig) != 0 && p->alive)
        (void)kill(p->pid, sig);
}
