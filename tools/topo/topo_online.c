/*
 * ucft-topo online (topo_online.h): the report of the running job. The
 * loci are the ones the runtime gathered in its start-up modex and the map
 * is the one it gave the world communicator's collectives, so the report
 * shows exactly what the collectives of this job do under the
 * UCFT_PLACEMENT in force; nothing is recomputed from the environment.
 */
#include "topo_online.h"

#include "ucft.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int topo_quiet(void)
{
    const char *r = getenv("PMIX_RANK");
    return r != NULL && strcmp(r, "0") != 0;
}

/* Rank 0: the report of the placement `a` on stdout (and o->dot). */
static int topo_online_report(const ucft_placement_attr_t *a, int f,
                              const topo_online_opts_t *o)
{
    placement_policy_t policy;
    placement_locus_t *loci = calloc((size_t)a->size, sizeof *loci);
    FILE *dot = NULL;
    int rc = 1;

    if (loci == NULL) {
        fprintf(stderr, "ucft-topo: out of memory for %d ranks\n", a->size);
        return 1;
    }
    if (placement_policy_parse(a->policy, &policy) != UCFT_OK) {
        fprintf(stderr, "ucft-topo: the runtime reports unknown policy '%s'\n",
                a->policy);
        goto out;
    }
    for (int r = 0; r < a->size; r++)
        loci[r] = (placement_locus_t){a->loci[r].node, a->loci[r].package,
                                      a->loci[r].numa, a->loci[r].core};
    if (o->dot != NULL && (dot = fopen(o->dot, "w")) == NULL) {
        fprintf(stderr, "ucft-topo: cannot write %s: %s\n", o->dot,
                strerror(errno));
        goto out;
    }
    printf("# online: the running job; loci and map of the world "
           "communicator from the runtime (UCFT_PLACEMENT=%s)\n",
           a->policy);
    topo_report_params_t p = {.loci = loci,
                              .n = a->size,
                              .policy = policy,
                              .rank_at = a->rank_at,
                              .f = f,
                              .root = o->root,
                              .op = o->op,
                              .summary = o->summary,
                              .out = stdout,
                              .dot = dot};
    ucft_status_t st = topo_report(&p, NULL);
    if (st != UCFT_OK)
        fprintf(stderr, "ucft-topo: report failed: %s\n",
                ucft_status_string(st));
    rc = st == UCFT_OK ? 0 : 1;
    if (dot != NULL && fclose(dot) != 0) {
        fprintf(stderr, "ucft-topo: cannot write %s\n", o->dot);
        rc = 1;
    }
    fflush(stdout);
out:
    free(loci);
    return rc;
}

int topo_online_main(const topo_online_opts_t *o)
{
    ucft_context_h ctx;
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        if (!topo_quiet())
            fprintf(stderr, "ucft-topo: ucft_init failed: %s\n",
                    ucft_status_string(st));
        return st == UCFT_ERR_INVALID_PARAM ? 2 : 1;
    }
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(w), n = ucft_comm_size(w), rc = 0;
    int f = o->f >= 0 ? o->f : ucft_comm_get_f(w);
    ucft_placement_attr_t a;

    /* Every rank takes the same decisions (same options, same n), so a
     * bad option ends every rank with 2 and rank 0 says why. */
    if (o->f >= n || o->root >= n) {
        if (rank == 0)
            fprintf(stderr,
                    "ucft-topo: --%s %d must be below the number of ranks "
                    "(%d)\nTry 'ucft-topo --help'.\n",
                    o->f >= n ? "f" : "root", o->f >= n ? o->f : o->root, n);
        rc = 2;
    } else if ((st = ucft_comm_query_placement(w, &a)) != UCFT_OK) {
        fprintf(stderr, "ucft-topo: rank %d: placement query failed: %s\n",
                rank, ucft_status_string(st));
        rc = 1;
    } else if (rank == 0) {
        /* UCFT_F may exceed what n ranks allow; show the largest f. */
        rc = topo_online_report(&a, f < n ? f : n - 1, o);
    }
    st = ucft_finalize(ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft-topo: rank %d: ucft_finalize failed: %s\n", rank,
                ucft_status_string(st));
        rc = rc ? rc : 1;
    }
    return rc;
}
