/*
 * A binary min-heap of caller-allocated timers keyed by an absolute
 * deadline (nanoseconds on whatever clock the owner uses: monotonic for the
 * real transport, simulated time for the sim transport). Adding, removing
 * and re-arming are O(log n); nothing is allocated except when the heap's
 * array grows.
 */
#ifndef UCFT_BASE_TIMERQ_H
#define UCFT_BASE_TIMERQ_H

#include "ucft.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ucft_timer ucft_timer_t;

/* Fired once per start; the callback may start the timer again (periodic
 * timers re-arm themselves) or start or stop other timers. */
typedef void (*ucft_timer_cb_t)(ucft_timer_t *timer);

struct ucft_timer {
    uint64_t deadline; /* read-only while armed */
    ucft_timer_cb_t cb;
    void *arg;
    size_t pos; /* private: index in the heap + 1, 0 when not armed */
};

typedef struct ucft_timerq {
    ucft_timer_t **heap;
    size_t count;
    size_t capacity;
} ucft_timerq_t;

void ucft__timerq_init(ucft_timerq_t *q);
void ucft__timerq_cleanup(ucft_timerq_t *q);

/* Arms (or re-arms) `t` for `deadline`. */
ucft_status_t ucft__timerq_add(ucft_timerq_t *q, ucft_timer_t *t,
                               uint64_t deadline);
/* Disarms `t`; harmless when it is not armed. */
void ucft__timerq_remove(ucft_timerq_t *q, ucft_timer_t *t);

static inline int ucft_timer_armed(const ucft_timer_t *t)
{
    return t->pos != 0;
}

/* Earliest deadline, or UINT64_MAX when empty. */
uint64_t ucft__timerq_next(const ucft_timerq_t *q);

/* Fires every timer with deadline <= now, earliest first; returns how many
 * fired. Timers armed by callbacks for a time <= now fire in the same call,
 * up to `max` callbacks in all (a bound so that progress returns). */
unsigned ucft__timerq_expire(ucft_timerq_t *q, uint64_t now, unsigned max);

#endif
