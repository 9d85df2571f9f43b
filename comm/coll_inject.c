/* In-process failure injection (see inject.h). */
#include "comm/coll_inject.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Indexed by CM_COLL_*; CM_COLL_SYNC is finalize's barrier. */
static const char *const op_names[CM_INJECT_NOPS] = {
    "bcast",       "reduce",    "allreduce",
    "barrier",     "allgather", "reduce_scatter",
    "finalize",    "agree",     "allreduce_approx",
    "shrink",      "dup",       "split",
    "create_group"};

const char *cm_inject_op_name(int op)
{
    return op >= 0 && op < CM_INJECT_NOPS ? op_names[op] : "?";
}

static ucft_status_t bad(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err != NULL && errlen > 0)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return UCFT_ERR_INVALID_PARAM;
}

/* A decimal number in [min, max] spanning [s, e) exactly. */
static int parse_num(const char *s, const char *e, long min, long max,
                     long *out)
{
    char buf[24];
    char *end;
    size_t l = (size_t)(e - s);

    if (l == 0 || l >= sizeof(buf) || s[0] == '+' || s[0] == '-')
        return -1;
    memcpy(buf, s, l);
    buf[l] = '\0';
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* One spec in [s, e). */
static ucft_status_t parse_spec(const char *s, const char *e,
                                cm_inject_spec_t *sp, char *err, size_t errlen)
{
    enum { NKEYS = 8 };
    int seen[NKEYS] = {0}; /* rank, op, call, msg, flip, flip_rate, seed,
                              hold */
    static const char *const keys[NKEYS] = {
        "rank", "op", "call", "msg", "flip", "flip_rate", "seed", "hold"};
    int spec_len = (int)(e - s);

    *sp = (cm_inject_spec_t){
        .rank = -1, .op = -1, .call = 1, .msg = 1, .flip = -1, .seed = 1};
    if (s == e)
        return bad(err, errlen, "empty spec (two ';' in a row?)");
    while (s < e) {
        const char *c = memchr(s, ',', (size_t)(e - s));
        const char *ie = c ? c : e;
        const char *eq = memchr(s, '=', (size_t)(ie - s));
        int klen = (int)((eq ? eq : ie) - s);
        int k = 0;
        while (k < NKEYS && !(strlen(keys[k]) == (size_t)klen &&
                              strncmp(keys[k], s, (size_t)klen) == 0))
            k++;
        if (k == NKEYS)
            return bad(err, errlen,
                       "unknown key '%.*s' in '%.*s' (keys: rank, op, call, "
                       "msg, flip, flip_rate, seed, hold)",
                       klen, s, spec_len, e - spec_len);
        if (eq == NULL || eq + 1 == ie)
            return bad(err, errlen, "'%s' needs a value in '%.*s'", keys[k],
                       spec_len, e - spec_len);
        if (seen[k]++)
            return bad(err, errlen, "'%s' given twice in '%.*s'", keys[k],
                       spec_len, e - spec_len);
        const char *v = eq + 1;
        int vlen = (int)(ie - v);
        long num;
        if (k == 1) {
            int o = 0;
            while (o < CM_INJECT_NOPS &&
                   !(strlen(op_names[o]) == (size_t)vlen &&
                     strncmp(op_names[o], v, (size_t)vlen) == 0))
                o++;
            if (o == CM_INJECT_NOPS)
                return bad(err, errlen,
                           "op '%.*s': expected bcast, reduce, allreduce, "
                           "barrier, allgather, reduce_scatter, finalize, "
                           "agree, allreduce_approx, shrink, dup, split or "
                           "create_group",
                           vlen, v);
            sp->op = o;
        } else if (k == 4) {
            if (parse_num(v, ie, 0, (1 << 20) - 1, &num) != 0)
                return bad(err, errlen,
                           "flip '%.*s': expected a bit number (0 .. "
                           "1048575)",
                           vlen, v);
            sp->flip = (int)num;
        } else if (k == 5) {
            char buf[32], *end;
            double r = -1;
            if (vlen > 0 && (size_t)vlen < sizeof(buf)) {
                memcpy(buf, v, (size_t)vlen);
                buf[vlen] = '\0';
                errno = 0;
                r = strtod(buf, &end);
                if (errno != 0 || *end != '\0')
                    r = -1;
            }
            if (!(r >= 0 && r <= 1))
                return bad(err, errlen,
                           "flip_rate '%.*s': expected a probability in "
                           "[0, 1]",
                           vlen, v);
            sp->flip_rate = r;
        } else if (k == 7) {
            if (parse_num(v, ie, 0, 1, &num) != 0)
                return bad(err, errlen, "hold '%.*s': expected 0 or 1", vlen,
                           v);
            sp->hold = (int)num;
        } else if (k == 6) {
            if (parse_num(v, ie, 0, 2000000000L, &num) != 0)
                return bad(err, errlen, "seed '%.*s': expected 0 .. 2e9", vlen,
                           v);
            sp->seed = (uint64_t)num;
        } else if (parse_num(v, ie, k == 2 ? 1 : 0,
                             k == 0 ? UCFT_TAG_MAX_RANKS - 1 : 1000000000L,
                             &num) != 0) {
            return bad(err, errlen, "%s '%.*s': expected %s", keys[k], vlen, v,
                       k == 0   ? "a rank (0 or more)"
                       : k == 2 ? "a call number (1 or more)"
                                : "a message number (0 or more)");
        } else if (k == 0) {
            sp->rank = (int)num;
        } else if (k == 2) {
            sp->call = (unsigned)num;
        } else {
            sp->msg = (unsigned)num;
        }
        s = c ? c + 1 : e;
        if (c != NULL && s == e)
            return bad(err, errlen, "trailing ',' in '%.*s'", spec_len,
                       e - spec_len);
    }
    if (!seen[0] || !seen[1])
        return bad(err, errlen, "'%.*s' lacks %s", spec_len, e - spec_len,
                   !seen[0] ? "rank=" : "op=");
    if (cm_inject_is_flip(sp) && sp->msg == 0)
        return bad(err, errlen, "'%.*s': a flip needs msg=1 or more", spec_len,
                   e - spec_len);
    if (sp->hold && cm_inject_is_flip(sp))
        return bad(err, errlen, "'%.*s': hold= goes with a death, not a flip",
                   spec_len, e - spec_len);
    if (seen[6] && !seen[5])
        return bad(err, errlen, "'%.*s': seed= without flip_rate=", spec_len,
                   e - spec_len);
    return UCFT_OK;
}

ucft_status_t cm_inject_parse(const char *text, cm_inject_t *inj, char *err,
                              size_t errlen)
{
    memset(inj, 0, sizeof(*inj));
    if (text == NULL || text[0] == '\0')
        return UCFT_OK;
    const char *s = text, *end = text + strlen(text);
    while (s <= end) {
        const char *semi = memchr(s, ';', (size_t)(end - s));
        const char *e = semi ? semi : end;
        if (semi == NULL && s == end && s != text)
            break; /* one trailing ';' is allowed */
        if (inj->n == CM_INJECT_MAX) {
            inj->n = 0;
            return bad(err, errlen, "more than %d specs", CM_INJECT_MAX);
        }
        ucft_status_t st = parse_spec(s, e, &inj->spec[inj->n], err, errlen);
        if (st != UCFT_OK) {
            inj->n = 0;
            return st;
        }
        inj->n++;
        if (semi == NULL)
            break;
        s = semi + 1;
    }
    return UCFT_OK;
}

/* ---- the filter transport ---------------------------------------------- */

static cm_inject_t *inj_of(tp_t *tp)
{
    return ((cm_inject_tp_t *)tp)->inj;
}

static void die_default(void *arg, const cm_inject_spec_t *spec)
{
    (void)arg;
    (void)spec;
    /* The one deliberate self-kill of the library (inject.h). */
    kill(getpid(), SIGKILL);
}

static ucft_status_t w_send(tp_t *tp, int dst, uint64_t tag, const void *buf,
                            size_t len, tp_req_t *req)
{
    cm_inject_t *inj = inj_of(tp);

    if (ucft_tag_class(tag) == UCFT_TAG_CLASS_COLL) {
        uint32_t seq = ucft_tag_coll_seq(tag);
        unsigned cid = ucft_tag_ctx(tag);
        for (size_t i = 0; i < inj->n; i++) {
            const cm_inject_spec_t *sp = &inj->spec[i];
            if (!(inj->armed >> i & 1) || inj->ctx_id[i] != cid ||
                inj->seq[i] != seq)
                continue;
            if (cm_inject_is_flip(sp)) {
                const void *b =
                    coll_flip_message(&inj->flipst[i], buf, len, dst);
                if (b != NULL)
                    buf = b;
                continue;
            }
            if (++inj->sent[i] != sp->msg)
                continue;
            ucft_warn(inj->log,
                      "UCFT_INJECT: killing myself before message %u of "
                      "%s call %u (to rank %d)",
                      sp->msg, cm_inject_op_name(sp->op), sp->call, dst);
            inj->armed &= ~(1u << i);
            inj->die(inj->die_arg, sp);
        }
    }
    return tp_send(inj->real, dst, tag, buf, len, req);
}

static const tp_ops_t inject_tp_ops = {
    .name = "inject",
    .send = w_send,
    .recv = tp_filter_recv,
    .probe = tp_filter_probe,
    .cancel = tp_filter_cancel,
    .peer_failed = tp_filter_peer_failed,
    .watch = tp_filter_watch,
    TP_FILTER_PASS_OPS,
};

ucft_status_t cm_inject_setup(cm_inject_t *inj, int rank, int size, tp_t *real,
                              const ucft_log_t *log, cm_inject_die_cb die,
                              void *die_arg, char *err, size_t errlen)
{
    size_t k = 0;

    for (size_t i = 0; i < inj->n; i++) {
        if (inj->spec[i].rank >= size) {
            inj->n = 0;
            return bad(err, errlen, "rank=%d: the job has %d ranks",
                       inj->spec[i].rank, size);
        }
        if (inj->spec[i].rank == rank)
            inj->spec[k++] = inj->spec[i];
    }
    inj->n = k;
    memset(inj->calls, 0, sizeof(inj->calls));
    inj->armed = 0;
    inj->real = real;
    inj->log = log;
    inj->die = die != NULL ? die : die_default;
    inj->die_arg = die_arg;
    inj->wrap.inj = inj;
    inj->wrap.f.below = real;
    inj->wrap.f.tp = (tp_t){.ops = &inject_tp_ops,
                            .rank = real->rank,
                            .size = real->size,
                            .log = real->log};
    for (size_t i = 0; i < k; i++) {
        const cm_inject_spec_t *sp = &inj->spec[i];
        coll_flip_params_t fp = {.bit = sp->flip,
                                 .msg = sp->msg,
                                 .rate = sp->flip_rate,
                                 .seed = sp->seed};
        coll_flip_init(&inj->flipst[i], real, &fp);
        if (cm_inject_is_flip(sp))
            ucft_info(log,
                      "UCFT_INJECT: will corrupt %s call %u (flip=%d of "
                      "message %u, flip_rate=%g)",
                      cm_inject_op_name(sp->op), sp->call, sp->flip, sp->msg,
                      sp->flip_rate);
        else
            ucft_info(log,
                      "UCFT_INJECT: will die before message %u of %s call %u",
                      sp->msg, cm_inject_op_name(sp->op), sp->call);
    }
    return UCFT_OK;
}

void cm_inject_cleanup(cm_inject_t *inj)
{
    for (size_t i = 0; i < inj->n; i++)
        coll_flip_cleanup(&inj->flipst[i]);
}

tp_t *cm_inject_call(cm_inject_t *inj, int op, unsigned ctx_id, uint32_t seq)
{
    tp_t *tp = inj->real;

    if (inj->n == 0 || op < 0 || op >= CM_INJECT_NOPS)
        return tp;
    unsigned call = ++inj->calls[op];
    for (size_t i = 0; i < inj->n; i++) {
        const cm_inject_spec_t *sp = &inj->spec[i];
        if (sp->op == op && sp->call != call && cm_inject_is_flip(sp))
            inj->armed &= ~(1u << i); /* its call is over */
        if (sp->op != op || sp->call != call)
            continue;
        if (sp->msg == 0) {
            ucft_warn(inj->log,
                      "UCFT_INJECT: killing myself at the start of %s call %u",
                      cm_inject_op_name(op), call);
            inj->die(inj->die_arg, sp);
            continue;
        }
        inj->armed |= 1u << i;
        inj->ctx_id[i] = ctx_id;
        inj->seq[i] = seq & ((1u << UCFT_TAG_SEQ_BITS) - 1);
        inj->sent[i] = 0;
        inj->flipst[i].sent = 0;
        tp = &inj->wrap.f.tp;
    }
    return tp;
}
