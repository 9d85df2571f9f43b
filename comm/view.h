/*
 * A communicator's view of the transport (comm/view.c): a tp_t whose ranks
 * are the communicator's, over the context's transport whose ranks are
 * the job's. Sends go to the member's job rank with the sender's job rank
 * in the tag (transport/tag.h); receives and probes name sources by comm
 * rank and report them so; a message from a job rank that is no member
 * reports source UCFT_TAG_MAX_RANKS - 1, which no algorithm accepts.
 * Everything else passes through. The world needs none (identity).
 */
#ifndef UCFT_COMM_VIEW_H
#define UCFT_COMM_VIEW_H

#include "transport/filter.h"

typedef struct cm_view {
    tp_filter_t f;      /* first: the view is its tp; below: the context's */
    int me_job;         /* this rank's job rank */
    const int *members; /* comm rank -> job rank [tp.size] */
    const int *job_to_rank; /* job rank -> comm rank or -1 [base->size] */
} cm_view_t;

void cm_view_init(cm_view_t *v, tp_t *base, int rank, int size,
                  const int *members, const int *job_to_rank);

#endif
