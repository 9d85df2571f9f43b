/*
 * ucft-topo online: run as every rank of a job under a launcher (ucftrun,
 * mpirun, prterun); each rank calls ucft_init, rank 0 reads the world
 * communicator's loci and map (ucft_comm_query_placement: the map the
 * collectives use, UCFT_PLACEMENT applied by the runtime) and prints the
 * report of topo_report(); then every rank finalizes.
 */
#ifndef UCFT_TOOLS_TOPO_ONLINE_H
#define UCFT_TOOLS_TOPO_ONLINE_H

#include "topo_report.h"

typedef struct topo_online_opts {
    int f;    /* -1: the communicator's f (UCFT_F), at most ranks - 1 */
    int root; /* checked against the job size after ucft_init */
    topo_op_t op;
    const char *dot; /* NULL: no DOT file */
    int summary;
} topo_online_opts_t;

/* The whole online run at this rank. Returns the exit status: 0 ok, 1
 * runtime error (init, query, DOT file, finalize), 2 bad options (--f or
 * --root too large for the job, or a bad UCFT_* variable that ucft_init
 * rejected); every rank returns 2 alike, messages come from rank 0. */
int topo_online_main(const topo_online_opts_t *o);

/* 1 when this process is a rank other than 0 of a PMIx job (PMIX_RANK set
 * and not "0"): it keeps its messages to itself, rank 0 says them. */
int topo_quiet(void);

#endif
