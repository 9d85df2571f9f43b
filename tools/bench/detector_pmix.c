/*
 * ucft-bench detector: when the launcher's death event reaches this
 * process, independently of ucft. A second PMIx event handler, put in
 * front of the chain (PMIX_EVENT_HDLR_PREPEND), records CLOCK_MONOTONIC
 * for each rank named by PMIX_ERR_PROC_ABORTED_BY_SIG and passes the
 * event on at once. told - event then splits the fast-path latency into
 * launcher + PMIx delivery and what ucft adds. Diagnostic only: SIGSTOP
 * has no event, and without a PMIx server nothing is recorded.
 */
#include "tools/bench/detector.h"

#include <pmix.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

static void event_cb(size_t id, pmix_status_t code, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[],
                     size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    det_pmix_t *pm = NULL;
    const pmix_proc_t *affected = source;
    uint64_t now = bench_now_ns();
    (void)id;
    (void)code;
    (void)results;
    (void)nresults;

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT))
            pm = info[i].value.data.ptr;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC))
            affected = info[i].value.data.proc;
    }
    if (pm != NULL && affected != NULL &&
        affected->rank < (pmix_rank_t)pm->size) {
        uint64_t zero = 0;
        atomic_compare_exchange_strong(&pm->event_ns[affected->rank], &zero,
                                       now);
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

int det_pmix_watch(det_pmix_t *pm, int size)
{
    pmix_proc_t me;
    pmix_info_t info[2];
    pmix_status_t code = PMIX_ERR_PROC_ABORTED_BY_SIG, rc;
    bool first = true;

    pm->size = size;
    pm->active = 0;
    pm->event_ns = calloc((size_t)size, sizeof(*pm->event_ns));
    if (pm->event_ns == NULL)
        return -1;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) /* counted: ucft's too */
        return -1;
    pm->active = 1;
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_RETURN_OBJECT, pm, PMIX_POINTER);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_HDLR_PREPEND, &first, PMIX_BOOL);
    rc = PMIx_Register_event_handler(&code, 1, info, 2, event_cb, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc < 0)
        return -1;
    pm->id = (size_t)rc;
    pm->registered = 1;
    return 0;
}

uint64_t det_pmix_event_ns(const det_pmix_t *pm, int rank)
{
    if (pm->event_ns == NULL || rank < 0 || rank >= pm->size)
        return 0;
    return atomic_load(&pm->event_ns[rank]);
}

void det_pmix_unwatch(det_pmix_t *pm)
{
    if (pm->registered)
        PMIx_Deregister_event_handler(pm->id, NULL, NULL);
    if (pm->active)
        PMIx_Finalize(NULL, 0);
    pm->registered = pm->active = 0;
    free(pm->event_ns);
    pm->event_ns = NULL;
}
