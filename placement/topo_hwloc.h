/*
 * Loci from hwloc (private to collectives/ and the tools): a cpuset on a
 * given topology -> package / NUMA node / core of a placement locus. The
 * topology may be the real machine or a synthetic one (tests, ucft-topo):
 * nothing here asks the running system where a process is.
 *
 * A cpuset names the PUs a rank may run on (hwloc os indexes). For each
 * level the locus holds the hwloc logical index of the one object of that
 * level the cpuset touches; a cpuset touching several objects of a level
 * (e.g. unbound: the whole machine) gives -1 at that level and below, and
 * a level the topology lacks (no package objects) gives -1 at that level
 * only.
 */
#ifndef UCFT_PLACEMENT_TOPO_HWLOC_H
#define UCFT_PLACEMENT_TOPO_HWLOC_H

#include "placement.h"

#include <hwloc.h>
#include <stddef.h>

/* Load a synthetic topology ("pack:2 numa:2 core:8 pu:2"); the caller
 * destroys it with hwloc_topology_destroy(). UCFT_ERR_INVALID_PARAM on a
 * description hwloc rejects (*topo untouched). */
ucft_status_t topo_synthetic_load(const char *desc, hwloc_topology_t *topo);

/* Package, NUMA node and core of `cpuset` on `topo`. The string is a PMIx
 * PMIX_CPUSET ("hwloc:0-1") or a bare hwloc list ("0-1,4"). The node field
 * is left alone. UCFT_ERR_INVALID_PARAM on a malformed or empty set or one
 * naming PUs the topology does not have (locus untouched). */
ucft_status_t topo_cpuset_locus(hwloc_topology_t topo, const char *cpuset,
                                placement_locus_t *locus);

/* The cpuset of core `core` (logical index) as a list ("2-3"), written
 * into buf. UCFT_ERR_INVALID_PARAM if there is no such core or buf is
 * too small. */
ucft_status_t topo_core_cpuset(hwloc_topology_t topo, int core, char *buf,
                               size_t size);

/* Parse a bare hwloc list ("0-3,8") strictly (digits, ',' and ranges
 * a-b with a <= b, ids below 2^20) into set. hwloc's own parser accepts
 * trailing junk and loops forever on "-3", so every string from outside
 * goes through this first. -1 on a malformed or empty list. */
int topo_list_parse(hwloc_bitmap_t set, const char *list);

#endif
