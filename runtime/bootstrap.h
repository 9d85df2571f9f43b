/*
 * Bootstrap through PMIx: who am I, how big is the job, where are the
 * others (worker addresses through Put/Commit/Fence/Get), and death events
 * from the launcher. Without a PMIx server the process is a singleton.
 */
#ifndef UCFT_RT_BOOTSTRAP_H
#define UCFT_RT_BOOTSTRAP_H

#include "ucft.h"
#include "runtime/base/log.h"

#include <stddef.h>

/* Called on the PMIx progress thread (not the caller's!) for every death
 * event naming a rank of this job. */
typedef void (*rt_boot_death_cb_t)(void *arg, int rank, ucft_status_t why);
/* Called on the PMIx progress thread when a non-blocking fence ends. */
typedef void (*rt_boot_done_cb_t)(void *arg, ucft_status_t status);

typedef struct rt_boot {
    int singleton;
    int rank;
    int size;
    int local_rank;
    int local_size;
    int node_id;
    char hostname[256];
    char nspace[256];
    const ucft_log_t *log;
    int pmix_up;
    size_t ev_id;
    int ev_registered;
    rt_boot_death_cb_t death_cb;
    void *death_arg;
    rt_boot_done_cb_t fence_cb;
    void *fence_arg;
} rt_boot_t;

ucft_status_t rt_boot_init(rt_boot_t *b, const ucft_log_t *log);
/* Publishes this rank's worker address (Put + Commit); the fence that
 * makes it visible is rt_boot_fence_nb with collect = 1. */
ucft_status_t rt_boot_publish(rt_boot_t *b, const void *addr, size_t len);
/* The same for the heartbeat worker's address (published before the same
 * fence). */
ucft_status_t rt_boot_publish_hb(rt_boot_t *b, const void *addr, size_t len);
/* tp_ucp_lookup_cb_t: fetches the address of `rank` (arg: the rt_boot_t)
 * from what the start-up fence collected, without waiting:
 * UCFT_ERR_PROC_FAILED when the rank published none (it died during
 * start-up). rt_boot_lookup_hb fetches its heartbeat worker's address;
 * PMIx calls are thread-safe, so the heartbeat thread may call it. */
ucft_status_t rt_boot_lookup(void *arg, int rank, void **addr, size_t *len);
ucft_status_t rt_boot_lookup_hb(void *arg, int rank, void **addr, size_t *len);
/* Any other key of this rank (Put + Commit; visible after the fence) and
 * of another rank (*data malloc'ed; an error, not logged, when the rank
 * did not publish it). */
ucft_status_t rt_boot_put(rt_boot_t *b, const char *key, const void *data,
                          size_t len);
ucft_status_t rt_boot_get(rt_boot_t *b, int rank, const char *key, void **data,
                          size_t *len);
/* The ranks of this job on this node (PMIX_LOCAL_PEERS; *ranks malloc'ed,
 * may include this rank). UCFT_ERR_NOT_SUPPORTED when the launcher does
 * not say. */
ucft_status_t rt_boot_local_peers(rt_boot_t *b, int **ranks, size_t *n);
ucft_status_t rt_boot_watch_deaths(rt_boot_t *b, rt_boot_death_cb_t cb,
                                   void *arg);
/* Starts a fence over the job (collect: with data collection); `cb` runs
 * on the PMIx thread when done (or at once for a singleton). */
ucft_status_t rt_boot_fence_nb(rt_boot_t *b, int collect, rt_boot_done_cb_t cb,
                               void *arg);
void rt_boot_finalize(rt_boot_t *b);

#endif
