/*
 * The simulated transport: a deterministic, single-threaded discrete-event
 * network of many ranks inside one process. A sim world owns every rank,
 * the simulated clock and one event queue; each rank is reached through an
 * ordinary tp_t (transport/transport.h), so code written against that
 * interface runs unchanged on this backend and on the UCP one.
 *
 * Cost model (LogGP, all times in simulated nanoseconds). A rank has a send
 * port and a receive port. For a message of s bytes posted at time t:
 *   start   ts = max(t, send_free)            (send port busy before)
 *   send_free  = ts + max(g, o + (s-1)G)      (no two sends within g)
 *   completion of the send request (callback) at ts + o
 *   arrival    ta = ts + o + (s-1)G + L       (last byte at the receiver)
 *   receive    tr = max(ta, recv_free), recv_free = tr + max(g, o)
 *   delivery (matching, receive callback) at tr + o
 * (s-1)G is rounded up to whole nanoseconds and is 0 for s <= 1. Delivery
 * is FIFO per sender-receiver pair: ta grows with every send of a sender
 * because send_free >= ts + o + (s-1)G.
 *
 * Determinism: events are ordered by (time, insertion number); nothing
 * depends on addresses or the host clock, so one seed and one sequence of
 * calls give one event trace. sim_world_trace_hash() folds every handled
 * event (time, kind, ranks, tag, length) into a 64-bit hash.
 *
 * Backend choices the transport contract leaves open:
 *  - send never completes inline: it returns UCFT_INPROGRESS and its
 *    callback runs at ts + o. The payload is copied at post time.
 *  - recv never completes inline either: a message already waiting in the
 *    unexpected queue is consumed at post time and the callback runs from
 *    the next event, at the same simulated time.
 *  - cancel of a posted receive completes it through its callback with
 *    UCFT_ERR_CANCELED (from an event, never inside tp_cancel); cancel of a
 *    send or of a matched receive does nothing (it completes normally).
 *  - fd() returns -1, arm() returns UCFT_OK, progress() runs up to 64 world
 *    events (any rank's) and returns 0 when called from inside the event
 *    loop; destroy() does nothing: the world frees every rank.
 *  - address() (T8) is the rank's id: the bytes of tp->rank (an int, in
 *    host order), the same for the tp's whole life.
 *  - flush() (T9) runs world events, one at a time, until every message of
 *    this rank has arrived at its receiver (matched, queued or dropped
 *    there) and every completion event of its sends has been handled, or
 *    until the simulated clock has moved timeout_ns on (then
 *    UCFT_ERR_TIMED_OUT; the clock stops at that deadline when nothing is
 *    due before it). A rendezvous send waiting for its receive is not
 *    waited for once its message has arrived. From inside the event loop
 *    it cannot run events and returns at once; a dead rank's flush returns
 *    UCFT_OK at once.
 *
 * Failures are fail-stop. A dead rank sends nothing afterwards (a message
 * whose send had not started when the rank died is lost; one already on the
 * wire arrives), its callbacks and timers never run again, calls on its tp
 * return UCFT_INPROGRESS and never complete, and messages to it vanish.
 * Survivors learn of a death through the world's notification, by default
 * peer_error_cb(arg, rank, UCFT_ERR_PROC_FAILED) at each live rank a fixed
 * detection delay after the death (rank order, one event per death); it can
 * be switched off and replaced by a kill hook (a real detector running on
 * the sim).
 *
 * Thread safety: none; a world and its tps are used by one thread.
 */
#ifndef UCFT_TRANSPORT_SIM_H
#define UCFT_TRANSPORT_SIM_H

#include "transport/transport.h"

#include <stdint.h>

typedef struct sim_world sim_world_t;

/* Defaults, roughly an InfiniBand EDR/HDR fabric with a fast host. */
#define SIM_LOGGP_DEFAULT_L_NS      1000 /* wire latency */
#define SIM_LOGGP_DEFAULT_O_NS      300  /* CPU overhead per send / receive */
#define SIM_LOGGP_DEFAULT_G_NS      400  /* gap between two sends of a rank */
#define SIM_LOGGP_DEFAULT_GB_PS     80   /* per byte: 80 ps = 12.5 GB/s */
#define SIM_DEFAULT_DETECT_DELAY_NS 1000000ull /* 1 ms */

typedef struct sim_loggp {
    uint64_t L_ns;
    uint64_t o_ns;
    uint64_t g_ns;
    uint64_t G_ps; /* picoseconds per byte after the first */
} sim_loggp_t;

typedef enum sim_notify {
    SIM_NOTIFY_DELAY = 0, /* peer_error_cb at survivors after detect_delay */
    SIM_NOTIFY_NONE,      /* nothing: the kill hook (if any) decides */
} sim_notify_t;

/* Called from the event loop when `rank` dies at simulated time `time`
 * (before the world notifies anyone). */
typedef void (*sim_kill_hook_t)(void *arg, sim_world_t *world, int rank,
                                uint64_t time);

typedef struct sim_params {
    int nranks; /* 1 .. UCFT_TAG_MAX_RANKS */
    sim_loggp_t loggp;
    uint64_t seed; /* for random failure plans */
    sim_notify_t notify;
    uint64_t detect_delay_ns;
    sim_kill_hook_t kill_hook; /* may be NULL */
    void *kill_hook_arg;
    /* Optional: the domain (e.g. node) of every rank, nranks entries, kept
     * by pointer for the world's lifetime. Only counted: sends whose source
     * and destination domains differ (sim_stats_t.cross_domain). NULL: no
     * domains, nothing counted. */
    const uint32_t *domain;
    const ucft_log_t *log; /* given to every rank's tp (may be NULL) */
    /* 0: every send completes at once (an eager protocol). Otherwise a
     * send of at least rndv_min bytes whose request is not `buffered`
     * completes only once the receiver has matched it, or with
     * UCFT_ERR_PROC_FAILED once the sender declares the receiver failed:
     * UCX's rendezvous protocol (transport contract T7). A message that
     * nobody ever receives then keeps its sender waiting, as it does on
     * UCX. */
    size_t rndv_min;
    /* Optional (SIM_NOTIFY_DELAY): per rank, nranks entries kept by
     * pointer, how much later than detect_delay_ns that rank hears of a
     * death; NULL: everyone at once. The runtime's failure news spreads
     * over a graph, so ranks learn of a death at different times. */
    const uint64_t *notify_skew_ns;
} sim_params_t;

typedef struct sim_stats {
    uint64_t now;            /* current simulated time, ns */
    uint64_t events;         /* events handled */
    uint64_t messages;       /* sends accepted (posted by a live rank) */
    uint64_t bytes;          /* payload bytes of those sends */
    uint64_t delivered;      /* messages matched or queued at a live rank */
    uint64_t dropped;        /* lost: dead sender/receiver, declared failed */
    uint64_t deaths;         /* ranks killed so far */
    uint64_t cross_domain;   /* sends across domains (params.domain) */
    uint64_t pending_events; /* still queued */
} sim_stats_t;

/* Fills defaults: LogGP defaults above, seed 1, notification after
 * SIM_DEFAULT_DETECT_DELAY_NS, no hook, no log. */
void sim_params_default(sim_params_t *params, int nranks);

/* Parses "L,o,g,G": L, o, g in microseconds and G in nanoseconds per byte,
 * decimals allowed (e.g. "1,0.3,0.4,0.08"). Returns 0 or -1. */
int sim_loggp_parse(const char *text, sim_loggp_t *loggp);

/* Creates a world of params->nranks ranks at simulated time 0. */
ucft_status_t sim_world_create(const sim_params_t *params,
                               sim_world_t **world_p);
/* Frees the world, every rank's tp and every queued message. Requests that
 * are still pending never complete. */
void sim_world_destroy(sim_world_t *world);

int sim_world_size(const sim_world_t *world);
/* Rank r's transport; owned by the world. */
tp_t *sim_world_tp(sim_world_t *world, int rank);

/* Handles events in order while the next one is due at or before `until`,
 * at most `max_events` of them (UINT64_MAX: no bound). When it stops because
 * nothing is due before `until` (and until != UINT64_MAX), the clock moves
 * on to `until`. Returns the number of events handled; 0 from inside the
 * event loop (no nesting). */
uint64_t sim_world_run(sim_world_t *world, uint64_t until, uint64_t max_events);
uint64_t sim_world_now(const sim_world_t *world);
/* 1 when no event is queued. */
int sim_world_quiescent(const sim_world_t *world);

/* Failure injection. All may be combined. */
/* Kills `rank` now (from a callback too: the rank's code that is running
 * goes on, but nothing it does has any effect). */
ucft_status_t sim_world_kill(sim_world_t *world, int rank);
/* Kills `rank` at simulated time `time` (now if already past). */
ucft_status_t sim_world_kill_at(sim_world_t *world, int rank, uint64_t time);
/* Kills `rank` just before its k-th send (k >= 1) among the sends whose tag
 * satisfies (tag & mask) == (match & mask); mask 0 counts every send. To
 * name one collective: class COLL, context id and sequence bits in mask. */
ucft_status_t sim_world_kill_before_send(sim_world_t *world, int rank,
                                         unsigned k, uint64_t match,
                                         uint64_t mask);
/* Kills `rank` when a driver announces that it starts an operation whose
 * tag matches, see sim_world_op_starting(). */
ucft_status_t sim_world_kill_before_op(sim_world_t *world, int rank,
                                       uint64_t match, uint64_t mask);
/* For drivers: `rank` is about to start the operation tagged `optag`.
 * Applies kill_before_op rules; returns 1 if the rank is dead. */
int sim_world_op_starting(sim_world_t *world, int rank, uint64_t optag);
/* Loses the next `count` messages (count >= 1) from `src` to `dst` whose
 * tag satisfies (tag & mask) == (match & mask), counted in stats.dropped:
 * they vanish on the wire, as if a connection closed under them. Either
 * rank may be SIM_ANY_RANK. The sender sees its send complete normally
 * (an eager send); a rendezvous send (params.rndv_min) whose message is
 * lost waits until its sender declares the receiver failed. */
#define SIM_ANY_RANK (-1)
ucft_status_t sim_world_lose(sim_world_t *world, int src, int dst,
                             unsigned count, uint64_t match, uint64_t mask);
/* Kills `k` distinct random ranks now, drawn from the world's seed,
 * never `exclude` (-1: none). Writes them to `out` (may be NULL). */
ucft_status_t sim_world_kill_random(sim_world_t *world, int k, int exclude,
                                    int *out);

int sim_world_is_dead(const sim_world_t *world, int rank);
/* Death time of a dead rank, UINT64_MAX for a live one. */
uint64_t sim_world_death_time(const sim_world_t *world, int rank);

uint64_t sim_world_trace_hash(const sim_world_t *world);
void sim_world_stats(const sim_world_t *world, sim_stats_t *stats);

/* Random plan: k distinct ranks of [0, n) other than `exclude`, drawn
 * from `seed` (splitmix64), in draw order. UCFT_ERR_INVALID_PARAM when
 * there are not enough ranks. */
/* The next value of a splitmix64 sequence whose state is *s (the world's
 * random plans use it; so does the driver's staggered start). */
uint64_t sim_splitmix64(uint64_t *s);

ucft_status_t sim_plan_random(int n, int k, int exclude, uint64_t seed,
                              int *out);

#endif
