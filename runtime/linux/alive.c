/* Robust-mutex slots telling a dying process early (see alive.h). */
#include "runtime/linux/alive.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOT_SIZE 64u /* one cache line per slot */

_Static_assert(sizeof(pthread_mutex_t) <= SLOT_SIZE, "slot too small");

static pthread_mutex_t *slot_mutex(void *mem, unsigned i)
{
    return (pthread_mutex_t *)((char *)mem + (size_t)i * SLOT_SIZE);
}

/* The memfd: nslots slots, then one line holding the holder's beat
 * counter. */
static size_t alive_len(unsigned nslots)
{
    return ((size_t)nslots + 1) * SLOT_SIZE;
}

static uint64_t *beat_word(void *mem, unsigned nslots)
{
    return (uint64_t *)((char *)mem + (size_t)nslots * SLOT_SIZE);
}

static int init_slot(pthread_mutex_t *m)
{
    pthread_mutexattr_t at;
    if (pthread_mutexattr_init(&at) != 0)
        return -1;
    int bad = pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED) ||
              pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST) ||
              pthread_mutex_init(m, &at);
    pthread_mutexattr_destroy(&at);
    return bad ? -1 : 0;
}

/* Does the lock word of `m` name thread `tid` as its owner? */
static int locked_by(pthread_mutex_t *m, uint32_t tid)
{
    uint32_t w = __atomic_load_n((uint32_t *)m, __ATOMIC_ACQUIRE);
    return (w & FUTEX_TID_MASK) == tid;
}

/* Does locking `m` put the caller's tid in its first word (glibc's robust
 * mutex word, the kernel's robust futex protocol)? Leaves it unlocked. */
static int word_is_robust_futex(pthread_mutex_t *m)
{
    if (pthread_mutex_trylock(m) != 0)
        return 0;
    int ok = locked_by(m, (uint32_t)syscall(SYS_gettid));
    pthread_mutex_unlock(m);
    return ok && locked_by(m, 0);
}

ucft_status_t rt_alive_create(rt_alive_t *a, unsigned nslots)
{
    memset(a, 0, sizeof(*a));
    a->fd = -1;
    if (nslots == 0 || nslots > RT_ALIVE_MAX_SLOTS)
        return UCFT_ERR_INVALID_PARAM;
    a->len = alive_len(nslots);
    a->fd = memfd_create("ucft-alive", MFD_CLOEXEC);
    if (a->fd < 0)
        return UCFT_ERR_NOT_SUPPORTED;
    if (ftruncate(a->fd, (off_t)a->len) != 0)
        goto fail;
    a->mem = mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
    if (a->mem == MAP_FAILED) {
        a->mem = NULL;
        goto fail;
    }
    for (unsigned i = 0; i < nslots; i++)
        if (init_slot(slot_mutex(a->mem, i)) != 0)
            goto fail;
    a->nslots = nslots;
    a->beat = beat_word(a->mem, nslots);
    if (!word_is_robust_futex(slot_mutex(a->mem, 0))) {
        rt_alive_destroy(a);
        return UCFT_ERR_NOT_SUPPORTED;
    }
    return UCFT_OK;
fail:
    rt_alive_destroy(a);
    return UCFT_ERR_NO_RESOURCE;
}

static void unlock_all(rt_alive_t *a, unsigned skip, unsigned upto)
{
    for (unsigned i = 0; i < upto; i++)
        if (i != skip)
            pthread_mutex_unlock(slot_mutex(a->mem, i));
}

ucft_status_t rt_alive_hold(rt_alive_t *a, unsigned skip)
{
    if (a->mem == NULL || a->held)
        return a->held ? UCFT_OK : UCFT_ERR_NOT_SUPPORTED;
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    for (unsigned i = 0; i < a->nslots; i++) {
        if (i == skip)
            continue;
        pthread_mutex_t *m = slot_mutex(a->mem, i);
        /* Nobody else locks a slot: a failure here is a broken library. */
        if (pthread_mutex_trylock(m) != 0) {
            unlock_all(a, skip, i);
            return UCFT_ERR_NOT_SUPPORTED;
        }
        if (!locked_by(m, tid)) {
            pthread_mutex_unlock(m);
            unlock_all(a, skip, i);
            return UCFT_ERR_NOT_SUPPORTED;
        }
    }
    a->skip = skip;
    a->held = 1;
    return UCFT_OK;
}

void rt_alive_release(rt_alive_t *a)
{
    if (a->mem == NULL || !a->held)
        return;
    unlock_all(a, a->skip, a->nslots);
    a->held = 0;
}

void rt_alive_beat(rt_alive_t *a)
{
    if (a->beat != NULL) /* one writer: the holding thread */
        __atomic_store_n(a->beat,
                         __atomic_load_n(a->beat, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELEASE);
}

void rt_alive_destroy(rt_alive_t *a)
{
    if (a->mem != NULL)
        munmap(a->mem, a->len);
    if (a->fd >= 0)
        close(a->fd);
    memset(a, 0, sizeof(*a));
    a->fd = -1;
}

ucft_status_t rt_alive_attach(rt_alive_peer_t *p, pid_t pid, int fd,
                              unsigned nslots, unsigned slot)
{
    char path[64];
    struct stat st;

    memset(p, 0, sizeof(*p));
    if (fd < 0 || nslots == 0 || nslots > RT_ALIVE_MAX_SLOTS || slot >= nslots)
        return UCFT_ERR_INVALID_PARAM;
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
    int lfd = open(path, O_RDWR | O_CLOEXEC);
    if (lfd < 0)
        return UCFT_ERR_NOT_SUPPORTED;
    size_t len = alive_len(nslots);
    /* Exactly the size announced: anything else is not our segment. */
    if (fstat(lfd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (size_t)st.st_size != len) {
        close(lfd);
        return UCFT_ERR_INVALID_PARAM;
    }
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0);
    close(lfd);
    if (m == MAP_FAILED)
        return UCFT_ERR_NO_RESOURCE;
    p->map = m;
    p->len = len;
    p->nslots = nslots;
    p->word = (uint32_t *)slot_mutex(m, slot);
    p->beat = beat_word(m, nslots);
    return UCFT_OK;
}

void rt_alive_detach(rt_alive_peer_t *p)
{
    if (p->map != NULL)
        munmap(p->map, p->len);
    memset(p, 0, sizeof(*p));
}

rt_alive_state_t rt_alive_state(const rt_alive_peer_t *p, int seen_held)
{
    uint32_t w = __atomic_load_n(p->word, __ATOMIC_ACQUIRE);
    if (w & FUTEX_OWNER_DIED)
        return RT_ALIVE_DYING;
    if ((w & FUTEX_TID_MASK) == 0)
        return seen_held ? RT_ALIVE_ENDED : RT_ALIVE_UNHELD;
    return RT_ALIVE_HELD;
}

uint32_t rt_alive_prepare_wait(rt_alive_peer_t *p)
{
    uint32_t w = __atomic_load_n(p->word, __ATOMIC_ACQUIRE);
    for (;;) {
        if ((w & FUTEX_TID_MASK) == 0 || (w & FUTEX_OWNER_DIED))
            return RT_ALIVE_NO_WAIT;
        if (w & FUTEX_WAITERS)
            return w;
        /* As a contending locker does: the holder's unlock, and the kernel
         * at the holder's death, wake a waiter only when this bit is set.
         * The value to wait on is the one installed here, never a later
         * read: a death in between must not become the awaited value. */
        if (__atomic_compare_exchange_n(p->word, &w, w | FUTEX_WAITERS, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return w | FUTEX_WAITERS;
    }
}

void rt_alive_cancel_wait(rt_alive_peer_t *p, uint32_t val)
{
    if (val == RT_ALIVE_NO_WAIT || !(val & FUTEX_WAITERS))
        return;
    uint32_t expect = val;
    __atomic_compare_exchange_n(p->word, &expect, val & ~FUTEX_WAITERS, 0,
                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

int rt_alive_other_woken(const rt_alive_peer_t *p, unsigned slot)
{
    if (p->map == NULL || slot >= p->nslots)
        return 0;
    uint32_t w =
        __atomic_load_n((uint32_t *)slot_mutex(p->map, slot), __ATOMIC_ACQUIRE);
    /* The kernel keeps FUTEX_WAITERS when it marks the owner dead. */
    return (w & FUTEX_OWNER_DIED) && (w & FUTEX_WAITERS);
}

uint64_t rt_alive_beats(const rt_alive_peer_t *p)
{
    return p->beat == NULL ? 0 : __atomic_load_n(p->beat, __ATOMIC_ACQUIRE);
}

pid_t rt_alive_holder_tid(const rt_alive_peer_t *p)
{
    if (p->word == NULL)
        return 0;
    uint32_t w = __atomic_load_n(p->word, __ATOMIC_ACQUIRE);
    return (pid_t)(w & FUTEX_TID_MASK);
}
