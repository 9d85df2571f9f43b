/*
 * The text report of ucft-topo (topo_report.h): domains, mapping, the tree
 * of the operation, and the counts that show what a placement policy buys.
 * Vranks are positions relative to the root (coll_vrank_of); every tree is
 * taken from the same headers the algorithms use (tree_binomial.h,
 * itree.h), so the report shows exactly what the collectives do.
 */
#include "topo_report.h"

#include "collectives/itree.h"
#include "collectives/tree_binomial.h"

#include <stdlib.h>
#include <string.h>

static const char *const topo_op_names[] = {"bcast", "reduce", "allreduce"};

ucft_status_t topo_op_parse(const char *name, topo_op_t *op)
{
    for (int i = 0; name != NULL && op != NULL && i < 3; i++)
        if (strcmp(name, topo_op_names[i]) == 0) {
            *op = (topo_op_t)i;
            return UCFT_OK;
        }
    return UCFT_ERR_INVALID_PARAM;
}

const char *topo_op_name(topo_op_t op)
{
    return (int)op >= 0 && (int)op < 3 ? topo_op_names[op] : "?";
}

int topo_view_rank(const topo_view_t *w, int v)
{
    return coll_rank_of(&w->args, v, w->p->root, w->p->n);
}

int topo_view_parent(const topo_view_t *w, int v)
{
    return w->p->op == TOPO_OP_BCAST
               ? coll_binomial_parent(v)
               : itree_parent_in(v, w->p->f, itree_flat(w->p->n));
}

int topo_view_child(const topo_view_t *w, int v, unsigned i)
{
    return w->p->op == TOPO_OP_BCAST
               ? coll_binomial_child(v, i, w->p->n)
               : itree_child_in(v, i, w->p->n, w->p->f, itree_flat(w->p->n));
}

static int32_t topo_id(int32_t id)
{
    return id < 0 ? -1 : id;
}

static int topo_node(const topo_view_t *w, int rank)
{
    return topo_id(w->p->loci[rank].node);
}

/* 1: the two ranks are on one node but on two known, different packages. */
static int topo_cross_pkg(const topo_view_t *w, int a, int b)
{
    const placement_locus_t *x = &w->p->loci[a], *y = &w->p->loci[b];
    return topo_node(w, a) == topo_node(w, b) && x->package >= 0 &&
           y->package >= 0 && x->package != y->package;
}

/* An id, or "-" when unknown. */
static const char *topo_fmt(char *buf, size_t size, int32_t id)
{
    if (id < 0)
        return "-";
    snprintf(buf, size, "%d", (int)id);
    return buf;
}

/* Member k (0..f) of group g by subtree, k = f + 1 the root when it joins
 * g; -1 for none. */
static int topo_member(int g, int k, int n, int f)
{
    if (k <= f)
        return itree_member(g, k, n, f);
    return itree_root_in_group(n, f) && g == itree_full_groups(n, f) ? 0 : -1;
}

/* Longest run of cyclically consecutive vranks the binomial tree does not
 * reach (dead or cut off) when one whole node other than the root's is
 * lost, worst node; the opportunistic correction needs a distance of that
 * many offsets (split between its two sides). O(n x nodes): -1 (not computed)
 * above TOPO_RUN_WORK. */
#define TOPO_RUN_WORK 200000000.0

static int topo_worst_run(const topo_view_t *w)
{
    int n = w->p->n, worst = 0, nodes = 0;
    int32_t root_node = topo_node(w, w->p->root);
    for (int i = 0; i < n; i++)
        nodes += i == 0 || topo_node(w, w->by_domain[i]) !=
                               topo_node(w, w->by_domain[i - 1]);
    if ((double)n * nodes > TOPO_RUN_WORK)
        return -1;
    int *node_of = w->scratch; /* node of vrank v */
    for (int v = 0; v < n; v++)
        node_of[v] = topo_node(w, topo_view_rank(w, v));
    for (int i = 0; i < n; i++) {
        int32_t lost = topo_node(w, w->by_domain[i]);
        if ((i > 0 && lost == topo_node(w, w->by_domain[i - 1])) ||
            lost == root_node)
            continue;
        /* Parents precede children in vrank order: one pass. */
        w->mark[0] = 1;
        for (int v = 1; v < n; v++)
            w->mark[v] = w->mark[coll_binomial_parent(v)] && node_of[v] != lost;
        /* Vrank 0 (the root) is reached: no run wraps around. */
        int run = 0;
        for (int v = 1; v < n; v++) {
            run = w->mark[v] ? 0 : run + 1;
            worst = run > worst ? run : worst;
        }
    }
    return worst;
}

static void topo_count(const topo_view_t *w, topo_stats_t *s)
{
    const topo_report_params_t *p = w->p;
    int n = p->n, f = p->f;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < n; i++)
        s->nodes += i == 0 || topo_node(w, w->by_domain[i]) !=
                                  topo_node(w, w->by_domain[i - 1]);
    s->tree_edges = n - 1;
    for (int v = 1; v < n; v++) {
        int a = topo_view_rank(w, v),
            b = topo_view_rank(w, topo_view_parent(w, v));
        s->tree_cross_node += topo_node(w, a) != topo_node(w, b);
        s->tree_cross_pkg += topo_cross_pkg(w, a, b);
    }
    if (p->op == TOPO_OP_BCAST) {
        for (int v = 0; n > 1 && v < n; v++)
            s->ring_cross_node += topo_node(w, topo_view_rank(w, v)) !=
                                  topo_node(w, topo_view_rank(w, (v + 1) % n));
        s->worst_run = topo_worst_run(w);
        return;
    }
    /* Groups: f + 1 consecutive vranks, the root joining the short last
     * one; compare the nodes of every pair of members. */
    s->groups = itree_full_groups(n, f) + itree_root_in_group(n, f);
    for (int g = 0; g < s->groups; g++) {
        int shared = 0;
        for (int k = 0; k <= f + 1 && !shared; k++)
            for (int l = k + 1; l <= f + 1 && !shared; l++) {
                int a = topo_member(g, k, n, f), b = topo_member(g, l, n, f);
                shared = a >= 0 && b >= 0 &&
                         topo_node(w, topo_view_rank(w, a)) ==
                             topo_node(w, topo_view_rank(w, b));
            }
        s->groups_shared += shared;
    }
    /* I(f)-subtree classes per node: walk the ranks node by node
     * (locality order), stamping each class with the node's first index. */
    for (int k = 0; k <= f; k++)
        w->scratch[k] = -1;
    for (int i = 0, j; i < n; i = j) {
        int cnt = 0;
        for (j = i; j < n && topo_node(w, w->by_domain[j]) ==
                                 topo_node(w, w->by_domain[i]);
             j++) {
            int v = coll_vrank_of(&w->args, w->by_domain[j], p->root, n);
            if (v > 0 && w->scratch[itree_subtree(v, f)] != i) {
                w->scratch[itree_subtree(v, f)] = i;
                cnt++;
            }
        }
        s->max_subtrees = cnt > s->max_subtrees ? cnt : s->max_subtrees;
    }
    if (p->op == TOPO_OP_ALLREDUCE) {
        s->candidates = f + 1;
        for (int i = 0; i <= f; i++) {
            int fresh = 1;
            for (int k = 0; k < i; k++)
                fresh &= topo_node(w, topo_view_rank(w, i)) !=
                         topo_node(w, topo_view_rank(w, k));
            s->candidate_nodes += fresh;
        }
    }
}

static void topo_print_domains(const topo_view_t *w, FILE *o)
{
    const topo_report_params_t *p = w->p;
    char b[4][16];
    fprintf(o, "## domains (rank: node package numa core; - unknown)\n");
    for (int r = 0; r < p->n; r++) {
        const placement_locus_t *l = &p->loci[r];
        fprintf(o, "rank %d: node %s package %s numa %s core %s\n", r,
                topo_fmt(b[0], 16, l->node), topo_fmt(b[1], 16, l->package),
                topo_fmt(b[2], 16, l->numa), topo_fmt(b[3], 16, l->core));
    }
    for (int i = 0, j; i < p->n; i = j) {
        int nd = topo_node(w, w->by_domain[i]);
        fprintf(o, "node %s:", topo_fmt(b[0], 16, nd));
        for (j = i; j < p->n && topo_node(w, w->by_domain[j]) == nd; j++)
            fprintf(o, " %d", w->by_domain[j]);
        fprintf(o, "\n");
    }
}

static void topo_print_mapping(const topo_view_t *w, FILE *o)
{
    const topo_report_params_t *p = w->p;
    char b[16];
    fprintf(o, "## mapping (position -> rank -> node; vrank from root %d)\n",
            p->root);
    for (int pos = 0; pos < p->n; pos++) {
        int r = w->rank_at[pos];
        fprintf(o, "pos %d -> rank %d -> node %s (vrank %d)\n", pos, r,
                topo_fmt(b, sizeof b, topo_node(w, r)),
                coll_vrank_of(&w->args, r, p->root, p->n));
    }
}

/* One rank as "rank R [node N]", with "*" if it is on another node than
 * `from` and "+" if on another package of the same node. */
static void topo_print_rank(const topo_view_t *w, FILE *o, int r, int from)
{
    char b[16];
    fprintf(o, "%d [node %s]%s", r, topo_fmt(b, sizeof b, topo_node(w, r)),
            from < 0                                ? ""
            : topo_node(w, r) != topo_node(w, from) ? "*"
            : topo_cross_pkg(w, r, from)            ? "+"
                                                    : "");
}

static void topo_print_tree(const topo_view_t *w, FILE *o)
{
    const topo_report_params_t *p = w->p;
    int n = p->n, f = p->f;
    if (p->op == TOPO_OP_BCAST)
        fprintf(o, "## tree: interleaved binomial broadcast tree\n");
    else
        fprintf(o, "## tree: I(%d)-tree of corrected reduce (%d subtrees)\n", f,
                itree_root_nchildren(n, f));
    fprintf(o, "# vrank: rank -> children in send order (* other node, + "
               "other package)\n");
    for (int v = 0; v < n; v++) {
        int r = topo_view_rank(w, v);
        if (topo_view_child(w, v, 0) < 0)
            continue;
        fprintf(o, "v%d: ", v);
        topo_print_rank(w, o, r, -1);
        fprintf(o, " ->");
        for (unsigned i = 0;; i++) {
            int c = topo_view_child(w, v, i);
            if (c < 0)
                break;
            fprintf(o, " ");
            topo_print_rank(w, o, topo_view_rank(w, c), r);
        }
        fprintf(o, "\n");
    }
    if (p->op == TOPO_OP_BCAST) {
        fprintf(o, "## correction ring (vrank: rank, left and right "
                   "neighbours)\n");
        for (int v = 0; v < n; v++) {
            int r = topo_view_rank(w, v);
            fprintf(o, "v%d: ", v);
            topo_print_rank(w, o, r, -1);
            fprintf(o, " left ");
            topo_print_rank(w, o, topo_view_rank(w, (v + n - 1) % n), r);
            fprintf(o, " right ");
            topo_print_rank(w, o, topo_view_rank(w, (v + 1) % n), r);
            fprintf(o, "\n");
        }
        return;
    }
    fprintf(o, "## up-correction groups (members by subtree; the root joins "
               "the short last group)\n");
    int groups = itree_full_groups(n, f) + itree_root_in_group(n, f);
    for (int g = 0; g < groups; g++) {
        fprintf(o, "group %d:", g);
        for (int k = 0; k <= f; k++) {
            int v = itree_member(g, k, n, f);
            if (v < 0)
                continue;
            fprintf(o, " v%d=", v);
            topo_print_rank(w, o, topo_view_rank(w, v), -1);
        }
        if (g == itree_full_groups(n, f)) {
            fprintf(o, " v0=");
            topo_print_rank(w, o, p->root, -1);
            fprintf(o, " (root)");
        }
        fprintf(o, "\n");
    }
    if (p->op == TOPO_OP_ALLREDUCE) {
        fprintf(o, "## allreduce candidate roots (in the order tried)\n");
        for (int i = 0; i <= f; i++) {
            fprintf(o, "candidate %d: ", i);
            topo_print_rank(w, o, topo_view_rank(w, i), -1);
            fprintf(o, "\n");
        }
    }
}

static void topo_print_counts(const topo_view_t *w, const topo_stats_t *s,
                              FILE *o)
{
    fprintf(o, "## counts\n");
    fprintf(o, "nodes: %d\n", s->nodes);
    fprintf(o, "tree edges: %d\n", s->tree_edges);
    fprintf(o, "tree edges crossing nodes: %d\n", s->tree_cross_node);
    fprintf(o, "tree edges crossing packages inside a node: %d\n",
            s->tree_cross_pkg);
    if (w->p->op == TOPO_OP_BCAST) {
        fprintf(o, "ring pairs crossing nodes: %d of %d\n", s->ring_cross_node,
                w->p->n > 1 ? w->p->n : 0);
        if (s->worst_run >= 0)
            fprintf(o, "longest unreached run after losing one node: %d\n",
                    s->worst_run);
        else
            fprintf(o,
                    "longest unreached run after losing one node: not "
                    "computed (ranks x nodes > %.0f)\n",
                    TOPO_RUN_WORK);
        return;
    }
    fprintf(o, "groups with two members on one node: %d of %d\n",
            s->groups_shared, s->groups);
    fprintf(o, "most I(f)-subtrees holding ranks of one node: %d of %d\n",
            s->max_subtrees, itree_root_nchildren(w->p->n, w->p->f));
    if (w->p->op == TOPO_OP_ALLREDUCE)
        fprintf(o, "candidate roots on distinct nodes: %d of %d\n",
                s->candidate_nodes, s->candidates);
}

/* Copy a given map and invert it; UCFT_ERR_INVALID_PARAM unless it is a
 * permutation of 0..n-1. */
static ucft_status_t topo_given_map(const int *given, int n, int *rank_at,
                                    int *pos_of)
{
    for (int r = 0; r < n; r++)
        pos_of[r] = -1;
    for (int pos = 0; pos < n; pos++) {
        int r = given[pos];
        if (r < 0 || r >= n || pos_of[r] >= 0)
            return UCFT_ERR_INVALID_PARAM;
        rank_at[pos] = r;
        pos_of[r] = pos;
    }
    return UCFT_OK;
}

ucft_status_t topo_report(const topo_report_params_t *p, topo_stats_t *stats)
{
    if (p == NULL || p->loci == NULL || p->n < 1 || p->f < 0 || p->f >= p->n ||
        p->root < 0 || p->root >= p->n || (int)p->op < 0 || (int)p->op > 2)
        return UCFT_ERR_INVALID_PARAM;
    topo_view_t w = {.p = p};
    size_t bytes = (size_t)p->n * sizeof(int);
    ucft_status_t st = UCFT_ERR_NO_MEMORY;
    w.scratch = malloc(bytes);
    w.mark = malloc((size_t)p->n);
    w.rank_at = malloc(bytes);
    w.pos_of = malloc(bytes);
    w.by_domain = malloc(bytes);
    if (w.scratch == NULL || w.mark == NULL || w.rank_at == NULL ||
        w.pos_of == NULL || w.by_domain == NULL)
        goto out;
    st = p->rank_at != NULL
             ? topo_given_map(p->rank_at, p->n, w.rank_at, w.pos_of)
             : placement_compute(p->policy, p->loci, p->n, w.rank_at, w.pos_of);
    if (st == UCFT_OK)
        st = placement_compute(PLACEMENT_LOCALITY, p->loci, p->n, w.by_domain,
                               w.scratch);
    if (st != UCFT_OK)
        goto out;
    w.map = (coll_map_t){.n = p->n, .rank = w.rank_at, .pos = w.pos_of};
    w.args = (coll_args_t){.root = p->root, .f = p->f, .map = &w.map};

    topo_stats_t s;
    topo_count(&w, &s);
    if (p->out != NULL) {
        fprintf(p->out,
                "# ucft-topo: %d ranks on %d nodes, placement %s, op %s, "
                "root %d, f %d\n",
                p->n, s.nodes, placement_policy_name(p->policy),
                topo_op_name(p->op), p->root, p->f);
        if (!p->summary) {
            topo_print_domains(&w, p->out);
            topo_print_mapping(&w, p->out);
            topo_print_tree(&w, p->out);
        }
        topo_print_counts(&w, &s, p->out);
    }
    if (p->dot != NULL)
        topo_dot_write(&w, p->dot);
    if (stats != NULL)
        *stats = s;
out:
    free(w.scratch);
    free(w.mark);
    free(w.rank_at);
    free(w.pos_of);
    free(w.by_domain);
    return st;
}
