/* One rank's failure detector: see detector.h. */
#include "runtime/detector/detector.h"

#include <stdlib.h>
#include <string.h>

void det_params_default(det_params_t *params)
{
    memset(params, 0, sizeof(*params));
    params->hb.eta_ns = DET_DEFAULT_ETA_NS;
    params->hb.delta_ns = DET_DEFAULT_DELTA_NS;
    params->prop_window = PROP_DEFAULT_WINDOW;
}

/* We were declared failed: go quiet at once and tell the owner. */
static void det_self_declared(det_t *det)
{
    if (det->self_declared)
        return;
    det->self_declared = 1;
    hb_stop(&det->hb, 0);
    pb_stop(&det->pb);
    prop_stop(&det->prop);
    rec_stop(&det->rec);
    det->running = 0;
    det->ops.self_cb(det->ops.arg);
}

void det_declare(det_t *det, int rank, det_why_t why)
{
    if (det->self_declared)
        return;
    if (rank == det->me) {
        det_self_declared(det);
        return;
    }
    if (mb_add(&det->mb, rank) != 1)
        return; /* known, invalid or out of memory (see mb_add) */
    pb_cancel(&det->pb, rank);
    if (det->ops.failed_cb != NULL)
        det->ops.failed_cb(det->ops.arg, rank, mb_epoch(&det->mb), why);
    if (det->self_declared || !det->running)
        return; /* the owner stopped us from the callback */
    /* News first, then the heartbeat request: per-pair FIFO then makes a
     * neighbour learn the fact before it sees our request. */
    if (why != DET_WHY_NEWS && why != DET_WHY_EXITED)
        prop_notify(&det->prop, rank);
    prop_pump(&det->prop);
    hb_membership_changed(&det->hb);
}

void det_hold(det_t *det)
{
    prop_hold(&det->prop);
}

void det_release(det_t *det)
{
    prop_release(&det->prop);
}

static hb_vouch_t det_vouch_cb(void *arg, int rank, uint64_t silent_ns);

/* The observed rank is overdue: declared at once on the kernel's word or
 * without probes; else other ranks are asked to reach it first. */
static void det_suspect_cb(void *arg, int rank, int kernel)
{
    det_t *det = arg;
    if (kernel || !pb_enabled(&det->pb)) {
        det_declare(det, rank, DET_WHY_HEARTBEAT);
        return;
    }
    pb_suspect(&det->pb, rank, det->hb.last_heard, 0);
}

/* The window of a presumed rank (det_confirmed_cb). */
static uint64_t det_presume_window(const det_t *det)
{
    uint64_t w = 2 * det->pb.params.round_ns;
    return w > 0 && w < det->pb.params.window_ns ? w : det->pb.params.window_ns;
}

/* Nobody reached the observed rank within the window: declared, unless
 * its own heartbeat ended the suspicion meanwhile (or it is no longer
 * ours); with it the silent ranks before it that the probes found
 * silent too, for two rounds each, while a rank beyond them answered
 * (probe.h: a vanished host takes consecutive ranks with it). Those go
 * first, so that the ring re-targets once. Then the new target, if the
 * probes left it pending (its window goes on), is presumed. Without runs
 * (probe.run 1) a new target of which nothing is known is confirmed at
 * once instead of after a delta of its own: two rounds of probes (at
 * most the window) to answer, its heartbeat (which our request asks for
 * at once) or the helpers' relays. A rank that answered, or that the
 * kernel can see, is not. */
static int det_confirmed_cb(void *arg, int rank, const int *run, int n)
{
    det_t *det = arg;
    if (det->hb.observed != rank || det->hb.suspected != rank)
        return 0;
    if (n > 0)
        ucft_info(det->tp->log,
                  "rank %d: no heartbeat for %.1f ms and no answer through "
                  "other ranks (%llu probe requests so far): declaring it "
                  "and the %d rank(s) before it (down to rank %d), silent "
                  "to the probes for two rounds while a rank beyond them "
                  "answered",
                  rank, (double)(tp_now(det->tp) - det->hb.last_heard) / 1e6,
                  (unsigned long long)det->pb.stats.requests, n, run[n - 1]);
    else
        ucft_info(det->tp->log,
                  "rank %d: no heartbeat for %.1f ms and no answer through "
                  "other ranks (%llu probe requests so far): declaring it",
                  rank, (double)(tp_now(det->tp) - det->hb.last_heard) / 1e6,
                  (unsigned long long)det->pb.stats.requests);
    prop_hold(&det->prop); /* the run's news in one message per link */
    for (int i = n - 1; i >= 0; i--)
        det_declare(det, run[i], DET_WHY_HEARTBEAT);
    det_declare(det, rank, DET_WHY_HEARTBEAT);
    prop_release(&det->prop);
    int next = det->hb.observed;
    if (!det->running || next < 0 || next == rank ||
        det_vouch_cb(det, next, 0) != HB_VOUCH_NONE)
        return 1;
    if (det->pb.suspect == next) { /* still being probed: presumed */
        hb_presume(&det->hb, next);
        return 1;
    }
    /* With runs (pb_params_t.run > 1) nothing else is presumed: the
     * next rank either answered the probes a moment ago, or no answer
     * reached this rank at all, which its own deafness or starvation
     * would explain as well as a death: the next rank gets a full delta
     * (and its own run). Without runs, the rule of before. */
    if (next == det->pb.alive || det->pb.params.run > 1)
        return 1;
    if (hb_presume(&det->hb, next))
        pb_suspect(&det->pb, next, tp_now(det->tp), det_presume_window(det));
    return 1;
}

/* A transport-evidence suspicion ended (det_suspect): declared when no
 * answer came within the window and no heartbeat of the rank either. */
static void det_evidence_cb(void *arg, int rank, int confirmed, uint64_t since)
{
    det_t *det = arg;
    if (confirmed &&
        !(det->hb.observed == rank && det->hb.last_heard > since)) {
        ucft_info(det->tp->log,
                  "rank %d: transport evidence (an endpoint error) and no "
                  "answer through other ranks for %.1f ms: declaring it",
                  rank, (double)(tp_now(det->tp) - since) / 1e6);
        det_declare(det, rank, DET_WHY_EXTERNAL);
        return;
    }
    ucft_info(det->tp->log,
              "rank %d: transport evidence (an endpoint error), but it "
              "answered: not declared",
              rank);
    if (det->ops.cleared_cb != NULL)
        det->ops.cleared_cb(det->ops.arg, rank);
}

void det_suspect(det_t *det, int rank)
{
    if (det->self_declared || !det->running || rank == det->me ||
        mb_is_failed(&det->mb, rank))
        return;
    if (!pb_enabled(&det->pb)) {
        det_declare(det, rank, DET_WHY_EXTERNAL);
        return;
    }
    if (!pb_evidence(&det->pb, rank))
        ucft_debug(det->tp->log,
                   "rank %d: transport evidence not probed (no free slot): "
                   "its heartbeats decide",
                   rank);
}

static void det_refuted_cb(void *arg, int rank, int helper)
{
    det_t *det = arg;
    ucft_debug(det->tp->log,
               "rank %d: overdue, but rank %d reached it: not declared", rank,
               helper);
    hb_refute(&det->hb, rank);
}

static void det_warn_cb(void *arg, uint64_t gap)
{
    det_t *det = arg;
    if (det->ops.warn_late_cb != NULL)
        det->ops.warn_late_cb(det->ops.arg, gap);
}

/* A failed rank still talks to us: it may not know; tell it. */
static void det_fenced_cb(void *arg, int rank)
{
    det_t *det = arg;
    ucft_debug(det->tp->log,
               "rank %d, declared failed, still talks to us: "
               "telling it",
               rank);
    prop_notify(&det->prop, rank);
}

/* Two heartbeats of `rank` carried another failed set: reconcile. */
static void det_diverged_cb(void *arg, int rank)
{
    det_t *det = arg;
    rec_offer(&det->rec, rank);
}

static hb_vouch_t det_vouch_cb(void *arg, int rank, uint64_t silent_ns)
{
    det_t *det = arg;
    return det->ops.vouch_cb != NULL
               ? det->ops.vouch_cb(det->ops.arg, rank, silent_ns)
               : HB_VOUCH_NONE;
}

static uint64_t det_run_delay_cb(void *arg)
{
    det_t *det = arg;
    return det->ops.run_delay_cb(det->ops.arg);
}

static void det_news_cb(void *arg, int rank, int from)
{
    det_declare(arg, rank, DET_WHY_NEWS);
}

static int det_learns_alone_cb(void *arg, int rank, int fact)
{
    det_t *det = arg;
    return det->ops.learns_alone_cb != NULL &&
           det->ops.learns_alone_cb(det->ops.arg, rank, fact);
}

static void det_self_cb(void *arg, int from)
{
    det_self_declared(arg);
}

ucft_status_t det_create(tp_t *tp, const det_params_t *params,
                         const det_ops_t *ops, det_t **det_p)
{
    ucft_status_t st;

    if (params->hb.eta_ns < DET_MIN_ETA_NS ||
        params->hb.delta_ns <= params->hb.eta_ns || ops->self_cb == NULL)
        return UCFT_ERR_INVALID_PARAM;
    det_t *det = calloc(1, sizeof(*det));
    if (det == NULL)
        return UCFT_ERR_NO_MEMORY;
    det->tp = tp;
    det->me = tp->rank;
    det->ops = *ops;
    mb_init(&det->mb, tp->size);
    hb_params_t hbp = params->hb;
    if (params->probe.helpers > 0) /* confirmed before the deadline ends */
        hbp.early_ns = params->probe.window_ns < hbp.delta_ns
                           ? params->probe.window_ns
                           : hbp.delta_ns / 2;
    hb_init(
        &det->hb, tp, &det->mb, &hbp,
        &(hb_ops_t){.suspect_cb = det_suspect_cb,
                    .warn_late_cb = det_warn_cb,
                    .fenced_cb = det_fenced_cb,
                    .diverged_cb = det_diverged_cb,
                    .vouch_cb = ops->vouch_cb ? det_vouch_cb : NULL,
                    .run_delay_cb = ops->run_delay_cb ? det_run_delay_cb : NULL,
                    .arg = det});
    pb_init(&det->pb, tp, &det->mb, &params->probe,
            &(pb_ops_t){.confirmed_cb = det_confirmed_cb,
                        .refuted_cb = det_refuted_cb,
                        .evidence_cb = det_evidence_cb,
                        .vouch_cb = ops->vouch_cb ? det_vouch_cb : NULL,
                        .arg = det});
    rec_init(&det->rec, tp, &det->mb,
             &(rec_ops_t){.news_cb = det_news_cb,
                          .self_cb = det_self_cb,
                          .fenced_cb = det_fenced_cb,
                          .arg = det});
    st = prop_init(&det->prop, tp, &det->mb, params->prop_window,
                   &(prop_ops_t){.news_cb = det_news_cb,
                                 .self_cb = det_self_cb,
                                 .learns_alone_cb = det_learns_alone_cb,
                                 .arg = det});
    if (st != UCFT_OK)
        goto err_free;
    *det_p = det;
    return UCFT_OK;

err_free:
    free(det);
    return st;
}

ucft_status_t det_start(det_t *det)
{
    ucft_status_t st;

    det->running = 1;
    st = prop_start(&det->prop);
    if (st != UCFT_OK)
        goto err;
    st = rec_start(&det->rec);
    if (st != UCFT_OK)
        goto err_prop;
    st = pb_start(&det->pb);
    if (st != UCFT_OK)
        goto err_rec;
    st = hb_start(&det->hb);
    if (st != UCFT_OK)
        goto err_pb;
    return UCFT_OK;

err_pb:
    pb_stop(&det->pb);
err_rec:
    rec_stop(&det->rec);
err_prop:
    prop_stop(&det->prop);
err:
    det->running = 0;
    return st;
}

void det_stop(det_t *det)
{
    if (!det->running)
        return;
    det->running = 0;
    hb_stop(&det->hb, 1);
    pb_stop(&det->pb);
    prop_stop(&det->prop);
    rec_stop(&det->rec);
}

int det_idle(const det_t *det)
{
    return hb_idle(&det->hb) && pb_idle(&det->pb) && prop_idle(&det->prop) &&
           rec_idle(&det->rec);
}

void det_destroy(det_t *det)
{
    if (det == NULL)
        return;
    prop_cleanup(&det->prop);
    mb_cleanup(&det->mb);
    free(det);
}
