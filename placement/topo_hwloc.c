/*
 * Loci from PMIx locality strings and from cpusets (placement.h,
 * topo_hwloc.h), with hwloc bitmaps.
 *
 * Levels are resolved outermost first (package, NUMA node, core). Each is
 * one of: exactly one object -> its logical index; several objects (the
 * rank may run on more than one) -> -1 here and at every level below, the
 * rank being unbound from there down; no object of that kind at all (the
 * topology or the string lacks the level) -> -1 here only.
 */
#include "topo_hwloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TOPO_MAX_ID (1L << 20)

enum { TOPO_NONE = -2, TOPO_MULTI = -3 };

int topo_list_parse(hwloc_bitmap_t set, const char *list)
{
    const char *p = list;
    if (list == NULL || *list == '\0')
        return -1;
    for (;;) {
        long a = 0, b;
        if (!isdigit((unsigned char)*p))
            return -1;
        while (isdigit((unsigned char)*p) && a < TOPO_MAX_ID)
            a = a * 10 + (*p++ - '0');
        b = a;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                return -1;
            b = 0;
            while (isdigit((unsigned char)*p) && b < TOPO_MAX_ID)
                b = b * 10 + (*p++ - '0');
        }
        if (a >= TOPO_MAX_ID || b >= TOPO_MAX_ID || b < a)
            return -1;
        if (*p == '\0')
            break;
        if (*p++ != ',')
            return -1;
    }
    return hwloc_bitmap_list_sscanf(set, list) == 0 && !hwloc_bitmap_iszero(set)
               ? 0
               : -1;
}

/* One level's value from the set of objects it names. */
static int32_t topo_level(hwloc_const_bitmap_t objs)
{
    int w = hwloc_bitmap_weight(objs);
    if (w == 0)
        return TOPO_NONE;
    if (w != 1)
        return TOPO_MULTI;
    return (int32_t)hwloc_bitmap_first(objs);
}

/* Apply the rule of the file comment and write the locus. */
static void topo_set_locus(placement_locus_t *locus, int32_t pkg, int32_t numa,
                           int32_t core)
{
    int32_t v[3] = {pkg, numa, core};
    int unbound = 0;
    for (int i = 0; i < 3; i++) {
        unbound |= v[i] == TOPO_MULTI;
        if (unbound || v[i] < 0)
            v[i] = -1;
    }
    locus->package = v[0];
    locus->numa = v[1];
    locus->core = v[2];
}

/*
 * PMIx locality string: ':'-separated fields, each a two-letter code (SK
 * package, L3 L2 L1 caches, CR core, HT hardware thread, NM NUMA node)
 * followed by an hwloc list of logical indexes, e.g.
 * "SK0:L30:L20:L10:CR0:HT0-1:NM0". PMIx omits a field whose list would be
 * empty; some versions prefix the string with "hwloc:". Every field is
 * checked; only SK, NM and CR feed the locus.
 */
ucft_status_t placement_locus_parse(const char *locality,
                                    placement_locus_t *locus)
{
    static const char *const codes[] = {"SK", "NM", "CR", "L3",
                                        "L2", "L1", "HT"};
    enum { NCODES = sizeof codes / sizeof *codes };
    if (locus == NULL)
        return UCFT_ERR_INVALID_PARAM;
    if (locality == NULL || *locality == '\0') {
        topo_set_locus(locus, TOPO_MULTI, TOPO_MULTI, TOPO_MULTI);
        return UCFT_OK;
    }
    if (strncasecmp(locality, "hwloc:", 6) == 0)
        locality += 6;

    int32_t val[NCODES];
    for (int c = 0; c < NCODES; c++)
        val[c] = TOPO_NONE;
    char *copy = strdup(locality);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    ucft_status_t st = UCFT_OK;
    if (copy == NULL || set == NULL) {
        st = UCFT_ERR_NO_MEMORY;
        goto out;
    }
    for (char *field = copy, *next; field != NULL; field = next) {
        next = strchr(field, ':');
        if (next != NULL)
            *next++ = '\0';
        int c = 0;
        while (c < NCODES && strncmp(field, codes[c], 2) != 0)
            c++;
        if (c == NCODES || val[c] != TOPO_NONE ||
            topo_list_parse(set, field + 2) != 0) {
            st = UCFT_ERR_INVALID_PARAM;
            goto out;
        }
        val[c] = topo_level(set);
    }
    topo_set_locus(locus, val[0], val[1], val[2]);
out:
    hwloc_bitmap_free(set);
    free(copy);
    return st;
}

ucft_status_t topo_synthetic_load(const char *desc, hwloc_topology_t *topo)
{
    hwloc_topology_t t;
    if (desc == NULL || topo == NULL || hwloc_topology_init(&t) != 0)
        return UCFT_ERR_INVALID_PARAM;
    if (hwloc_topology_set_synthetic(t, desc) != 0 ||
        hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return UCFT_ERR_INVALID_PARAM;
    }
    *topo = t;
    return UCFT_OK;
}

/* Logical indexes of the objects of `type` whose cpuset meets `set`. */
static int32_t topo_touched(hwloc_topology_t topo, hwloc_const_bitmap_t set,
                            hwloc_obj_type_t type, hwloc_bitmap_t objs)
{
    hwloc_bitmap_zero(objs);
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_covering_cpuset_by_type(topo, set, type,
                                                           o)) != NULL)
        hwloc_bitmap_set(objs, o->logical_index);
    return topo_level(objs);
}

ucft_status_t topo_cpuset_locus(hwloc_topology_t topo, const char *cpuset,
                                placement_locus_t *locus)
{
    if (topo == NULL || cpuset == NULL || locus == NULL)
        return UCFT_ERR_INVALID_PARAM;
    if (strncasecmp(cpuset, "hwloc:", 6) == 0)
        cpuset += 6;
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), objs = hwloc_bitmap_alloc();
    ucft_status_t st = UCFT_OK;
    if (set == NULL || objs == NULL) {
        st = UCFT_ERR_NO_MEMORY;
        goto out;
    }
    if (topo_list_parse(set, cpuset) != 0 ||
        !hwloc_bitmap_isincluded(set,
                                 hwloc_topology_get_topology_cpuset(topo))) {
        st = UCFT_ERR_INVALID_PARAM;
        goto out;
    }
    int32_t pkg = topo_touched(topo, set, HWLOC_OBJ_PACKAGE, objs);
    int32_t numa = topo_touched(topo, set, HWLOC_OBJ_NUMANODE, objs);
    int32_t core = topo_touched(topo, set, HWLOC_OBJ_CORE, objs);
    topo_set_locus(locus, pkg, numa, core);
out:
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(objs);
    return st;
}

ucft_status_t topo_core_cpuset(hwloc_topology_t topo, int core, char *buf,
                               size_t size)
{
    if (topo == NULL || buf == NULL || core < 0)
        return UCFT_ERR_INVALID_PARAM;
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)core);
    if (o == NULL || o->cpuset == NULL)
        return UCFT_ERR_INVALID_PARAM;
    int len = hwloc_bitmap_list_snprintf(NULL, 0, o->cpuset);
    if (len < 0 || (size_t)len >= size)
        return UCFT_ERR_INVALID_PARAM;
    hwloc_bitmap_list_snprintf(buf, size, o->cpuset);
    return UCFT_OK;
}
