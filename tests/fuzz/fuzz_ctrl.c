/*
 * Fuzz target: the detector's control messages (heartbeat, heartbeat
 * request, clean-exit notice, failure notice, failed set) as a standing
 * receive sees them: the receive check, then the kind's decoder
 * (runtime/detector/ctrl_wire.h). Input: kind (1 byte), job size (2),
 * this rank (2), tag source (4), status selector (1), then the body.
 */
#include "fuzz.h"
#include "runtime/detector/ctrl_wire.h"

static const ucft_status_t statuses[] = {
    UCFT_OK, UCFT_ERR_TRUNCATED, UCFT_ERR_CANCELED, UCFT_ERR_PROC_FAILED};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    unsigned kind = (unsigned)fuzz_take(&in, 1) % 3;
    int n = (int)fuzz_take(&in, 2);
    int me = n > 0 ? (int)(fuzz_take(&in, 2) % (unsigned)n) : 0;
    uint32_t src = (uint32_t)fuzz_take(&in, 4);
    ucft_status_t st = statuses[fuzz_take(&in, 1) % 4];
    size_t len;
    char *body = fuzz_rest(&in, 0, &len);
    /* The receive buffers: 8 bytes, or a whole failed set. */
    size_t want = kind == 2 ? 4 * (2 + CTRL_WIRE_MAX_FACTS) : 8;

    const char *why = ctrl_wire_check(st, src, len, n, me, want, kind != 2);
    if (why == NULL) {
        FUZZ_ASSERT(st == UCFT_OK && src < (uint32_t)n && (int)src != me);
        FUZZ_ASSERT(len <= want);
        if (kind == 0) {
            uint64_t w;
            FUZZ_ASSERT(ctrl_wire_word(body, len, &w) == UCFT_OK);
        } else if (kind == 1) {
            ctrl_fact_kind_t k;
            int fact = -1;
            FUZZ_ASSERT(ctrl_wire_fact(body, len, n, me, &k, &fact) == UCFT_OK);
            if (k == CTRL_FACT_SELF)
                FUZZ_ASSERT(fact == me);
            if (k == CTRL_FACT_RANK)
                FUZZ_ASSERT(fact >= 0 && fact < n && fact != me);
        } else {
            ctrl_wire_set_t set;
            if (ctrl_wire_set_decode(body, len, &set) == UCFT_OK) {
                FUZZ_ASSERT(set.n <= CTRL_WIRE_MAX_FACTS);
                FUZZ_ASSERT(len == 4 * (2 + (size_t)set.n));
                uint64_t sum = 0;
                for (uint32_t i = 0; i < set.n; i++)
                    sum += ctrl_wire_set_fact(&set, i);
                (void)sum;
            }
        }
    }
    /* The decoders alone, on whatever arrived. */
    uint64_t w;
    ctrl_fact_kind_t k;
    int fact;
    ctrl_wire_set_t set;
    (void)ctrl_wire_word(body, len, &w);
    (void)ctrl_wire_fact(body, len, n, me, &k, &fact);
    (void)ctrl_wire_set_decode(body, len, &set);
    free(body);
    return 0;
}
