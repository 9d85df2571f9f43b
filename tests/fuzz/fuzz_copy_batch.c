/*
 * Fuzz target: a batch of the copy channel of corrected-batched (the
 * entries of one message; collectives/coll_wire.h): the scan that keeps
 * its good prefix, then a look-up of every sequence it holds and of a few
 * it does not. Input: the message itself.
 */
#include "fuzz.h"
#include "collectives/coll_wire.h"
#include "collectives/copy_chan.h"

static uint32_t get32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    size_t len;
    char *msg = fuzz_rest(&in, 0, &len);
    coll_wire_batch_t scan;

    coll_wire_batch_scan(msg, len, CC_ENTRY_MAX, &scan);
    FUZZ_ASSERT(scan.len <= len && scan.len % 8 == 0);
    FUZZ_ASSERT((scan.why == NULL) == (scan.len == len));
    for (size_t off = 0; off < scan.len;) {
        uint32_t seq = get32(msg + off), l = get32(msg + off + 4);
        size_t plen = 0;
        const char *p = coll_wire_batch_find(msg, scan.len, seq, &plen);
        FUZZ_ASSERT(p != NULL && plen <= CC_ENTRY_MAX);
        FUZZ_ASSERT(p >= msg + 8 && p + plen <= msg + scan.len);
        FUZZ_ASSERT(!coll_wire_after(scan.lo, seq) &&
                    !coll_wire_after(seq, scan.hi));
        off += 8 + ((l + 7) & ~7u);
    }
    size_t plen;
    (void)coll_wire_batch_find(msg, scan.len, scan.hi + 1, &plen);
    (void)coll_wire_batch_find(msg, scan.len, scan.lo - 1, &plen);
    free(msg);
    return 0;
}
