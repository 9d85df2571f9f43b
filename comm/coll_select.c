/* Size-based algorithm selection (comm/coll_select.h). */
#include "comm/coll_select.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fastest fault-aware baselines by payload size, measured on shared
 * memory (docs/bench.md, "Large messages"): recursive doubling moves
 * log2 n copies of the vector, the ring 2 (n - 1) / n, so the ring wins
 * once bandwidth, not latency, decides. */
static const char *const fast[][2] = {
    {"bcast", "binomial"},
    {"reduce", "binomial"},
    {"allreduce", "0:recdbl,16k:ring"},
    {"barrier", "recdbl"},
    {"allgather", "ring"},
    {"reduce_scatter", "ring"},
};

const char *cm_sel_fast(const char *op)
{
    for (size_t i = 0; i < sizeof(fast) / sizeof(fast[0]); i++)
        if (strcmp(fast[i][0], op) == 0)
            return fast[i][1];
    return NULL;
}

static int parse_size(const char *s, size_t n, size_t *out)
{
    char buf[32], *end;
    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    unsigned shift = 0;
    if (end == buf || errno != 0)
        return -1;
    if (*end == 'k' || *end == 'K')
        shift = 10;
    else if (*end == 'm' || *end == 'M')
        shift = 20;
    else if (*end == 'g' || *end == 'G')
        shift = 30;
    if (shift != 0)
        end++;
    if (*end != '\0' || v > (SIZE_MAX >> shift))
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

ucft_status_t cm_sel_parse(const char *spec, const char *op, cm_sel_t *t,
                           char *err, size_t errlen)
{
    const char *p = spec;
    if (strcmp(spec, "fast") == 0 && cm_sel_fast(op) != NULL)
        p = cm_sel_fast(op);
    memset(t, 0, sizeof(*t));
    if (strchr(p, ':') == NULL) { /* one algorithm */
        t->n = 1;
        t->ops[0] = coll_op_find(op, p);
        if (t->ops[0] == NULL) {
            snprintf(err, errlen, "no such %s algorithm", op);
            return UCFT_ERR_INVALID_PARAM;
        }
        return UCFT_OK;
    }
    while (*p != '\0') {
        const char *colon = strchr(p, ':'), *comma = strchr(p, ',');
        size_t alen;
        char alg[48];
        if (comma == NULL)
            comma = p + strlen(p);
        if (colon == NULL || colon > comma || t->n == CM_SEL_MAX) {
            snprintf(err, errlen,
                     "expected SIZE:ALG[,SIZE:ALG...] (at most %d)",
                     CM_SEL_MAX);
            return UCFT_ERR_INVALID_PARAM;
        }
        alen = (size_t)(comma - colon - 1);
        if (parse_size(p, (size_t)(colon - p), &t->from[t->n]) != 0 ||
            alen == 0 || alen >= sizeof(alg)) {
            snprintf(err, errlen, "bad entry '%.*s'", (int)(comma - p), p);
            return UCFT_ERR_INVALID_PARAM;
        }
        memcpy(alg, colon + 1, alen);
        alg[alen] = '\0';
        t->ops[t->n] = coll_op_find(op, alg);
        if (t->ops[t->n] == NULL) {
            snprintf(err, errlen, "no such %s algorithm '%s'", op, alg);
            return UCFT_ERR_INVALID_PARAM;
        }
        if ((t->n == 0 && t->from[0] != 0) ||
            (t->n > 0 && t->from[t->n] <= t->from[t->n - 1])) {
            snprintf(err, errlen, "sizes must start at 0 and grow ('%.*s')",
                     (int)(comma - p), p);
            return UCFT_ERR_INVALID_PARAM;
        }
        t->n++;
        if (*comma != '\0' && comma[1] == '\0') {
            snprintf(err, errlen, "a ',' with nothing after it");
            return UCFT_ERR_INVALID_PARAM;
        }
        p = *comma ? comma + 1 : comma;
    }
    if (t->n == 0) {
        snprintf(err, errlen, "empty table");
        return UCFT_ERR_INVALID_PARAM;
    }
    return UCFT_OK;
}

size_t cm_sel_state_size(const cm_sel_t *t)
{
    size_t m = 0;
    for (unsigned i = 0; i < t->n; i++)
        if (t->ops[i]->state_size > m)
            m = t->ops[i]->state_size;
    return m;
}

unsigned cm_sel_buf_mult(const cm_sel_t *t)
{
    unsigned m = 0;
    for (unsigned i = 0; i < t->n; i++)
        if (t->ops[i]->buf_mult > m)
            m = t->ops[i]->buf_mult;
    return m;
}
