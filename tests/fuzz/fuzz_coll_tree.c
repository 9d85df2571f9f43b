/*
 * Fuzz target: a collective message's header and the corrected reduce /
 * allreduce tree message (collectives/coll_wire.h). Input: tag (8 bytes),
 * job size (2), scheme (1: bit, count or list), value bytes (1), f (1),
 * allreduce (1), then the body.
 */
#include "fuzz.h"
#include "collectives/coll_wire.h"
#include "transport/tag.h"

static uint32_t get32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    uint64_t tag = fuzz_take(&in, 8);
    int n = (int)fuzz_take(&in, 2);
    unsigned scheme = (unsigned)fuzz_take(&in, 1) % 3;
    size_t vlen = (size_t)fuzz_take(&in, 1);
    uint32_t f = (uint32_t)fuzz_take(&in, 1) % 32;
    int allreduce = (int)(fuzz_take(&in, 1) & 1);
    size_t len;
    char *body = fuzz_rest(&in, 0, &len);

    /* The tag's fields, as every receiver reads them. */
    int src = coll_wire_src(tag, n);
    FUZZ_ASSERT(src == -1 || (src >= 0 && src < n));
    (void)ucft_tag_class(tag);
    (void)ucft_tag_ctx(tag);
    (void)ucft_tag_coll_kind(tag);
    (void)ucft_tag_coll_seq(tag);

    coll_wire_tree_t shape = {.hfix = scheme == 0 ? 4 : 8,
                              .len = vlen,
                              .list = scheme == 2,
                              .cap = 2 * (f + 1),
                              .known = 1 | 2 | 16 | (allreduce ? 4u : 0),
                              .n = (uint32_t)n};
    const char *why = NULL;
    coll_wire_verdict_t v = coll_wire_tree_check(&shape, body, len, &why);
    if (v == COLL_WIRE_BAD)
        FUZZ_ASSERT(why != NULL);
    if (v == COLL_WIRE_OK) {
        size_t base = shape.hfix + vlen;
        FUZZ_ASSERT(len >= base);
        FUZZ_ASSERT((get32(body) & ~shape.known) == 0);
        if (shape.list) {
            uint32_t nl = get32(body + 4);
            FUZZ_ASSERT(nl <= shape.cap && len == base + 4 * (size_t)nl);
            for (uint32_t i = 0; i < nl; i++)
                FUZZ_ASSERT(get32(body + base + 4 * i) < (uint32_t)n);
        } else {
            FUZZ_ASSERT(len == base);
        }
    }
    free(body);
    return 0;
}
