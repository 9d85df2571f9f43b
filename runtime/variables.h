/* Configuration of the context (UCFT_* variables; `ucft-info -c`); the
 * communicator layer's are comm/variables.h. */
#ifndef UCFT_RT_VARIABLES_H
#define UCFT_RT_VARIABLES_H

#include "runtime/base/config.h"

#include <stdint.h>

enum rt_wait_mode { RT_WAIT_SPIN = 0, RT_WAIT_SLEEP = 1, RT_WAIT_HYBRID = 2 };

typedef struct rt_config {
    int log_level;
    int wait_mode;            /* enum rt_wait_mode */
    uint64_t spin_ns;         /* hybrid: busy-poll this long, */
    uint64_t yield_ns;        /* then poll and yield this long, then sleep */
    uint64_t mate_spin_ns;    /* ... polling without yielding while a
                                 collective waits only for ranks off the
                                 core it shares with one other rank */
    uint64_t poll_ns;         /* longest single sleep on the event fd */
    uint64_t slice_ns;        /* time slice of ucft_init's thread (0: as is) */
    uint64_t keepalive_ns;    /* UCX keepalive interval */
    uint64_t shm_probe_ns;    /* FIFO self-probe wait (0: off) */
    int shm_mend;             /* mend a FIFO the probe finds blocked */
    uint64_t init_timeout_ns; /* wire-up bound */
    uint64_t finalize_timeout_ns;
    uint64_t finalize_failed_ns; /* the same bound once failures are known */
    int detector;                /* heartbeat failure detector on/off */
    int detector_thread;    /* heartbeats from a thread with its own worker */
    int detector_fastpath;  /* PMIx events and endpoint errors declare too */
    int detector_pidfd;     /* fast path: watch local ranks' pidfds */
    int detector_events;    /* fast path: launcher death events */
    uint64_t hb_period_ns;  /* eta */
    uint64_t hb_timeout_ns; /* delta */
    uint64_t hb_grace_ns;   /* no suspicion this soon after start-up */
    uint64_t hb_local_limit_ns; /* a local rank the kernel shows alive is
                                   declared after this much silence */
    unsigned hb_probes;         /* helpers per round of indirect probes */
    uint64_t hb_confirm_ns;     /* their window (0: 2 eta) */
    unsigned hb_run;            /* ranks probed together (probe.h) */
    int hb_nice;                /* nice value of the heartbeat thread */
    uint64_t hb_slice_ns;       /* its time slice (0: inherited, slice_ns) */
    int quorum;                 /* fence a rank in a minority (quorum.h) */
    uint64_t quorum_settle_ns;  /* a view unchanged this long is agreed */
} rt_config_t;

extern const ucft_config_table_t rt_config_table;

#endif
