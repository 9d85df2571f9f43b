/*
 * Fuzz target: the agreement's REPORT and DECIDE messages (header with the
 * round's coordinator, value words, bitmaps A and G) and the revoke
 * fact (collectives/coll_wire.h), as agree.c and rbcast.c check them.
 * Input: the communicator's size (2 bytes, taken as 1 + v % 4096), the
 * value words (1 byte, % 65), whether a decision is expected (1 byte,
 * bit 0), then the message.
 */
#include "fuzz.h"
#include "collectives/coll_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    int n = 1 + (int)(fuzz_take(&in, 2) % 4096);
    size_t words = (size_t)(fuzz_take(&in, 1) % 65);
    int decision = (int)(fuzz_take(&in, 1) & 1);
    size_t len;
    uint8_t *msg = (uint8_t *)fuzz_rest(&in, 0, &len);
    if (len == 0) { /* fuzz_rest's one byte is not the message */
        free(msg);
        return 0;
    }

    const char *why = coll_wire_agree_check(msg, len, words, n, decision);
    if (why == NULL) {
        coll_wire_agree_hdr_t h;
        FUZZ_ASSERT(len == coll_wire_agree_len(words, n));
        memcpy(&h, msg, sizeof(h));
        FUZZ_ASSERT(h.n == (uint32_t)n && h.decided <= 1 && h.err <= 1);
        FUZZ_ASSERT(!decision || h.decided);
        FUZZ_ASSERT(h.decided || !h.err);
        /* A round's coordinator is a rank; only a decision of the fast
         * path names none, and a DECIDE never carries one. */
        FUZZ_ASSERT(h.coord < (uint32_t)n);
        /* Every set bit of both bitmaps names a rank of the communicator;
         * a DECIDE names no reporters. */
        const uint8_t *bm = msg + sizeof(h) + words * 4;
        size_t bl = ((size_t)n + 7) / 8;
        for (size_t b = 0; b < 2 * bl * 8; b++)
            if ((bm[b / 8] >> (b % 8)) & 1)
                FUZZ_ASSERT(b % (bl * 8) < (size_t)n &&
                            (!decision || b < bl * 8));
    } else {
        FUZZ_ASSERT(*why != '\0');
    }
    uint32_t fact[2];
    if (coll_wire_fact(msg, len, fact))
        FUZZ_ASSERT(len == 8 && memcmp(fact, msg, 8) == 0);
    free(msg);
    return 0;
}
