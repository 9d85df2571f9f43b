/*
 * ucft-bench pt2pt: point-to-point round trip and bandwidth through ucft,
 * measured side by side with raw UCP (raw_ucp.c) in the same run.
 *
 * For every size, `rounds` rounds; each round measures both paths, in the
 * order ucft, raw on even rounds and raw, ucft on odd rounds, so that
 * drifting machine noise and cache warmth hit both paths alike. A round
 * gives a median RTT and a 99th percentile per path; the report shows the
 * median over rounds and the spread (min..max of the round medians).
 *
 * Bandwidth comes from a windowed stream (pt2pt.h): `window` non-blocking
 * sends of `size` bytes, then an 8-byte ack from the receiver;
 * MB/s = window * size / window time / 1e6, median over windows.
 */
#include "tools/bench/pt2pt.h"
#include "tools/bench/raw_ucp.h"
#include "ucft.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the ucft path ------------------------------------------------------- */

typedef struct ucft_path {
    ucft_comm_h comm;
    int rank, peer;
    ucft_request_h *reqs; /* stream window */
    int max_window;
} ucft_path_t;

static int ucft_check(const ucft_path_t *p, ucft_status_t st, const char *what)
{
    if (st == UCFT_OK)
        return 0;
    fprintf(stderr, "ucft-bench pt2pt: rank %d: ucft %s: %s\n", p->rank, what,
            ucft_status_string(st));
    return -1;
}

static int ucft_pingpong(void *obj, void *sbuf, void *rbuf, size_t size,
                         int warm, int n, double *out)
{
    ucft_path_t *p = obj;
    ucft_request_h rr, sr;
    for (int i = -warm; i < n; i++) {
        if (p->rank == 0) {
            uint64_t t0 = bench_now_ns();
            if (ucft_check(p,
                           ucft_irecv(p->comm, rbuf, size, p->peer,
                                      PT2PT_TAG_PING, &rr),
                           "irecv") ||
                ucft_check(p,
                           ucft_isend(p->comm, sbuf, size, p->peer,
                                      PT2PT_TAG_PING, &sr),
                           "isend") ||
                ucft_check(p, ucft_wait(&sr, NULL), "wait send") ||
                ucft_check(p, ucft_wait(&rr, NULL), "wait recv"))
                return -1;
            if (i >= 0)
                out[i] = (double)(bench_now_ns() - t0);
        } else {
            if (ucft_check(p,
                           ucft_irecv(p->comm, rbuf, size, p->peer,
                                      PT2PT_TAG_PING, &rr),
                           "irecv") ||
                ucft_check(p, ucft_wait(&rr, NULL), "wait recv") ||
                ucft_check(p,
                           ucft_isend(p->comm, sbuf, size, p->peer,
                                      PT2PT_TAG_PING, &sr),
                           "isend") ||
                ucft_check(p, ucft_wait(&sr, NULL), "wait send"))
                return -1;
        }
    }
    return 0;
}

static int ucft_stream(void *obj, void *sbuf, void *rbuf, size_t size,
                       int window, int warm, int n, double *out)
{
    ucft_path_t *p = obj;
    uint64_t ack = 0;
    ucft_request_h ar;
    int bad = 0;

    if (window > p->max_window)
        return -1;
    for (int i = -warm; i < n && !bad; i++) {
        if (p->rank == 0) {
            uint64_t t0 = bench_now_ns();
            bad |= ucft_check(p,
                              ucft_irecv(p->comm, &ack, PT2PT_ACK_LEN, p->peer,
                                         PT2PT_TAG_ACK, &ar),
                              "irecv ack");
            for (int k = 0; k < window && !bad; k++)
                bad |= ucft_check(p,
                                  ucft_isend(p->comm, sbuf, size, p->peer,
                                             PT2PT_TAG_STREAM, &p->reqs[k]),
                                  "isend");
            if (bad)
                return -1;
            bad |= ucft_check(p, ucft_waitall((size_t)window, p->reqs, NULL),
                              "waitall sends");
            bad |= ucft_check(p, ucft_wait(&ar, NULL), "wait ack");
            if (i >= 0)
                out[i] = (double)(bench_now_ns() - t0);
        } else {
            for (int k = 0; k < window && !bad; k++)
                bad |= ucft_check(p,
                                  ucft_irecv(p->comm, rbuf, size, p->peer,
                                             PT2PT_TAG_STREAM, &p->reqs[k]),
                                  "irecv");
            if (bad)
                return -1;
            bad |= ucft_check(p, ucft_waitall((size_t)window, p->reqs, NULL),
                              "waitall recvs");
            bad |= ucft_check(
                p,
                ucft_send(p->comm, &ack, PT2PT_ACK_LEN, p->peer, PT2PT_TAG_ACK),
                "send ack");
        }
    }
    return bad ? -1 : 0;
}

/* ---- driver -------------------------------------------------------------- */

typedef struct run {
    const pt2pt_opts_t *o;
    int rank;
    pt2pt_path_t path[2];
    void *sbuf, *rbuf;
    double *samples; /* rank 0: one per iteration */
} run_t;

/* Runs one path once (one round) for one size and stores its numbers. */
static int measure(run_t *run, int which, pt2pt_result_t *res, int round)
{
    const pt2pt_path_t *p = &run->path[which];
    size_t size = res->size;
    double *s = run->samples;

    if (p->pingpong(p->obj, run->sbuf, run->rbuf, size, res->warmup, res->iters,
                    s) != 0)
        return -1;
    if (run->rank == 0) {
        size_t n = (size_t)res->iters;
        res->rtt_us[which][round] = bench_quantile_sort(s, n, 0.5) / 1e3;
        res->p99_us[which][round] = bench_quantile_sort(s, n, 0.99) / 1e3;
    }
    if (!run->o->bw)
        return 0;
    int warm = res->windows / 10 < 2 ? 2 : res->windows / 10;
    if (p->stream(p->obj, run->sbuf, run->rbuf, size, run->o->window, warm,
                  res->windows, s) != 0)
        return -1;
    if (run->rank == 0) {
        /* Bandwidth of the median window time. */
        double t = bench_quantile_sort(s, (size_t)res->windows, 0.5);
        res->mbps[which][round] =
            t > 0 ? (double)run->o->window * (double)size / t * 1e3 : 0;
    }
    return 0;
}

/* Scales a count down so that `reps` repetitions of `each_ns`, done
 * 2 * rounds times (warm-up included), fit in `budget_ns`. */
static int fit(int count, double each_ns, int rounds, double budget_ns,
               int floor)
{
    double per = each_ns * 1.1 * 2 * rounds;
    if (per <= 0 || budget_ns <= 0 || per * count <= budget_ns)
        return count;
    int n = (int)(budget_ns / per);
    return n < floor ? (count < floor ? count : floor) : n;
}

/* Without --iters, rank 0 times a few ucft repetitions, shrinks the counts
 * of this size to the time budget (60% latency, 40% bandwidth) and sends
 * them to rank 1, so that both ranks run the same number. */
static int calibrate(run_t *run, pt2pt_result_t *res)
{
    const pt2pt_opts_t *o = run->o;
    const pt2pt_path_t *p = &run->path[PT2PT_UCFT];
    ucft_path_t *up = p->obj;
    int n = res->iters < 32 ? res->iters : 32, nw = 2;
    int32_t counts[2] = {res->iters, res->windows};
    double *s = run->samples;

    if (o->iters_set || o->budget <= 0)
        return 0;
    if (p->pingpong(p->obj, run->sbuf, run->rbuf, res->size, 0, n, s) != 0 ||
        (o->bw && p->stream(p->obj, run->sbuf, run->rbuf, res->size, o->window,
                            0, nw, s + n) != 0))
        return -1;
    if (run->rank == 0) {
        double lat = 0, win = 0, b = o->budget * 1e9;
        for (int i = 0; i < n; i++)
            lat += s[i] / n;
        for (int i = 0; o->bw && i < nw; i++)
            win += s[n + i] / nw;
        counts[0] = fit(res->iters, lat, o->rounds, o->bw ? 0.6 * b : b, 20);
        if (o->bw)
            counts[1] = fit(res->windows, win, o->rounds, 0.4 * b, 4);
        if (ucft_check(
                up,
                ucft_send(up->comm, counts, sizeof(counts), 1, PT2PT_TAG_ACK),
                "send counts"))
            return -1;
    } else if (ucft_check(up,
                          ucft_recv(up->comm, counts, sizeof(counts), 0,
                                    PT2PT_TAG_ACK, NULL),
                          "recv counts")) {
        return -1;
    }
    res->iters = counts[0];
    res->windows = counts[1];
    return 0;
}

static int run_size(run_t *run, size_t size, pt2pt_result_t *res)
{
    memset(res, 0, sizeof(*res));
    res->size = size;
    res->iters = pt2pt_iters(run->o, size);
    res->windows = pt2pt_windows(run->o, size);
    if (calibrate(run, res) != 0)
        return -1;
    res->warmup = pt2pt_warmup(res->iters);
    for (int r = 0; r < run->o->rounds; r++) {
        int first = (r % 2 == 0) ? PT2PT_UCFT : PT2PT_UCP;
        if (measure(run, first, res, r) != 0 ||
            measure(run, 1 - first, res, r) != 0)
            return -1;
    }
    return 0;
}

static int alloc_buffers(run_t *run)
{
    size_t max = PT2PT_ACK_LEN, n = 64; /* 64: calibration */
    for (int i = 0; i < run->o->nsizes; i++) {
        if (run->o->sizes[i] > max)
            max = run->o->sizes[i];
        size_t it = (size_t)pt2pt_iters(run->o, run->o->sizes[i]);
        size_t w = (size_t)pt2pt_windows(run->o, run->o->sizes[i]);
        n = it > n ? it : n;
        n = w > n ? w : n;
    }
    if (posix_memalign(&run->sbuf, 4096, max) != 0 ||
        posix_memalign(&run->rbuf, 4096, max) != 0)
        return -1;
    memset(run->sbuf, 'u', max);
    memset(run->rbuf, 0, max);
    run->samples = calloc(n, sizeof(*run->samples));
    return run->samples ? 0 : -1;
}

static int rank_from_env(void)
{
    const char *r = getenv("PMIX_RANK");
    return r ? atoi(r) : 0;
}

int bench_pt2pt_main(int argc, char **argv)
{
    pt2pt_opts_t o;
    bench_wait_cfg_t wait;
    ucft_context_h ctx;
    ucft_context_attr_t attr;
    char err[160], transport[64];
    int ret = BENCH_EXIT_FAIL;

    /* Only one rank complains about bad options. */
    int rc = pt2pt_opts_parse(argc, argv, &o, rank_from_env() != 0);
    if (rc != 0)
        return rc > 0 ? BENCH_EXIT_OK : BENCH_EXIT_USAGE;
    if (o.wait != NULL)
        setenv("UCFT_WAIT", o.wait, 1); /* read by ucft_init */
    if (bench_wait_cfg_read(&wait, err, sizeof(err)) != 0) {
        bench_err("pt2pt", "%s", err);
        return BENCH_EXIT_USAGE;
    }
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        bench_err("pt2pt", "ucft_init: %s", ucft_status_string(st));
        return BENCH_EXIT_FAIL;
    }
    ucft_context_query(ctx, &attr);
    if (attr.size != 2) {
        if (attr.rank == 0)
            bench_err("pt2pt",
                      "needs exactly 2 ranks, got %d (ucftrun -n 2 "
                      "ucft-bench pt2pt)",
                      attr.size);
        ucft_finalize(ctx);
        return BENCH_EXIT_USAGE;
    }

    run_t run = {.o = &o, .rank = attr.rank};
    ucft_path_t up = {.comm = ucft_comm_world(ctx),
                      .rank = attr.rank,
                      .peer = 1 - attr.rank,
                      .max_window = o.window};
    raw_ucp_t *raw = NULL;
    pt2pt_result_t *res = calloc((size_t)o.nsizes, sizeof(*res));
    up.reqs = calloc((size_t)o.window, sizeof(*up.reqs));
    if (res == NULL || up.reqs == NULL || alloc_buffers(&run) != 0) {
        bench_err("pt2pt", "out of memory");
        goto out;
    }
    if (raw_ucp_create(attr.rank, attr.size, &wait, o.window, &raw) != 0)
        goto out;
    run.path[PT2PT_UCFT] =
        (pt2pt_path_t){"ucft", &up, ucft_pingpong, ucft_stream};
    raw_ucp_path(raw, &run.path[PT2PT_UCP]);
    raw_ucp_transport(raw, transport, sizeof(transport));

    const char *tls = getenv("UCX_TLS");
    pt2pt_run_info_t info = {.wait = bench_wait_name(wait.mode),
                             .transport = transport,
                             .tls = tls && *tls ? tls : "(default)",
                             .rounds = o.rounds,
                             .window = o.window,
                             .bw = o.bw};
    if (attr.rank == 0) {
        pt2pt_report_header(stdout, &info, o.json);
        fflush(stdout);
    }
    ret = BENCH_EXIT_OK;
    for (int i = 0; i < o.nsizes; i++) {
        if (run_size(&run, o.sizes[i], &res[i]) != 0) {
            ret = BENCH_EXIT_FAIL;
            break;
        }
        if (attr.rank == 0) {
            pt2pt_report_row(stdout, &info, &res[i], o.json);
            fflush(stdout);
        }
    }
out:
    raw_ucp_destroy(raw);
    free(run.samples);
    free(run.sbuf);
    free(run.rbuf);
    free(up.reqs);
    free(res);
    st = ucft_finalize(ctx);
    if (st != UCFT_OK && ret == BENCH_EXIT_OK) {
        bench_err("pt2pt", "ucft_finalize: %s", ucft_status_string(st));
        ret = BENCH_EXIT_FAIL;
    }
    return ret;
}
