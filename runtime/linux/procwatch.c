/* Watching the processes of the ranks on this node (see procwatch.h). */
#include "runtime/linux/procwatch.h"
#include "bootstrap/bootstrap.h"
#include "runtime/base/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PW_KEY      "ucft.proc"
#define PW_VERSION  4u         /* 4: the network namespace */
#define PW_RING_TAG UINT64_MAX /* epoll data of the futex ring */
/* Every rank is a candidate up to this many ranks, and while the pidfds
 * take at most a quarter of the descriptors the process may open. */
#define PW_MAX_WATCH 512u

/* What a rank publishes about its process. */
typedef struct pw_ident {
    uint32_t version;
    int32_t pid;
    uint64_t start; /* start time, clock ticks since boot (/proc stat 22) */
    uint64_t pidns; /* inode of the pid namespace */
    uint64_t netns; /* inode of the network namespace */
    char boot_id[40];
    int32_t alive_fd; /* memfd of the alive slots, -1: none */
    uint32_t nslots;  /* one per local peer, in rank order */
} pw_ident_t;

/* Field 22 of /proc/<pid>/stat, or 0 when unreadable. */
static uint64_t proc_start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    const char *p = ucft__procstat_read(path, buf, sizeof(buf));
    if (p == NULL)
        return 0;
    for (int field = 3; field < 22; field++) { /* p is before field 3 */
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
    if (stat("/proc/self/ns/net", &st) != 0)
        return -1;
    id->netns = (uint64_t)st.st_ino;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f == NULL)
        return -1;
    int ok = fgets(id->boot_id, sizeof(id->boot_id), f) != NULL;
    fclose(f);
    return ok ? 0 : -1;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The local peers in rank order (slot i belongs to the i-th), or NULL. */
static int *sorted_peers(struct rt_boot *b, size_t *n)
{
    int *peers = NULL;
    if (boot_local_peers(b, &peers, n) != UCFT_OK || *n < 2) {
        free(peers);
        *n = 0;
        return NULL;
    }
    qsort(peers, *n, sizeof(*peers), cmp_int);
    return peers;
}

static unsigned position_of(const int *peers, size_t n, int rank)
{
    for (size_t i = 0; i < n; i++)
        if (peers[i] == rank)
            return (unsigned)i;
    return (unsigned)n;
}

void rt_procwatch_init(rt_procwatch_t *w, const ucft_log_t *log)
{
    memset(w, 0, sizeof(*w));
    w->epfd = -1;
    w->ring.fd = -1;
    w->own.fd = -1;
    w->log = log;
}

ucft_status_t rt_procwatch_publish(rt_procwatch_t *w, struct rt_boot *b)
{
    pw_ident_t id;
    size_t n = 0;

    if (b->singleton || self_ident(&id) != 0)
        return UCFT_OK; /* nothing to offer: peers will not watch us */
    id.alive_fd = -1;
    /* Kept for rt_procwatch_open and the slot positions. */
    w->local = sorted_peers(b, &n);
    w->nlocal = n;
    unsigned me = position_of(w->local, n, b->rank);
    if (w->local != NULL && me < n && n <= RT_ALIVE_MAX_SLOTS &&
        rt_alive_create(&w->own, (unsigned)n) == UCFT_OK) {
        id.alive_fd = w->own.fd;
        id.nslots = (uint32_t)n;
        w->own_slot = me;
    }
    return boot_put(b, PW_KEY, &id, sizeof(id));
}

/* A pidfd for `rank`'s process, or -1. */
static int open_peer(struct rt_boot *b, const pw_ident_t *me, int rank,
                     pw_ident_t *idp, const ucft_log_t *log)
{
    void *data = NULL;
    size_t len = 0;
    pw_ident_t id;

    if (boot_get_opt(b, PW_KEY, rank, &data, &len) != UCFT_OK)
        return -1;
    int ok = len == sizeof(id);
    if (ok)
        memcpy(&id, data, sizeof(id));
    free(data);
    if (!ok || id.version != PW_VERSION || id.pidns != me->pidns ||
        id.netns != me->netns ||
        strncmp(id.boot_id, me->boot_id, sizeof(id.boot_id)) != 0) {
        ucft_debug(log,
                   "rank %d: another machine, pid or network namespace, "
                   "not watched by pidfd",
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
    *idp = id;
    return fd;
}

static int pidfd_ended(int pidfd)
{
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    return poll(&p, 1, 0) != 0;
}

/* Maps our slot of the peer's slots (the peer `id`, pidfd open). */
static void attach_slot(rt_procwatch_t *w, rt_pw_peer_t *pp,
                        const pw_ident_t *id, unsigned mine)
{
    if (w->ring.fd < 0 || id->alive_fd < 0 || id->nslots == 0 ||
        mine >= id->nslots)
        return;
    ucft_status_t st = rt_alive_attach(&pp->slot, (pid_t)id->pid, id->alive_fd,
                                       id->nslots, mine);
    /* The fd number was that process's only if it is still alive now. */
    if (st == UCFT_OK && pidfd_ended(pp->pidfd))
        rt_alive_detach(&pp->slot);
    if (st != UCFT_OK)
        ucft_debug(w->log, "rank %d: its alive slots not mapped (%s)", pp->rank,
                   ucft_status_string(st));
    if (pp->slot.word != NULL) {
        pp->pending_arm = 1;
        w->unarmed++;
    }
}

static void close_watch(rt_procwatch_t *w);

static int epoll_add(int epfd, int fd, uint64_t data)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = data};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* The ranks to watch: every other rank while the job is small enough
 * (PW_MAX_WATCH; open_peer keeps those this kernel shows, pretend nodes
 * of one machine included), else the local peers. */
static int *watch_candidates(const rt_procwatch_t *w, struct rt_boot *b,
                             size_t *n)
{
    struct rlimit nofile;
    int all = b->size > 0 && (unsigned)b->size <= PW_MAX_WATCH &&
              getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
              (nofile.rlim_cur == RLIM_INFINITY ||
               (rlim_t)b->size <= nofile.rlim_cur / 4);
    size_t m = all ? (size_t)b->size : w->nlocal;
    int *c = malloc((m ? m : 1) * sizeof(*c));
    *n = 0;
    if (c == NULL)
        return NULL;
    for (size_t i = 0; i < m; i++) {
        int r = all ? (int)i : w->local[i];
        if (r != b->rank)
            c[(*n)++] = r;
    }
    return c;
}

void rt_procwatch_open(rt_procwatch_t *w, struct rt_boot *b)
{
    pw_ident_t me, id;

    if (b->singleton || self_ident(&me) != 0)
        return; /* nothing published (rt_procwatch_publish): no watch */
    size_t npeers = 0;
    int *peers = watch_candidates(w, b, &npeers);
    unsigned mine = position_of(w->local, w->nlocal, b->rank);
    w->peer = calloc(npeers ? npeers : 1, sizeof(*w->peer));
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (peers == NULL || w->peer == NULL || w->epfd < 0) {
        free(peers);
        close_watch(w);
        return;
    }
    if (w->nlocal < 2 ||
        rt_uring_open(&w->ring, (unsigned)w->nlocal) != UCFT_OK ||
        epoll_add(w->epfd, rt_uring_fd(&w->ring), PW_RING_TAG) != 0) {
        ucft_debug(w->log, "no io_uring futex waits: watching local ranks "
                           "through pidfds only");
        rt_uring_close(&w->ring);
    }
    size_t nslot = 0;
    for (size_t i = 0; i < npeers; i++) {
        int fd = open_peer(b, &me, peers[i], &id, w->log);
        if (fd < 0)
            continue;
        if (epoll_add(w->epfd, fd, w->n) != 0) {
            close(fd);
            continue;
        }
        rt_pw_peer_t *pp = &w->peer[w->n++];
        pp->rank = peers[i];
        pp->pid = id.pid;
        pp->pidfd = fd;
        /* Alive slots: the local peers' only (one per peer of the node). */
        if (position_of(w->local, w->nlocal, peers[i]) < w->nlocal) {
            attach_slot(w, pp, &id, mine);
            nslot++;
        }
    }
    free(peers);
    ucft_debug(w->log,
               "watching %zu rank(s) of this machine through pidfds (%zu "
               "local), %zu slot(s)",
               w->n, nslot, w->unarmed);
    if (w->n == 0)
        close_watch(w);
}

void rt_procwatch_hold(rt_procwatch_t *w)
{
    ucft_status_t st = rt_alive_hold(&w->own, w->own_slot);
    if (st != UCFT_OK && w->own.fd >= 0)
        ucft_debug(w->log,
                   "alive slots not held (%s): peers watch this "
                   "rank through its pidfd only",
                   ucft_status_string(st));
}

void rt_procwatch_release(rt_procwatch_t *w)
{
    rt_alive_release(&w->own);
}

void rt_procwatch_arm(rt_procwatch_t *w)
{
    if (w->unarmed == 0)
        return;
    for (size_t j = 0; j < w->n; j++) {
        rt_pw_peer_t *pp = &w->peer[j];
        if (!pp->pending_arm || pp->pidfd < 0)
            continue;
        rt_alive_state_t s = rt_alive_state(&pp->slot, pp->seen_held);
        if (s == RT_ALIVE_UNHELD)
            continue; /* its heartbeat thread has not started yet */
        pp->seen_held = 1;
        /* Not held any more: RT_ALIVE_NO_WAIT, a completion at once. */
        uint32_t val = rt_alive_prepare_wait(&pp->slot);
        if (rt_uring_futex_wait(&w->ring, pp->slot.word, val, j) != UCFT_OK) {
            rt_alive_cancel_wait(&pp->slot, val);
            continue;
        }
        pp->slot.armed = 1;
        pp->pending_arm = 0;
        w->unarmed--;
    }
}

int rt_procwatch_fd(const rt_procwatch_t *w)
{
    return w->epfd;
}

int rt_procwatch_learns_alone(const rt_procwatch_t *w, int rank, int dead)
{
    unsigned slot = position_of(w->local, w->nlocal, rank);
    if (slot >= w->nlocal)
        return 0;
    for (size_t j = 0; j < w->n; j++)
        if (w->peer[j].rank == dead)
            return rt_alive_other_woken(&w->peer[j].slot, slot);
    return 0;
}

int rt_procwatch_sees(const rt_procwatch_t *w, int rank)
{
    for (size_t j = 0; j < w->n; j++)
        if (w->peer[j].rank == rank)
            return 1;
    return 0;
}

int rt_procwatch_gone(const rt_procwatch_t *w, int rank)
{
    for (size_t j = 0; j < w->n; j++) {
        const rt_pw_peer_t *pp = &w->peer[j];
        if (pp->rank != rank)
            continue;
        if (pp->pidfd < 0) /* reported (or ended cleanly: not asked) */
            return 1;
        return pidfd_ended(pp->pidfd) ||
               (pp->slot.word != NULL &&
                rt_alive_state(&pp->slot, pp->seen_held) == RT_ALIVE_DYING);
    }
    return 0;
}

void rt_procwatch_beat(rt_procwatch_t *w)
{
    rt_alive_beat(&w->own);
}

rt_kview_verdict_t rt_procwatch_judge(rt_procwatch_t *w, int rank,
                                      uint64_t silent_ns,
                                      const rt_kview_limits_t *lim,
                                      const char **why, char *state)
{
    rt_pw_peer_t *pp = NULL;
    *state = 0;
    *why = "not watched";
    for (size_t j = 0; j < w->n && pp == NULL; j++)
        if (w->peer[j].rank == rank)
            pp = &w->peer[j];
    if (pp == NULL || pp->pidfd < 0)
        return RT_KVIEW_UNKNOWN; /* not watched, or reported already */
    if (pidfd_ended(pp->pidfd)) {
        *why = "its process ended";
        return RT_KVIEW_DEAD;
    }
    if (pp->slot.word != NULL &&
        rt_alive_state(&pp->slot, pp->seen_held) == RT_ALIVE_DYING) {
        *why = "its heartbeat thread died";
        return RT_KVIEW_DEAD;
    }
    /* The pidfd is open and the process has not ended, so the pid is
     * still that process's; the slot's lock word names its heartbeat
     * thread (0 before it holds them: the main thread then). */
    rt_kview_obs_t o = {.silent_ns = silent_ns};
    pid_t tid = rt_alive_holder_tid(&pp->slot);
    o.state = rt_kview_state(pp->pid, tid);
    if (o.state == 0 && tid > 0 && !pidfd_ended(pp->pidfd) &&
        rt_alive_holder_tid(&pp->slot) != tid)
        o.state = rt_kview_state(pp->pid, 0); /* released meanwhile */
    uint64_t beats = rt_alive_beats(&pp->slot);
    /* No slot (no counter): taken as started, the plain limit applies. */
    o.started = pp->slot.word == NULL || beats > 0;
    if (beats != pp->beats) {
        o.progressed = 1;
        pp->beats = beats;
    }
    *state = o.state;
    return rt_kview_judge(&o, lim, why);
}

/* Stops watching peer j (its slot stays mapped: learns_alone reads it). */
static void stop_peer(rt_procwatch_t *w, size_t j)
{
    rt_pw_peer_t *pp = &w->peer[j];
    if (pp->pidfd < 0)
        return;
    epoll_ctl(w->epfd, EPOLL_CTL_DEL, pp->pidfd, NULL);
    close(pp->pidfd);
    pp->pidfd = -1;
    if (pp->pending_arm) {
        pp->pending_arm = 0;
        w->unarmed--;
    }
}

/* Reports peer j (once). */
static void report(rt_procwatch_t *w, size_t j, int *ranks, size_t *got)
{
    if (w->peer[j].pidfd < 0)
        return;
    stop_peer(w, j);
    ranks[(*got)++] = w->peer[j].rank;
}

#define SLOT_MAX_ERRORS 3 /* failed waits before the slot is given up */

/* A slot wait of peer j completed with `res`. */
static void slot_woke(rt_procwatch_t *w, size_t j, int res, int *ranks,
                      size_t *got)
{
    rt_pw_peer_t *pp = &w->peer[j];
    pp->slot.armed = 0;
    if (pp->pidfd < 0 || pp->slot.word == NULL)
        return;
    rt_alive_state_t s = rt_alive_state(&pp->slot, pp->seen_held);
    if (res < 0 && res != -EAGAIN && s == RT_ALIVE_HELD &&
        ++pp->errors >= SLOT_MAX_ERRORS) {
        /* The kernel refuses the wait: do not spin on it; the pidfd
         * remains. */
        ucft_debug(w->log,
                   "rank %d: futex wait on its slot fails (%s); "
                   "watching its pidfd only",
                   pp->rank, strerror(-res));
        return;
    }
    switch (s) {
    case RT_ALIVE_DYING:
        ucft_debug(w->log,
                   "rank %d: its heartbeat thread is dying "
                   "(robust mutex owner died)",
                   pp->rank);
        report(w, j, ranks, got);
        break;
    case RT_ALIVE_ENDED:
        /* It released its slots: a clean finalize, proof enough that its
         * exit is no failure, whatever its pidfd says later. */
        stop_peer(w, j);
        break;
    case RT_ALIVE_HELD:
    case RT_ALIVE_UNHELD:
        pp->pending_arm = 1; /* woken for nothing: wait again */
        w->unarmed++;
        break;
    }
}

size_t rt_procwatch_take(rt_procwatch_t *w, int *ranks, size_t max)
{
    struct epoll_event ev[32];
    uint64_t tags[32];
    int res[32];
    size_t got = 0;

    if (w->epfd < 0 || max == 0)
        return 0;
    /* Slot wake-ups first: when both are ready, they say more (and a
     * completion left behind would be reaped later anyway). */
    size_t c = rt_uring_reap(&w->ring, tags, res, max < 32 ? max : 32);
    for (size_t x = 0; x < c; x++)
        if (tags[x] < w->n)
            slot_woke(w, (size_t)tags[x], res[x], ranks, &got);
    int k = got < max ? epoll_wait(w->epfd, ev, 32, 0) : 0;
    for (int i = 0; i < k && got < max; i++) {
        size_t j = (size_t)ev[i].data.u64;
        if (ev[i].data.u64 != PW_RING_TAG && j < w->n)
            report(w, j, ranks, &got);
    }
    return got;
}

/* Stops watching the peers; this process's own slots stay (its peers may
 * watch it although it watches nobody). */
static void close_watch(rt_procwatch_t *w)
{
    /* The ring first: it may wait on the slots unmapped below. */
    rt_uring_close(&w->ring);
    for (size_t i = 0; w->peer != NULL && i < w->n; i++) {
        if (w->peer[i].pidfd >= 0)
            close(w->peer[i].pidfd);
        rt_alive_detach(&w->peer[i].slot);
    }
    if (w->epfd >= 0)
        close(w->epfd);
    free(w->peer);
    free(w->local);
    w->peer = NULL;
    w->local = NULL;
    w->n = w->nlocal = w->unarmed = 0;
    w->epfd = -1;
}

void rt_procwatch_close(rt_procwatch_t *w)
{
    close_watch(w);
    rt_alive_destroy(&w->own);
    rt_procwatch_init(w, w->log);
}
