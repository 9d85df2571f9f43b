/*
 * Pretend nodes (see nodes.h).
 */
#include "launcher/nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ucftrun_nodes_init(ucftrun_nodes_t *m, int nprocs, int nnodes,
                       ucftrun_map_by_t map_by, const char *host)
{
    int per_node;

    memset(m, 0, sizeof(*m));
    if (nprocs < 1 || nnodes < 0)
        return -1;
    m->pretend = nnodes > 0;
    m->nprocs = nprocs;
    m->nnodes = nnodes > 0 ? nnodes : 1;
    snprintf(m->host, sizeof(m->host), "%s", host != NULL ? host : "localhost");
    m->node_of = calloc((size_t)nprocs, sizeof(*m->node_of));
    m->local_rank_of = calloc((size_t)nprocs, sizeof(*m->local_rank_of));
    m->node_size = calloc((size_t)m->nnodes, sizeof(*m->node_size));
    if (m->node_of == NULL || m->local_rank_of == NULL ||
        m->node_size == NULL) {
        ucftrun_nodes_free(m);
        return -1;
    }
    per_node = (nprocs + m->nnodes - 1) / m->nnodes;
    for (int r = 0; r < nprocs; r++) {
        int node = map_by == UCFTRUN_MAP_NODE ? r % m->nnodes : r / per_node;

        m->node_of[r] = node;
        /* Ranks are visited in ascending order: the count so far is the
         * rank's index on its node. */
        m->local_rank_of[r] = m->node_size[node]++;
    }
    return 0;
}

void ucftrun_nodes_free(ucftrun_nodes_t *m)
{
    free(m->node_of);
    free(m->local_rank_of);
    free(m->node_size);
    m->node_of = m->local_rank_of = m->node_size = NULL;
}

int ucftrun_nodes_hostname(const ucftrun_nodes_t *m, int node, char *buf,
                           size_t len)
{
    int n;

    if (node < 0 || node >= m->nnodes)
        return -1;
    if (m->pretend)
        n = snprintf(buf, len, "%s-n%d", m->host, node);
    else
        n = snprintf(buf, len, "%s", m->host);
    return n >= 0 && (size_t)n < len ? 0 : -1;
}

/* Appends the ranks of `node` ("a,b,c") to s at *len (s has room). */
static void append_ranks(const ucftrun_nodes_t *m, int node, char *s,
                         size_t cap, size_t *len)
{
    int first = 1;

    for (int r = 0; r < m->nprocs; r++) {
        if (m->node_of[r] != node)
            continue;
        *len += (size_t)snprintf(s + *len, cap - *len, first ? "%d" : ",%d", r);
        first = 0;
    }
}

char *ucftrun_nodes_ranks(const ucftrun_nodes_t *m, int node)
{
    size_t cap = (size_t)m->nprocs * 12 + 1, len = 0;
    char *s;

    if (node < 0 || node >= m->nnodes || (s = malloc(cap)) == NULL)
        return NULL;
    s[0] = '\0';
    append_ranks(m, node, s, cap, &len);
    return s;
}

char *ucftrun_nodes_host_list(const ucftrun_nodes_t *m)
{
    size_t each = strlen(m->host) + 16, cap = (size_t)m->nnodes * each + 1;
    size_t len = 0;
    char *s = malloc(cap);

    if (s == NULL)
        return NULL;
    s[0] = '\0';
    for (int k = 0; k < m->nnodes; k++) {
        if (k > 0)
            s[len++] = ',';
        if (ucftrun_nodes_hostname(m, k, s + len, cap - len) != 0) {
            free(s);
            return NULL;
        }
        len += strlen(s + len);
    }
    return s;
}

char *ucftrun_nodes_ppn_list(const ucftrun_nodes_t *m)
{
    size_t cap = (size_t)m->nprocs * 12 + (size_t)m->nnodes + 1, len = 0;
    char *s = malloc(cap);

    if (s == NULL)
        return NULL;
    s[0] = '\0';
    for (int k = 0; k < m->nnodes; k++) {
        if (k > 0) {
            s[len++] = ';';
            s[len] = '\0';
        }
        append_ranks(m, k, s, cap, &len);
    }
    return s;
}
