/* The conformance harness on the sim backend: one sim world of n ranks. */
#include "harness.h"

#include "runtime/base/clock.h"
#include "transport/sim/sim.h"

#include <stdlib.h>

#define SIM_HARNESS_MSG_EVENTS     1000000ull
#define SIM_HARNESS_FAILURE_EVENTS 10000000ull

struct tp_harness {
    sim_world_t *world;
};

const char *harness_name(void)
{
    return "sim";
}

tp_harness_t *harness_create(int n, tp_t **tps)
{
    tp_harness_t *h = calloc(1, sizeof(*h));
    sim_params_t p;

    if (h == NULL)
        return NULL;
    sim_params_default(&p, n);
    p.detect_delay_ns = 50 * UCFT_NSEC_PER_USEC;
    p.rndv_min = 64 * 1024; /* T7: large unbuffered sends wait, as on UCX */
    if (sim_world_create(&p, &h->world) != UCFT_OK) {
        free(h);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        tps[i] = sim_world_tp(h->world, i);
    return h;
}

unsigned harness_progress(tp_harness_t *h)
{
    return (unsigned)sim_world_run(h->world, UINT64_MAX, 1);
}

int harness_wait(tp_harness_t *h, harness_pred_t pred, void *arg,
                 harness_wait_t kind)
{
    uint64_t bound = kind == HARNESS_WAIT_MSG ? SIM_HARNESS_MSG_EVENTS
                                              : SIM_HARNESS_FAILURE_EVENTS;
    for (uint64_t i = 0; i < bound; i++) {
        if (pred(arg))
            return 1;
        if (sim_world_run(h->world, UINT64_MAX, 1) == 0)
            return pred(arg);
    }
    return pred(arg);
}

void harness_settle(tp_harness_t *h)
{
    sim_world_run(h->world, UINT64_MAX, SIM_HARNESS_MSG_EVENTS);
}

void harness_kill(tp_harness_t *h, int rank)
{
    sim_world_kill(h->world, rank);
}

void harness_destroy(tp_harness_t *h)
{
    if (h == NULL)
        return;
    sim_world_destroy(h->world);
    free(h);
}
