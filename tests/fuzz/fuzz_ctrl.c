/*
 * Fuzz target: the detector's control messages (heartbeat, heartbeat
 * request, clean-exit notice, failure notice, failed set, indirect probe)
 * as a standing receive sees them: the receive check, then the kind's decoder
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
    unsigned kind = (unsigned)fuzz_take(&in, 1) % 4;
    int n = (int)fuzz_take(&in, 2);
    int me = n > 0 ? (int)(fuzz_take(&in, 2) % (unsigned)n) : 0;
    uint32_t src = (uint32_t)fuzz_take(&in, 4);
    ucft_status_t st = statuses[fuzz_take(&in, 1) % 4];
    size_t len;
    char *body = fuzz_rest(&in, 0, &len);
    /* The receive buffers: 8 bytes (heartbeats), a batch of facts, a
     * whole failed set, or a probe. */
    size_t want = kind == 1   ? 4 * (1 + CTRL_WIRE_MAX_BATCH)
                  : kind == 2 ? 4 * (2 + CTRL_WIRE_MAX_FACTS)
                  : kind == 3 ? CTRL_WIRE_PROBE_LEN
                              : 8;

    const char *why =
        ctrl_wire_check(st, src, len, n, me, want, kind != 1 && kind != 2);
    if (why == NULL) {
        FUZZ_ASSERT(st == UCFT_OK && src < (uint32_t)n && (int)src != me);
        FUZZ_ASSERT(len <= want);
        if (kind == 0) {
            uint64_t w;
            FUZZ_ASSERT(ctrl_wire_word(body, len, &w) == UCFT_OK);
        } else if (kind == 1) {
            size_t nf = ctrl_wire_nfacts(len);
            FUZZ_ASSERT(nf == 0 ||
                        (len == 4 * (nf + 1) && nf <= CTRL_WIRE_MAX_BATCH));
            for (size_t i = 0; i <= nf; i++) {
                ctrl_fact_kind_t k;
                int fact = -1;
                ucft_status_t fs =
                    ctrl_wire_fact(body, len, i, n, me, &k, &fact);
                FUZZ_ASSERT((fs == UCFT_OK) == (i < nf));
                if (fs == UCFT_OK && k == CTRL_FACT_SELF)
                    FUZZ_ASSERT(fact == me);
                if (fs == UCFT_OK && k == CTRL_FACT_RANK)
                    FUZZ_ASSERT(fact >= 0 && fact < n && fact != me);
            }
        } else if (kind == 3) {
            ctrl_wire_probe_t p;
            const char *why = NULL;
            if (ctrl_wire_probe(body, len, n, me, src, &p, &why) == UCFT_OK) {
                FUZZ_ASSERT(why == NULL && len == CTRL_WIRE_PROBE_LEN);
                FUZZ_ASSERT(p.origin >= 0 && p.origin < n && p.suspect >= 0 &&
                            p.suspect < n && p.origin != p.suspect);
                /* The helper is the third rank of every probe. */
                int helper = p.op == CTRL_PROBE_REQ || p.op == CTRL_PROBE_ACK
                                 ? me
                                 : (int)src;
                FUZZ_ASSERT(p.op >= CTRL_PROBE_REQ && p.op <= CTRL_PROBE_RELAY);
                FUZZ_ASSERT(helper != p.origin && helper != p.suspect);
                if (p.op == CTRL_PROBE_REQ)
                    FUZZ_ASSERT((int)src == p.origin);
                if (p.op == CTRL_PROBE_PING)
                    FUZZ_ASSERT(me == p.suspect);
                if (p.op == CTRL_PROBE_ACK)
                    FUZZ_ASSERT((int)src == p.suspect);
                if (p.op == CTRL_PROBE_RELAY)
                    FUZZ_ASSERT(me == p.origin);
            } else {
                FUZZ_ASSERT(why != NULL);
            }
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
    ctrl_wire_probe_t probe;
    const char *pwhy;
    (void)ctrl_wire_probe(body, len, n, me, src, &probe, &pwhy);
    (void)ctrl_wire_word(body, len, &w);
    (void)ctrl_wire_fact(body, len, 0, n, me, &k, &fact);
    (void)ctrl_wire_set_decode(body, len, &set);
    free(body);
    return 0;
}
