/* The membership a communicator-making agreement decides (agree.h). */
#include "agree.h"

static int in_f(const uint8_t *f, int r)
{
    return f != NULL && ((f[r >> 3] >> (r & 7)) & 1);
}

int coll_agree_members(int kind, int n, int me, const uint32_t *slots,
                       const uint8_t *failed, int *out)
{
    int k = 0;
    if (kind != COLL_MEMBERS_SPLIT) {
        for (int r = 0; r < n; r++)
            if (kind == COLL_MEMBERS_DUP || !in_f(failed, r))
                out[k++] = r;
        return k;
    }
    uint32_t mine = slots[2 * me];
    if (mine == COLL_SPLIT_UNDEF)
        return 0;
    for (int r = 0; r < n; r++) { /* insertion by (key, rank) */
        if (in_f(failed, r) || slots[2 * r] != mine)
            continue;
        int32_t key = (int32_t)slots[2 * r + 1];
        int at = k++;
        while (at > 0 && (int32_t)slots[2 * out[at - 1] + 1] > key) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = r;
    }
    return k;
}
