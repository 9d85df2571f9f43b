/*
 * A standing receive: one control kind (transport/ctrl_kinds.h) from any
 * source, posted from start to stop. Every message is handed to the
 * owner's function, also one whose receive completes at once (allowed by
 * the transport contract, T2), and the receive is posted again. The
 * heartbeat, the failure broadcast and the reconciliation each keep one
 * or more.
 *
 * The owner's function sees only messages received whole (status OK)
 * from another rank of the job (the tag's source is in 0..size-1 and not
 * this rank) and, for an owner of fixed-length messages, of exactly the
 * buffer's length; the others are dropped with a log line. It sees the
 * completed receive (tag, length, the body in the owner's buffer) and may
 * stop it, also from
 * inside the function: nothing is posted after that. standing_stop
 * cancels a posted receive; its callback still runs, sees the
 * cancellation and hands nothing on.
 *
 * Threads: the one driving tp's progress. Memory: none beyond the struct
 * and the owner's buffer.
 */
#ifndef UCFT_DETECTOR_STANDING_H
#define UCFT_DETECTOR_STANDING_H

#include "transport/transport.h"

#include <stddef.h>
#include <stdint.h>

typedef struct standing standing_t;
/* A message arrived: s->req holds status, tag and length, s->buf the
 * body. */
typedef void (*standing_fn_t)(void *arg, const standing_t *s);

struct standing {
    tp_req_t req;
    tp_t *tp;
    unsigned kind;
    void *buf;
    size_t len;
    standing_fn_t fn;
    void *arg;
    uint8_t fixed;  /* messages are exactly len bytes */
    uint8_t on;     /* started and not stopped */
    uint8_t posted; /* the receive is posted */
};

/* fixed: every message of the kind is exactly len bytes (others are
 * dropped); else any length up to len. */
void standing_init(standing_t *s, tp_t *tp, unsigned kind, void *buf,
                   size_t len, int fixed, standing_fn_t fn, void *arg);
/* Posts the receive (handing on what is already there). On an error of
 * the transport nothing stays posted and the error is returned. */
ucft_status_t standing_start(standing_t *s);
void standing_stop(standing_t *s);

static inline int standing_posted(const standing_t *s)
{
    return s->posted;
}

#endif
