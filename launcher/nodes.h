/*
 * Pretend nodes (--nodes K, --map-by): which pretend node each rank runs
 * on, its rank among the ranks of that node, and the node's hostname.
 * Pure bookkeeping, computed once before the ranks start; the PMIx server
 * publishes it (PMIX_NODEID, PMIX_HOSTNAME, PMIX_LOCAL_RANK, ...) and
 * --kill-node uses it to find a node's ranks.
 *
 * Without --nodes the job has one node, node 0, named after this machine:
 * the map is then what ucftrun always published.
 */
#ifndef UCFTRUN_NODES_H
#define UCFTRUN_NODES_H

#include "launcher/opts.h"

#include <stddef.h>

typedef struct ucftrun_nodes {
    int nprocs;
    int nnodes;         /* >= 1 */
    int pretend;        /* --nodes given: hostnames "<host>-n<K>" */
    int *node_of;       /* [nprocs]: the node of each rank */
    int *local_rank_of; /* [nprocs]: index among its node's ranks (by rank) */
    int *node_size;     /* [nnodes]: ranks on each node (may be 0 for slot) */
    char host[256];     /* this machine's name */
} ucftrun_nodes_t;

/*
 * Builds the map of `nprocs` ranks on `nnodes` pretend nodes (0: not
 * pretending, one node) spread by `map_by`:
 *   slot: rank r on node r / ceil(nprocs / nnodes) (consecutive ranks fill
 *         a node; the last nodes may hold fewer ranks, or none: the
 *         option parser rejects the latter, PMIx has no empty nodes);
 *   node: rank r on node r mod nnodes.
 * `host` is this machine's name (NULL: "localhost"). Returns 0, or -1 on
 * bad arguments or out of memory (nothing to free then).
 */
int ucftrun_nodes_init(ucftrun_nodes_t *m, int nprocs, int nnodes,
                       ucftrun_map_by_t map_by, const char *host);
void ucftrun_nodes_free(ucftrun_nodes_t *m);

/* Node `node`'s hostname: "<host>-n<node>" when pretending, else `host`.
 * Returns 0, or -1 if `node` is out of range or `buf` too small. */
int ucftrun_nodes_hostname(const ucftrun_nodes_t *m, int node, char *buf,
                           size_t len);

/* The ranks of `node` in ascending order as "0,4,8" (malloc'ed; "" for an
 * empty node), or NULL when out of memory or out of range. */
char *ucftrun_nodes_ranks(const ucftrun_nodes_t *m, int node);

/* Every node's hostname joined by ',' (for PMIx_generate_regex), and the
 * ranks of every node as "0,1;2,3" (for PMIx_generate_ppn): malloc'ed, NULL
 * when out of memory. */
char *ucftrun_nodes_host_list(const ucftrun_nodes_t *m);
char *ucftrun_nodes_ppn_list(const ucftrun_nodes_t *m);

#endif
