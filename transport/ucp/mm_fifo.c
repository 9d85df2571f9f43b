/*
 * UCX 1.13's shared-memory receive FIFO, from outside UCX (mm_fifo.h).
 */
#include "transport/ucp/mm_fifo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#define CTL_SIZE     192
#define OFF_SIG_LEN  8
#define OFF_SIG_ADDR 12
#define OFF_TAIL     128
#define OFF_PID      136
#define HEAD_SIGNAL  (1ull << 63)
#define OFF_AM_ID    1
#define OFF_LENGTH   2
#define DEFAULT_SIZE 64
#define DEFAULT_ELEM 128

int mm_fifo_supported(void)
{
    unsigned major, minor, release;
    ucp_get_version(&major, &minor, &release);
    return major == 1 && minor == 13;
}

/* UCX_<TL>_<KEY> as a positive number, `dflt` when unset; 0 when set to
 * anything else (then the FIFO is not recognised). */
static unsigned config_value(const char *tl, const char *key, unsigned dflt)
{
    char name[64];
    snprintf(name, sizeof(name), "UCX_%s_%s", tl, key);
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return dflt;
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    return *end == '\0' && x > 0 && x < (1ul << 24) ? (unsigned)x : 0;
}

uint64_t mm_fifo_head(const mm_fifo_t *f)
{
    return __atomic_load_n((uint64_t *)f->ctl, __ATOMIC_ACQUIRE) & ~HEAD_SIGNAL;
}

uint64_t mm_fifo_tail(const mm_fifo_t *f)
{
    return __atomic_load_n((uint64_t *)(f->ctl + OFF_TAIL), __ATOMIC_ACQUIRE);
}

uint8_t *mm_fifo_slot(const mm_fifo_t *f, uint64_t i)
{
    return f->ctl + CTL_SIZE + (size_t)(i & (f->size - 1)) * f->elem_size;
}

static uint8_t owner_bit(const mm_fifo_t *f, uint64_t i)
{
    return (uint8_t)((i >> f->shift) & 1);
}

int mm_fifo_written(const mm_fifo_t *f, uint64_t i)
{
    uint8_t flags = __atomic_load_n(mm_fifo_slot(f, i), __ATOMIC_ACQUIRE);
    return (flags & MM_FIFO_FLAG_OWNER) == owner_bit(f, i);
}

int mm_fifo_holds(const mm_fifo_t *f, uint64_t i, uint8_t am_id,
                  const void *data, uint16_t len)
{
    const uint8_t *s = mm_fifo_slot(f, i);
    uint16_t l;
    memcpy(&l, s + OFF_LENGTH, sizeof(l));
    return mm_fifo_written(f, i) && (s[0] & MM_FIFO_FLAG_INLINE) &&
           s[OFF_AM_ID] == am_id && l == len &&
           memcmp(s + MM_FIFO_DATA, data, len) == 0;
}

void mm_fifo_write(const mm_fifo_t *f, uint64_t i, uint8_t am_id,
                   const void *data, uint16_t len)
{
    uint8_t *dst = mm_fifo_slot(f, i);
    dst[OFF_AM_ID] = am_id;
    memcpy(dst + OFF_LENGTH, &len, sizeof(len));
    memcpy(dst + MM_FIFO_DATA, data, len);
    /* The data before the flag, as a sender writes them. */
    __atomic_store_n(dst, (uint8_t)(MM_FIFO_FLAG_INLINE | owner_bit(f, i)),
                     __ATOMIC_RELEASE);
}

/* `fd` is a socket bound to the address `a` of length `alen`. */
static int bound_to(int fd, const uint8_t *a, socklen_t alen)
{
    struct sockaddr_un sa;
    socklen_t len = sizeof(sa);
    if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0 || len != alen ||
        sa.sun_family != AF_UNIX)
        return 0;
    return memcmp(&sa, a, alen) == 0;
}

int mm_fifo_of_worker(const mm_fifo_t *f, int epfd)
{
    socklen_t alen = f->sig_len;
    if (alen <= sizeof(sa_family_t) || alen > sizeof(f->sig_addr))
        return 0;
    char name[64], line[256];
    snprintf(name, sizeof(name), "/proc/self/fdinfo/%d", epfd);
    FILE *info = fopen(name, "r");
    if (info == NULL)
        return 0;
    int found = 0, fd;
    while (!found && fgets(line, sizeof(line), info) != NULL)
        if (sscanf(line, "tfd: %d", &fd) == 1)
            found = bound_to(fd, f->sig_addr, alen);
    fclose(info);
    return found;
}

int mm_fifo_claim(const mm_fifo_t *f)
{
    uint64_t *head = (uint64_t *)f->ctl;
    for (;;) {
        uint64_t h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
        if ((h & ~HEAD_SIGNAL) - mm_fifo_tail(f) >= f->size)
            return -1;
        uint64_t next = (h + 1) & ~HEAD_SIGNAL;
        if (__atomic_compare_exchange_n(head, &h, next, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return 0;
    }
}

/* The mapping [lo, hi) with path `path` as a FIFO of `owner`, or 0. */
static int recognise(uintptr_t lo, uintptr_t hi, const char *path, pid_t owner,
                     mm_fifo_t *f, const char *dev, unsigned long inode)
{
    const char *tl = strstr(path, "SYSV") != NULL ? "SYSV" : "POSIX";
    unsigned size = config_value(tl, "FIFO_SIZE", DEFAULT_SIZE);
    unsigned elem = config_value(tl, "FIFO_ELEM_SIZE", DEFAULT_ELEM);
    if (size == 0 || elem <= MM_FIFO_DATA || (size & (size - 1)) != 0 ||
        hi - lo < CTL_SIZE + (size_t)size * elem)
        return 0;
    *f = (mm_fifo_t){.ctl = (uint8_t *)lo,
                     .map_len = hi - lo,
                     .size = size,
                     .elem_size = elem,
                     .inode = inode};
    snprintf(f->dev, sizeof(f->dev), "%s", dev);
    while ((1u << f->shift) < size)
        f->shift++;
    /* Another thread may unmap a segment at any time (UCX detaching a
     * dead peer's): the control block is copied with a read that fails
     * instead of faulting. A FIFO of this process's own worker stays
     * mapped while the thread that drives the worker looks at it. */
    uint8_t c[CTL_SIZE];
    struct iovec to = {c, sizeof(c)}, from = {f->ctl, sizeof(c)};
    if (process_vm_readv(getpid(), &to, 1, &from, 1, 0) != (ssize_t)sizeof(c))
        return 0;
    pid_t pid;
    uint64_t head, tail;
    memcpy(&pid, c + OFF_PID, sizeof(pid));
    memcpy(&head, c, sizeof(head));
    memcpy(&tail, c + OFF_TAIL, sizeof(tail));
    memcpy(&f->sig_len, c + OFF_SIG_LEN, sizeof(f->sig_len));
    memcpy(f->sig_addr, c + OFF_SIG_ADDR, sizeof(f->sig_addr));
    head &= ~HEAD_SIGNAL;
    int whose = owner != 0 ? pid == owner : pid > 0 && pid != getpid();
    return whose && tail <= head && head - tail <= size;
}

int mm_fifo_each(pid_t owner, int (*visit)(const mm_fifo_t *f, void *arg),
                 void *arg)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL)
        return -1;
    char line[512];
    int r = 0;
    while (r == 0 && fgets(line, sizeof(line), maps) != NULL) {
        unsigned long lo, hi, inode;
        char perms[5], dev[16];
        int path_at = 0;
        if (sscanf(line, "%lx-%lx %4s %*s %15s %lu %n", &lo, &hi, perms, dev,
                   &inode, &path_at) < 5 ||
            strcmp(perms, "rw-s") != 0 || path_at == 0)
            continue;
        mm_fifo_t f;
        if (recognise(lo, hi, line + path_at, owner, &f, dev, inode))
            r = visit(&f, arg);
    }
    fclose(maps);
    return r;
}
