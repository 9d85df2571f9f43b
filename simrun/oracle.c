/* The oracle per operation (simrun/oracle.h): broadcast and ring here,
 * the reducing operations in oracle_reduce.c, allgather and reduce-scatter
 * in oracle_gather.c. */
#include "simrun/oracle.h"

#include <string.h>

/* Broadcast: the root's pattern everywhere. */
static void bcast_fill(void *buf, const coll_args_t *args, int rank, int size)
{
    unsigned char *b = buf;
    (void)size;
    for (size_t i = 0; i < args->len; i++)
        b[i] = rank == args->root ? coll_pattern(args, args->root, i) : 0;
}

static int bcast_check(const void *buf, const coll_args_t *args, int rank,
                       int size, const uint8_t *dead)
{
    const unsigned char *b = buf;
    (void)rank, (void)size, (void)dead;
    for (size_t i = 0; i < args->len; i++)
        if (b[i] != coll_pattern(args, args->root, i))
            return 0;
    return 1;
}

/* Ring exchange: every rank's pattern in its first half; the left
 * neighbour's arrives in the second. */
static void ring_fill(void *buf, const coll_args_t *args, int rank, int size)
{
    unsigned char *b = buf;
    (void)size;
    for (size_t i = 0; i < args->len; i++) {
        b[i] = coll_pattern(args, rank, i);
        b[args->len + i] = 0;
    }
}

static int ring_check(const void *buf, const coll_args_t *args, int rank,
                      int size, const uint8_t *dead)
{
    const unsigned char *b = buf;
    int left = (rank + size - 1) % size;
    (void)dead;
    for (size_t i = 0; i < args->len; i++)
        if (b[args->len + i] != coll_pattern(args, left, i))
            return 0;
    return 1;
}

static const coll_oracle_t oracles[] = {
    {bcast_fill, bcast_check}, {rc_fill, rc_check_root},
    {rc_fill, rc_check_all},   {ring_fill, ring_check},
    {ag_fill, ag_check},       {rc_fill, rs_check},
    {agree_fill, agree_check}, {NULL, NULL},
};
static const char *const names[] = {"bcast", "reduce",    "allreduce",
                                    "ring",  "allgather", "reduce_scatter",
                                    "agree"};

const coll_oracle_t *coll_oracle_of(const coll_op_ops_t *op)
{
    if (strcmp(op->op, "allreduce_approx") == 0)
        return &coll_oracle_gossip;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(op->op, names[i]) == 0)
            return &oracles[i];
    return &oracles[sizeof(names) / sizeof(names[0])];
}
