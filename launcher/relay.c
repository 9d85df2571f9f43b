/* The delay relay of a pretend node: see relay.h. */
#include "launcher/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RELAY_MAX_PKT 65536

typedef struct slot {
    uint64_t release;
    size_t len;
    unsigned char *buf;
} slot_t;

uint64_t ucftrun_relay_release(uint64_t now, uint64_t prev, uint64_t delay_ns,
                               uint64_t jitter_ns, uint64_t r)
{
    uint64_t t = now + delay_ns;
    if (jitter_ns > 0) {
        uint64_t span = 2 * jitter_ns + 1, d = r % span;
        t = d >= jitter_ns      ? t + (d - jitter_ns)
            : t > jitter_ns - d ? t - (jitter_ns - d)
                                : 0;
    }
    if (t < now)
        t = now;
    return t < prev ? prev : t;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t next_rand(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The TUN device, up. Returns its fd or -1 (errno). */
static int open_tun(void)
{
    struct ifreq ifr;
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", UCFTRUN_RELAY_DEV);
    int s = -1;
    if (ioctl(fd, TUNSETIFF, &ifr) != 0 ||
        (s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ||
        ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
        goto err;
    ifr.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
        goto err;
    close(s);
    return fd;
err:;
    int e = errno;
    if (s >= 0)
        close(s);
    close(fd);
    errno = e;
    return -1;
}

/* The relay's loop: never returns. */
static void relay_loop(int fd, uint64_t delay_ns, uint64_t jitter_ns,
                       uint64_t seed)
{
    slot_t *q = calloc(UCFTRUN_RELAY_SLOTS, sizeof(*q));
    unsigned char *in = malloc(RELAY_MAX_PKT);
    size_t head = 0, n = 0;
    uint64_t prev = 0, dropped = 0, relayed = 0;

    if (q == NULL || in == NULL) {
        fprintf(stderr, "ucftrun: delay relay: out of memory\n");
        _exit(1);
    }
    for (;;) {
        uint64_t now = mono_ns();
        while (n > 0 && q[head].release <= now) {
            ssize_t w = write(fd, q[head].buf, q[head].len);
            (void)w; /* a packet the kernel refuses is lost, as on a wire */
            relayed++;
            head = (head + 1) % UCFTRUN_RELAY_SLOTS;
            n--;
        }
        struct timespec ts = {1, 0}, *tsp = &ts;
        if (n > 0) {
            uint64_t wait = q[head].release - now;
            ts.tv_sec = (time_t)(wait / 1000000000ull);
            ts.tv_nsec = (long)(wait % 1000000000ull);
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = ppoll(&p, 1, tsp, NULL);
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        for (;;) {
            ssize_t got = read(fd, in, RELAY_MAX_PKT);
            if (got <= 0)
                break;
            if (n == UCFTRUN_RELAY_SLOTS) {
                dropped++;
                continue;
            }
            slot_t *s = &q[(head + n) % UCFTRUN_RELAY_SLOTS];
            unsigned char *b = realloc(s->buf, (size_t)got);
            if (b == NULL) {
                dropped++;
                continue;
            }
            s->buf = b;
            memcpy(b, in, (size_t)got);
            s->len = (size_t)got;
            s->release = ucftrun_relay_release(mono_ns(), prev, delay_ns,
                                               jitter_ns, next_rand(&seed));
            prev = s->release;
            n++;
        }
    }
    fprintf(stderr,
            "ucftrun: delay relay: %s; %llu packets relayed, %llu "
            "dropped\n",
            strerror(errno), (unsigned long long)relayed,
            (unsigned long long)dropped);
    _exit(1);
}

int ucftrun_relay_start(int nsfd, uint64_t delay_ns, uint64_t jitter_ns,
                        uint64_t seed, pid_t *pid, char *err, size_t errlen)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t c = fork();
    if (c < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (c == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(p[0]);
        /* A link's delay does not grow with the host's load: the relay
         * runs ahead of the ranks (real-time, else the highest nice). It
         * sleeps in ppoll between packets. */
        struct sched_param sp = {.sched_priority = 1};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
            (void)setpriority(PRIO_PROCESS, 0, -20);
        int e = 0, fd = -1;
        if (setns(nsfd, CLONE_NEWNET) != 0 || (fd = open_tun()) < 0)
            e = errno != 0 ? errno : EIO;
        ssize_t w = write(p[1], &e, sizeof(e));
        (void)w;
        close(p[1]);
        if (e != 0)
            _exit(1);
        relay_loop(fd, delay_ns, jitter_ns, seed);
    }
    close(p[1]);
    int e = EIO;
    ssize_t got;
    while ((got = read(p[0], &e, sizeof(e))) < 0 && errno == EINTR)
        ;
    close(p[0]);
    if (got != (ssize_t)sizeof(e) || e != 0) {
        snprintf(err, errlen, "delay relay: cannot make the TUN device %s: %s",
                 UCFTRUN_RELAY_DEV,
                 strerror(got == (ssize_t)sizeof(e) ? e : EIO));
        ucftrun_relay_stop(c);
        return -1;
    }
    *pid = c;
    return 0;
}

void ucftrun_relay_stop(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}
