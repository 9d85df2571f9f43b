/*
 * Can a live process still be inside the send that claimed a FIFO slot?
 * (fifo_quiet.h)
 */
#include "transport/ucp/fifo_quiet.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* /proc/PID/maps has a mapping of the segment. */
static int maps_segment(const char *pid, const char *dev, unsigned long inode)
{
    char path[300], line[512], d[32];
    unsigned long ino;
    snprintf(path, sizeof(path), "/proc/%s/maps", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    int found = 0;
    while (!found && fgets(line, sizeof(line), f) != NULL)
        found = sscanf(line, "%*s %*s %*s %31s %lu", d, &ino) == 2 &&
                ino == inode && strcmp(d, dev) == 0;
    fclose(f);
    return found;
}

/* A thread's state letter and time on a CPU; 0 when it is gone. */
static int thread_now(const char *pid, const char *tid, char *state,
                      uint64_t *run_ns)
{
    char path[640], buf[512];
    snprintf(path, sizeof(path), "/proc/%s/task/%s/stat", pid, tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char *rp = strrchr(buf, ')'); /* the name may hold anything */
    if (rp == NULL || rp[1] != ' ' || rp[2] == '\0')
        return 0;
    *state = rp[2];
    snprintf(path, sizeof(path), "/proc/%s/task/%s/schedstat", pid, tid);
    f = fopen(path, "r");
    unsigned long long ns = 0;
    int ok = f != NULL && fscanf(f, "%llu", &ns) == 1;
    if (f != NULL)
        fclose(f);
    *run_ns = ok ? ns : 0;
    return 1;
}

static const uint64_t *seen_run(const fifo_quiet_t *q, pid_t tid)
{
    for (size_t i = 0; i < q->n; i++)
        if (q->th[i].tid == tid)
            return &q->th[i].run_ns;
    return NULL;
}

static int numeric(const char *s)
{
    for (; *s != '\0'; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

/* The threads of process `pid`: the verdict they give, remembered in
 * `next`. */
static fifo_quiet_verdict_t look_process(const fifo_quiet_t *q,
                                         fifo_quiet_t *next, const char *pid)
{
    char path[300];
    snprintf(path, sizeof(path), "/proc/%s/task", pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return FIFO_QUIET; /* gone meanwhile */
    fifo_quiet_verdict_t v = FIFO_QUIET;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char state;
        uint64_t run;
        if (!numeric(e->d_name) || !thread_now(pid, e->d_name, &state, &run))
            continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        if (next->n < FIFO_QUIET_MAX)
            next->th[next->n++] = (fifo_quiet_thread_t){tid, run};
        else
            v = v > FIFO_QUIET_WAIT ? v : FIFO_QUIET_WAIT; /* not tracked */
        if (strchr("SIZXx", state) != NULL)
            continue;
        if (state == 'T' || state == 't') {
            v = FIFO_QUIET_STOPPED;
            continue;
        }
        const uint64_t *before = seen_run(q, tid);
        if ((before == NULL || run < *before + FIFO_QUIET_RUN_NS) &&
            v == FIFO_QUIET)
            v = FIFO_QUIET_WAIT;
    }
    closedir(d);
    return v;
}

fifo_quiet_verdict_t fifo_quiet_look(fifo_quiet_t *q, const char *dev,
                                     unsigned long inode, pid_t *who)
{
    fifo_quiet_t *next = calloc(1, sizeof(*next));
    DIR *proc = next != NULL ? opendir("/proc") : NULL;
    if (proc == NULL) {
        free(next);
        *who = 0;
        return FIFO_QUIET_WAIT;
    }
    char self[16];
    snprintf(self, sizeof(self), "%d", (int)getpid());
    fifo_quiet_verdict_t v = FIFO_QUIET;
    struct dirent *e;
    while ((e = readdir(proc)) != NULL) {
        if (!numeric(e->d_name) || strcmp(e->d_name, self) == 0 ||
            !maps_segment(e->d_name, dev, inode))
            continue;
        fifo_quiet_verdict_t pv = look_process(q, next, e->d_name);
        if (pv > v) {
            v = pv;
            *who = (pid_t)atoi(e->d_name);
        }
    }
    closedir(proc);
    *q = *next;
    free(next);
    return v;
}
