/*
 * The agreement's state (agree.c), shared with its confirmation under the
 * majority gate (agree_gate.c). Private to collectives/.
 */
#ifndef UCFT_COLL_AGREE_IMPL_H
#define UCFT_COLL_AGREE_IMPL_H

#include "agree.h"

typedef struct agree {
    tp_t *tp;
    const coll_args_t *args;
    uint32_t *val;         /* the value (out: the decision's) */
    coll_agree_hdr_t *hdr; /* out: err, |F| */
    uint32_t *rslot;       /* fast path: the partner's value */
    uint32_t *orig;        /* this rank's contribution */
    const uint8_t *acked;
    size_t words, msg_len;
    int n, me, p, rem, lg;
    unsigned stage, nstage;
    int coord;      /* the lowest rank not known failed */
    int acoord;     /* the round this rank collects reports for, or -1 */
    int aparent;    /* where that collection's report goes (-1: to no one,
                       this rank is acoord) */
    int qcoord;     /* a QUERY not taken yet: its round's coordinator, or -1 */
    int qfrom;      /* ... and its sender */
    int hsent;      /* the rank this rank last sent HELP to, or -1 */
    int dcoord;     /* the round whose decision this rank holds, or n */
    int fwd;        /* the round whose decision it forwarded down, or -1 */
    int help_to;    /* HELP owed to, or -1 */
    int rnext;      /* next rank a REPORT may be owed to */
    int qnext;      /* next rank a QUERY may be owed to */
    int dnext;      /* next rank a decision may be owed to */
    int npend;      /* collection: reports still awaited */
    uint32_t qslot; /* the QUERY / HELP receive's payload */
    uint32_t qsend; /* the QUERY being sent: its round */
    ucft_status_t status;
    uint8_t slow, decided, done, cleaned, in_start, helped;
    uint8_t round, have_dec, out_pending, fposted, asent;
    uint8_t fr_busy, fs_busy, cr_busy, br_busy, sr_busy;
    uint8_t cr_posting, br_posting; /* inside post_ctrl / post_big */
    uint8_t *lfail; /* ranks known failed (n bits), NULL: none */
    /* Slow-path storage, one allocation (slab). */
    unsigned char *slab;
    unsigned char *rbig; /* REPORT / DECIDE receive */
    unsigned char *obuf; /* this rank's undecided report */
    unsigned char *dmsg; /* the decision, as a message */
    unsigned char *abuf; /* collection: its report (a decision or the AND) */
    uint8_t *got;        /* collection: ranks whose reports it holds */
    uint8_t *ackand;     /* collection: AND of their acknowledged sets */
    uint8_t *pend;       /* collection: tree children awaited */
    uint8_t *qowe;       /* QUERYs owed */
    uint8_t *owe;        /* decisions owed */
    uint8_t *askers;     /* collection: the ranks that queried this rank */
    uint8_t *rowe;       /* REPORTs owed */
    uint8_t *asked;      /* every rank that asked this rank for help */
    uint32_t *acc;       /* collection: AND of the undecided reports' values */
    tp_req_t fr, fs, cr, br, sr;
    unsigned kb;        /* kinds: AG_KIND_* + kb (0, or AG_CONFIRM_KB) */
    struct agree *conf; /* the confirmation once it runs (gate), or NULL */
} agree_t;

/* The confirmation's kinds: the agreement's + 16 (coll_op.h, 24..31). */
#define AG_CONFIRM_KB (COLL_KIND_AGREE_CONFIRM_FIRST - COLL_KIND_AGREE_FIRST)
/* Its value: a decision's 64-bit hash, then its complement. */
#define AG_CONFIRM_WORDS 4

/* The state the driver allocates (coll_agree_era_ops.state_size): the
 * agreement first (the state pointer is its), then room for the
 * confirmation, which the agreement runs only under the gate. */
typedef struct agree_pair {
    agree_t a;
    agree_t c;
    coll_args_t cargs;
    uint32_t cbuf[3 * (AG_CONFIRM_WORDS + 2)]; /* buf_mult 3 of its len */
} agree_pair_t;

static inline int ag_bm_get(const uint8_t *b, int r)
{
    return (b[r >> 3] >> (r & 7)) & 1;
}

/* agree.c: one agreement's ops (the confirmation runs them too). */
ucft_status_t ag_era_init(agree_t *s, tp_t *tp, const coll_args_t *args,
                          void *buf);
ucft_status_t ag_era_start(agree_t *s);
void ag_era_failure(agree_t *s, int rank);
void ag_era_cleanup(agree_t *s);
int ag_era_idle(const agree_t *s);
void ag_era_destroy(agree_t *s);
/* Ends this rank's part with `st` (once; the driver is told unless inside
 * start). */
void ag_finish(agree_t *s, ucft_status_t st);

/* agree_gate.c: this rank decided (val, hdr and F final): runs the
 * confirmation, which ends the agreement (ag_finish) with UCFT_OK or
 * UCFT_ERR_PROC_FAILED. */
void ag_confirm_start(agree_t *s);

#endif
