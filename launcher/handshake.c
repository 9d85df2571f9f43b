/*
 * Whether a rank is inside its PMIx connection handshake (see handshake.h).
 */
#include "launcher/handshake.h"
#include "runtime/base/procstat.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_MEMBERS  64
#define STOP_WAIT_NS (50ull * 1000 * 1000)
#define STOP_POLL_NS (100ull * 1000)

/* State (field 3) and process group (field 5) of /proc/PID/stat. */
static int proc_stat(pid_t pid, char *state, pid_t *pgrp)
{
    char path[64], buf[512];
    int pg;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    const char *e = ucft__procstat_read(path, buf, sizeof(buf));
    if (ucft__procstat_state_pgrp(e, state, &pg) != 0)
        return -1;
    *pgrp = (pid_t)pg;
    return 0;
}

/* The processes of process group `pgid` (the rank and whatever it
 * started), at most `max`. */
static int group_members(pid_t pgid, pid_t *m, int max)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return 0;
    while (n < max && (e = readdir(d)) != NULL) {
        char *end, state;
        pid_t pg;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0)
            continue;
        if (proc_stat((pid_t)pid, &state, &pg) == 0 && pg == pgid)
            m[n++] = (pid_t)pid;
    }
    closedir(d);
    return n;
}

/* Waits (bounded) until every member is stopped or gone. */
static void wait_stopped(const pid_t *m, int n)
{
    struct timespec ts = {0, (long)STOP_POLL_NS};

    for (uint64_t waited = 0; waited < STOP_WAIT_NS; waited += STOP_POLL_NS) {
        int running = 0;
        for (int i = 0; i < n; i++) {
            char state;
            pid_t pg;
            if (proc_stat(m[i], &state, &pg) == 0 && state != 'T' &&
                state != 't' && state != 'Z' && state != 'X')
                running++;
        }
        if (running == 0)
            return;
        nanosleep(&ts, NULL);
    }
}

static int has_socket(pid_t pid)
{
    char path[64], link[64];
    struct dirent *e;
    int found = 0;

    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return 0;
    while (!found && (e = readdir(d)) != NULL) {
        char fd[320];
        snprintf(fd, sizeof(fd), "%s/%s", path, e->d_name);
        ssize_t len = readlink(fd, link, sizeof(link) - 1);
        if (len <= 0)
            continue;
        link[len] = '\0';
        found = strncmp(link, "socket:", 7) == 0;
    }
    closedir(d);
    return found;
}

/* A member still running the launcher's own image is between fork and
 * exec: the sockets it may hold are the launcher's, not a connection. */
static int is_launcher_image(pid_t pid)
{
    char path[64], self[PATH_MAX], exe[PATH_MAX];

    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    ssize_t a = readlink("/proc/self/exe", self, sizeof(self) - 1);
    ssize_t b = readlink(path, exe, sizeof(exe) - 1);
    return a > 0 && a == b && memcmp(self, exe, (size_t)a) == 0;
}

int ucftrun_handshake_open(ucftrun_proc_t *p)
{
    pid_t m[MAX_MEMBERS];
    int sock = 0;

    if (atomic_load(&p->connected))
        return 0;
    /* Stopped, the group can neither begin nor end a handshake while we
     * look. */
    ucftrun_proc_signal(p, SIGSTOP);
    int n = group_members(p->pid, m, MAX_MEMBERS);
    wait_stopped(m, n);
    if (atomic_load(&p->connected))
        return 0;
    for (int i = 0; i < n && !sock; i++)
        sock = !is_launcher_image(m[i]) && has_socket(m[i]);
    if (!sock)
        return 0;
    ucftrun_proc_signal(p, SIGCONT);
    return 1;
}
