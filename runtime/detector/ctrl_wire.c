/* The detector's control messages as bytes: see ctrl_wire.h. */
#include "runtime/detector/ctrl_wire.h"

#include <string.h>

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

const char *ctrl_wire_check(ucft_status_t status, uint32_t src, size_t length,
                            int size, int me, size_t want, int fixed)
{
    if (status != UCFT_OK)
        return ucft_status_string(status);
    if (size <= 0 || src >= (uint32_t)size || src == (uint32_t)me)
        return "source rank out of range";
    if (fixed && length != want)
        return "wrong length";
    if (length > want)
        return "longer than its receive";
    return NULL;
}

ucft_status_t ctrl_wire_word(const void *buf, size_t len, uint64_t *word)
{
    if (len != sizeof(*word))
        return UCFT_ERR_INVALID_PARAM;
    memcpy(word, buf, sizeof(*word));
    return UCFT_OK;
}

size_t ctrl_wire_nfacts(size_t len)
{
    if (len < 2 * sizeof(uint32_t) || len % sizeof(uint32_t) != 0 ||
        len > (1 + CTRL_WIRE_MAX_BATCH) * sizeof(uint32_t))
        return 0;
    return len / sizeof(uint32_t) - 1;
}

ucft_status_t ctrl_wire_fact(const void *buf, size_t len, size_t i, int size,
                             int me, ctrl_fact_kind_t *kind, int *fact)
{
    if (i >= ctrl_wire_nfacts(len))
        return UCFT_ERR_INVALID_PARAM;
    /* Word 1 is the epoch: fact 0 is word 0, fact i > 0 word i + 1. */
    uint32_t f = get32((const unsigned char *)buf +
                       (i == 0 ? 0 : (i + 1) * sizeof(uint32_t)));
    if (me >= 0 && f == (uint32_t)me) {
        *kind = CTRL_FACT_SELF;
        *fact = me;
    } else if (size > 0 && f < (uint32_t)size) {
        *kind = CTRL_FACT_RANK;
        *fact = (int)f;
    } else {
        *kind = CTRL_FACT_NONE;
    }
    return UCFT_OK;
}

ucft_status_t ctrl_wire_set_decode(const void *buf, size_t len,
                                   ctrl_wire_set_t *set)
{
    const unsigned char *b = buf;

    if (len < 2 * sizeof(uint32_t))
        return UCFT_ERR_INVALID_PARAM;
    uint32_t n = get32(b + 4);
    if (n > CTRL_WIRE_MAX_FACTS || len != (2 + (size_t)n) * sizeof(uint32_t))
        return UCFT_ERR_INVALID_PARAM;
    set->flags = get32(b);
    set->n = n;
    set->facts = b + 2 * sizeof(uint32_t);
    return UCFT_OK;
}

uint32_t ctrl_wire_set_fact(const ctrl_wire_set_t *set, uint32_t i)
{
    return get32(set->facts + 4 * (size_t)i);
}

/* Why a probe's roles do not fit its op, or NULL. The helper (the rank
 * that is neither origin nor suspect) is `me` for a request or an ack and
 * `src` for a ping or a relay. */
static const char *probe_roles(uint32_t op, uint32_t origin, uint32_t suspect,
                               uint32_t src, uint32_t me)
{
    uint32_t helper;

    switch (op) {
    case CTRL_PROBE_REQ:
        if (src != origin)
            return "request not from its origin";
        helper = me;
        break;
    case CTRL_PROBE_PING:
        if (me != suspect)
            return "ping not to its suspect";
        helper = src;
        break;
    case CTRL_PROBE_ACK:
        if (src != suspect)
            return "ack not from its suspect";
        helper = me;
        break;
    case CTRL_PROBE_RELAY:
        if (me != origin)
            return "relay not to its origin";
        helper = src;
        break;
    default:
        return "unknown op";
    }
    if (helper == origin || helper == suspect)
        return "the helper is the origin or the suspect";
    return NULL;
}

ucft_status_t ctrl_wire_probe(const void *buf, size_t len, int size, int me,
                              uint32_t src, ctrl_wire_probe_t *p,
                              const char **why)
{
    const unsigned char *b = buf;
    const char *bad;

    if (len != CTRL_WIRE_PROBE_LEN) {
        *why = "wrong length";
        return UCFT_ERR_INVALID_PARAM;
    }
    uint32_t op = get32(b), origin = get32(b + 4), suspect = get32(b + 8);
    if (size <= 0 || me < 0 || me >= size || src >= (uint32_t)size)
        bad = "source or receiver out of range";
    else if (origin >= (uint32_t)size || suspect >= (uint32_t)size)
        bad = "origin or suspect out of range";
    else if (origin == suspect)
        bad = "origin is the suspect";
    else
        bad = probe_roles(op, origin, suspect, src, (uint32_t)me);
    if (bad != NULL) {
        *why = bad;
        return UCFT_ERR_INVALID_PARAM;
    }
    p->op = (ctrl_probe_op_t)op;
    p->origin = (int)origin;
    p->suspect = (int)suspect;
    p->nonce = get32(b + 12);
    p->silent_ms = get32(b + 16);
    *why = NULL;
    return UCFT_OK;
}
