/* The oracle of agreement (simrun/oracle.h, collectives/agree.h): rank r
 * contributes all ones but bit r mod (32 W) of the value, so the AND
 * names exactly the contributors when 32 W >= n. The check: every rank
 * alive at the end contributed, and every cleared bit is some rank's.
 * The failed set (not in the buffer) is checked by the tests through
 * simrun_params_t.inspect. */
#include "collectives/agree.h"
#include "simrun/oracle.h"

#include <string.h>

static size_t words_of(const coll_args_t *args)
{
    return (args->len - sizeof(coll_agree_hdr_t)) / sizeof(uint32_t);
}

void agree_fill(void *buf, const coll_args_t *args, int rank, int size)
{
    size_t w = words_of(args), bit = (size_t)rank % (32 * w);
    uint32_t *v = buf;
    (void)size;
    memset(buf, 0xff, w * sizeof(uint32_t));
    v[bit / 32] &= ~(UINT32_C(1) << (bit % 32));
    memset(v + w, 0, sizeof(coll_agree_hdr_t));
}

int agree_check(const void *buf, const coll_args_t *args, int rank, int size,
                const uint8_t *dead)
{
    size_t w = words_of(args);
    const uint32_t *v = buf;
    (void)rank;
    if ((size_t)size > 32 * w)
        return 1; /* bits shared: nothing exact to check */
    for (int r = 0; r < size; r++) {
        int cleared = !((v[r / 32] >> (r % 32)) & 1);
        if (!dead[r] && !cleared)
            return 0; /* a live rank's contribution is missing */
    }
    for (size_t b = (size_t)size; b < 32 * w; b++)
        if (!((v[b / 32] >> (b % 32)) & 1))
            return 0; /* a bit nobody cleared */
    return 1;
}
