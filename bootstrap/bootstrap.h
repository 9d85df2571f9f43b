/*
 * Bootstrap through PMIx: who am I, how big is the job, where are the
 * others (worker addresses through Put/Commit/Fence/Get), and death events
 * from the launcher. Without a PMIx server the process is a singleton.
 */
#ifndef UCFT_BOOTSTRAP_H
#define UCFT_BOOTSTRAP_H

#include "ucft.h"
#include "runtime/base/log.h"

#include <stddef.h>

/* Called on the PMIx progress thread (not the caller's!) for every death
 * event naming a rank of this job. */
typedef void (*boot_death_cb_t)(void *arg, int rank, ucft_status_t why);
/* Called on the PMIx progress thread when a non-blocking fence ends. */
typedef void (*boot_done_cb_t)(void *arg, ucft_status_t status);

typedef struct rt_boot {
    int singleton;
    int rank;
    int size;
    int local_rank;
    int local_size;
    int node_id;
    int node_id_known; /* the launcher gave this rank's PMIX_NODEID */
    char hostname[256];
    char nspace[256];
    const ucft_log_t *log;
    int pmix_up;
    size_t ev_id;
    int ev_registered;
    int live_set; /* this context marked the process as having one */
    boot_death_cb_t death_cb;
    void *death_arg;
    boot_done_cb_t fence_cb;
    void *fence_arg;
    int fence_collect; /* the pending fence collects data */
    int fence_retried; /* it was posted again after a partial success */
} boot_t;

ucft_status_t boot_init(boot_t *b, const ucft_log_t *log);
/* Publishes this rank's worker address (Put + Commit); the fence that
 * makes it visible is boot_fence_nb with collect = 1. */
ucft_status_t boot_publish(boot_t *b, const void *addr, size_t len);
/* The same for the heartbeat worker's address (published before the same
 * fence). */
ucft_status_t boot_publish_hb(boot_t *b, const void *addr, size_t len);
/* Publishes `len` bytes under `key` (Put + Commit; visible to the others
 * after the collecting fence), and fetches what `rank` published under
 * `key` into a malloc'ed copy (*addr, *len; the caller frees). A singleton
 * publishes nothing and fetches nothing (UCFT_ERR_BOOTSTRAP). */
ucft_status_t boot_put(boot_t *b, const char *key, const void *addr,
                       size_t len);
ucft_status_t boot_get(boot_t *b, const char *key, int rank, void **addr,
                       size_t *len);
/* This rank's PMIX_LOCALITY_STRING into buf: 1 if the launcher gave one
 * (the rank is bound), 0 if not (absent or a NULL string: unbound, or a
 * singleton). Never blocks (PMIX_OPTIONAL). */
int boot_locality_string(boot_t *b, char *buf, size_t len);
/* tp_ucp_lookup_cb_t: fetches the address of `rank` (arg: the boot_t)
 * from what the start-up fence collected, without waiting:
 * UCFT_ERR_PROC_FAILED when the rank published none (it died during
 * start-up). boot_lookup_hb fetches its heartbeat worker's address;
 * PMIx calls are thread-safe, so the heartbeat thread may call it. */
ucft_status_t boot_lookup(void *arg, int rank, void **addr, size_t *len);
ucft_status_t boot_lookup_hb(void *arg, int rank, void **addr, size_t *len);
/* boot_get for an optional key: a rank that did not publish it gives
 * UCFT_ERR_BOOTSTRAP without an error line. */
ucft_status_t boot_get_opt(boot_t *b, const char *key, int rank, void **addr,
                           size_t *len);
/* The ranks of this job on this node (PMIX_LOCAL_PEERS; *ranks malloc'ed,
 * may include this rank). UCFT_ERR_NOT_SUPPORTED when the launcher does
 * not say. */
ucft_status_t boot_local_peers(boot_t *b, int **ranks, size_t *n);
ucft_status_t boot_watch_deaths(boot_t *b, boot_death_cb_t cb, void *arg);
/* Starts a fence over the job (collect: with data collection); `cb` runs
 * on the PMIx thread when done (or at once for a singleton). */
ucft_status_t boot_fence_nb(boot_t *b, int collect, boot_done_cb_t cb,
                            void *arg);
/* Stops the death events of boot_watch_deaths (no callback runs once it
 * returns); a no-op when none are watched. */
void boot_unwatch_deaths(boot_t *b);
void boot_finalize(boot_t *b);

#endif
