/*
 * Copy channel: the links over which the batched corrected broadcast
 * (bcast_batched.c, docs/bcast.md "Batched copies") sends its correction
 * copies to its ring neighbours, the copies of several consecutive
 * instances in one message. One channel per communicator and rank; it
 * outlives the instances (a driver makes it through coll_comm_ops_t).
 *
 * Links. Link i joins this rank to the ring neighbour at a fixed offset in
 * the communicator's placement order (coll_map_t positions): links 0..3 to
 * the right (+1..+4), links 4..6 to the left (-1..-3). The ring of virtual
 * ranks of any instance is this order rotated to its root, so a link's
 * peer is the same rank for every root. Each link that a window of f
 * uses has a standing receive from the rank that sends to this one on it
 * (the mirror offset), posted when the first instance with that f starts
 * here (cc_need: f = 1 needs one link) and re-posted after every message,
 * so copies do not wait in the transport's unexpected queue and nothing
 * is scanned. Buffers are sized for the largest batch the driver allows
 * (a single copy when it never flushes).
 *
 * Entries. An entry is (instance sequence, payload). A sender appends one
 * per copy; the link holds them and sends them as one message when
 *  - batch entries are held (UCFT_COLL_BATCH, at most CC_BATCH_MAX),
 *  - the owner waits (cc_flush: the runtime calls it once a wait has
 *    lasted 20 us and every 20 us after, before it sleeps, from
 *    ucft_context_arm and from a ucft_test that finds its request
 *    pending),
 *  - or at once: when the driver never flushes (the simulator's
 *    single-instance runs); when the rank learns of a failure (what is
 *    held goes then, cc_on_failure); and from then on for a copy whose
 *    receiver its sender knows to be cut off from the tree (a dead tree
 *    ancestor): the other copies are still batched.
 * A copy so held is a copy whose sender is slow: the correction argument
 * of the broadcast does not depend on timing, only on every live sender
 * sending its copies eventually, which the flush rules give as long as the
 * sender's owner calls into the library (the weak progress rule of MPI;
 * docs/api.md, rule R6).
 *
 * Wire format of a message (kind COLL_KIND_BCAST_BATCH + link, the 16-bit
 * tag sequence field = the link's batch number, so the standing receive is
 * an exact one): entries back to back, each a 4-byte instance sequence, a
 * 4-byte payload length (at most CC_ENTRY_MAX) and the payload padded to 8
 * bytes. A receiver checks every entry against the message's length and the
 * limit; the first bad one drops the rest of the message, with a warning.
 *
 * Delivery. A message is received whole into a buffer, checked, and kept
 * (not unpacked) while one of its entries may still be needed: an entry of
 * an instance that has started here and is over is not; the others may
 * be, if their instance's tree message never comes. A running instance
 * joins the channel (cc_join) with its sequence and a callback, and looks
 * its copy up (cc_find) when it learns that its tree message will not
 * come. A joined instance that still lacks the data is offered its copy
 * (the callback) when its rank waits (cc_flush): a copy is
 * taken when the rank would otherwise wait for its tree message, not
 * before (taking it earlier costs a rank that is about to get its tree
 * message anyway). With hold = 0 a copy is offered as soon as it arrives.
 * The kept messages are as many as the lead of the neighbours over this
 * rank needs, like the transport's queue of their tree messages.
 */
#ifndef UCFT_COLL_COPY_CHAN_H
#define UCFT_COLL_COPY_CHAN_H

#include "coll_op.h"

#include <stddef.h>
#include <stdint.h>

#define CC_MAX_R      4 /* right links: offsets +1..+4 */
#define CC_MAX_L      3 /* left links: offsets -1..-3 */
#define CC_NLINKS     (CC_MAX_R + CC_MAX_L)
#define CC_MAX_F      3  /* windows of 2^f - 1 <= 7 ranks fit the links */
#define CC_BATCH_MAX  64 /* entries a link may hold before it sends */
#define CC_ENTRY_MAX  64 /* payload bytes of one entry */
#define CC_ENTRY_HDR  8
#define CC_ENTRY_SIZE (CC_ENTRY_HDR + CC_ENTRY_MAX)
#define CC_MSG_MAX    (CC_BATCH_MAX * CC_ENTRY_SIZE)

/* The link to the neighbour at offset `off` on the right (1..CC_MAX_R) or
 * left (1..CC_MAX_L). */
static inline int cc_link_right(int off)
{
    return off - 1;
}
static inline int cc_link_left(int off)
{
    return CC_MAX_R + off - 1;
}

typedef struct cc_member cc_member_t;
/* A copy for the member's instance is offered: `len` payload bytes. Runs
 * from a transport callback (progress) or from cc_flush. */
typedef void (*cc_copy_cb_t)(cc_member_t *m, const void *data, size_t len);

/* A running instance, embedded in its state. */
struct cc_member {
    cc_member_t *next;
    uint32_t seq;
    uint8_t lacks;   /* set by the owner: no data yet (offers wanted) */
    uint8_t urgent;  /* set by the owner: offer a copy as soon as it comes */
    uint32_t looked; /* the channel's kept_gen at its last vain look */
    cc_copy_cb_t cb;
};

typedef struct cc_outbuf cc_outbuf_t;
typedef struct cc_inbuf cc_inbuf_t;

typedef struct cc_link_out {
    int to;           /* job rank; -1: the offset does not fit the ring */
    uint16_t bseq;    /* number of the next message */
    uint16_t count;   /* entries in cur */
    cc_outbuf_t *cur; /* being filled, or NULL */
} cc_link_out_t;

typedef struct cc_chan cc_chan_t;

typedef struct cc_link_in {
    cc_chan_t *ch;
    int from;      /* job rank; -1: no such link */
    uint16_t bseq; /* number of the next message */
    uint8_t posted;
    tp_req_t req;
    cc_inbuf_t *cur;               /* the posted buffer */
    cc_inbuf_t *kept, **kept_tail; /* received, oldest first */
    uint32_t kept_hi;              /* largest sequence kept */
    uint8_t unordered; /* kept ranges have not always risen (cc_find) */
} cc_link_in_t;

typedef struct cc_stats {
    uint64_t entries;  /* appended */
    uint64_t messages; /* sent */
    uint64_t received; /* messages received */
    uint64_t max_kept; /* messages kept at once, at most */
    uint64_t offered;  /* copies handed to an instance */
    uint64_t bad;      /* malformed messages (rest dropped) */
} cc_stats_t;

struct cc_chan {
    tp_t *tp;
    unsigned ctx;
    uint8_t flushes;  /* the driver calls cc_flush before its rank waits */
    uint8_t closed;   /* cc_cleanup ran: nothing is sent or posted */
    uint16_t batch;   /* entries a link holds before it sends (1: none) */
    int need_f;       /* links posted for windows up to 2^need_f - 1 */
    unsigned in_mask; /* bit i: link i's standing receive was posted */
    size_t msg_max;   /* bytes of a message, at most */
    uint8_t any_started;
    uint32_t last_seq; /* the latest instance that joined */
    unsigned held;     /* entries held on all links */
    unsigned inflight; /* out buffers whose send is pending */
    unsigned lacking;  /* members that lack the data */
    unsigned nkept;    /* received messages kept (all links) */
    uint32_t kept_gen; /* messages kept so far (cc_offer) */
    cc_link_out_t out[CC_NLINKS];
    cc_link_in_t in[CC_NLINKS];
    cc_outbuf_t *spare; /* out buffers free for reuse */
    cc_outbuf_t *all;   /* every out buffer (cc_destroy) */
    cc_inbuf_t *in_spare, *in_all;
    cc_member_t *members;
    cc_stats_t stats;
};

/* Makes the channel of this rank (tp->rank) on communicator p->ctx with
 * placement p->map; posts the standing receives. p->batch (1 ..
 * CC_BATCH_MAX, larger is taken as the maximum) entries per message when
 * p->flushes, else 1. UCFT_OK or an error (then cc_destroy only). */
ucft_status_t cc_init(cc_chan_t *ch, tp_t *tp, const coll_comm_params_t *p);
/* Instances with f up to `f` run: the standing receives of the links
 * their windows use are posted (once; f = 1 needs one link). Messages
 * that came before wait in the transport's queue until then. */
void cc_need(cc_chan_t *ch, int f);
/* The instance of m->seq starts here (m->lacks, m->urgent, m->cb set). */
void cc_join(cc_chan_t *ch, cc_member_t *m);
/* The instance is over here: later entries for it are dropped. */
void cc_leave(cc_chan_t *ch, cc_member_t *m);
/* The payload of a copy for instance `seq` that has arrived (valid until
 * the next call on the channel; *len set), or NULL. */
const void *cc_find(cc_chan_t *ch, uint32_t seq, size_t *len);
/* A member's `lacks` changed to 0 (it has the data). */
static inline void cc_has_data(cc_chan_t *ch, cc_member_t *m)
{
    if (m->lacks) {
        m->lacks = 0;
        ch->lacking--;
    }
}
/* Appends a copy of `len` <= CC_ENTRY_MAX bytes for instance `seq` to
 * link `link`; sends the link's batch when it is due, or at once when
 * `now` (its receiver is known to be cut off from the tree). */
void cc_append(cc_chan_t *ch, int link, uint32_t seq, const void *data,
               size_t len, int now);
/* The rank waits: sends every held entry, and offers each
 * member that lacks the data a copy that has arrived for it. */
void cc_flush(cc_chan_t *ch);
/* `rank` failed: the held entries go now (a rank that the death cut off
 * should not wait for a batch); later ones go at once where their
 * appender knows their receiver cut off (cc_append's `now`). */
void cc_on_failure(cc_chan_t *ch, int rank);
/* Finalize: sends what is held, then cancels the standing receives. */
void cc_cleanup(cc_chan_t *ch);
/* 1 when no transport request of the channel is pending. */
int cc_idle(const cc_chan_t *ch);
/* Frees the buffers (no callback may run any more). */
void cc_destroy(cc_chan_t *ch);

/* The driver's view (coll_op_ops_t.comm of bcast corrected-batched). */
extern const coll_comm_ops_t cc_comm_ops;

#endif
