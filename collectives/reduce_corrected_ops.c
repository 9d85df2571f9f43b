/*
 * The registered entries of corrected reduce, allreduce and barrier: one
 * state machine (reduce_corrected.c), one small configuration per entry.
 * The default scheme ("corrected") is the list of failed ranks, the one
 * section 4.4 describes first and the most informative for the root.
 */
#include "reduce_corrected.h"

#define RC_ENTRY(NAME)                                                         \
    static ucft_status_t NAME##_init(void *state, tp_t *tp,                    \
                                     const coll_args_t *args, void *buf)       \
    {                                                                          \
        return rc_init(state, tp, args, buf, &NAME##_cfg);                     \
    }

static const rc_config_t red_list_cfg = {RC_SCHEME_LIST, 0, 0};
static const rc_config_t red_countbit_cfg = {RC_SCHEME_COUNTBIT, 0, 0};
static const rc_config_t red_bit_cfg = {RC_SCHEME_BIT, 0, 0};
static const rc_config_t all_list_cfg = {RC_SCHEME_LIST, 1, 0};
static const rc_config_t all_countbit_cfg = {RC_SCHEME_COUNTBIT, 1, 0};
static const rc_config_t all_bit_cfg = {RC_SCHEME_BIT, 1, 0};
static const rc_config_t barrier_cfg = {RC_SCHEME_BIT, 1, 1};
RC_ENTRY(red_list)
RC_ENTRY(red_countbit)
RC_ENTRY(red_bit)
RC_ENTRY(all_list)
RC_ENTRY(all_countbit)
RC_ENTRY(all_bit)
RC_ENTRY(barrier)

#define RC_OPS(VAR, OP, ALG, DOC, NAME, CONS, MULT)                            \
    const coll_op_ops_t VAR = {                                                \
        .op = OP,                                                              \
        .alg = ALG,                                                            \
        .doc = DOC,                                                            \
        .state_size = sizeof(rc_state_t),                                      \
        .buf_mult = MULT,                                                      \
        .init = NAME##_init,                                                   \
        .start = rc_start,                                                     \
        .test = rc_test,                                                       \
        .cleanup = rc_cleanup,                                                 \
        .destroy = rc_destroy,                                                 \
        .on_failure = rc_on_failure,                                           \
        .idle = rc_idle,                                                       \
        .stale_kinds = rc_stale_kinds,                                         \
        .consistent = CONS,                                                    \
        .keep_after_done = CONS,                                               \
        .takes_frame = 1,                                                      \
    }

RC_OPS(coll_reduce_corrected_ops, "reduce", "corrected",
       "up-correction + I(f)-tree, failed-rank lists (= corrected-list)",
       red_list, 0, 1);
RC_OPS(coll_reduce_corrected_list_ops, "reduce", "corrected-list",
       "up-correction + I(f)-tree, failure info: list of failed ranks",
       red_list, 0, 1);
RC_OPS(coll_reduce_corrected_countbit_ops, "reduce", "corrected-countbit",
       "up-correction + I(f)-tree, failure info: count + tree bit",
       red_countbit, 0, 1);
RC_OPS(coll_reduce_corrected_bit_ops, "reduce", "corrected-bit",
       "up-correction + I(f)-tree, failure info: one bit", red_bit, 0, 1);
RC_OPS(coll_allreduce_corrected_ops, "allreduce", "corrected",
       "corrected reduce to a candidate root, then down the I(f)-tree with "
       "group correction (a star up to 16 ranks); next root if it failed",
       all_list, 1, 1);
RC_OPS(coll_allreduce_corrected_list_ops, "allreduce", "corrected-list",
       "corrected allreduce, failure info: list of failed ranks", all_list, 1,
       1);
RC_OPS(coll_allreduce_corrected_countbit_ops, "allreduce", "corrected-countbit",
       "corrected allreduce, failure info: count + bit", all_countbit, 1, 1);
RC_OPS(coll_allreduce_corrected_bit_ops, "allreduce", "corrected-bit",
       "corrected allreduce, failure info: one bit", all_bit, 1, 1);
/* Barrier: the corrected allreduce of nothing. Every other hook is its
 * siblings': a barrier is a kept instance too, and a root that has picked its
 * answer must name the others as stale, or they block the late-message sweeper
 * for the rest of the run. */
RC_OPS(coll_barrier_corrected_ops, "barrier", "corrected",
       "corrected allreduce of nothing (bit scheme)", barrier, 1, 1);
