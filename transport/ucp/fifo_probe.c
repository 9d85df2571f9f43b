/*
 * The self-probe of a worker's shared-memory FIFO (fifo_probe.h), and, at
 * the end, when the UCP backend runs it: after each death, a verdict from
 * progress or from a timer for an owner that sleeps (tp_ucp_priv.h).
 */
#include "transport/ucp/fifo_probe.h"
#include "transport/ucp/mm_fifo.h"
#include "transport/ucp/tp_ucp_priv.h"

#include "runtime/base/clock.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void fifo_probe_init(fifo_probe_t *p, ucp_worker_h target, uint64_t tag,
                     uint64_t wait_ns, int mend)
{
    memset(p, 0, sizeof(*p));
    p->target = target;
    p->tag = tag;
    p->wait_ns = wait_ns;
    p->mend = mend;
}

static void ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)arg;
    (void)ep;
    (void)status; /* the target is in this process: it does not die */
}

/* The private worker and its endpoint, made once. Peer error handling as
 * on ucft's data endpoints, so that UCX picks the same transports. */
static ucs_status_t connect_once(fifo_probe_t *p, ucp_context_h ctx,
                                 const ucp_address_t *addr)
{
    if (p->ep != NULL)
        return UCS_OK;
    if (p->worker == NULL) {
        ucp_worker_params_t wp = {.field_mask =
                                      UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                                  .thread_mode = UCS_THREAD_MODE_SINGLE};
        ucs_status_t st = ucp_worker_create(ctx, &wp, &p->worker);
        if (st != UCS_OK)
            return st;
    }
    ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                                        UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                        UCP_EP_PARAM_FIELD_ERR_HANDLER,
                          .address = addr,
                          .err_mode = UCP_ERR_HANDLING_MODE_PEER,
                          .err_handler = {.cb = ep_error}};
    return ucp_ep_create(p->worker, &ep, &p->ep);
}

/* NULL stays NULL; a finished request is freed and becomes NULL. */
static void *settle(void *req)
{
    if (req == NULL || ucp_request_check_status(req) == UCS_INPROGRESS)
        return req;
    ucp_request_free(req);
    return NULL;
}

static void cancel_recv(fifo_probe_t *p, void **req)
{
    if (*req != NULL) {
        ucp_request_cancel(p->target, *req);
        ucp_request_free(*req);
        *req = NULL;
    }
}

ucs_status_t fifo_probe_start(fifo_probe_t *p, ucp_context_h ctx,
                              const ucp_address_t *target_addr, uint64_t now_ns)
{
    if (p->state == FIFO_PROBE_WAITING || p->state == FIFO_PROBE_BLOCKED)
        return UCS_OK;
    ucs_status_t st = connect_once(p, ctx, target_addr);
    if (st != UCS_OK)
        return st;
    /* The last probe arrived before its send request ended (its data was
     * in the FIFO): UCX frees the request when it ends. */
    if (p->send_req != NULL) {
        ucp_request_free(p->send_req);
        p->send_req = NULL;
    }
    p->mends = 0;
    p->why = NULL;
    p->recheck_ns = p->quiet_since = 0;
    ucp_request_param_t none = {.op_attr_mask = 0};
    void *r = ucp_tag_recv_nbx(p->target, &p->received, sizeof(p->received),
                               p->tag, ~(uint64_t)0, &none);
    if (UCS_PTR_IS_ERR(r))
        return UCS_PTR_STATUS(r);
    p->recv_req = r;
    p->payload++;
    void *s =
        ucp_tag_send_nbx(p->ep, &p->payload, sizeof(p->payload), p->tag, &none);
    if (UCS_PTR_IS_ERR(s)) {
        cancel_recv(p, &p->recv_req);
        return UCS_PTR_STATUS(s);
    }
    p->send_req = settle(s);
    p->start_ns = now_ns;
    p->written_ns = p->send_req == NULL ? now_ns : 0;
    p->state = FIFO_PROBE_WAITING;
    return UCS_OK;
}

static int arrived(fifo_probe_t *p)
{
    int all = (p->recv_req = settle(p->recv_req)) == NULL;
    for (int i = 0; i < p->mends; i++)
        all &= (p->copy_req[i] = settle(p->copy_req[i])) == NULL;
    return all;
}

/* ---- mending (mm_fifo.h) ------------------------------------------------- */

/* UCP 1.13's single-fragment eager tagged message, as the probe travels:
 * active message 2, the 8-byte tag, then the data. Checked against the
 * probe's own slot whenever the probe is in the FIFO. */
#define EAGER_ONLY_AM_ID 2
#define PROBE_MSG_LEN    16

typedef struct mend_scan {
    const fifo_probe_t *p;
    int efd;
    mm_fifo_t fifo;
    uint64_t stuck_at;
    const char *why;
} mend_scan_t;

static void probe_msg(const fifo_probe_t *p, uint8_t msg[PROBE_MSG_LEN])
{
    memcpy(msg, &p->tag, sizeof(p->tag));
    memcpy(msg + sizeof(p->tag), &p->payload, sizeof(p->payload));
}

/* Slot i holds this probe, in the form mending writes. */
static int holds_probe(const fifo_probe_t *p, const mm_fifo_t *f, uint64_t i)
{
    uint8_t msg[PROBE_MSG_LEN];
    probe_msg(p, msg);
    return mm_fifo_holds(f, i, EAGER_ONLY_AM_ID, msg, PROBE_MSG_LEN);
}

/* mm_fifo_each's visitor: the target worker's FIFO, and its first slot
 * never written. When the probe was written, it must be behind that slot
 * and look as mending would write it. */
static int find_stuck(const mm_fifo_t *f, void *arg)
{
    mend_scan_t *m = arg;
    if (!mm_fifo_of_worker(f, m->efd))
        return 0;
    uint64_t head = mm_fifo_head(f), tail = mm_fifo_tail(f), j = tail;
    while (j < head && mm_fifo_written(f, j))
        j++;
    if (j == head) {
        m->why = "the worker's FIFO has no slot left unwritten";
        return 3;
    }
    int seen = m->p->send_req != NULL; /* not written: nothing to see */
    for (uint64_t i = j + 1; i < head && !seen; i++)
        seen = holds_probe(m->p, f, i);
    if (!seen) {
        m->why = "the probe is not where, or not as, expected in the FIFO";
        return 2;
    }
    m->fifo = *f;
    m->stuck_at = j;
    return 1;
}

typedef struct claim_scan {
    int efd, open;
} claim_scan_t;

static int find_open_claim(const mm_fifo_t *f, void *arg)
{
    claim_scan_t *c = arg;
    if (!mm_fifo_of_worker(f, c->efd))
        return 0;
    uint64_t head = mm_fifo_head(f);
    for (uint64_t j = mm_fifo_tail(f); j < head && !c->open; j++)
        c->open = !mm_fifo_written(f, j);
    return 1;
}

int tp_ucp__fifo_claim_open(tp_ucp_t *tp)
{
    claim_scan_t c = {.open = 0};
    if (tp->probe.wait_ns == 0 || !mm_fifo_supported() ||
        ucp_worker_get_efd(tp->worker, &c.efd) != UCS_OK)
        return 0;
    mm_fifo_each(getpid(), find_open_claim, &c);
    return c.open;
}

/* Whether the stuck slot may be written now (fifo_quiet.h): 1 yes, 2 look
 * again at recheck_ns, 0 never (why set: still not after 4 * wait_ns). */
static int senders_quiet(fifo_probe_t *p, const mm_fifo_t *f, uint64_t now_ns)
{
    pid_t who = 0;
    /* A fresh verdict: the stuck slot was claimed before the probe was
     * written, so before this look. What a thread ran before it proves
     * nothing (it may have claimed a slot just after an older look): the
     * looks start again. */
    if (p->recheck_ns == 0)
        p->quiet.n = 0;
    fifo_quiet_verdict_t q = fifo_quiet_look(&p->quiet, f->dev, f->inode, &who);
    if (q == FIFO_QUIET) {
        p->recheck_ns = p->quiet_since = 0;
        return 1;
    }
    if (p->quiet_since == 0)
        p->quiet_since = now_ns;
    if (now_ns - p->quiet_since >= 4 * p->wait_ns) {
        snprintf(p->why_buf, sizeof(p->why_buf),
                 "process %d, which maps the FIFO, %s and may be the sender "
                 "that holds the slot",
                 (int)who,
                 q == FIFO_QUIET_STOPPED ? "is stopped" : "did not run");
        p->why = p->why_buf;
        p->recheck_ns = 0;
        return 0;
    }
    p->recheck_ns = now_ns + FIFO_PROBE_RECHECK_NS;
    return 2;
}

/* A BLOCKED verdict: writes the slot that stops the FIFO with a copy of
 * the probe and posts the receive for the copy. 1 when mended, 2 when it
 * looks again at recheck_ns, 0 when it cannot. */
static int mend(fifo_probe_t *p, uint64_t now_ns)
{
    mend_scan_t m = {.p = p};
    int found, quiet = 0;
    if (!p->mend)
        p->why = "mending is off (UCFT_SHM_MEND=n)";
    else if (p->mends == FIFO_PROBE_MENDS)
        p->why = "too many slots left unwritten";
    else if (!mm_fifo_supported())
        p->why = "the FIFO layout of this UCX version is unknown to ucft";
    else if (ucp_worker_get_efd(p->target, &m.efd) != UCS_OK)
        p->why = "the worker has no event fd";
    else if ((found = mm_fifo_each(getpid(), find_stuck, &m)) == 3 &&
             p->recheck_ns != 0)
        return 2; /* written meanwhile: the probe comes through */
    else if (found != 1)
        p->why = found >= 2   ? m.why
                 : found == 0 ? "the worker's FIFO was not found"
                              : "/proc/self/maps could not be read";
    else if ((quiet = senders_quiet(p, &m.fifo, now_ns)) != 1)
        return quiet;
    else {
        ucp_request_param_t none = {.op_attr_mask = 0};
        void *r = ucp_tag_recv_nbx(p->target, &p->copy_buf[p->mends],
                                   sizeof(p->copy_buf[0]), p->tag, ~(uint64_t)0,
                                   &none);
        if (UCS_PTR_IS_ERR(r)) {
            p->why = "the receive for the probe's copy failed";
            return 0;
        }
        uint8_t msg[PROBE_MSG_LEN];
        probe_msg(p, msg);
        mm_fifo_write(&m.fifo, m.stuck_at, EAGER_ONLY_AM_ID, msg,
                      PROBE_MSG_LEN);
        p->copy_req[p->mends++] = r;
        p->mended_slot = m.stuck_at;
        p->start_ns = now_ns;
        if (p->send_req == NULL)
            p->written_ns = now_ns;
        return 1;
    }
    return 0;
}

static void step(fifo_probe_t *p, uint64_t now_ns)
{
    ucp_worker_progress(p->worker);
    if (p->send_req != NULL) {
        p->send_req = settle(p->send_req);
        if (p->send_req == NULL)
            p->written_ns = now_ns;
    }
}

uint64_t fifo_probe_deadline(const fifo_probe_t *p)
{
    if (p->state != FIFO_PROBE_WAITING)
        return UINT64_MAX;
    if (p->recheck_ns != 0)
        return p->recheck_ns;
    if (p->send_req == NULL)
        return p->written_ns + p->wait_ns;
    return p->start_ns + 4 * p->wait_ns;
}

fifo_probe_state_t fifo_probe_poll(fifo_probe_t *p, uint64_t now_ns)
{
    if (p->state != FIFO_PROBE_WAITING)
        return p->state;
    step(p, now_ns);
    if (arrived(p))
        return p->state = FIFO_PROBE_ARRIVED;
    if (now_ns < fifo_probe_deadline(p))
        return p->state;
    /* Time is up. Whatever a live FIFO holds ahead of the probe is read
     * by this many progress calls of the target. */
    for (int i = 0; i < FIFO_PROBE_DRAIN; i++) {
        ucp_worker_progress(p->target);
        step(p, now_ns);
        if (arrived(p))
            return p->state = FIFO_PROBE_ARRIVED;
    }
    if (now_ns < fifo_probe_deadline(p))
        return p->state; /* written only now: it gets its full wait */
    if (mend(p, now_ns) != 0)
        return p->state; /* mended, or looks again: waits */
    return p->state = FIFO_PROBE_BLOCKED;
}

void fifo_probe_cleanup(fifo_probe_t *p)
{
    cancel_recv(p, &p->recv_req);
    for (int i = 0; i < p->mends; i++)
        cancel_recv(p, &p->copy_req[i]);
    if (p->send_req != NULL)
        ucp_request_free(p->send_req); /* UCX completes it with the ep */
    if (p->ep != NULL) {
        ucp_request_param_t cp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                  .flags = UCP_EP_CLOSE_FLAG_FORCE};
        void *c = ucp_ep_close_nbx(p->ep, &cp);
        if (UCS_PTR_IS_PTR(c)) {
            while (ucp_request_check_status(c) == UCS_INPROGRESS)
                ucp_worker_progress(p->worker);
            ucp_request_free(c);
        }
    }
    if (p->worker != NULL)
        ucp_worker_destroy(p->worker);
    memset(p, 0, sizeof(*p));
}

/* ---- the UCP backend's self-probe ---------------------------------------- */

/* How long after a death the probe starts. Making the private worker
 * costs a few milliseconds of CPU (10 ms and more when all the survivors
 * of a crowded node do it at once): kept out of the collectives that
 * correct the failure. A blocked FIFO is for ever, so waiting costs only
 * a later verdict. */
#define PROBE_DELAY_NS (50 * UCFT_NSEC_PER_MSEC)

/* The probe's timer: at the next start or verdict, for a sleeping owner. */
static void probe_arm(tp_ucp_t *tp)
{
    uint64_t next = fifo_probe_deadline(&tp->probe);
    if (tp->probe_due != 0 && tp->probe.state != FIFO_PROBE_WAITING)
        next = tp->probe_due;
    if (next == UINT64_MAX)
        ucft__timerq_remove(&tp->timers, &tp->probe_timer);
    else if (!ucft_timer_armed(&tp->probe_timer) ||
             tp->probe_timer.deadline != next)
        ucft__timerq_add(&tp->timers, &tp->probe_timer, next);
}

/* A peer died: if it was inside a send to us, our FIFO may be blocked. A
 * death while a probe is under way may have come after it: one more. */
void tp_ucp__probe_fifo(tp_ucp_t *tp)
{
    if (tp->probe.wait_ns == 0 || tp->probe_due != 0 ||
        tp->probe.state == FIFO_PROBE_BLOCKED)
        return;
    tp->probe_due = ucft_clock_now_ns() + PROBE_DELAY_NS;
    probe_arm(tp);
}

static void probe_start(tp_ucp_t *tp, uint64_t now)
{
    tp->probe_due = 0;
    ucs_status_t st =
        fifo_probe_start(&tp->probe, tp->context, tp->address, now);
    if (st != UCS_OK)
        ucft_warn(tp->super.log,
                  "shared-memory FIFO self-probe not started: %s",
                  ucs_status_string(st));
    else
        ucft_debug(tp->super.log,
                   "shared-memory FIFO self-probe sent (%.3f ms to send it)",
                   (double)(ucft_clock_now_ns() - now) / 1e6);
}

static void probe_verdict(tp_ucp_t *tp, uint64_t now)
{
    fifo_probe_state_t s = fifo_probe_poll(&tp->probe, now);
    if (s == FIFO_PROBE_ARRIVED && tp->probe.mends > 0) {
        ucft_warn(tp->super.log,
                  "this rank's shared-memory receive FIFO was blocked: a "
                  "process of this node died inside a send to it, holding "
                  "%d slot(s) it never wrote (the last: slot %llu). Mended: "
                  "each was written with a copy of the self-probe, and the "
                  "messages behind it were read (docs/transport.md)",
                  tp->probe.mends, (unsigned long long)tp->probe.mended_slot);
    } else if (s == FIFO_PROBE_ARRIVED) {
        ucft_debug(tp->super.log,
                   "shared-memory FIFO self-probe arrived after %.3f ms",
                   (double)(now - tp->probe.start_ns) / 1e6);
    } else if (s == FIFO_PROBE_BLOCKED) {
        tp->probe_due = 0;
        ucft_error(tp->super.log,
                   "this rank's shared-memory receive FIFO is blocked: a "
                   "probe sent to it from this process did not arrive in "
                   "%.0f ms. A process of this node died (or stopped) inside "
                   "a send to it, and UCX reports nothing; no message from "
                   "this node reaches this rank any more. Not mended: %s "
                   "(docs/transport.md)",
                   (double)(now - tp->probe.start_ns) / 1e6,
                   tp->probe.why != NULL ? tp->probe.why : "no reason");
        if (tp->cut_off_cb != NULL)
            tp->cut_off_cb(tp->cut_off_arg);
    }
}

/* From progress and the probe's timer: a verdict, a start, the timer. */
void tp_ucp__probe_tick(tp_ucp_t *tp)
{
    uint64_t now = ucft_clock_now_ns();
    if (tp->probe.state == FIFO_PROBE_WAITING)
        probe_verdict(tp, now);
    if (tp->probe_due != 0 && tp->probe_due <= now &&
        tp->probe.state != FIFO_PROBE_WAITING)
        probe_start(tp, now);
    probe_arm(tp);
}

void tp_ucp__probe_timer_cb(ucft_timer_t *timer)
{
    tp_ucp__probe_tick(timer->arg);
}
