/*
 * The rule of tree repair's switch (comm/repair.h, docs/trees.md), pure so
 * that the simulator tests run the very code the runtime runs.
 *
 * A rank contributes to the background agreement (collectives/agree.h,
 * two value words) its next operation number c and its window W, as
 * complements (the agreement ANDs: the AND of complements is the
 * complement of the maximum). From the decision (the value and the failed
 * set F) every rank computes the same next epoch: the members excluded
 * (the previous epoch's and F) and the first operation run on the others,
 * from = max(c) + max(W), never before the previous epoch's start.
 */
#ifndef UCFT_COLL_REPAIR_RULE_H
#define UCFT_COLL_REPAIR_RULE_H

#include <stdint.h>
#include <string.h>

enum { COLL_REPAIR_WORDS = 2 };

static inline void coll_repair_contrib(uint32_t c, uint32_t w,
                                       uint32_t v[COLL_REPAIR_WORDS])
{
    v[0] = ~c;
    v[1] = ~w;
}

static inline int coll_repair_bit(const uint8_t *bm, int r)
{
    return bm != NULL && ((bm[r >> 3] >> (r & 7)) & 1);
}

/* The next epoch of a group of n from the decision (`val`: the
 * agreement's value words, `failed`: F as a bitmap, NULL: empty) and the
 * previous epoch (`prev_gone` NULL: none; then prev_from is ignored).
 * Writes the excluded set into gone[(n + 7) / 8] and the first operation
 * into *from; returns how many are excluded, or -1 when that is no more
 * than before (no new epoch). */
static inline int coll_repair_decide(int n, const uint32_t *val,
                                     const uint8_t *failed,
                                     const uint8_t *prev_gone, int prev_ngone,
                                     uint32_t prev_from, uint8_t *gone,
                                     uint32_t *from)
{
    int k = 0;
    memset(gone, 0, ((size_t)n + 7) / 8);
    for (int r = 0; r < n; r++)
        if (coll_repair_bit(failed, r) || coll_repair_bit(prev_gone, r)) {
            gone[r >> 3] |= (uint8_t)(1u << (r & 7));
            k++;
        }
    if (prev_gone != NULL && k == prev_ngone)
        return -1;
    *from = ~val[0] + ~val[1];
    if (prev_gone != NULL && (int32_t)(*from - prev_from) < 0)
        *from = prev_from; /* epochs start in order */
    return k;
}

#endif
