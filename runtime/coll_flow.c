/*
 * Flow control of reduce loops. A reduce does not synchronise: a leaf
 * sends its value and is done, so in a loop of reduces the leaves run
 * ahead of the ranks that combine, without bound, and their messages pile
 * up unmatched there (every receive then pays for the pile; with 8 ranks on
 * 2 cores a loop of 20,000 reduces took 3-10x longer per operation than
 * one of 5,000, docs/bench.md).
 *
 * After every UCFT_REDUCE_WINDOW reduces in a row on a communicator, a
 * corrected barrier (RT_COLL_SYNC) is posted without waiting; the reduce
 * that ends the next window waits for it before it posts its own barrier.
 * A rank that passes that wait knows every live rank has posted the
 * previous barrier, so no rank runs more than two windows ahead of
 * another. Every rank takes these decisions at the same place in the
 * sequence of the communicator's collectives (they count the same calls),
 * so the barriers match. An allreduce or a barrier synchronises by itself
 * and restarts the count; a broadcast neither counts nor restarts it.
 *
 * The barrier is corrected: with up to f failures it completes, with more
 * it ends with an error and never hangs. Its outcome is not the reduce's:
 * an error is logged (the reduces themselves report what they see).
 */
#include "runtime/coll.h"
#include "runtime/context.h"

static void flow_log(const struct ucft_comm *comm, ucft_status_t st)
{
    if (st != UCFT_OK)
        ucft_debug(&comm->ctx->log, "reduce flow-control barrier: %s",
                   ucft_status_string(st));
}

/* A collective's request always completes: the wait releases it and
 * clears flow_req. */
static void flow_wait(struct ucft_comm *comm)
{
    if (comm->flow_req != NULL)
        flow_log(comm, ucft_wait(&comm->flow_req, NULL));
}

void rt_coll_flow(struct ucft_comm *comm, int op)
{
    unsigned window = comm->ctx->cfg.reduce_window;

    if (op == RT_COLL_ALLREDUCE || op == RT_COLL_BARRIER ||
        op == RT_COLL_SYNC) {
        comm->flow_run = 0;
        return;
    }
    if (op != RT_COLL_REDUCE || window == 0 || ++comm->flow_run < window)
        return;
    comm->flow_run = 0;
    flow_wait(comm);
    /* A post that fails creates no request: flow_req stays NULL. */
    flow_log(comm, rt_coll_post_flow(comm, &comm->flow_req));
}

void rt_coll_flow_end(struct ucft_comm *comm)
{
    flow_wait(comm);
    comm->flow_run = 0;
}
