/*
 * The receive FIFO of UCX 1.13's shared-memory transports (posix, sysv),
 * read and written from outside UCX (docs/transport.md, "Mending a
 * blocked FIFO"). A sender claims slot `head` by a compare-and-swap on the
 * FIFO's head, writes the slot, and then flips the slot's owner bit; the
 * receiver reads the slots in order and stops at the first whose owner
 * bit is not yet flipped. A sender that dies between claim and flip stops
 * its receiver for good. This file knows that layout, and only this file:
 *
 *   control block at the start of the segment (192 bytes): head (8 bytes,
 *   bit 63 = "receiver asleep, signal me"), at 8 the length and at 12 the
 *   address of the receiver's signal socket (a unix datagram socket in
 *   the epoll set of its UCP worker's event fd);
 *   at 128 tail (8 bytes, consumed so far, published every few reads), at
 *   136 the owner's pid. Then `size` slots of `elem_size` bytes: flags
 *   (bit 0 owner, bit 1 inline), am_id, length (16 bits), a descriptor
 *   the receiver owns (24 bytes), then the inline data.
 *
 * Slot i (i counts from 0 for ever; its place is i mod size) is written
 * when its owner bit equals bit log2(size) of i. Sizes come from
 * UCX_{POSIX,SYSV}_FIFO_SIZE and _FIFO_ELEM_SIZE (UCX's defaults, 64 and
 * 128, when unset). Nothing here is UCX's API: it is the layout of the
 * version ucft is built and tested with, and mm_fifo_supported() is 0 for
 * any other, so that nothing is touched.
 */
#ifndef UCFT_MM_FIFO_H
#define UCFT_MM_FIFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MM_FIFO_FLAG_OWNER  0x1u
#define MM_FIFO_FLAG_INLINE 0x2u

typedef struct mm_fifo {
    uint8_t *ctl;       /* the control block, in this process's mapping */
    size_t map_len;     /* of that mapping */
    unsigned size;      /* slots (a power of two) */
    unsigned elem_size; /* bytes per slot */
    unsigned shift;     /* log2(size) */
    char dev[16];       /* the segment: device ("MAJ:MIN") and inode */
    unsigned long inode;
    unsigned sig_len;      /* the receiver's signal socket address, as */
    uint8_t sig_addr[112]; /* found when the FIFO was (mm_fifo_of_worker) */
} mm_fifo_t;

/* The UCX this process runs is the one whose layout this file knows. */
int mm_fifo_supported(void);

/* Calls `visit` for each receive FIFO of process `owner` (0: of any other
 * process) mapped into this process (shared mappings whose control block
 * names the owner, of a size that fits the configured FIFO) until it
 * returns non-zero; returns that value, 0 when none did, -1 when the
 * mappings cannot be read. The control blocks are read without faulting
 * (another thread may unmap a segment meanwhile); `visit` may touch the
 * FIFO only when nothing can unmap it: the FIFO of a worker that the
 * calling thread drives (mm_fifo_of_worker). A FIFO of another process
 * (the fault injection of tp_ucp_hold_fifo_slots) is touched at the risk
 * of such a race. */
int mm_fifo_each(pid_t owner, int (*visit)(const mm_fifo_t *f, void *arg),
                 void *arg);

uint64_t mm_fifo_head(const mm_fifo_t *f); /* without the signal bit */
uint64_t mm_fifo_tail(const mm_fifo_t *f);

/* Slot i's bytes (flags at 0, am_id at 1, length at 2, inline data at
 * MM_FIFO_DATA). */
uint8_t *mm_fifo_slot(const mm_fifo_t *f, uint64_t i);
#define MM_FIFO_DATA 28

/* Slot i has been written in its round (its owner bit is flipped). */
int mm_fifo_written(const mm_fifo_t *f, uint64_t i);

/* Slot i, written in its round, holds an inline active message `am_id`
 * with exactly `len` bytes `data`. */
int mm_fifo_holds(const mm_fifo_t *f, uint64_t i, uint8_t am_id,
                  const void *data, uint16_t len);

/* The FIFO is that of a UCP worker whose event fd is `epfd` (its signal
 * socket is in that epoll set). */
int mm_fifo_of_worker(const mm_fifo_t *f, int epfd);

/* Writes slot i as an inline active message (`am_id`, `len` bytes of
 * `data`), then flips its owner bit, as a sender does. The receiver's
 * descriptor is left as it is. `len` must fit the slot. */
void mm_fifo_write(const mm_fifo_t *f, uint64_t i, uint8_t am_id,
                   const void *data, uint16_t len);

/* Claims the next slot as a sender does, and writes nothing (a sender
 * dying there): for fault injection. 0, or -1 when the FIFO is full. */
int mm_fifo_claim(const mm_fifo_t *f);

#endif
