/*
 * Placement policies (placement.h): the order of the ranks that becomes the
 * tree positions of every collective (coll_map_t in coll_op.h).
 *
 * A locus has four levels, outermost first: node, package, NUMA node, core
 * (level 4 is the rank itself). Any negative id counts as -1 ("unknown"),
 * and all -1 ids of one level inside one parent domain form one domain.
 *
 * Both non-trivial policies start from the locality order: the ranks sorted
 * by (node, package, numa, core, rank), in which every domain of every
 * level is one contiguous run. Interleave then rewrites each run, from the
 * innermost level outwards, as the round robin of its children's runs.
 * Everything is pure: no globals, no logging (the caller names what was
 * wrong), deterministic for equal inputs.
 */
#include "placement.h"

#include <stdlib.h>
#include <string.h>

#define PLACEMENT_LEVELS 4 /* node, package, numa, core */

static const char *const placement_names[] = {
    [PLACEMENT_INTERLEAVE] = "interleave",
    [PLACEMENT_LOCALITY] = "locality",
    [PLACEMENT_IDENTITY] = "identity",
};

ucft_status_t placement_policy_parse(const char *name,
                                     placement_policy_t *policy)
{
    if (name == NULL || policy == NULL)
        return UCFT_ERR_INVALID_PARAM;
    for (int p = 0; p < (int)(sizeof placement_names / sizeof *placement_names);
         p++)
        if (strcmp(name, placement_names[p]) == 0) {
            *policy = (placement_policy_t)p;
            return UCFT_OK;
        }
    return UCFT_ERR_INVALID_PARAM;
}

const char *placement_policy_name(placement_policy_t policy)
{
    if ((int)policy < 0 ||
        (int)policy >= (int)(sizeof placement_names / sizeof *placement_names))
        return "?";
    return placement_names[policy];
}

int placement_core_mate(const placement_locus_t *loci, int n, int rank)
{
    if (loci == NULL || rank < 0 || rank >= n)
        return -1;
    const placement_locus_t *own = &loci[rank];
    int mate = -1;
    if (own->node < 0 || own->core < 0)
        return -1;
    for (int r = 0; r < n; r++) {
        if (r == rank || loci[r].node != own->node || loci[r].core != own->core)
            continue;
        if (mate >= 0)
            return -1; /* a third rank on this core */
        mate = r;
    }
    return mate;
}

/* Id of `rank` at `level` (0 node .. 3 core); negative ids are one -1. */
static int32_t placement_key(const placement_locus_t *loci, int rank, int level)
{
    const placement_locus_t *l = &loci[rank];
    int32_t id = level == 0   ? l->node
                 : level == 1 ? l->package
                 : level == 2 ? l->numa
                              : l->core;
    return id < 0 ? -1 : id;
}

/* Locality order: (node, package, numa, core, rank). A total order. */
static int placement_less(const placement_locus_t *loci, int a, int b)
{
    for (int d = 0; d < PLACEMENT_LEVELS; d++) {
        int32_t ka = placement_key(loci, a, d), kb = placement_key(loci, b, d);
        if (ka != kb)
            return ka < kb;
    }
    return a < b;
}

/* Ranks a and b agree on levels 0 .. upto-1. */
static int placement_same_prefix(const placement_locus_t *loci, int a, int b,
                                 int upto)
{
    for (int d = 0; d < upto; d++)
        if (placement_key(loci, a, d) != placement_key(loci, b, d))
            return 0;
    return 1;
}

/* Bottom-up merge sort of ord[0..n) into locality order, tmp as scratch
 * (O(n log n); a merge whose halves are already in order is skipped, so an
 * already sorted input, e.g. ranks launched by slot, costs O(n)). */
static void placement_sort(const placement_locus_t *loci, int *ord, int *tmp,
                           int n)
{
    for (long w = 1; w < n; w *= 2)
        for (long lo = 0; lo + w < n; lo += 2 * w) {
            long mid = lo + w, hi = lo + 2 * w < n ? lo + 2 * w : n;
            if (!placement_less(loci, ord[mid], ord[mid - 1]))
                continue;
            long i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] =
                    placement_less(loci, ord[j], ord[i]) ? ord[j++] : ord[i++];
            while (i < mid)
                tmp[k++] = ord[i++];
            while (j < hi)
                tmp[k++] = ord[j++];
            memcpy(ord + lo, tmp + lo, (size_t)(hi - lo) * sizeof *ord);
        }
}

/* Rewrite the domain ord[lo..hi) (one domain of level `level`) as the
 * round robin of its children (the runs of equal id at level `level`,
 * each already in its own final order): round r takes element r of every
 * child that has one, children in increasing id order. act holds (next,
 * end) of the children still active, compacted every round, so the cost
 * is O(hi - lo). */
static void placement_round_robin(const placement_locus_t *loci, int *ord,
                                  int *tmp, int *act, long lo, long hi,
                                  int level)
{
    long na = 0;
    for (long i = lo; i < hi; i++)
        if (i == lo || placement_key(loci, ord[i], level) !=
                           placement_key(loci, ord[i - 1], level)) {
            if (na > 0)
                act[2 * na - 1] = (int)i;
            act[2 * na] = (int)i;
            na++;
        }
    act[2 * na - 1] = (int)hi;
    if (na < 2)
        return; /* one child: already in order */
    long out = lo;
    while (na > 0) {
        long w = 0;
        for (long t = 0; t < na; t++) {
            int c = act[2 * t], e = act[2 * t + 1];
            tmp[out++] = ord[c++];
            if (c < e) {
                act[2 * w] = c;
                act[2 * w + 1] = e;
                w++;
            }
        }
        na = w;
    }
    memcpy(ord + lo, tmp + lo, (size_t)(hi - lo) * sizeof *ord);
}

/* Interleave: for level = core, numa, package, node (innermost first),
 * every domain of the level above is rewritten as the round robin of its
 * children at this level. Children keep their ranges, so each child is in
 * its final (interleaved) order when its parent is rewritten. */
static void placement_interleave(const placement_locus_t *loci, int *ord,
                                 int *tmp, int *act, int n)
{
    for (int level = PLACEMENT_LEVELS - 1; level >= 0; level--) {
        long lo = 0;
        while (lo < n) {
            long hi = lo + 1;
            while (hi < n &&
                   placement_same_prefix(loci, ord[hi], ord[lo], level))
                hi++;
            placement_round_robin(loci, ord, tmp, act, lo, hi, level);
            lo = hi;
        }
    }
}

/*
 * Guarantees (proved by tests/unit/test_placement_guarantees.c and
 * test_placement.c; docs/placement.md explains them). Every policy: rank_at is
 * a permutation of 0..n-1 and pos_of its inverse; equal inputs give equal
 * outputs. Notation: D nodes (distinct node ids, -1 counting as one), node
 * index = rank of the id among them; positions are cyclic (vrank v of root r
 * sits at position pos_of[r] + v mod n).
 *
 * interleave, any node sizes:
 *  (I0) round robin: the positions are rounds; round k holds, in increasing
 *       node id, one rank of every node with more than k ranks. So the
 *       first D * (smallest node size) positions put position p on node
 *       index p mod D, and a node's ranks appear in the order of its own
 *       interleave (packages alternate, then NUMA nodes, then cores).
 * interleave, D nodes of m ranks each (n = m D):
 *  (I1) position p is on node index p mod D, for every p: any D cyclically
 *       consecutive positions are on D distinct nodes, so for D >= 2 the
 *       two ring neighbours of every rank are on other nodes;
 *  (I2) D >= f + 1: for every root the members of every up-correction
 *       group (f + 1 consecutive vranks; the root's short group wraps
 *       through vrank 0) are on distinct nodes, and so are the f + 1
 *       allreduce candidate roots. Losing up to f whole nodes leaves a
 *       live member in every full group (f + 1 members);
 *  (I3) (f + 1) divides D: for every root all non-root positions of one
 *       node are in one I(f)-subtree class (v - 1) mod (f + 1). Losing up
 *       to f whole nodes other than the root's leaves a failure-free
 *       subtree (n > f + 1), which the corrected reduce root can answer
 *       from. Not so otherwise: D = 3, f = 1 puts a node in both;
 *  (I4) a binomial edge joins vranks 2^b apart, so it stays inside a node
 *       iff D divides 2^b. D a power of two: for every root exactly D - 1
 *       edges join two nodes (the edges into vranks 1..D-1, the top
 *       log2(D) levels). Otherwise: all n - 1 edges join two nodes (e.g.
 *       D = 3 or 6). If each node holds P packages (P a power of two) with
 *       equal numbers of ranks, exactly D (P - 1) further edges join two
 *       packages of one node (into vranks D..DP-1);
 *  (I5) q = D / (f + 1) a power of two, m >= 2: the I(f)-tree has exactly
 *       D edges between nodes (D - 1 if q = 1), for every root;
 *  (I6) D a power of two: after losing any f whole nodes other than the
 *       root's, no run of consecutive positions that the binomial tree
 *       misses is longer than 2^f - 1 (the single-failure bound of the
 *       opportunistic correction, ALGORITHMS.md section 2). Other D: runs
 *       up to m and more (3 nodes of 4: 3).
 *  Without equal node sizes only (I0) holds: sizes 3 and 1 give the node
 *  sequence A B A A, whose groups of two include {A, A}.
 * locality: each domain is a contiguous run of positions.
 *  (L1) D nodes of m ranks: node index = p / m; D ring pairs cross nodes
 *       (D >= 2); an up-correction group lies on one node whenever it does
 *       not straddle a block boundary, so one node crash can take a whole
 *       group, and all f + 1 candidate roots when the root is at least
 *       f positions before the end of its block;
 *  (L2) root at a block start (e.g. position 0): the binomial tree has
 *       exactly n - m edges between nodes (every vrank >= m), the
 *       opposite of (I4); other roots add a few (4 x 4: 12 to 14).
 * identity: pos = rank; its domains are whatever the launcher's mapping
 *  made them (by slot: like locality at node level; by node: like
 *  interleave at node level, no inner levels).
 *
 * Cost: O(n log n) time, 2n ints of scratch plus the outputs (which serve
 * as scratch before they are filled). Outputs are untouched on error.
 */
ucft_status_t placement_compute(placement_policy_t policy,
                                const placement_locus_t *loci, int n,
                                int *rank_at, int *pos_of)
{
    if (n < 1 || loci == NULL || rank_at == NULL || pos_of == NULL)
        return UCFT_ERR_INVALID_PARAM;
    if (policy != PLACEMENT_INTERLEAVE && policy != PLACEMENT_LOCALITY &&
        policy != PLACEMENT_IDENTITY)
        return UCFT_ERR_INVALID_PARAM;

    int *act = NULL;
    if (policy == PLACEMENT_INTERLEAVE) {
        act = malloc(2 * (size_t)n * sizeof *act);
        if (act == NULL)
            return UCFT_ERR_NO_MEMORY;
    }
    for (int r = 0; r < n; r++)
        rank_at[r] = r;
    if (policy != PLACEMENT_IDENTITY) {
        placement_sort(loci, rank_at, pos_of, n);
        if (policy == PLACEMENT_INTERLEAVE)
            placement_interleave(loci, rank_at, pos_of, act, n);
    }
    for (int p = 0; p < n; p++)
        pos_of[rank_at[p]] = p;
    free(act);
    return UCFT_OK;
}
