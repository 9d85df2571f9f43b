#include "timerq.h"

#include <stdlib.h>

void ucft__timerq_init(ucft_timerq_t *q)
{
    q->heap = NULL;
    q->count = 0;
    q->capacity = 0;
}

void ucft__timerq_cleanup(ucft_timerq_t *q)
{
    for (size_t i = 0; i < q->count; i++)
        q->heap[i]->pos = 0;
    free(q->heap);
    ucft__timerq_init(q);
}

static void place(ucft_timerq_t *q, size_t i, ucft_timer_t *t)
{
    q->heap[i] = t;
    t->pos = i + 1;
}

static void sift_up(ucft_timerq_t *q, size_t i)
{
    ucft_timer_t *t = q->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (q->heap[p]->deadline <= t->deadline)
            break;
        place(q, i, q->heap[p]);
        i = p;
    }
    place(q, i, t);
}

static void sift_down(ucft_timerq_t *q, size_t i)
{
    ucft_timer_t *t = q->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->count)
            break;
        if (c + 1 < q->count && q->heap[c + 1]->deadline < q->heap[c]->deadline)
            c++;
        if (t->deadline <= q->heap[c]->deadline)
            break;
        place(q, i, q->heap[c]);
        i = c;
    }
    place(q, i, t);
}

ucft_status_t ucft__timerq_add(ucft_timerq_t *q, ucft_timer_t *t,
                               uint64_t deadline)
{
    if (t->pos != 0) {
        uint64_t old = t->deadline;
        t->deadline = deadline;
        if (deadline < old)
            sift_up(q, t->pos - 1);
        else
            sift_down(q, t->pos - 1);
        return UCFT_OK;
    }
    if (q->count == q->capacity) {
        size_t cap = q->capacity ? 2 * q->capacity : 16;
        ucft_timer_t **h = realloc(q->heap, cap * sizeof(*h));
        if (h == NULL)
            return UCFT_ERR_NO_MEMORY;
        q->heap = h;
        q->capacity = cap;
    }
    t->deadline = deadline;
    place(q, q->count++, t);
    sift_up(q, q->count - 1);
    return UCFT_OK;
}

void ucft__timerq_remove(ucft_timerq_t *q, ucft_timer_t *t)
{
    if (t->pos == 0)
        return;
    size_t i = t->pos - 1;
    t->pos = 0;
    if (--q->count == i)
        return;
    ucft_timer_t *last = q->heap[q->count];
    place(q, i, last);
    if (i > 0 && q->heap[(i - 1) / 2]->deadline > last->deadline)
        sift_up(q, i);
    else
        sift_down(q, i);
}

uint64_t ucft__timerq_next(const ucft_timerq_t *q)
{
    return q->count ? q->heap[0]->deadline : UINT64_MAX;
}

unsigned ucft__timerq_expire(ucft_timerq_t *q, uint64_t now, unsigned max)
{
    unsigned fired = 0;
    while (fired < max && q->count > 0 && q->heap[0]->deadline <= now) {
        ucft_timer_t *t = q->heap[0];
        ucft__timerq_remove(q, t);
        fired++;
        t->cb(t);
    }
    return fired;
}
