/*
 * UCFT_QUORUM's majority gate for the collectives (coll_args_t.gate;
 * collectives/coll_gate.c; docs/detector.md, "No split brain").
 * The gate asks about the instance's transport ranks (an epoch's dense
 * indices, or the communicator's ranks); the quorum is the world's
 * (runtime/quorum.h). A result is covered when the world ranks holding it
 * cover the quorum, or when every member of the communicator holds it:
 * then no member on the side that goes on lacks it, whichever side that
 * is. The second rule lets a communicator smaller than half the world
 * complete while all of its members are alive; after a failure of one of
 * them its results need the first (so, in practice, a shrink).
 */
#include "comm/coll.h"
#include "comm/comm.h"
#include "comm/repair.h"
#include "runtime/context.h"

#include <stdlib.h>

static int coll_covers(void *arg, const uint8_t *held, int n)
{
    cm_coll_t *c = arg;
    struct ucft_comm *comm = c->comm;
    struct ucft_context *ctx = c->cl->ctx;
    unsigned char *w = calloc((size_t)ctx->boot.size, 1);
    int all = 1, ok;

    if (w == NULL)
        return 0; /* withheld: never a result the gate did not allow */
    for (int i = 0; i < n; i++) {
        int cr = c->ep != NULL ? c->ep->live[i] : i;
        if (held[i])
            w[cm_comm_job_rank(comm, cr)] = 1;
    }
    for (int cr = 0; cr < comm->size && all; cr++)
        all = w[cm_comm_job_rank(comm, cr)];
    ok = all || rt_monitor_quorum_covers(ctx, w);
    free(w);
    return ok;
}

void cm_coll_gate(cm_coll_t *c)
{
    if (!c->cl->ctx->monitor.quorum_on) {
        c->args.gate = NULL;
        return;
    }
    c->gate = (coll_gate_t){.covers = coll_covers, .arg = c};
    c->args.gate = &c->gate;
}
