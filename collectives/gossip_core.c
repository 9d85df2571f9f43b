/*
 * The engine of the gossip family (gossip.h): one lock-step round state
 * machine for every variant.
 *
 * State per rank: the input (x, w[, c]) per element, the current estimate
 * e, and, for the flow rules, one flow per neighbour met: a dense array
 * over the neighbours (random schedule: full topology n - 1 of them, ring
 * 2, hypercube log2 n) or a small table keyed by rank (permutation and
 * cycle schedules: at most two new partners per round, so 2 R slots).
 * Values are kept as doubles whatever the wire datatype (float inputs are
 * widened; messages carry the instance's datatype, so a flipped bit of a
 * float message is a flipped float bit).
 *
 * Round r (stage A): post a receive per live in-neighbour, build and send
 * the own message (skipped when the partner is known dead or is the rank
 * itself), wait for all. Then apply the received messages in the order of
 * the in-set. PFCC stage B: answer every message received, wait for the
 * answer to the own message, apply it. Invariants: no rank waits for a
 * rank it knows dead (on_failure cancels such receives); every message a
 * live rank expects in round r is sent by its sender in round r (the
 * schedule is the same function everywhere), so the lock step never waits
 * on a live rank that will not send.
 *
 * Checksums (PFLC, PFCC, HPFLC): a triple is corrupted when
 * |x + w - c| > tau * max(1, |c|).
 */
#include "gossip.h"

#include "gossip_sched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GOSSIP_MAXDEAD 64 /* failures one instance tolerates */

typedef struct gossip {
    tp_t *tp;
    const coll_args_t *args;
    gossip_variant_t var;
    coll_gossip_params_t prm;
    gossip_plan_t plan; /* the schedule (gossip_sched.c) */
    unsigned char *buf; /* input, then the output */
    int n, v;
    unsigned R, round, nc; /* rounds, current round, values per element */
    size_t count, esz, mlen;
    double tau;
    /* scratch (one allocation) */
    double *base, *est;    /* count * nc each */
    double *flow;          /* nslot * count * nc */
    int *key;              /* rank of each flow slot (-1 free) */
    unsigned nslot, deg;   /* slots; neighbours (random schedule) */
    unsigned char *sbuf;   /* own message */
    unsigned char *rbuf;   /* max_in messages */
    unsigned char *abuf;   /* PFCC: answers to send, max_in messages */
    unsigned char *arbuf;  /* PFCC: the answer to the own message */
    tp_req_t *rreq, *areq; /* max_in each */
    int *in;               /* in-set of the round (vranks), max_in */
    uint8_t *got;          /* 1: in[i]'s message arrived */
    uint8_t *rbusy;        /* 1: rreq[i] pending */
    unsigned max_in, nin;
    tp_req_t sreq, arreq;
    int out;       /* vrank sent to this round, or -1 */
    unsigned pend; /* pending requests */
    int dead[GOSSIP_MAXDEAD];
    unsigned ndead;
    unsigned stage;  /* 0 post, 1 wait A, 2 wait B */
    uint8_t arrived; /* the answer to the own message arrived */
    uint8_t arbusy;  /* arreq pending */
    uint8_t sent_corrupt;
    ucft_status_t status;
    uint8_t done, cleaned, in_start, freed;
    gossip_stats_t stats;
} gossip_t;

_Static_assert(sizeof(gossip_t) <= GOSSIP_STATE_SIZE, "GOSSIP_STATE_SIZE");

/* ---- flows ----------------------------------------------------------- */

static int is_flow(const gossip_t *s)
{
    return s->var.rule != GOSSIP_RULE_PS;
}

static int has_sum(const gossip_t *s)
{
    return s->var.rule == GOSSIP_RULE_PFLC || s->var.rule == GOSSIP_RULE_PFCC;
}

static size_t elems(const gossip_t *s)
{
    return s->count * s->nc;
}

/* The flow slot of vrank j, created if `make`, or NULL. */
static double *flow_of(gossip_t *s, int j, int make)
{
    if (s->var.sched == GOSSIP_SCHED_RANDOM) {
        if (s->prm.topo == GOSSIP_TOPO_FULL)
            return s->flow + (size_t)(j < s->v ? j : j - 1) * elems(s);
        for (unsigned k = 0; k < s->nslot; k++)
            if (gossip_neighbour(&s->plan, s->v, k) == j)
                return s->flow + (size_t)k * elems(s);
        return NULL;
    }
    for (unsigned i = 0; i < s->nslot; i++) {
        if (s->key[i] == j)
            return s->flow + (size_t)i * elems(s);
        if (s->key[i] < 0) {
            if (!make)
                return NULL;
            s->key[i] = j;
            return s->flow + (size_t)i * elems(s);
        }
    }
    return NULL;
}

/* 1 when the triple at t fails its checksum. */
static int corrupt(const gossip_t *s, const double *t)
{
    double d = fabs(t[0] + t[1] - t[2]);
    double c = fabs(t[2]);
    return !(d <= s->tau * (c > 1.0 ? c : 1.0));
}

static int flow_corrupt(const gossip_t *s, const double *f)
{
    for (size_t e = 0; e < s->count; e++)
        if (corrupt(s, f + e * 3))
            return 1;
    return 0;
}

/* e = base + sum of flows (those failing the checksum left out if
 * `skip_bad`). */
static void estimate(gossip_t *s, int skip_bad)
{
    size_t m = elems(s);
    memcpy(s->est, s->base, m * sizeof(double));
    if (!is_flow(s))
        return;
    for (unsigned i = 0; i < s->nslot; i++) {
        if (s->var.sched != GOSSIP_SCHED_RANDOM && s->key[i] < 0)
            break;
        const double *f = s->flow + (size_t)i * m;
        if (skip_bad && flow_corrupt(s, f))
            continue;
        for (size_t k = 0; k < m; k++)
            s->est[k] += f[k];
    }
}

/* PFLC: the estimate fails its checksum: reset every corrupted flow. */
static void local_correction(gossip_t *s)
{
    size_t m = elems(s);
    int bad = 0;
    for (size_t e = 0; e < s->count && !bad; e++)
        bad = corrupt(s, s->est + e * 3);
    if (!bad)
        return;
    for (unsigned i = 0; i < s->nslot; i++) {
        double *f = s->flow + (size_t)i * m;
        if (flow_corrupt(s, f)) {
            memset(f, 0, m * sizeof(double));
            s->stats.resets++;
        }
    }
    estimate(s, 0);
}

/* ---- wire ------------------------------------------------------------- */

static void encode(const gossip_t *s, unsigned char *dst, const double *src)
{
    size_t m = elems(s);
    if (s->esz == sizeof(float)) {
        for (size_t k = 0; k < m; k++) {
            float f = (float)src[k];
            memcpy(dst + k * sizeof(f), &f, sizeof(f));
        }
    } else {
        memcpy(dst, src, m * sizeof(double));
    }
}

static void decode(const gossip_t *s, double *dst, const unsigned char *src)
{
    size_t m = elems(s);
    if (s->esz == sizeof(float)) {
        for (size_t k = 0; k < m; k++) {
            float f;
            memcpy(&f, src + k * sizeof(f), sizeof(f));
            dst[k] = f;
        }
    } else {
        memcpy(dst, src, m * sizeof(double));
    }
}

static int rank_of(const gossip_t *s, int v)
{
    return coll_rank_of(s->args, v, 0, s->n);
}

static uint64_t tag_of(const gossip_t *s, int src_v, unsigned kind)
{
    return coll_tag(s->args, rank_of(s, src_v), kind);
}

static int known_dead(const gossip_t *s, int v)
{
    for (unsigned i = 0; i < s->ndead; i++)
        if (s->dead[i] == v)
            return 1;
    return 0;
}

/* ---- the round state machine ------------------------------------------ */

static void release(gossip_t *s)
{
    if (s->freed || s->pend != 0)
        return;
    free(s->base);
    s->base = NULL;
    s->freed = 1;
}

static void finish(gossip_t *s, ucft_status_t st)
{
    if (s->done)
        return;
    s->done = 1;
    s->status = st;
    if (!s->in_start && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, st);
}

static void write_output(gossip_t *s)
{
    double m = s->prm.mean ? 1.0 : (double)(s->n - (int)s->ndead);
    double rel = 0;
    for (size_t e = 0; e < s->count; e++) {
        double y = s->est[e * s->nc] / s->est[e * s->nc + 1] * m;
        if (s->esz == sizeof(float)) {
            float f = (float)y;
            memcpy(s->buf + e * sizeof(f), &f, sizeof(f));
        } else {
            memcpy(s->buf + e * sizeof(y), &y, sizeof(y));
        }
        if (s->prm.ref != NULL) {
            double d = fabs(y - s->prm.ref[e]) / fabs(s->prm.ref[e]);
            rel = isnan(d) || d > rel ? d : rel;
        }
    }
    s->stats.final_rel_err = s->prm.ref != NULL ? rel : NAN;
}

/* After round r: has the estimate reached eps of ref? */
static void measure(gossip_t *s, unsigned r)
{
    if (s->prm.ref == NULL)
        return;
    double m = s->prm.mean ? 1.0 : (double)(s->n - (int)s->ndead);
    for (size_t e = 0; e < s->count; e++) {
        double y = s->est[e * s->nc] / s->est[e * s->nc + 1] * m;
        double d = fabs(y - s->prm.ref[e]) / fabs(s->prm.ref[e]);
        if (!(d <= s->prm.eps)) {
            s->stats.conv_round = r + 1;
            return;
        }
    }
}

static void post_round(gossip_t *s)
{
    size_t m = elems(s);
    ucft_status_t st;

    s->nin = gossip_in(&s->plan, s->v, s->round, s->in);
    for (unsigned i = 0; i < s->nin; i++) {
        s->got[i] = 0;
        if (known_dead(s, s->in[i]))
            continue;
        tp_watch(s->tp, rank_of(s, s->in[i]));
        st = tp_recv(s->tp, tag_of(s, s->in[i], COLL_KIND_GOSSIP),
                     UCFT_TAG_FULL_MASK, s->rbuf + i * s->mlen, s->mlen,
                     &s->rreq[i]);
        if (st == UCFT_INPROGRESS) {
            s->pend++;
            s->rbusy[i] = 1;
        } else if (st == UCFT_OK) {
            s->got[i] = s->rreq[i].length == s->mlen;
        }
    }
    s->out = gossip_out(&s->plan, s->v, s->round);
    s->arrived = 0;
    s->sent_corrupt = 0;
    if (s->out < 0 || known_dead(s, s->out)) {
        s->out = -1;
        return;
    }
    if (s->var.rule == GOSSIP_RULE_PS) {
        for (size_t k = 0; k < m; k++)
            s->est[k] *= 0.5;
        encode(s, s->sbuf, s->est);
    } else {
        if (s->var.rule == GOSSIP_RULE_PFLC)
            local_correction(s);
        estimate(s, s->var.rule == GOSSIP_RULE_PFCC);
        double *f = flow_of(s, s->out, 1);
        if (f == NULL) {
            finish(s, UCFT_ERR_NO_RESOURCE);
            s->out = -1;
            return;
        }
        if (s->var.rule == GOSSIP_RULE_PFCC && flow_corrupt(s, f)) {
            s->sent_corrupt = 1; /* sent as is: the partner answers */
        } else {
            for (size_t k = 0; k < m; k++)
                f[k] -= 0.5 * s->est[k];
        }
        encode(s, s->sbuf, f);
    }
    if (s->var.rule == GOSSIP_RULE_PFCC) {
        st = tp_recv(s->tp, tag_of(s, s->out, COLL_KIND_GOSSIP_REPLY),
                     UCFT_TAG_FULL_MASK, s->arbuf, s->mlen, &s->arreq);
        if (st == UCFT_INPROGRESS) {
            s->pend++;
            s->arbusy = 1;
        } else if (st == UCFT_OK) {
            s->arrived = 1;
        }
    }
    s->sreq.buffered = 1;
    st = tp_send(s->tp, rank_of(s, s->out), tag_of(s, s->v, COLL_KIND_GOSSIP),
                 s->sbuf, s->mlen, &s->sreq);
    if (st == UCFT_INPROGRESS)
        s->pend++;
}

/* Flow rules: the message of j (decoded in tmp) arrives. Returns 1 when it
 * was corrupted (PFCC answers it with the own flow). */
static int take_flow(gossip_t *s, int j, const double *msg, int mutual)
{
    size_t m = elems(s);
    double *f = flow_of(s, j, 1);
    if (f == NULL)
        return 0;
    if (has_sum(s) && flow_corrupt(s, msg)) {
        s->stats.detected++;
        if (s->var.rule == GOSSIP_RULE_PFCC && flow_corrupt(s, f)) {
            memset(f, 0, m * sizeof(double));
            s->stats.resets++;
        }
        return 1;
    }
    /* Both sent to each other this round: each keeps what it gave away
     * besides what it received, f_ij = -f_ji' - e_i / 2 (e_i as sent,
     * still in est), which both sides compute alike, so the pair stays
     * conserved and both end with the pair's average, as push-sum would.
     * (The paper's asynchronous runs instead lose the pair's
     * conservation until their next one-way exchange.) */
    double keep = mutual && !s->sent_corrupt ? -0.5 : 0.0;
    for (size_t k = 0; k < m; k++)
        f[k] = -msg[k] + keep * s->est[k];
    return 0;
}

static void apply_round(gossip_t *s)
{
    size_t m = elems(s);
    double *tmp = s->est + m; /* scratch after est */

    for (unsigned i = 0; i < s->nin; i++) {
        if (known_dead(s, s->in[i]))
            continue;
        int bad = 1; /* PFCC: a lost message is answered as a corrupted one */
        if (!s->got[i] && s->var.rule != GOSSIP_RULE_PFCC)
            continue;
        if (s->got[i]) {
            decode(s, tmp, s->rbuf + i * s->mlen);
            if (s->var.rule == GOSSIP_RULE_PS) {
                for (size_t k = 0; k < m; k++)
                    s->est[k] += tmp[k];
                continue;
            }
            bad = take_flow(s, s->in[i], tmp, s->out == s->in[i]);
            if (s->var.rule != GOSSIP_RULE_PFCC)
                continue;
        }
        /* The answer: empty (accepted), or the own flow (corrected; the
         * sender waits for an answer to every message it sent, so a
         * message lost to a checksum, coll_csum.h, is answered too). */
        size_t alen = 0;
        if (bad && flow_of(s, s->in[i], 1) != NULL) {
            encode(s, s->abuf + i * s->mlen, flow_of(s, s->in[i], 1));
            alen = s->mlen;
        }
        s->areq[i].buffered = 1;
        ucft_status_t st =
            tp_send(s->tp, rank_of(s, s->in[i]),
                    tag_of(s, s->v, COLL_KIND_GOSSIP_REPLY),
                    alen ? s->abuf + i * s->mlen : NULL, alen, &s->areq[i]);
        if (st == UCFT_INPROGRESS)
            s->pend++;
    }
}

/* PFCC: the partner's answer to the own message. */
static void apply_answer(gossip_t *s)
{
    size_t m = elems(s);
    double *tmp = s->est + m;

    if (!s->arrived || s->out < 0 || known_dead(s, s->out) ||
        s->arreq.length != s->mlen)
        return;
    decode(s, tmp, s->arbuf);
    double *f = flow_of(s, s->out, 1);
    if (flow_corrupt(s, tmp)) {
        memset(f, 0, m * sizeof(double));
        s->stats.resets++;
    } else {
        for (size_t k = 0; k < m; k++)
            f[k] = -tmp[k];
    }
}

static void step(gossip_t *s)
{
    while (!s->done && !s->cleaned) {
        if (s->stage == 0) {
            if (s->round == s->R) {
                if (is_flow(s))
                    estimate(s, s->var.rule == GOSSIP_RULE_PFCC);
                write_output(s);
                s->stats.rounds = s->R;
                finish(s, UCFT_OK);
                return;
            }
            post_round(s);
            s->stage = 1;
            continue;
        }
        /* Stage A waits for everything but the answer to the own message
         * (PFCC), stage B for that answer and the answers sent. */
        if (s->pend - (s->stage == 1 ? s->arbusy : 0) != 0)
            return;
        if (s->stage == 1) {
            apply_round(s);
            if (s->var.rule == GOSSIP_RULE_PFCC) {
                s->stage = 2;
                continue;
            }
        } else {
            apply_answer(s);
        }
        if (is_flow(s))
            estimate(s, s->var.rule == GOSSIP_RULE_PFCC);
        measure(s, s->round + 1);
        s->round++;
        s->stage = 0;
    }
}

static void req_cb(tp_req_t *req)
{
    gossip_t *s = req->arg;

    s->pend--;
    if (req >= s->rreq && req < s->rreq + s->max_in) {
        unsigned i = (unsigned)(req - s->rreq);
        s->rbusy[i] = 0;
        s->got[i] = req->status == UCFT_OK && req->length == s->mlen;
        /* Empty: a message lost to a checksum (coll_csum.h). */
        if (req->status == UCFT_OK && req->length != s->mlen &&
            req->length != 0 && !s->cleaned)
            coll_log_mismatch(s->tp, s->args, req);
    } else if (req == &s->arreq) {
        s->arbusy = 0;
        s->arrived = req->status == UCFT_OK;
    }
    if (s->cleaned) {
        release(s);
        return;
    }
    step(s);
}

/* ---- coll_op_ops_t ------------------------------------------------------ */

ucft_status_t gossip_init(void *state, tp_t *tp, const coll_args_t *args,
                          void *buf, const gossip_variant_t *var)
{
    gossip_t *s = state;
    static const coll_gossip_params_t defaults = {.eps = 1e-8};
    const coll_gossip_params_t *p = args->gossip ? args->gossip : &defaults;
    size_t esz;

    if (args->dtype == COLL_DTYPE_FLOAT)
        esz = sizeof(float);
    else if (args->dtype == COLL_DTYPE_DOUBLE)
        esz = sizeof(double);
    else {
        ucft_error(tp->log,
                   "allreduce_approx: datatype must be float or double");
        return UCFT_ERR_INVALID_PARAM;
    }
    if (args->user_op != NULL || args->redop != COLL_REDOP_SUM ||
        args->count == 0 || args->len != args->count * esz || buf == NULL) {
        ucft_error(tp->log, "allreduce_approx: needs a built-in sum of at "
                            "least one element (len = count * size)");
        return UCFT_ERR_INVALID_PARAM;
    }
    if (!(p->eps >= 0 && p->eps < 1) || !(p->tau >= 0) || p->topo < 0 ||
        p->topo > GOSSIP_TOPO_HYPERCUBE ||
        (var->sched != GOSSIP_SCHED_RANDOM && p->topo != GOSSIP_TOPO_FULL)) {
        ucft_error(tp->log,
                   "allreduce_approx: bad parameters (eps in [0, 1), tau >= "
                   "0, topology full/ring/hypercube; hps, hpflc and ardb "
                   "run on the full topology only)");
        return UCFT_ERR_INVALID_PARAM;
    }
    memset(s, 0, sizeof(*s));
    s->tp = tp;
    s->args = args;
    s->var = *var;
    s->prm = *p;
    if (s->prm.eps == 0)
        s->prm.eps = 1e-8;
    s->buf = buf;
    s->n = tp->size;
    s->v = coll_vrank_of(args, tp->rank, 0, s->n);
    s->plan = (gossip_plan_t){
        .n = s->n, .topo = p->topo, .sched = var->sched, .seed = p->seed};
    s->count = args->count;
    s->esz = esz;
    s->nc = has_sum(s) ? 3 : 2;
    s->mlen = s->count * s->nc * esz;
    /* PFCC's default sits above the rounding of the wire datatype (a
     * float flow's checksum is off by about 2^-23 |c| on arrival). */
    s->tau = p->tau > 0                      ? p->tau
             : var->rule != GOSSIP_RULE_PFCC ? 0.5
             : esz == sizeof(float)          ? 1e-5
                                             : 1e-10;
    s->R = p->rounds
               ? p->rounds
               : gossip_default_rounds(s->n, s->prm.eps, p->topo, var->sched);
    s->status = UCFT_INPROGRESS;
    s->stats.final_rel_err = NAN;

    unsigned deg = gossip_degree(&s->plan, s->v);
    s->max_in = var->sched == GOSSIP_SCHED_RANDOM ? (deg ? deg : 1) : 1;
    if (is_flow(s))
        s->nslot = var->sched == GOSSIP_SCHED_RANDOM ? deg : 2 * s->R + 2;
    size_t m = elems(s);
    size_t dbl = 3 * m + (size_t)s->nslot * m;
    size_t bytes = dbl * sizeof(double) + (size_t)s->nslot * sizeof(int) +
                   s->mlen * (2 + 2 * (size_t)s->max_in) +
                   (size_t)s->max_in * (2 * sizeof(tp_req_t) + sizeof(int) + 2);
    char *mem = calloc(1, bytes + 64);
    if (mem == NULL)
        return UCFT_ERR_NO_MEMORY;
    s->base = (double *)mem;
    s->est = s->base + m; /* est, then m doubles of scratch */
    s->flow = s->est + 2 * m;
    tp_req_t *reqs = (tp_req_t *)(s->flow + (size_t)s->nslot * m);
    s->rreq = reqs;
    s->areq = reqs + s->max_in;
    s->key = (int *)(reqs + 2 * s->max_in);
    s->in = s->key + s->nslot;
    unsigned char *b = (unsigned char *)(s->in + s->max_in);
    s->sbuf = b;
    s->arbuf = b + s->mlen;
    s->rbuf = b + 2 * s->mlen;
    s->abuf = s->rbuf + s->max_in * s->mlen;
    s->got = s->abuf + s->max_in * s->mlen;
    s->rbusy = s->got + s->max_in;
    for (unsigned i = 0; i < s->nslot; i++)
        s->key[i] = var->sched == GOSSIP_SCHED_RANDOM ? (int)i : -1;
    for (size_t e = 0; e < s->count; e++) {
        double x;
        if (esz == sizeof(float)) {
            float f;
            memcpy(&f, s->buf + e * esz, esz);
            x = f;
        } else {
            memcpy(&x, s->buf + e * esz, esz);
        }
        s->base[e * s->nc] = x;
        s->base[e * s->nc + 1] = 1.0;
        if (s->nc == 3)
            s->base[e * s->nc + 2] = x + 1.0;
    }
    memcpy(s->est, s->base, m * sizeof(double));
    for (unsigned i = 0; i < s->max_in; i++) {
        s->rreq[i].cb = s->areq[i].cb = req_cb;
        s->rreq[i].arg = s->areq[i].arg = s;
    }
    s->sreq.cb = s->arreq.cb = req_cb;
    s->sreq.arg = s->arreq.arg = s;
    measure(s, 0);
    return UCFT_OK;
}

ucft_status_t gossip_start(void *state)
{
    gossip_t *s = state;
    s->in_start = 1;
    step(s);
    s->in_start = 0;
    return s->status;
}

ucft_status_t gossip_test(const void *state)
{
    return ((const gossip_t *)state)->status;
}

static void cancel_all(gossip_t *s)
{
    for (unsigned i = 0; i < s->nin; i++)
        if (s->rbusy[i])
            tp_cancel(s->tp, &s->rreq[i]);
    if (s->arbusy)
        tp_cancel(s->tp, &s->arreq);
}

void gossip_cleanup(void *state)
{
    gossip_t *s = state;
    if (s->cleaned)
        return;
    s->cleaned = 1;
    if (s->pend != 0)
        cancel_all(s);
    release(s);
}

void gossip_destroy(void *state)
{
    gossip_t *s = state;
    if (!s->freed)
        free(s->base);
    s->base = NULL;
    s->freed = 1;
}

int gossip_idle(const void *state)
{
    return ((const gossip_t *)state)->pend == 0;
}

/* 1 when the survivors can no longer converge together: the graph of live
 * ranks is disconnected (checked for the ring and for a rank cut off from
 * every neighbour; the full topology stays connected). */
static int cut_off(const gossip_t *s)
{
    if (s->var.sched != GOSSIP_SCHED_RANDOM || s->prm.topo == GOSSIP_TOPO_FULL)
        return 0;
    if (s->prm.topo == GOSSIP_TOPO_RING && s->n > 3 && s->ndead >= 2 &&
        (int)s->ndead < s->n - 1) {
        /* two cuts split the ring unless the dead are adjacent */
        return 1;
    }
    unsigned d = gossip_degree(&s->plan, s->v), alive = 0;
    for (unsigned k = 0; k < d; k++)
        alive += !known_dead(s, gossip_neighbour(&s->plan, s->v, k));
    return d > 0 && alive == 0 && (int)s->ndead < s->n - 1;
}

void gossip_on_failure(void *state, int rank)
{
    gossip_t *s = state;
    int v = coll_vrank_of(s->args, rank, 0, s->n);

    if (s->done || s->cleaned || known_dead(s, v))
        return;
    if (s->ndead == GOSSIP_MAXDEAD) {
        ucft_warn(s->tp->log, "allreduce_approx: more than %d failures",
                  GOSSIP_MAXDEAD);
        finish(s, UCFT_ERR_PROC_FAILED);
        cancel_all(s);
        return;
    }
    s->dead[s->ndead++] = v;
    if (is_flow(s)) {
        double *f = flow_of(s, v, 0);
        if (f != NULL)
            memset(f, 0, elems(s) * sizeof(double));
    }
    if (cut_off(s)) {
        ucft_debug(s->tp->log,
                   "allreduce_approx: the survivors are cut "
                   "apart by the failure of rank %d",
                   rank);
        finish(s, UCFT_ERR_PROC_FAILED);
        cancel_all(s);
        return;
    }
    for (unsigned i = 0; i < s->nin; i++)
        if (s->in[i] == v && s->rbusy[i])
            tp_cancel(s->tp, &s->rreq[i]);
    if (s->out == v && s->arbusy)
        tp_cancel(s->tp, &s->arreq);
}

void gossip_stats(const void *state, gossip_stats_t *st)
{
    *st = ((const gossip_t *)state)->stats;
}
