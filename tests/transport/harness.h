/*
 * The harness behind the transport conformance suite (conformance.c): a
 * few ranks of one backend inside one process. One implementation per
 * backend: harness_sim.c (a sim world), harness_ucp.c (several UCP workers
 * in this process, each with its own tp).
 *
 * Bounds are the harness's business, not the tests': the sim counts events
 * (simulated time is free), UCP counts wall-clock time. A test says only
 * what it waits for (a message-sized wait, or a failure notification, which
 * may take seconds on real UCX).
 */
#ifndef UCFT_TESTS_TRANSPORT_HARNESS_H
#define UCFT_TESTS_TRANSPORT_HARNESS_H

#include "transport/transport.h"

typedef struct tp_harness tp_harness_t;

typedef enum harness_wait {
    HARNESS_WAIT_MSG,     /* a message or completion: sim 10^6 events,
                             ucp a few seconds */
    HARNESS_WAIT_FAILURE, /* a failure notification: sim 10^7 events,
                             ucp up to ~30 s */
} harness_wait_t;

typedef int (*harness_pred_t)(void *arg);

/* Backend name for messages, e.g. "sim". */
const char *harness_name(void);

/* Creates n ranks (n <= 8): tps[i] gets rank i's transport (rank i, size n,
 * peer_error_cb NULL). Returns NULL on failure. */
tp_harness_t *harness_create(int n, tp_t **tps);

/* One round of progress on every live rank, in rank order. Returns the
 * events handled. */
unsigned harness_progress(tp_harness_t *h);

/* Progresses until pred(arg) holds: returns 1, or 0 once the bound of
 * `kind` is spent (or, on sim, nothing is left to happen). */
int harness_wait(tp_harness_t *h, harness_pred_t pred, void *arg,
                 harness_wait_t kind);

/* Progresses long enough for whatever is in flight to land, so that a test
 * can check that something did NOT happen (sim: until quiescent; ucp: a
 * short wall-clock while, ~100 ms). */
void harness_settle(tp_harness_t *h);

/* Kills rank r abruptly (fail-stop): it never sends or progresses again and
 * the survivors are eventually told through peer_error_cb. tps[r] must not
 * be used afterwards. */
void harness_kill(tp_harness_t *h, int rank);

/* Frees everything; pending requests never complete. */
void harness_destroy(tp_harness_t *h);

#endif
