/* The hand-over point between the PMIx progress thread and the owner of a
 * context: the PMIx thread appends under a lock and writes an eventfd that
 * is part of the context's fd; the owner drains from
 * ucft_context_progress(). */
#include "runtime/context.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

ucft_status_t rt_inbox_init(rt_inbox_t *in)
{
    in->ranks = NULL;
    in->why = NULL;
    in->external = NULL;
    in->count = in->cap = 0;
    atomic_init(&in->pending, 0);
    atomic_init(&in->fence_done, 0);
    in->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (in->evfd < 0)
        return UCFT_ERR_IO;
    if (pthread_mutex_init(&in->lock, NULL) != 0) {
        close(in->evfd);
        return UCFT_ERR_NO_RESOURCE;
    }
    return UCFT_OK;
}

void rt_inbox_cleanup(rt_inbox_t *in)
{
    pthread_mutex_destroy(&in->lock);
    close(in->evfd);
    free(in->ranks);
    free(in->why);
    free(in->external);
}

void rt_inbox_wake(rt_inbox_t *in)
{
    uint64_t one = 1;
    ssize_t n = write(in->evfd, &one, sizeof(one));
    (void)n; /* EAGAIN only when the counter is saturated: already awake */
}

void rt_inbox_drain_fd(rt_inbox_t *in)
{
    uint64_t v;
    ssize_t n = read(in->evfd, &v, sizeof(v));
    (void)n;
}

void rt_inbox_push(rt_inbox_t *in, int rank, ucft_status_t why, int external)
{
    pthread_mutex_lock(&in->lock);
    if (in->count == in->cap) {
        size_t cap = in->cap ? 2 * in->cap : 16;
        int *r = realloc(in->ranks, cap * sizeof(*r));
        if (r != NULL)
            in->ranks = r;
        ucft_status_t *w = r ? realloc(in->why, cap * sizeof(*w)) : NULL;
        if (w != NULL)
            in->why = w;
        uint8_t *x = w ? realloc(in->external, cap) : NULL;
        if (x == NULL) {
            pthread_mutex_unlock(&in->lock);
            return; /* the detector or the transport will tell again */
        }
        in->external = x;
        in->cap = cap;
    }
    in->ranks[in->count] = rank;
    in->why[in->count] = why;
    in->external[in->count] = (uint8_t)external;
    in->count++;
    atomic_store(&in->pending, 1);
    pthread_mutex_unlock(&in->lock);
    rt_inbox_wake(in);
}
