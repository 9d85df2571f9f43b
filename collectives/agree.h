/*
 * Fault-tolerant agreement (agree.c): every live rank of a communicator
 * ends with the same value (the bitwise AND of a vector of 32-bit words
 * over the ranks that contributed), the same set F of ranks that did not
 * contribute, and the same error bit, with any number of failures before
 * or during the call while one rank lives (the MPI chapter's
 * MPI_COMM_AGREE; docs/comms.md has the protocol and its proof).
 *
 * The op buffer (coll_args_t.len = coll_agree_len(words)): `words` value
 * words (in: this rank's contribution; out: the AND), then the header
 * (out: err, |F|). F itself and each rank's acknowledged failures (the
 * input of the error bit) do not fit a fixed-size buffer: the driver
 * hands the acknowledged set in with coll_agree_set_acked after init and
 * reads F with coll_agree_failed after completion.
 */
#ifndef UCFT_COLL_AGREE_H
#define UCFT_COLL_AGREE_H

#include "coll_op.h"

#include <stddef.h>
#include <stdint.h>

/* Message kinds (enum coll_kind: 8..15). */
enum {
    AG_KIND_FAST = 8,    /* the recursive-doubling exchange */
    AG_KIND_HELP = 12,   /* "I cannot finish fast": to the coordinator */
    AG_KIND_QUERY = 13,  /* the coordinator asks for a report */
    AG_KIND_REPORT = 14, /* a rank's contribution or decision */
    AG_KIND_DECIDE = 15, /* the decision */
};

typedef struct coll_agree_hdr {
    uint32_t err;     /* 1: F holds a rank some contributor had not acked */
    uint32_t nfailed; /* |F| */
} coll_agree_hdr_t;

static inline size_t coll_agree_len(size_t words)
{
    return words * sizeof(uint32_t) + sizeof(coll_agree_hdr_t);
}

/* Bytes of a bitmap of n ranks. */
static inline size_t coll_agree_bm_bytes(int n)
{
    return ((size_t)n + 7) / 8;
}

/* The ranks this rank has acknowledged as failed (a bitmap of tp->size
 * bits, kept alive by the caller until cleanup), NULL: none. After init,
 * before start. */
void coll_agree_set_acked(void *state, const uint8_t *acked);

/* After completion: F as a bitmap of tp->size bits, or NULL when F is
 * empty. Valid until cleanup. */
const uint8_t *coll_agree_failed(const void *state);

/* What a communicator-making agreement decides for parent rank `me` of n
 * (comm/create.c): the members of its new communicator as parent ranks in
 * new rank order, in out[n]; returns how many (0: none for this rank).
 *   COLL_MEMBERS_DUP     every rank;
 *   COLL_MEMBERS_SHRINK  every rank not in F;
 *   COLL_MEMBERS_SPLIT   slots[2 r], slots[2 r + 1] = rank r's color and
 *                        key (COLL_SPLIT_UNDEF: none): the ranks not in F
 *                        of this rank's color, by (key as int32, rank).
 * Every survivor of the agreement holds the same slots and F, so all the
 * members of one new communicator compute the same list. */
enum { COLL_MEMBERS_DUP, COLL_MEMBERS_SHRINK, COLL_MEMBERS_SPLIT };
#define COLL_SPLIT_UNDEF 0xfffffffeu
int coll_agree_members(int kind, int n, int me, const uint32_t *slots,
                       const uint8_t *failed, int *out);

extern const coll_op_ops_t coll_agree_era_ops;

#endif
