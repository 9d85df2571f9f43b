/*
 * ucft-bench pt2pt: internal interface between the driver (pt2pt.c), the
 * two measured paths (the ucft one in pt2pt.c, raw UCP in raw_ucp.c), the
 * options (pt2pt_opts.c) and the report (pt2pt_report.c).
 *
 * Both paths run the same two patterns between rank 0 and rank 1 with the
 * same buffers:
 *   pingpong  rank 0: post recv, send, wait send, wait recv -> one RTT
 *             rank 1: post recv, wait recv, send, wait send
 *   stream    rank 0: `window` sends of `size` bytes, wait all, wait for an
 *             8-byte ack -> one window time
 *             rank 1: `window` receives, wait all, send the ack
 * The first `warm` repetitions are not recorded. Rank 0 writes `n` times
 * (ns) into `out`; rank 1 writes nothing.
 */
#ifndef UCFT_TOOLS_BENCH_PT2PT_H
#define UCFT_TOOLS_BENCH_PT2PT_H

#include "tools/bench/bench.h"

#include <stddef.h>
#include <stdio.h>

#define PT2PT_MAX_SIZES  32
#define PT2PT_MAX_ROUNDS 15

/* Tags used by both paths (user tag space of ucft; raw UCP adds the
 * sender's rank like ucft does). */
enum { PT2PT_TAG_PING = 1, PT2PT_TAG_STREAM = 2, PT2PT_TAG_ACK = 3 };
#define PT2PT_ACK_LEN 8

typedef struct pt2pt_opts {
    size_t sizes[PT2PT_MAX_SIZES];
    int nsizes;
    int iters;        /* ping-pong iterations for sizes up to 8 KiB */
    int iters_set;    /* --iters given: exact counts, no time budget */
    double budget;    /* seconds per size without --iters (0: no cap) */
    int rounds;       /* alternations ucft/raw per size */
    int window;       /* sends per stream window */
    int json;         /* JSON lines instead of the table */
    int bw;           /* measure bandwidth too */
    const char *wait; /* --wait: overrides UCFT_WAIT */
} pt2pt_opts_t;

/* Returns 0 (run), 1 (help printed: exit 0) or -1 (error and usage
 * printed: exit 2). `quiet` suppresses messages (ranks other than 0). */
int pt2pt_opts_parse(int argc, char **argv, pt2pt_opts_t *o, int quiet);
void pt2pt_usage(FILE *f);

/* Iteration counts for one size, derived from --iters. */
int pt2pt_iters(const pt2pt_opts_t *o, size_t size);
int pt2pt_warmup(int iters);
int pt2pt_windows(const pt2pt_opts_t *o, size_t size);

/* One measured path. Returns 0, or -1 after printing why. */
typedef struct pt2pt_path {
    const char *name;
    void *obj;
    int (*pingpong)(void *obj, void *sbuf, void *rbuf, size_t size, int warm,
                    int n, double *out);
    int (*stream)(void *obj, void *sbuf, void *rbuf, size_t size, int window,
                  int warm, int n, double *out);
} pt2pt_path_t;

enum { PT2PT_UCFT = 0, PT2PT_UCP = 1 };

/* Per size: one value per round and path (rank 0 only). */
typedef struct pt2pt_result {
    size_t size;
    int iters, warmup, windows;
    double rtt_us[2][PT2PT_MAX_ROUNDS]; /* median RTT of the round */
    double p99_us[2][PT2PT_MAX_ROUNDS]; /* 99th percentile of the round */
    double mbps[2][PT2PT_MAX_ROUNDS];   /* median window bandwidth, MB/s */
} pt2pt_result_t;

typedef struct pt2pt_run_info {
    const char *wait;      /* waiting mode name */
    const char *transport; /* UCX transport of the raw endpoint's am lane */
    const char *tls;       /* UCX_TLS or "(default)" */
    int rounds, window, bw;
} pt2pt_run_info_t;

void pt2pt_report_header(FILE *f, const pt2pt_run_info_t *info, int json);
void pt2pt_report_row(FILE *f, const pt2pt_run_info_t *info,
                      const pt2pt_result_t *r, int json);

#endif
