/*
 * In-process failure injection (UCFT_INJECT, docs/launcher.md): a rank
 * kills itself (SIGKILL) just before it sends its k-th message of its c-th
 * call of a given collective, for failures at a precise point of an
 * operation in real runs. This is the library's one deliberate self-kill:
 * it happens only when UCFT_INJECT names this rank.
 *
 * Syntax: specs separated by ';', each a comma-separated list of key=value
 *   rank=R     job rank that dies (required)
 *   op=OP      bcast | reduce | allreduce | barrier | finalize | agree |
 *              shrink | dup | split | create_group (required);
 *              finalize = the corrected barriers inside ucft_finalize
 *              (call 1: before the detector stops, call 2: after it, in
 *              the heartbeat-thread mode only); shrink, dup, split and
 *              create_group = the agreement inside that call
 *   call=C     the C-th call of OP on this rank, 1-based (default 1)
 *   msg=K      die just before sending message K of that call, 1-based
 *              (default 1); 0 = when the call is posted, before any message
 * e.g. UCFT_INJECT='rank=3,op=allreduce,call=5,msg=2;rank=1,op=bcast'.
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
#include "comm/coll.h"
#include "transport/transport.h"

#include <stddef.h>
#include <stdint.h>

#define CM_INJECT_MAX 16
/* The operations (CM_COLL_*), finalize (CM_COLL_SYNC), then the
 * agreements: ucft_comm_agree's own and those inside the calls that make
 * communicators. */
enum {
    CM_INJECT_AGREE = CM_COLL_SYNC + 1,
    CM_INJECT_SHRINK,
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
} cm_inject_spec_t;

/* How the injection kills: the process by default, a recorder in tests. */
typedef void (*cm_inject_die_cb)(void *arg, const cm_inject_spec_t *spec);

typedef struct cm_inject cm_inject_t;

/* The filter transport handed to one matching call. */
typedef struct cm_inject_tp {
    tp_t base; /* first: the collective sees a tp_t */
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

/* The name of CM_COLL_* operation `op` as the syntax spells it. */
const char *cm_inject_op_name(int op);

#endif
