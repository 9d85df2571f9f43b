/*
 * Where the ranks of the job run: the locus (placement/placement.h) of
 * every rank, found once at ucft_init, identical at every rank, so that
 * every rank computes the same placement map from it.
 *
 * Each rank describes itself and publishes that through the PMIx modex
 * (key "ucft.locus", before the start-up fence that carries the worker
 * addresses, so it costs no extra fence); after the fence every rank reads
 * every peer's description. Reading the launcher's keys about every peer
 * directly would not give every rank the same answer: a launcher gives
 * PMIX_LOCALITY_STRING only for the ranks of the reader's own node, and
 * PMIx 4.2.2 answers a plain PMIX_NODEID of a peer on another node with
 * NOT-FOUND (docs/launcher.md). A rank's description:
 *   node     its PMIX_NODEID, -1 when the launcher gives none;
 *   host     its PMIX_HOSTNAME (or gethostname());
 *   package, numa, core  from its PMIX_LOCALITY_STRING
 *            (placement_locus_parse); -1 when unbound (no string, or a
 *            NULL string as mpirun and prterun give unbound ranks).
 * The node of the locus is the PMIX_NODEID when every rank has one;
 * otherwise the hostnames, compared as strings and numbered densely in
 * order of first appearance by rank (rank 0's host is node 0); a singleton
 * is node 0.
 */
#ifndef UCFT_PLACEMENT_LOCALITY_H
#define UCFT_PLACEMENT_LOCALITY_H

#include "placement/placement.h"
#include "runtime/base/log.h"
#include "bootstrap/bootstrap.h"

#include <stddef.h>

/* How the node ids of locality_gather were found. */
typedef enum locality_source {
    RT_LOCALITY_NODEID = 0,   /* PMIX_NODEID of every rank */
    RT_LOCALITY_HOSTNAME = 1, /* hostnames numbered in rank order */
    RT_LOCALITY_SINGLE = 2,   /* one rank, no launcher: node 0 */
} locality_source_t;

/* Publishes this rank's description (call before the collecting start-up
 * fence). A singleton has nothing to publish. */
ucft_status_t locality_publish(boot_t *b, const ucft_log_t *log);

/* After the fence: the loci of all b->size ranks into loci[], the number
 * of distinct nodes into *nnodes and how node ids were found into
 * *source. UCFT_ERR_BOOTSTRAP if a rank's description cannot be read,
 * UCFT_ERR_NO_MEMORY. */
ucft_status_t locality_gather(boot_t *b, const ucft_log_t *log,
                              placement_locus_t *loci, int *nnodes,
                              locality_source_t *source);

/* The pure parts, for tests. */

/* A rank's description as published: "NODE PACKAGE NUMA CORE HOST" in
 * decimal (portable between machines). Returns the length written
 * (excluding the NUL), or -1 if it does not fit. */
int locality_encode(const placement_locus_t *own, const char *host, char *buf,
                    size_t len);
/* Parses such a text: locus and hostname (into host, hostlen bytes).
 * Returns 0, or -1 if malformed. */
int locality_decode(const char *text, size_t textlen, placement_locus_t *l,
                    char *host, size_t hostlen);

/* Node ids of n ranks: loci[r].node kept when every rank has one (>= 0);
 * otherwise hosts[r] numbered densely in order of first appearance.
 * Returns the number of distinct nodes (>= 1), or -1 when out of memory.
 * *source says which rule applied. */
int locality_assign_nodes(placement_locus_t *loci, const char *const *hosts,
                          int n, locality_source_t *source);

#endif
