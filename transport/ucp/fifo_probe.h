/*
 * The self-probe: can a UCP worker still receive from the other processes
 * of its node? (docs/transport.md, "A kill mid-send can cut a receiver
 * off".) UCX 1.13 carries every local sender's messages to a worker
 * through one shared-memory FIFO; a sender killed between claiming a slot
 * and marking it ready blocks that FIFO for good, silently.
 *
 * A private worker of the same UCP context sends the target worker one
 * message with a tag nobody else uses. Between two workers of one process
 * UCX uses the same FIFO as other processes do, so the probe is stuck
 * exactly when the FIFO is. No peer is trusted or involved.
 *
 * Verdict rules (all times from fifo_probe_start):
 *  - ARRIVED as soon as the target worker has received the probe;
 *  - BLOCKED when, after `wait_ns`, the probe has been written into the
 *    FIFO (its send completed) and still does not arrive while the target
 *    is progressed FIFO_PROBE_DRAIN more times (more than a FIFO can hold
 *    ahead of it);
 *  - BLOCKED as well when the probe could not even be written for
 *    4 * `wait_ns` (the FIFO stayed full), with the same final drain.
 * The caller progresses the target worker as usual and calls
 * fifo_probe_poll from the same thread; the final drain progresses the
 * target itself, so callbacks of the target may run inside poll.
 *
 * Mending (`mend` set, mm_fifo.h): instead of BLOCKED, when the probe sits
 * in the FIFO behind a slot that was claimed and never written, that slot
 * is written with a copy of the probe (the receiver reads one probe more,
 * which a second receive takes) and the probe waits again, for as many
 * such slots as it meets (up to FIFO_PROBE_MENDS). Only once no other
 * process that maps the FIFO can still be inside a send (fifo_quiet.h):
 * until then the verdict waits, looking again every FIFO_PROBE_RECHECK_NS,
 * for at most 4 * `wait_ns` (a stopped process that maps it). BLOCKED
 * then means a slot could not be mended; `why` says what stopped it.
 */
#ifndef UCFT_FIFO_PROBE_H
#define UCFT_FIFO_PROBE_H

#include "transport/ucp/fifo_quiet.h"

#include <stdint.h>
#include <ucp/api/ucp.h>

#define FIFO_PROBE_DRAIN      256
#define FIFO_PROBE_MENDS      8
#define FIFO_PROBE_RECHECK_NS 10000000ull

typedef enum fifo_probe_state {
    FIFO_PROBE_IDLE = 0,
    FIFO_PROBE_WAITING,
    FIFO_PROBE_ARRIVED,
    FIFO_PROBE_BLOCKED,
} fifo_probe_state_t;

typedef struct fifo_probe {
    ucp_worker_h target;
    ucp_worker_h worker; /* the private sender, made on first start */
    ucp_ep_h ep;         /* from it to the target */
    uint64_t tag;
    uint64_t wait_ns;
    void *send_req; /* NULL once the probe is in the FIFO */
    void *recv_req; /* NULL once it arrived */
    uint64_t start_ns, written_ns;
    uint64_t payload, received;
    fifo_probe_state_t state;
    int mend;             /* mend a blocked FIFO (mm_fifo.h) */
    int mends;            /* slots this probe mended */
    uint64_t mended_slot; /* the last one's index */
    const char *why;      /* why a BLOCKED FIFO was not mended */
    char why_buf[128];
    uint64_t recheck_ns;  /* mending waits for quiet senders until then */
    uint64_t quiet_since; /* ... which it has waited for since then */
    fifo_quiet_t quiet;
    void *copy_req[FIFO_PROBE_MENDS]; /* receives of the probe's copies */
    uint64_t copy_buf[FIFO_PROBE_MENDS];
} fifo_probe_t;

/* Sets up an idle probe of `target` (nothing is created yet). `tag` must
 * match no other receive on the target (full-mask match). `mend`: mend a
 * blocked FIFO (above). */
void fifo_probe_init(fifo_probe_t *p, ucp_worker_h target, uint64_t tag,
                     uint64_t wait_ns, int mend);

/* Sends one probe from a private worker of `ctx` to `target_addr` (the
 * target's address) and posts its receive. A probe still waiting is left
 * as it is. UCS_OK or the UCX error that stopped it (state stays IDLE). */
ucs_status_t fifo_probe_start(fifo_probe_t *p, ucp_context_h ctx,
                              const ucp_address_t *target_addr,
                              uint64_t now_ns);

/* Progresses the private worker and applies the verdict rules. */
fifo_probe_state_t fifo_probe_poll(fifo_probe_t *p, uint64_t now_ns);

/* When a WAITING probe needs its next poll at the latest (for a timer of
 * a caller that may sleep); UINT64_MAX when not waiting. */
uint64_t fifo_probe_deadline(const fifo_probe_t *p);

/* Frees the private worker. A probe still in a blocked FIFO is given up. */
void fifo_probe_cleanup(fifo_probe_t *p);

#endif
