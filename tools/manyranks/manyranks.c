/*
 * ucft-manyranks: many ranks on few cores, with and without kills.
 *
 *   ucftrun -n N [--kill R@S ...] [--nodes K --kill-node K@S]
 *       build/bin/ucft-manyranks [--f F] [--min S] [--after S] [--bound S]
 *           [--pace MS] [--kills K]
 *
 * Every rank loops corrected allreduces of {rank + 1, votes, bit set of
 * the contributing ranks (one 64-bit word per 64 ranks)}, one every --pace
 * ms, and keeps each completion's time, sum and bit set. The loop ends
 * when a completed allreduce carries a vote: a rank votes once it has
 * looped --min s and, when --kills K is given, the launcher's injection log
 * (UCFTRUN_INJECT_LOG) holds K kills, the last --after s ago, or once
 * --bound s have passed. Every live rank takes part in every allreduce,
 * so all survivors stop at the same one.
 *
 * Each rank then prints one line (parsed by tools/manyranks.sh):
 *   MANY rank R init_ms I fin_ms F iters K bad B errors E
 *        told_ms T result_ms X gap_ms G stall_ms S stall_at_ms A
 *        death_cpu_ms C failed r1,r2,...
 * init_ms: ucft_init; fin_ms: ucft_finalize; bad: completed results
 * whose sum is not that of their bit set, or that leave out a rank not
 * failed at the end; errors: allreduces that returned an error; told_ms:
 * the latest kill -> this rank's failure callback for that victim; result_ms:
 * the latest kill -> first completion whose bit set leaves that victim out;
 * gap_ms: the longest time between two completions before the first kill
 * (the scheduling of N ranks on the node, pace included); stall_ms: the
 * longest between two completions in the 3 s after a kill, stall_at_ms
 * when it began (from that kill); death_cpu_ms: the CPU time (all of
 * this process's threads) the kills cost it, beyond its pace's (from its
 * last result before the first kill to its first 1 s after the last, less
 * the rate of the second before the kill); failed: the
 * ranks this rank knows failed at the end. -1: not applicable. Exit 0 when
 * bad and errors are 0.
 */
#include "ucft.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_KILLS       64
#define STALL_WINDOW_NS 3000000000ull

typedef struct opts {
    int f;
    double min_s, after_s, bound_s;
    int pace_ms;
    int kills;
} opts_t;

typedef struct rec {
    uint64_t end_ns;
    uint64_t cpu_ns; /* this process's CPU time (all threads) then */
    int64_t sum;
    uint64_t *mask; /* nwords */
} rec_t;

typedef struct state {
    int size;
    uint64_t *told; /* per rank: failure callback time, 0: not told */
} state_t;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* CPU time of this process, every thread (its heartbeat thread, UCX's and
 * PMIx's included). */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_failure(ucft_context_h ctx, int rank, ucft_status_t why,
                       void *arg)
{
    state_t *s = arg;
    (void)ctx;
    (void)why;
    if (rank >= 0 && rank < s->size && s->told[rank] == 0)
        s->told[rank] = now_ns();
}

static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){.f = 2,
                  .min_s = 3,
                  .after_s = 3,
                  .bound_s = 60,
                  .pace_ms = 20,
                  .kills = 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (v == NULL)
            goto bad;
        double x = strtod(v, &end);
        if (end == v || *end != '\0' || x < 0)
            goto bad;
        if (strcmp(a, "--f") == 0)
            o->f = (int)x;
        else if (strcmp(a, "--min") == 0)
            o->min_s = x;
        else if (strcmp(a, "--after") == 0)
            o->after_s = x;
        else if (strcmp(a, "--bound") == 0)
            o->bound_s = x;
        else if (strcmp(a, "--pace") == 0)
            o->pace_ms = (int)x;
        else if (strcmp(a, "--kills") == 0 && x <= MAX_KILLS)
            o->kills = (int)x;
        else
            goto bad;
        i++;
        continue;
    bad:
        fprintf(stderr,
                "ucft-manyranks: bad option '%s'%s%s\nusage: ucft-manyranks "
                "[--f F] [--min S] [--after S] [--bound S] [--pace MS] "
                "[--kills K]\n",
                a, v ? " " : "", v ? v : "");
        return -1;
    }
    return 0;
}

/* The kills of the injection log: ranks and times (at most max). */
static int read_kills(int *rank, uint64_t *at, int max)
{
    const char *path = getenv("UCFTRUN_INJECT_LOG");
    FILE *f = path != NULL && *path ? fopen(path, "r") : NULL;
    int n = 0;
    char kind[8];
    int r;
    unsigned long long t;
    if (f == NULL)
        return 0;
    while (n < max && fscanf(f, "%7s %d %llu", kind, &r, &t) == 3)
        if (strcmp(kind, "kill") == 0) {
            rank[n] = r;
            at[n++] = (uint64_t)t;
        }
    fclose(f);
    return n;
}

static int has(const uint64_t *w, int r)
{
    return (int)(w[r / 64] >> (r % 64) & 1);
}

/* Should this rank vote to stop? */
static int want_stop(const opts_t *o, uint64_t start, uint64_t now)
{
    if (now - start >= (uint64_t)(o->bound_s * 1e9))
        return 1;
    if (now - start < (uint64_t)(o->min_s * 1e9))
        return 0;
    if (o->kills == 0)
        return 1;
    int kr[MAX_KILLS];
    uint64_t kt[MAX_KILLS];
    int n = read_kills(kr, kt, MAX_KILLS);
    return n >= o->kills && now - kt[n - 1] >= (uint64_t)(o->after_s * 1e9);
}

/* The CPU time the deaths cost this rank: what it used from its last
 * result before the first kill to its first result 1 s after the last
 * kill, minus what it used at its pace before the kill over as long
 * (the second before the kill); -1 without kills or results around them. */
static double death_cpu_ms(const rec_t *rec, size_t n, const uint64_t *kt,
                           int nk)
{
    if (nk <= 0)
        return -1;
    const uint64_t sec = 1000000000ull;
    size_t i0 = n, i1 = n, i2 = n;
    for (size_t i = 0; i < n; i++) {
        if (rec[i].end_ns + sec <= kt[0])
            i0 = i;
        if (rec[i].end_ns <= kt[0])
            i1 = i;
        if (i2 == n && rec[i].end_ns >= kt[nk - 1] + sec)
            i2 = i;
    }
    if (i0 == n || i1 == n || i2 == n || i1 <= i0)
        return -1;
    double base = (double)(rec[i1].cpu_ns - rec[i0].cpu_ns) /
                  (double)(rec[i1].end_ns - rec[i0].end_ns);
    double used = (double)(rec[i2].cpu_ns - rec[i1].cpu_ns);
    double span = (double)(rec[i2].end_ns - rec[i1].end_ns);
    return (used - base * span) / 1e6;
}

int main(int argc, char **argv)
{
    opts_t o;
    if (parse(argc, argv, &o) != 0)
        return 2;
    state_t s = {0};
    ucft_params_t p = {.field_mask = UCFT_PARAM_FIELD_FAILURE_CB,
                       .failure_cb = on_failure,
                       .failure_cb_arg = &s};
    ucft_context_h ctx;
    uint64_t t0 = now_ns();
    /* The callback runs only from calls that progress the context, never
     * inside ucft_init (ucft.h, R7): s.told is allocated before any. */
    ucft_status_t st = ucft_init(&p, &ctx);
    uint64_t t1 = now_ns();
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 1;
    }
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(w), size = ucft_comm_size(w);
    int nw = (size + 63) / 64;
    size_t cnt = 2 + (size_t)nw;
    size_t cap =
        (size_t)(o.bound_s * 1000 / (o.pace_ms > 0 ? o.pace_ms : 1)) + 16;
    s.size = size;
    s.told = calloc((size_t)size, sizeof(*s.told));
    int64_t *in = calloc(cnt, sizeof(*in)), *out = calloc(cnt, sizeof(*out));
    rec_t *rec = calloc(cap, sizeof(*rec));
    uint64_t *masks = calloc(cap * (size_t)nw, sizeof(*masks));
    int *failed = calloc((size_t)size, sizeof(*failed));
    if (s.told == NULL || in == NULL || out == NULL || rec == NULL ||
        masks == NULL || failed == NULL) {
        fprintf(stderr, "ucft-manyranks: out of memory\n");
        return 1;
    }
    ucft_comm_set_f(w, o.f);
    in[0] = rank + 1;
    in[2 + rank / 64] = (int64_t)((uint64_t)1 << (rank % 64));
    size_t n = 0;
    int errors = 0;
    for (;;) {
        uint64_t now = now_ns();
        in[1] = want_stop(&o, t1, now);
        memset(out, 0, cnt * sizeof(*out));
        st = ucft_allreduce(w, in, out, cnt, UCFT_INT64, UCFT_SUM);
        if (st != UCFT_OK) {
            errors++;
            if (errors > 1000 || now - t1 > (uint64_t)(o.bound_s * 1e9))
                break;
            continue;
        }
        if (n < cap) {
            rec[n].end_ns = now_ns();
            rec[n].cpu_ns = cpu_ns();
            rec[n].sum = out[0];
            rec[n].mask = &masks[n * (size_t)nw];
            memcpy(rec[n].mask, &out[2], (size_t)nw * sizeof(uint64_t));
            n++;
        }
        if (out[1] > 0 || n == cap)
            break;
        if (o.pace_ms > 0)
            nanosleep(&(struct timespec){o.pace_ms / 1000,
                                         (long)(o.pace_ms % 1000) * 1000000},
                      NULL);
    }
    /* The failed set at the end: a rank left out of a result must be in
     * it (corrected semantics); a rank in it that was not killed is a
     * false declaration (counted by the script from every rank's list). */
    size_t nfailed = 0;
    ucft_context_progress(ctx);
    ucft_context_get_failed_ranks(ctx, failed, (size_t)size, &nfailed);
    unsigned char *dead = calloc((size_t)size, 1);
    for (size_t i = 0; dead != NULL && i < nfailed; i++)
        if (failed[i] >= 0 && failed[i] < size)
            dead[failed[i]] = 1;
    int bad = 0;
    for (size_t i = 0; i < n && dead != NULL; i++) {
        int64_t expect = 0;
        int ok = 1;
        for (int r = 0; r < size; r++) {
            if (has(rec[i].mask, r))
                expect += r + 1;
            else if (!dead[r])
                ok = 0;
        }
        bad += !ok || rec[i].sum != expect;
    }
    int kr[MAX_KILLS];
    uint64_t kt[MAX_KILLS];
    int nk = read_kills(kr, kt, MAX_KILLS);
    double told = -1, result = -1, gap = 0, stall = -1, stall_at = -1;
    for (int k = 0; k < nk; k++) {
        if (kr[k] < 0 || kr[k] >= size || kr[k] == rank)
            continue;
        if (s.told[kr[k]] > kt[k]) {
            double t = (double)(s.told[kr[k]] - kt[k]) / 1e6;
            told = t > told ? t : told;
        }
        for (size_t i = 0; i < n; i++)
            if (rec[i].end_ns > kt[k] && !has(rec[i].mask, kr[k])) {
                double t = (double)(rec[i].end_ns - kt[k]) / 1e6;
                result = t > result ? t : result;
                break;
            }
    }
    for (size_t i = 1; i < n; i++) {
        double g = (double)(rec[i].end_ns - rec[i - 1].end_ns) / 1e6;
        int after = 0;
        uint64_t since = 0; /* the gap's start from the latest kill */
        for (int k = 0; k < nk; k++)
            if (rec[i].end_ns > kt[k] &&
                rec[i - 1].end_ns < kt[k] + STALL_WINDOW_NS) {
                after = 1;
                since =
                    rec[i - 1].end_ns > kt[k] ? rec[i - 1].end_ns - kt[k] : 0;
            }
        if (nk > 0 && rec[i].end_ns > kt[0] && !after)
            continue;
        if (after && g > stall) {
            stall = g;
            stall_at = (double)since / 1e6;
        } else if (nk == 0 || rec[i].end_ns <= kt[0])
            gap = g > gap ? g : gap;
    }
    double death_cpu = death_cpu_ms(rec, n, kt, nk);
    uint64_t t2 = now_ns();
    ucft_status_t fst = ucft_finalize(ctx);
    uint64_t t3 = now_ns();
    char list[4096];
    size_t len = 0;
    list[0] = '\0';
    for (int r = 0; r < size && dead != NULL && len + 12 < sizeof(list); r++)
        if (dead[r])
            len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d",
                                    len ? "," : "", r);
    printf("MANY rank %d init_ms %.1f fin_ms %.1f iters %zu bad %d errors %d "
           "told_ms %.2f result_ms %.2f gap_ms %.1f stall_ms %.1f stall_at_ms "
           "%.1f death_cpu_ms %.2f failed %s\n",
           rank, (double)(t1 - t0) / 1e6, (double)(t3 - t2) / 1e6, n, bad,
           errors, told, result, gap, stall, stall_at, death_cpu,
           len ? list : "-");
    fflush(stdout);
    free(dead);
    free(failed);
    free(masks);
    free(rec);
    free(in);
    free(out);
    free(s.told);
    return bad == 0 && errors == 0 && fst == UCFT_OK ? 0 : 1;
}
