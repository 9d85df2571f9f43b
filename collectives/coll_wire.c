/* Collective messages as bytes: see coll_wire.h. */
#include "collectives/coll_wire.h"
#include "transport/tag.h"

#include <string.h>

#define ENTRY_HDR 8
/* Every entry of a batch is within this many instances of its first: a
 * sender batches the copies of the instances it has in flight, a few
 * thousand at most. Without a bound, a batch whose sequences spread over
 * 2^31 or more has no lowest and highest in serial order, and an entry
 * would fall outside [lo, hi], where cc_find never looks. */
#define SEQ_SPAN (1u << 30)

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static size_t pad8(size_t len)
{
    return (len + 7) & ~(size_t)7;
}

int coll_wire_src(uint64_t tag, int n)
{
    uint32_t src = ucft_tag_src(tag);
    return n > 0 && src < (uint32_t)n ? (int)src : -1;
}

coll_wire_verdict_t coll_wire_tree_check(const coll_wire_tree_t *t,
                                         const void *buf, size_t length,
                                         const char **why)
{
    const unsigned char *b = buf;
    size_t base = t->hfix + t->len;

    if (t->hfix < 4 || (t->list && t->hfix < 8))
        return *why = "a header shorter than its scheme's", COLL_WIRE_BAD;
    if (!t->list) {
        if (length != base)
            return COLL_WIRE_SIZE;
    } else if (length < base || length - base > 4 * (size_t)t->cap ||
               (length - base) % 4 != 0) {
        return COLL_WIRE_SIZE;
    }
    if (get32(b) & ~t->known)
        return *why = "flags this operation does not send: dropped",
               COLL_WIRE_BAD;
    if (!t->list)
        return COLL_WIRE_OK;
    uint32_t nl = get32(b + 4);
    if (nl > t->cap || length != base + 4 * (size_t)nl)
        return *why = "its failure list does not match its length: dropped",
               COLL_WIRE_BAD;
    for (uint32_t i = 0; i < nl; i++)
        if (get32(b + base + 4 * (size_t)i) >= t->n)
            return *why = "its failure list names a rank outside the job: "
                          "dropped",
                   COLL_WIRE_BAD;
    return COLL_WIRE_OK;
}

void coll_wire_batch_scan(const void *data, size_t length, uint32_t max,
                          coll_wire_batch_t *out)
{
    const unsigned char *b = data;
    size_t off = 0;
    uint32_t first = 0;

    *out = (coll_wire_batch_t){0};
    while (off < length) {
        if (length - off < ENTRY_HDR) {
            out->why = "a truncated entry header";
            break;
        }
        uint32_t seq = get32(b + off);
        uint32_t len = get32(b + off + 4);
        if (len > max || length - off - ENTRY_HDR < pad8(len)) {
            out->why = "an entry longer than allowed or sent";
            break;
        }
        if (out->n > 0 && seq - first + SEQ_SPAN > 2 * SEQ_SPAN) {
            out->why = "an instance too far from the batch's first";
            break;
        }
        if (out->n == 0)
            first = seq;
        if (out->n == 0 || coll_wire_after(out->lo, seq))
            out->lo = seq;
        if (out->n == 0 || coll_wire_after(seq, out->hi))
            out->hi = seq;
        out->n++;
        off += ENTRY_HDR + pad8(len);
    }
    out->len = off;
    out->bad_off = off;
}

const void *coll_wire_batch_find(const void *data, size_t len, uint32_t seq,
                                 size_t *plen)
{
    const unsigned char *b = data;

    for (size_t off = 0; off + ENTRY_HDR <= len;) {
        uint32_t l = get32(b + off + 4);
        if (get32(b + off) == seq) {
            *plen = l;
            return b + off + ENTRY_HDR;
        }
        off += ENTRY_HDR + pad8(l);
    }
    return NULL;
}

const char *coll_wire_agree_check(const void *buf, size_t length, size_t words,
                                  int n, int decision)
{
    coll_wire_agree_hdr_t h;
    if (n < 1 || length != coll_wire_agree_len(words, n))
        return "an agreement message of another length";
    memcpy(&h, buf, sizeof(h));
    if (h.n != (uint32_t)n)
        return "an agreement message for another rank count";
    if (h.decided > 1 || h.err > 1 || h.pad != 0 || h.coord > (uint32_t)n)
        return "an agreement message with a bad header";
    if (decision && (!h.decided || h.coord == (uint32_t)n))
        return "a DECIDE message without a round's decision";
    if (!decision && h.coord == (uint32_t)n)
        return "a REPORT message without its round";
    if (!h.decided && h.err)
        return "an undecided report with the error bit";
    size_t bl = ((size_t)n + 7) / 8;
    const uint8_t *a = (const uint8_t *)buf + sizeof(h) + words * 4;
    const uint8_t *g = a + bl;
    if (n % 8 != 0 &&
        ((a[n / 8] >> (n % 8)) != 0 || (g[n / 8] >> (n % 8)) != 0))
        return "an agreement bitmap with bits past the last rank";
    if (decision)
        for (size_t i = 0; i < bl; i++)
            if (g[i] != 0)
                return "a DECIDE message with reporters";
    return NULL;
}

int coll_wire_fact(const void *buf, size_t length, uint32_t fact[2])
{
    if (length != 2 * sizeof(uint32_t))
        return 0;
    memcpy(fact, buf, 2 * sizeof(uint32_t));
    return 1;
}
