/*
 * The detector's control messages as bytes: every check a receiver makes
 * before it believes one, as pure functions (bytes and the job's size in,
 * a verdict or a decoded struct out; no transport, no logging, no state),
 * so that the fuzz targets (tests/fuzz/) call exactly the code the
 * standing receives, the heartbeat, the failure broadcast and the
 * reconciliation call. The formats are in transport/ctrl_kinds.h; what a
 * receiver does with a message that fails is in docs/wire.md.
 *
 * All bodies are read with memcpy: a buffer need not be aligned.
 */
#ifndef UCFT_DETECTOR_CTRL_WIRE_H
#define UCFT_DETECTOR_CTRL_WIRE_H

#include "ucft.h"

#include <stddef.h>
#include <stdint.h>

/* Facts one failed-set message carries at most. */
#define CTRL_WIRE_MAX_FACTS 256
/* Failed set, flags word: answer with your set if it has more. */
#define CTRL_WIRE_FLAG_ANSWER 1u

/* Why a completed control receive must not be handed on, or NULL when it
 * may: received whole (`status` UCFT_OK), from a rank of the job other
 * than `me` (`src` from the tag), and of exactly `want` bytes when the
 * kind has a fixed length (`fixed`). */
const char *ctrl_wire_check(ucft_status_t status, uint32_t src, size_t length,
                            int size, int me, size_t want, int fixed);

/* The 8-byte body of a heartbeat, heartbeat request or clean-exit notice
 * (UCFT_CTRL_HB*): one 64-bit word. `len` must be 8. */
ucft_status_t ctrl_wire_word(const void *buf, size_t len, uint64_t *word);

/* What a failure notice (UCFT_CTRL_FAILED) says. */
typedef enum ctrl_fact_kind {
    CTRL_FACT_NONE, /* it names no rank of the job: ignored */
    CTRL_FACT_SELF, /* it names the receiver: it has been declared */
    CTRL_FACT_RANK, /* it names another rank of the job */
} ctrl_fact_kind_t;

/* Facts one failure message (UCFT_CTRL_FAILED) carries at most. */
#define CTRL_WIRE_MAX_BATCH 32

/* The number of facts in a failure message of `len` bytes, or 0 when that
 * length is not one: {fact 0, the sender's epoch, fact 1, ..., fact k},
 * uint32 each, 8 + 4k bytes with k < CTRL_WIRE_MAX_BATCH. */
size_t ctrl_wire_nfacts(size_t len);

/* Decodes fact `i` of a failure message of `len` bytes for receiver `me`
 * of a job of `size`. UCFT_ERR_INVALID_PARAM when the length is not a
 * failure message's or i >= ctrl_wire_nfacts(len); else UCFT_OK with the
 * kind and, for CTRL_FACT_RANK and CTRL_FACT_SELF, the rank in *fact. */
ucft_status_t ctrl_wire_fact(const void *buf, size_t len, size_t i, int size,
                             int me, ctrl_fact_kind_t *kind, int *fact);

/* A decoded failed set (UCFT_CTRL_FAILED_SET); facts still point into the
 * message (read them with ctrl_wire_set_fact). */
typedef struct ctrl_wire_set {
    uint32_t flags;
    uint32_t n;
    const unsigned char *facts; /* n uint32 */
} ctrl_wire_set_t;

/* Decodes a failed set of `len` bytes: uint32 flags, uint32 n <=
 * CTRL_WIRE_MAX_FACTS, then exactly n uint32. UCFT_ERR_INVALID_PARAM
 * (and *set untouched) when it is short, n is too large or the length does
 * not match n. Facts are not range checked here: one that names no rank
 * is skipped by the receiver. */
ucft_status_t ctrl_wire_set_decode(const void *buf, size_t len,
                                   ctrl_wire_set_t *set);

/* Fact i (< set->n) of a decoded set. */
uint32_t ctrl_wire_set_fact(const ctrl_wire_set_t *set, uint32_t i);

/* An indirect probe (UCFT_CTRL_PROBE, runtime/detector/probe.h): 20
 * bytes, uint32 op, origin, suspect, nonce, silent_ms (how long the
 * origin had not heard the suspect when it asked; carried along). */
#define CTRL_WIRE_PROBE_LEN 20
typedef enum ctrl_probe_op {
    CTRL_PROBE_REQ = 1,   /* origin -> helper: probe the suspect for me */
    CTRL_PROBE_PING = 2,  /* helper -> suspect: are you there? */
    CTRL_PROBE_ACK = 3,   /* suspect -> helper: I am */
    CTRL_PROBE_RELAY = 4, /* helper -> origin: the suspect answered */
} ctrl_probe_op_t;

typedef struct ctrl_wire_probe {
    ctrl_probe_op_t op;
    int origin;  /* the observer that suspects */
    int suspect; /* the rank it suspects */
    uint32_t nonce;
    uint32_t silent_ms;
} ctrl_wire_probe_t;

/* Decodes a probe of `len` bytes that the tag says `src` sent to `me`, in
 * a job of `size`. UCFT_OK with *p filled when it is 20 bytes, its op is
 * one of the four, origin and suspect are distinct ranks of the job, and
 * the roles fit the op: a request comes from its origin to a third rank,
 * a ping goes to its suspect from a third rank, an ack comes from its
 * suspect to a third rank, a relay goes to its origin from a third rank.
 * Else UCFT_ERR_INVALID_PARAM with the reason in *why (*p untouched). */
ucft_status_t ctrl_wire_probe(const void *buf, size_t len, int size, int me,
                              uint32_t src, ctrl_wire_probe_t *p,
                              const char **why);

#endif
