/* Watching the processes of the ranks on this node (see procwatch.h). */
#include "runtime/procwatch.h"
#include "runtime/bootstrap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PW_KEY     "ucft.proc"
#define PW_VERSION 1u

/* What a rank publishes about its process. */
typedef struct pw_ident {
    uint32_t version;
    int32_t pid;
    uint64_t start; /* start time, clock ticks since boot (/proc stat 22) */
    uint64_t pidns; /* inode of the pid namespace */
    char boot_id[40];
} pw_ident_t;

/* Field 22 of /proc/<pid>/stat, or 0 when unreadable. */
static uint64_t proc_start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name is in parentheses and may hold anything: count the
     * fields after the last ')' (field 3 is the first one there). */
    char *p = strrchr(buf, ')');
    if (p == NULL)
        return 0;
    p++;
    for (int field = 3; field < 22; field++) {
        p = strchr(p + 1, ' ');
        if (p == NULL)
            return 0;
    }
    return strtoull(p + 1, NULL, 10);
}

static int self_ident(pw_ident_t *id)
{
    struct stat st;
    memset(id, 0, sizeof(*id));
    id->version = PW_VERSION;
    id->pid = (int32_t)getpid();
    id->start = proc_start_time(getpid());
    if (id->start == 0 || stat("/proc/self/ns/pid", &st) != 0)
        return -1;
    id->pidns = (uint64_t)st.st_ino;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f == NULL)
        return -1;
    int ok = fgets(id->boot_id, sizeof(id->boot_id), f) != NULL;
    fclose(f);
    return ok ? 0 : -1;
}

ucft_status_t rt_procwatch_publish(struct rt_boot *b)
{
    pw_ident_t id;
    if (b->singleton || self_ident(&id) != 0)
        return UCFT_OK; /* nothing to offer: peers will not watch us */
    return rt_boot_put(b, PW_KEY, &id, sizeof(id));
}

/* A pidfd for `rank`'s process, or -1. */
static int open_peer(struct rt_boot *b, const pw_ident_t *me, int rank,
                     const ucft_log_t *log)
{
    void *data = NULL;
    size_t len = 0;
    pw_ident_t id;

    if (rt_boot_get_opt(b, PW_KEY, rank, &data, &len) != UCFT_OK)
        return -1;
    int ok = len == sizeof(id);
    if (ok)
        memcpy(&id, data, sizeof(id));
    free(data);
    if (!ok || id.version != PW_VERSION || id.pidns != me->pidns ||
        strncmp(id.boot_id, me->boot_id, sizeof(id.boot_id)) != 0) {
        ucft_debug(log,
                   "rank %d: another machine or pid namespace, not "
                   "watched by pidfd",
                   rank);
        return -1;
    }
    int fd = (int)syscall(SYS_pidfd_open, (pid_t)id.pid, 0);
    if (fd < 0) {
        ucft_debug(log, "rank %d: pidfd_open(%d): %s", rank, (int)id.pid,
                   strerror(errno));
        return -1;
    }
    /* Opened after the check could be a new process with a reused pid: its
     * start time tells. */
    if (proc_start_time((pid_t)id.pid) != id.start) {
        ucft_debug(log, "rank %d: pid %d is another process now", rank,
                   (int)id.pid);
        close(fd);
        return -1;
    }
    return fd;
}

void rt_procwatch_open(rt_procwatch_t *w, struct rt_boot *b,
                       const ucft_log_t *log)
{
    pw_ident_t me;
    int *peers = NULL;
    size_t npeers = 0;

    memset(w, 0, sizeof(*w));
    w->epfd = -1;
    w->log = log;
    if (b->singleton || self_ident(&me) != 0 ||
        rt_boot_local_peers(b, &peers, &npeers) != UCFT_OK || npeers < 2) {
        free(peers);
        return;
    }
    w->fds = malloc(npeers * sizeof(*w->fds));
    w->ranks = malloc(npeers * sizeof(*w->ranks));
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w->fds == NULL || w->ranks == NULL || w->epfd < 0) {
        free(peers);
        rt_procwatch_close(w);
        return;
    }
    for (size_t i = 0; i < npeers; i++) {
        if (peers[i] == b->rank)
            continue;
        int fd = open_peer(b, &me, peers[i], log);
        if (fd < 0)
            continue;
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = w->n};
        if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            close(fd);
            continue;
        }
        w->fds[w->n] = fd;
        w->ranks[w->n] = peers[i];
        w->n++;
    }
    free(peers);
    ucft_debug(log, "watching %zu local rank(s) through pidfds", w->n);
    if (w->n == 0)
        rt_procwatch_close(w);
}

int rt_procwatch_fd(const rt_procwatch_t *w)
{
    return w->epfd;
}

size_t rt_procwatch_take(rt_procwatch_t *w, int *ranks, size_t max)
{
    struct epoll_event ev[32];
    size_t got = 0;

    if (w->epfd < 0 || max == 0)
        return 0;
    int k = epoll_wait(w->epfd, ev, max < 32 ? (int)max : 32, 0);
    for (int i = 0; i < k; i++) {
        size_t j = (size_t)ev[i].data.u64;
        if (j >= w->n || w->fds[j] < 0)
            continue;
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->fds[j], NULL);
        close(w->fds[j]);
        w->fds[j] = -1;
        ranks[got++] = w->ranks[j];
    }
    return got;
}

void rt_procwatch_close(rt_procwatch_t *w)
{
    for (size_t i = 0; w->fds != NULL && i < w->n; i++)
        if (w->fds[i] >= 0)
            close(w->fds[i]);
    if (w->epfd >= 0)
        close(w->epfd);
    free(w->fds);
    free(w->ranks);
    w->fds = w->ranks = NULL;
    w->n = 0;
    w->epfd = -1;
}
