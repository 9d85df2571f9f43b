/*
 * In-process failure injection (UCFT_INJECT, docs/launcher.md): a rank
 * kills itself (SIGKILL) just before it sends its k-th message of its c-th
 * call of a given collective, for failures at a precise point of an
 * operation in real runs. This is the library's one deliberate self-kill:
 * it happens only when UCFT_INJECT names this rank.
 *
 * Syntax: specs separated by ';', each a comma-separated list of key=value
 *   rank=R     job rank that dies (required)
 *   op=OP      bcast | reduce | allreduce | barrier | allgather |
 *              reduce_scatter | finalize | agree | allreduce_approx |
 *              shrink | dup | split | create_group (required);
 *              finalize = the corrected barriers inside ucft_finalize
 *              (call 1: before the detector stops, call 2: after it, in
 *              the heartbeat-thread mode only); shrink, dup, split and
 *              create_group = the agreement inside that call
 *   call=C     the C-th call of OP on this rank, 1-based (default 1)
 *   msg=K      die just before sending message K of that call, 1-based
 *              (default 1); 0 = when the call is posted, before any message
 *   flip=B     instead of dying: flip bit B (0 .. 2^20 - 1) of the payload of
 *              message K (msg=K, default 1) of that call, counting only
 *              messages with a payload (collectives/coll_flip.h: bit 0 is
 *              the lowest bit of the first byte; a shorter message is
 *              left alone)
 *   flip_rate=R  instead of dying: corrupt each message of that call with
 *              probability R (one random bit), drawn from seed=S (default
 *              1), rank and message number: the same flips on every run;
 *              may be combined with flip=B
 *   seed=S     the seed of flip_rate
 *   hold=1     die holding slots: just before the SIGKILL, claim one slot
 *              of the shared-memory receive FIFO of every other process
 *              of the node this rank reaches and write none, as a process
 *              killed inside a send does (docs/transport.md; the die
 *              callback the runtime gives does it)
 * e.g. UCFT_INJECT='rank=3,op=allreduce,call=5,msg=2;rank=1,op=bcast',
 * UCFT_INJECT='rank=0,op=allreduce,flip=62' (silent data corruption: the
 * same filter as ucft-sim --flip, for every collective).
 * Calls are counted per operation over every communicator; finalize's
 * barriers count as op=finalize only. A rank that sends fewer than K
 * messages in that call does not die.
 *
 * How: the call that matches is given a transport of its own, a filter in
 * front of the context's transport whose send counts the collective-class
 * messages of that instance (context id, sequence number) and kills the
 * process before the K-th. Everything else goes straight through.
 */
#ifndef UCFT_COMM_COLL_INJECT_H
#define UCFT_COMM_COLL_INJECT_H

#include "ucft.h"
#include "collectives/coll_flip.h"
#include "comm/coll.h"
#include "transport/filter.h"
#include "transport/transport.h"

#include <stddef.h>
#include <stdint.h>

#define CM_INJECT_MAX 16
/* The operations (CM_COLL_*), finalize (CM_COLL_SYNC), ucft_comm_agree
 * (CM_COLL_AGREE), the approximate allreduce (CM_COLL_APPROX), then the
 * agreements inside the calls that make communicators. */
enum {
    CM_INJECT_AGREE = CM_COLL_AGREE,
    CM_INJECT_APPROX = CM_COLL_APPROX,
    CM_INJECT_SHRINK = CM_COLL_NSLOTS,
    CM_INJECT_DUP,
    CM_INJECT_SPLIT,
    CM_INJECT_CREATE,
    CM_INJECT_NOPS
};

typedef struct cm_inject_spec {
    int rank;
    int op; /* CM_COLL_* */
    unsigned call;
    unsigned msg;
    int flip;         /* bit to flip, -1: none */
    double flip_rate; /* 0: none */
    uint64_t seed;    /* of flip_rate */
    int hold;         /* die holding shared-memory FIFO slots */
} cm_inject_spec_t;

/* 1 when the spec corrupts messages instead of killing the rank. */
static inline int cm_inject_is_flip(const cm_inject_spec_t *sp)
{
    return sp->flip >= 0 || sp->flip_rate > 0;
}

/* How the injection kills: the process by default, a recorder in tests. */
typedef void (*cm_inject_die_cb)(void *arg, const cm_inject_spec_t *spec);

typedef struct cm_inject cm_inject_t;

/* The filter transport handed to one matching call. */
typedef struct cm_inject_tp {
    tp_filter_t f; /* first: the collective sees a tp_t; below: real */
    cm_inject_t *inj;
} cm_inject_tp_t;

struct cm_inject {
    cm_inject_spec_t spec[CM_INJECT_MAX];
    size_t n;
    /* After setup: this rank's specs only. */
    unsigned calls[CM_INJECT_NOPS]; /* calls so far, per operation */
    unsigned armed;                 /* bit i: spec i's call is running */
    unsigned ctx_id[CM_INJECT_MAX];
    uint32_t seq[CM_INJECT_MAX];
    unsigned sent[CM_INJECT_MAX];
    tp_t *real;
    const ucft_log_t *log;
    cm_inject_tp_t wrap;
    /* Flip specs: their counters and the corrupted copies (freed by
     * cm_inject_cleanup). */
    coll_flip_t flipst[CM_INJECT_MAX];
    cm_inject_die_cb die;
    void *die_arg;
};

/* Parses `text` (NULL or "" = no injection) into inj->spec. Returns
 * UCFT_OK, or UCFT_ERR_INVALID_PARAM with what is wrong in `err`. Pure:
 * needs neither a context nor a transport. */
ucft_status_t cm_inject_parse(const char *text, cm_inject_t *inj, char *err,
                              size_t errlen);

/* Once the job is known: checks every spec's rank against `size` (the
 * same error convention), keeps the specs of `rank`, and builds the filter
 * in front of `real`. `die` NULL: SIGKILL this process. */
ucft_status_t cm_inject_setup(cm_inject_t *inj, int rank, int size, tp_t *real,
                              const ucft_log_t *log, cm_inject_die_cb die,
                              void *die_arg, char *err, size_t errlen);

/* 1 if some spec concerns this rank (after setup). */
static inline int cm_inject_active(const cm_inject_t *inj)
{
    return inj->n > 0;
}

/* A call of operation `op` (CM_COLL_*, CM_COLL_SYNC included) on (ctx_id, seq)
 * is being posted: counts it and returns the transport it must use (the filter
 * if a spec matches, else `real`). A spec with msg = 0 dies here. */
tp_t *cm_inject_call(cm_inject_t *inj, int op, unsigned ctx_id, uint32_t seq);

/* Frees the corrupted copies of the flip specs (finalize, once no send can
 * be pending). */
void cm_inject_cleanup(cm_inject_t *inj);

/* The name of CM_COLL_* operation `op` as the syntax spells it. */
const char *cm_inject_op_name(int op);

#endif
