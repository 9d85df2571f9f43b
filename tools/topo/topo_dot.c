/*
 * Graphviz DOT of a ucft-topo view (topo_report.h): one cluster per node
 * (the failure domain), inside it one per package and NUMA node; a graph
 * node per rank labelled "rank / vrank"; tree edges parent -> child (red
 * when they cross nodes, orange across packages); the correction ring
 * (bcast) or the up-correction groups (reduce, allreduce) as dashed
 * undirected edges that do not constrain the layout.
 * Render: dot -Tsvg out.dot > out.svg (fdp for large jobs).
 */
#include "topo_report.h"

#include "collectives/itree.h"

static int32_t dot_id(int32_t id)
{
    return id < 0 ? -1 : id;
}

/* Level 0 node, 1 package, 2 numa. */
static int32_t dot_key(const placement_locus_t *l, int level)
{
    return dot_id(level == 0 ? l->node : level == 1 ? l->package : l->numa);
}

static const char *const dot_level_names[] = {"node", "package", "numa"};

/* Open the clusters of rank r's domains from `level` down. Unknown
 * package / NUMA ids get no cluster of their own. */
static int dot_open(FILE *dot, const placement_locus_t *l, int level,
                    int *cluster)
{
    int opened = 0;
    for (int d = level; d < 3; d++) {
        int32_t id = dot_key(l, d);
        if (d > 0 && id < 0)
            break;
        fprintf(dot, "%*ssubgraph cluster_%d {\n", 2 * (d + 1), "",
                (*cluster)++);
        if (id < 0)
            fprintf(dot, "%*slabel=\"%s unknown\";\n", 2 * (d + 2), "",
                    dot_level_names[d]);
        else
            fprintf(dot, "%*slabel=\"%s %d\";\n", 2 * (d + 2), "",
                    dot_level_names[d], (int)id);
        opened++;
    }
    return opened;
}

static void dot_close(FILE *dot, int depth, int upto)
{
    for (int d = depth; d > upto; d--)
        fprintf(dot, "%*s}\n", 2 * d, "");
}

static void dot_edge(FILE *dot, const topo_view_t *w, int a, int b,
                     const char *style)
{
    const placement_locus_t *x = &w->p->loci[a], *y = &w->p->loci[b];
    const char *color = "black";
    if (dot_id(x->node) != dot_id(y->node))
        color = "red";
    else if (x->package >= 0 && y->package >= 0 && x->package != y->package)
        color = "orange";
    fprintf(dot, "  r%d -> r%d [color=%s%s];\n", a, b, color, style);
}

void topo_dot_write(const topo_view_t *w, FILE *dot)
{
    const topo_report_params_t *p = w->p;
    int n = p->n, f = p->f, cluster = 0, depth = 0;
    fprintf(dot,
            "digraph ucft_topo {\n"
            "  label=\"%d ranks, placement %s, op %s, root %d, f %d\";\n"
            "  node [shape=box, fontsize=10];\n",
            n, placement_policy_name(p->policy), topo_op_name(p->op), p->root,
            f);
    for (int i = 0; i < n; i++) {
        int r = w->by_domain[i];
        const placement_locus_t *l = &p->loci[r];
        if (i > 0) { /* close the domains r does not share */
            const placement_locus_t *q = &p->loci[w->by_domain[i - 1]];
            int same = 0;
            while (same < depth && dot_key(l, same) == dot_key(q, same))
                same++;
            dot_close(dot, depth, same);
            depth = same;
        }
        depth += dot_open(dot, l, depth, &cluster);
        fprintf(dot, "%*sr%d [label=\"%d / v%d\"];\n", 2 * (depth + 1), "", r,
                r, coll_vrank_of(&w->args, r, p->root, n));
    }
    dot_close(dot, depth, 0);
    for (int v = 1; v < n; v++)
        dot_edge(dot, w, topo_view_rank(w, topo_view_parent(w, v)),
                 topo_view_rank(w, v), "");
    const char *extra = ", style=dashed, dir=none, constraint=false";
    if (p->op == TOPO_OP_BCAST) {
        for (int v = 0; n > 2 && v < n; v++)
            dot_edge(dot, w, topo_view_rank(w, v),
                     topo_view_rank(w, (v + 1) % n), extra);
    } else {
        /* Each group as a chain of its members (the root last). */
        int groups = itree_full_groups(n, f) + itree_root_in_group(n, f);
        for (int g = 0; g < groups; g++) {
            int prev = -1;
            for (int k = 0; k <= f + 1; k++) {
                int v = k <= f ? itree_member(g, k, n, f)
                        : g == itree_full_groups(n, f) ? 0
                                                       : -1;
                if (v < 0)
                    continue;
                if (prev >= 0)
                    dot_edge(dot, w, topo_view_rank(w, prev),
                             topo_view_rank(w, v), extra);
                prev = v;
            }
        }
    }
    fprintf(dot, "}\n");
}
