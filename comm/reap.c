/*
 * Freed communicators given back (comm/comm.h, cm_comm_reap): a freed
 * communicator stays listed, closed, while anything of this rank may still
 * name it, and is freed at the first free or maker after that.
 */
#include "comm/comm.h"

#include <stdlib.h>

/* Whether anything of this rank still names a freed communicator: a
 * collective instance (running, finishing or lingering: a transport
 * callback through its view may still come), a pending point-to-point
 * request, or a communicator state with receives in flight. */
static int comm_in_use(cm_layer_t *cl, const struct ucft_comm *comm)
{
    const cm_coll_t *heads[3] = {&cl->colls, &cl->finishing, &cl->zombies};
    for (int h = 0; h < 3; h++)
        for (const struct cm_coll *c = heads[h]->next; c != heads[h];
             c = c->next)
            if (c->comm == comm)
                return 1;
    for (const struct ucft_request *r = cl->pending.next; r != &cl->pending;
         r = r->next)
        if (r->comm == comm)
            return 1;
    return !cm_coll_cs_comm_idle(comm);
}

void cm_comm_reap(cm_layer_t *cl)
{
    for (struct ucft_comm **p = &cl->comms, *c; (c = *p) != NULL;) {
        if (!c->freed || c == &cl->world) {
            p = &c->next;
            continue;
        }
        cm_coll_cs_close(c);
        if (comm_in_use(cl, c)) {
            p = &c->next;
            continue;
        }
        *p = c->next;
        cm_coll_cs_destroy(c);
        place_map_cleanup(&c->place);
        cm_comm_destroy(c);
        free(c);
    }
}
