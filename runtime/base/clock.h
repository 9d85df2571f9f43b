/* Monotonic clock in nanoseconds. Never the wall clock: timeouts must not
 * jump when the system time is set. */
#ifndef UCFT_BASE_CLOCK_H
#define UCFT_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

#define UCFT_NSEC_PER_USEC 1000ull
#define UCFT_NSEC_PER_MSEC 1000000ull
#define UCFT_NSEC_PER_SEC  1000000000ull

static inline uint64_t ucft_clock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UCFT_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

#endif
