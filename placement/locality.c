/*
 * Where the ranks run (see locality.h).
 */
#include "placement/locality.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOCUS_KEY  "ucft.locus"
#define LOCUS_TEXT 320 /* 4 ints and a hostname of up to 255 bytes */

int locality_encode(const placement_locus_t *own, const char *host, char *buf,
                    size_t len)
{
    int n;

    if (host == NULL || host[0] == '\0' || strpbrk(host, " \t\n") != NULL)
        host = "?"; /* a name with blanks would not parse back */
    n = snprintf(buf, len, "%d %d %d %d %s", (int)own->node, (int)own->package,
                 (int)own->numa, (int)own->core, host);
    return n >= 0 && (size_t)n < len ? n : -1;
}

int locality_decode(const char *text, size_t textlen, placement_locus_t *l,
                    char *host, size_t hostlen)
{
    char copy[LOCUS_TEXT], name[LOCUS_TEXT];
    int v[4], used = 0;

    /* The published bytes need not end with a NUL: copy them first. */
    if (textlen == 0 || textlen >= sizeof(copy))
        return -1;
    memcpy(copy, text, textlen);
    copy[textlen] = '\0';
    if (sscanf(copy, "%d %d %d %d %319s%n", &v[0], &v[1], &v[2], &v[3], name,
               &used) != 5 ||
        copy[used] != '\0' || strlen(name) >= hostlen)
        return -1;
    for (int i = 0; i < 4; i++) {
        if (v[i] < -1)
            return -1;
    }
    *l = (placement_locus_t){v[0], v[1], v[2], v[3]};
    snprintf(host, hostlen, "%s", name);
    return 0;
}

int locality_assign_nodes(placement_locus_t *loci, const char *const *hosts,
                          int n, locality_source_t *source)
{
    int all_ids = 1, nnodes = 0;
    int *first;

    for (int r = 0; r < n; r++)
        all_ids &= loci[r].node >= 0;
    first = malloc((size_t)n * sizeof(*first)); /* rank naming each node */
    if (first == NULL)
        return -1;
    *source = all_ids ? RT_LOCALITY_NODEID : RT_LOCALITY_HOSTNAME;
    for (int r = 0; r < n; r++) {
        int k;

        /* Quadratic in the number of nodes only; ids stay as the launcher
         * gave them when it gave them all. */
        for (k = 0; k < nnodes; k++) {
            if (all_ids ? loci[first[k]].node == loci[r].node
                        : strcmp(hosts[first[k]], hosts[r]) == 0)
                break;
        }
        if (k == nnodes)
            first[nnodes++] = r;
        if (!all_ids)
            loci[r].node = k;
    }
    free(first);
    return nnodes;
}

/* This rank's own description, from what its launcher says about it. */
static void own_locus(boot_t *b, const ucft_log_t *log, placement_locus_t *own)
{
    char loc[256];

    *own = (placement_locus_t){b->node_id_known ? b->node_id : -1, -1, -1, -1};
    if (boot_locality_string(b, loc, sizeof(loc)) &&
        placement_locus_parse(loc, own) != UCFT_OK)
        ucft_warn(log,
                  "PMIX_LOCALITY_STRING '%s' is malformed: placing this "
                  "rank as unbound",
                  loc);
}

ucft_status_t locality_publish(boot_t *b, const ucft_log_t *log)
{
    placement_locus_t own;
    char text[LOCUS_TEXT];
    int len;

    if (b->singleton)
        return UCFT_OK;
    own_locus(b, log, &own);
    len = locality_encode(&own, b->hostname, text, sizeof(text));
    if (len < 0) {
        ucft_error(log, "cannot describe this rank's locus (hostname '%s')",
                   b->hostname);
        return UCFT_ERR_INTERNAL;
    }
    return boot_put(b, LOCUS_KEY, text, (size_t)len);
}

ucft_status_t locality_gather(boot_t *b, const ucft_log_t *log,
                              placement_locus_t *loci, int *nnodes,
                              locality_source_t *source)
{
    int n = b->size, k;
    char **hosts;
    ucft_status_t st = UCFT_OK;

    if (b->singleton) {
        own_locus(b, log, &loci[0]);
        loci[0].node = 0;
        *nnodes = 1;
        *source = RT_LOCALITY_SINGLE;
        return UCFT_OK;
    }
    hosts = calloc((size_t)n, sizeof(*hosts));
    if (hosts == NULL)
        return UCFT_ERR_NO_MEMORY;
    for (int r = 0; r < n && st == UCFT_OK; r++) {
        void *text = NULL;
        size_t len = 0;

        hosts[r] = malloc(LOCUS_TEXT);
        if (hosts[r] == NULL) {
            st = UCFT_ERR_NO_MEMORY;
            break;
        }
        /* Collected by the start-up fence: a local lookup, no waiting. */
        st = boot_get(b, LOCUS_KEY, r, &text, &len);
        if (st == UCFT_ERR_PROC_FAILED)
            /* Every survivor reads the same collected data: all stop here
             * alike (ucft_init fails with this status everywhere). */
            ucft_error(log,
                       "rank %d died during start-up: it published no "
                       "description of where it runs, so the placement "
                       "cannot be computed",
                       r);
        if (st == UCFT_OK &&
            locality_decode(text, len, &loci[r], hosts[r], LOCUS_TEXT) != 0) {
            ucft_error(log, "the locus published by rank %d is malformed", r);
            st = UCFT_ERR_BOOTSTRAP;
        }
        free(text);
    }
    if (st == UCFT_OK) {
        k = locality_assign_nodes(loci, (const char *const *)hosts, n, source);
        if (k < 0)
            st = UCFT_ERR_NO_MEMORY;
        else
            *nnodes = k;
    }
    for (int r = 0; r < n; r++)
        free(hosts[r]);
    free(hosts);
    return st;
}
