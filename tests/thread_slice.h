/* The calling thread's time slice for the tests (sched_getattr(2):
 * sched_runtime; 0 where the kernel reports none, UINT64_MAX if the call
 * failed). Shared by the unit test of runtime/linux/sched_slice.c and the
 * integration programs that check UCFT_SLICE's contract. */
#ifndef UCFT_TESTS_THREAD_SLICE_H
#define UCFT_TESTS_THREAD_SLICE_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline uint64_t test_thread_slice(void)
{
    struct {
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t prio;
        uint64_t runtime, deadline, period;
    } a = {.size = sizeof(a)};
    if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) != 0)
        return UINT64_MAX;
    return a.runtime;
}

#endif
