/*
 * Tree repair (comm/repair.c; docs/trees.md): a communicator's collectives
 * run on a dense order of the members it has not agreed to be failed, so
 * that after failures their trees are those of a fresh communicator of the
 * survivors, and the failures already agreed no longer count against f.
 *
 * - An epoch is such an order: the live members (comm ranks) in their old
 *   order, a rank-translating view of the transport in that order (the same
 *   kind of view as a sub-communicator's, comm/view.h), and the placement
 *   map recomputed over their loci. Operation instances numbered from
 *   epoch->from on run in it; earlier ones in the previous epoch (or on the
 *   whole communicator). Epochs are kept until the communicator is freed
 *   (instances of older ones may still run; one per agreed failure set).
 * - Which failures: a background agreement (collectives/agree.c, posted by
 *   progress once this rank knows a failed member outside the newest
 *   epoch's excluded set) decides the set F and the switch point.
 * - Where to switch: each rank contributes c = its next collective
 *   sequence number and promises not to post an operation numbered
 *   c + W or later (W = UCFT_TREE_REPAIR_WINDOW) before it knows the
 *   decision; the agreement's value gives max(c) over the contributors,
 *   and every rank switches at S = max(c) + W. Every rank has posted
 *   fewer than S operations when it learns S, so every rank runs
 *   operation S and later in the new epoch, and those before it in the
 *   old: the same tree for the same operation everywhere. A rank that
 *   reaches its bound before the decision waits for it (the only time
 *   the repair is on the critical path).
 * - Background agreements number themselves apart from the application's
 *   (tag sequence 0x8000 | k), since ranks start them at different
 *   points of the communicator's sequence of calls; the k-th stays running
 *   (a late rank may still ask its coordinator) until the k+1-th completes
 *   here.
 */
#ifndef UCFT_COMM_REPAIR_H
#define UCFT_COMM_REPAIR_H

#include "ucft.h"
#include "collectives/agree.h"
#include "collectives/tree_ft.h"
#include "comm/view.h"
#include "placement/comm_map.h"

#include <stdint.h>

struct ucft_comm;
struct cm_layer;
struct ucft_request;

/* Tag sequence numbers of background agreements: this bit set. */
#define CM_REPAIR_SEQ_BIT 0x8000u

/* Lookup trees an epoch keeps (the barrier's and 7 roots of broadcasts
 * or reduces; 12 m bytes each at m live members). */
#define CM_LOOKUP_ROOTS 8

typedef struct cm_lookup {
    int root;
    coll_tree_t tree;
} cm_lookup_t;

typedef struct cm_epoch {
    struct cm_epoch *next; /* the older epochs */
    uint32_t from;         /* first operation (comm->seq) run in it */
    int n, rank;           /* live members, this rank's index among them */
    int *live;             /* [n]: index -> comm rank */
    int *dense;            /* [comm size]: comm rank -> index, or -1 */
    int *jobs;             /* [n]: index -> job rank */
    int *job_to_dense;     /* [job size]: job rank -> index, or -1 */
    uint8_t *gone;         /* bitmap of the excluded comm ranks */
    int ngone;
    cm_view_t view;
    place_map_t place; /* over the live members (rank_at, pos_of, mate) */
    /* UCFT_TREE_REPAIR=lookup: the rerouted binomial trees
     * (comm/repair_tree.c), in dense indices, of the first
     * CM_LOOKUP_ROOTS roots asked for (root -1: the barrier's), each
     * built when first asked for and kept with the epoch (an operation
     * still running may read any of them); further roots are built per
     * operation, as under reroute. */
    cm_lookup_t lookup[CM_LOOKUP_ROOTS];
    int nlookup;
    uint8_t rerouted_told; /* reroute: the first tree logged (debug) */
    /* UCFT_TREE_REPAIR=reroute|lookup: the communicator's original
     * placement with the excluded members' positions empty (coll_args_t.
     * frame, for the takes_frame algorithms), built when first asked for:
     * frame.rank[pos] = dense index or -1, frame.pos[dense index]. */
    coll_map_t frame;
    int *frame_rank, *frame_pos;
    /* With it, the rerouted ring (coll_args_t.map of the takes_tree
     * algorithms: the corrected broadcast's correction ring): the live
     * members in their original placement order, holes skipped. */
    coll_map_t order;
    int *order_rank, *order_pos;
} cm_epoch_t;

typedef struct cm_repair {
    cm_epoch_t *epochs;       /* newest first; NULL: none yet */
    struct ucft_request *req; /* the running background agreement */
    uint32_t limit;           /* posts numbered >= limit wait for req */
    uint32_t nbg;             /* background agreements posted */
    uint64_t switches;        /* epochs decided (for tests and logs) */
    /* Failures this context knew when the last background agreement
     * started, and, once one ended with an error (the majority gate of
     * UCFT_QUORUM refuses an agreement that most members cannot join),
     * that count: no new one starts before more failures are known. */
    size_t started_nfailed, stuck_nfailed;
} cm_repair_t;

/* UCFT_TREE_REPAIR values. Every one but keep switches to epochs; they
 * differ in the binomial trees (takes_tree algorithms) of an epoch:
 * rebalance builds them over the dense order (a fresh communicator's),
 * reroute and lookup keep the communicator's original tree with the
 * excluded members' children adopted by their nearest live ancestor (the
 * paper's rerouting), built at every operation (reroute) or once per
 * epoch and root (lookup). Every other structure is rebalanced. */
enum {
    CM_REPAIR_REBALANCE = 0,
    CM_REPAIR_KEEP = 1,
    CM_REPAIR_REROUTE = 2,
    CM_REPAIR_LOOKUP = 3,
};

/* 1 for the operations whose instances run in epochs (CM_COLL_*):
 * broadcast, reduce, allreduce, barrier, the corrected barrier. */
int cm_repair_op(int op);
/* Before posting operation number `seq` of `comm` that runs in epochs:
 * waits for the background agreement if `seq` reached its bound, and
 * returns the epoch the operation runs in (NULL: the whole communicator). */
cm_epoch_t *cm_repair_epoch(struct ucft_comm *comm, uint32_t seq);
/* A background agreement of `comm` ended with `st`: after an error (the
 * majority gate refused it) no new one starts before news of another
 * failure. */
void cm_repair_ended(struct ucft_comm *comm, ucft_status_t st);
/* comm/repair_bg.c. Progress (the layer's, comm/layer.c): starts the
 * background agreements that are due, releases the finished ones. Cheap
 * when no failure was learnt since the last call. */
void cm_repair_progress(struct cm_layer *cl);
/* A member failed: the next progress looks at the communicators. */
void cm_repair_failure(struct cm_layer *cl);
/* ucft_comm_free, finalize: no more background agreements on `comm`. */
void cm_repair_stop(struct ucft_comm *comm);
/* Frees the epochs (after the transport: nothing uses them any more). */
void cm_repair_destroy(struct ucft_comm *comm);
/* 1 when a message with tag sequence `s` (CM_REPAIR_SEQ_BIT set) belongs to
 * a background agreement not started here yet. */
int cm_repair_future(const struct ucft_comm *comm, uint32_t s);
/* The background agreement's decision (cm_agree_fn_t; comm/repair.c): the
 * next epoch, if any. */
ucft_status_t cm_repair_decided(struct ucft_comm *comm, const uint32_t *val,
                                const coll_agree_hdr_t *hdr,
                                const uint8_t *failed, void *arg);
/* For tests: the members of the epoch operation `seq` would run in (comm
 * ranks, in order) into out[comm size]; returns how many (comm size when
 * none: every rank). */
int cm_repair_members(const struct ucft_comm *comm, uint32_t seq, int *out);

/* ---- comm/repair_tree.c ---------------------------------------------------
 */

/* The tree an operation of epoch `ep` rooted at comm rank `root` (-1: the
 * barrier's, at position 0) runs on when its algorithm takes one
 * (coll_op_ops_t.takes_tree): under UCFT_TREE_REPAIR=reroute built into
 * *scratch (freed first), under lookup the epoch's own for that root
 * (built the first time; past CM_LOOKUP_ROOTS roots into *scratch too),
 * under rebalance none (*tree NULL). The
 * same at every member: it depends only on the communicator's placement
 * and the epoch's excluded set. UCFT_ERR_NO_MEMORY when it cannot be
 * built. */
ucft_status_t cm_repair_tree(const struct ucft_comm *comm, cm_epoch_t *ep,
                             int root, coll_tree_t *scratch,
                             const coll_tree_t **tree);
/* The frame of epoch `ep` (coll_args_t.frame) and its order (the map of
 * the takes_tree algorithms) under UCFT_TREE_REPAIR=reroute|lookup, both
 * NULL under rebalance; UCFT_ERR_NO_MEMORY when they cannot be built.
 * The same at every member. */
ucft_status_t cm_repair_frame(const struct ucft_comm *comm, cm_epoch_t *ep,
                              const coll_map_t **frame,
                              const coll_map_t **order);
/* Frees the epoch's lookup trees and frame. */
void cm_repair_trees_free(cm_epoch_t *ep);

#endif
