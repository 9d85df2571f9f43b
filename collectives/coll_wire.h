/*
 * Collective messages as bytes: the checks a receiver makes on a message's
 * tag and body before it uses it, as pure functions (bytes and the
 * operation's shape in, a verdict or decoded fields out; no transport, no
 * logging, no state). The algorithms call them (coll_op.h,
 * reduce_corrected_phase.c, copy_chan.c) and so do the fuzz targets
 * (tests/fuzz/). What happens to a message that fails: docs/wire.md.
 * Bodies are read with memcpy: a buffer need not be aligned.
 */
#ifndef UCFT_COLL_WIRE_H
#define UCFT_COLL_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* The sender (tag source field) of a collective message of a job of `n`
 * ranks, or -1 when it is no rank of the job. */
int coll_wire_src(uint64_t tag, int n);

/* The shape of a corrected reduce / allreduce tree message, as a peer
 * calling with this rank's arguments builds it: a header of `hfix` bytes
 * (uint32 flags; with the count and list schemes, uint32 count too), the
 * value (`len` bytes), and for the list scheme `count` uint32 ranks. */
typedef struct coll_wire_tree {
    size_t hfix;    /* 4 or 8 */
    size_t len;     /* value bytes */
    int list;       /* the list scheme: ranks follow the value */
    uint32_t cap;   /* at most this many ranks (2(f + 1)) */
    uint32_t known; /* flags this operation sends */
    uint32_t n;     /* ranks of the job */
} coll_wire_tree_t;

typedef enum coll_wire_verdict {
    COLL_WIRE_OK,   /* use it */
    COLL_WIRE_SIZE, /* a size no peer with our arguments sends: mismatch */
    COLL_WIRE_BAD,  /* malformed: dropped */
} coll_wire_verdict_t;

/* Checks a tree message of `length` bytes in buf (at least `length` bytes
 * readable). On COLL_WIRE_BAD *why says what is wrong. */
coll_wire_verdict_t coll_wire_tree_check(const coll_wire_tree_t *shape,
                                         const void *buf, size_t length,
                                         const char **why);

/* The copy channel of corrected-batched (copy_chan.h): a message is a run
 * of entries, each uint32 instance sequence, uint32 payload length (at
 * most `max`), then the payload padded to 8 bytes. Every instance is
 * within 2^30 of the first entry's (serial order), so that lo and hi
 * bound them all. */
typedef struct coll_wire_batch {
    unsigned n;      /* good entries */
    size_t len;      /* their bytes: the prefix of the message kept */
    uint32_t lo, hi; /* lowest and highest sequence among them (n > 0) */
    size_t bad_off;  /* where the first bad entry starts (why != NULL) */
    const char *why; /* NULL: every entry was good */
} coll_wire_batch_t;

/* Scans a message of `length` bytes for its good entries (the first bad
 * one ends the scan). */
void coll_wire_batch_scan(const void *data, size_t length, uint32_t max,
                          coll_wire_batch_t *out);

/* Sequence a is after b (serial arithmetic over 32 bits). */
static inline int coll_wire_after(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}

/* The payload of the entry for instance `seq` in the first `len` bytes of
 * a scanned message (its good prefix), with its length in *plen; NULL if
 * none. */
const void *coll_wire_batch_find(const void *data, size_t len, uint32_t seq,
                                 size_t *plen);

/* An agreement's REPORT or DECIDE message (collectives/agree.c): this
 * header, `words` value words, then two bitmaps of n bits: A (a report
 * without a decision: the AND of its reporters' acknowledged failures; a
 * decision: F) and G (a report: the ranks whose reports it carries; a
 * decision: none). `coord` names the coordinator of the round the message
 * belongs to (a report, a decision taken from a round) or n (a decision
 * taken on the fast path). */
typedef struct coll_wire_agree_hdr {
    uint8_t decided; /* 0 or 1 */
    uint8_t err;     /* 0 or 1 */
    uint16_t pad;    /* 0 */
    uint32_t n;      /* ranks of the communicator */
    uint32_t coord;  /* 0..n (n: no round) */
} coll_wire_agree_hdr_t;

static inline size_t coll_wire_agree_len(size_t words, int n)
{
    return sizeof(coll_wire_agree_hdr_t) + words * sizeof(uint32_t) +
           2 * (((size_t)n + 7) / 8);
}

/* Checks a REPORT (decision 0) or DECIDE (decision 1: it must carry one,
 * from a round, and no G) of `length` bytes for an agreement of n ranks
 * and `words` value words: the length, the header's fields and the
 * bitmaps' unused bits. NULL when it is well formed, else what is
 * wrong. */
const char *coll_wire_agree_check(const void *buf, size_t length, size_t words,
                                  int n, int decision);

/* A revoke (comm/revoke.c, sent by collectives/rbcast.c): two uint32, the
 * communicator's context id and uid. 1 and the words in fact[] when
 * `length` bytes are one. */
int coll_wire_fact(const void *buf, size_t length, uint32_t fact[2]);

#endif
