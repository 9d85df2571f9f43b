/*
 * Fuzz target: UCFT_INJECT specs (comm/coll_inject.h): the parser, then,
 * for a spec list that parses, the set-up for one rank of a job and a
 * run of calls counted against it with a recording "die". Input: job size
 * (2 bytes), this rank (2), a list of operations to call (1 byte each,
 * up to the first 0xff), then the spec text.
 */
#include "fuzz.h"
#include "comm/coll_inject.h"

static void record_die(void *arg, const cm_inject_spec_t *spec)
{
    (*(unsigned *)arg)++;
    FUZZ_ASSERT(spec->msg == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    int n = 1 + (int)(fuzz_take(&in, 2) % 4096);
    int me = (int)(fuzz_take(&in, 2) % (unsigned)n);
    uint8_t ops[64];
    size_t nops = 0;
    while (in.left > 0 && nops < sizeof(ops)) {
        uint8_t b = (uint8_t)fuzz_take(&in, 1);
        if (b == 0xff)
            break;
        ops[nops++] = b;
    }
    size_t len;
    char *text = fuzz_rest(&in, 1, &len);
    cm_inject_t *inj = calloc(1, sizeof(*inj));
    char err[256];

    FUZZ_ASSERT(inj != NULL);
    err[0] = '\0';
    if (cm_inject_parse(text, inj, err, sizeof(err)) != UCFT_OK) {
        FUZZ_ASSERT(err[0] != '\0' && memchr(err, '\0', sizeof(err)));
        goto out;
    }
    FUZZ_ASSERT(inj->n <= CM_INJECT_MAX);
    for (size_t i = 0; i < inj->n; i++) {
        FUZZ_ASSERT(inj->spec[i].rank >= 0);
        FUZZ_ASSERT(inj->spec[i].op >= 0 && inj->spec[i].op < CM_INJECT_NOPS);
        FUZZ_ASSERT(inj->spec[i].call >= 1);
        FUZZ_ASSERT(cm_inject_op_name(inj->spec[i].op) != NULL);
    }
    tp_t real = {.rank = me, .size = n};
    unsigned died = 0;
    if (cm_inject_setup(inj, me, n, &real, NULL, record_die, &died, err,
                        sizeof(err)) != UCFT_OK)
        goto out;
    for (size_t i = 0; i < nops; i++) {
        tp_t *tp =
            cm_inject_call(inj, ops[i] % (CM_INJECT_NOPS + 1), 7, (uint32_t)i);
        FUZZ_ASSERT(tp == &real || tp == &inj->wrap.f.tp);
    }
out:
    free(inj);
    free(text);
    return 0;
}
