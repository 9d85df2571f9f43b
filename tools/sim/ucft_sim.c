/*
 * ucft-sim: runs one collective algorithm on the simulated transport at up
 * to millions of ranks and reports simulated latency, message and event
 * counts, wall time and peak memory; optionally sweeps the rank count and
 * writes CSV. See docs/sim.md.
 */
#include "simrun.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BUF_BYTES (4ull << 30)

typedef struct opts {
    const char *op, *alg;
    int ranks;
    size_t size;
    int root;
    int fail;
    uint64_t seed;
    sim_loggp_t loggp;
    int notify;
    uint64_t detect_delay_ns;
    uint64_t max_events;
    int json;
    simrun_fail_t *fails;
    size_t nfails;
    int *sweep;
    size_t nsweep;
    const char *csv;
} opts_t;

static void usage(FILE *f)
{
    fprintf(
        f, "Usage: ucft-sim --op OP [--alg ALG] --ranks N [options]\n"
           "Runs one collective on the simulated (LogGP) transport.\n\n"
           "  --op OP              operation (see --list)\n"
           "  --alg ALG            algorithm (default: the first for OP)\n"
           "  --ranks N            number of ranks: 1..16777216, or 2^k\n"
           "  --size BYTES         payload per rank (default 8)\n"
           "  --root R             root of rooted operations (default 0)\n"
           "  --fail K             K random ranks (from the seed, never the\n"
           "                       root) fail before the operation\n"
           "  --fail-at r@k,...    rank r dies before its k-th send of the op\n"
           "  --kill-at r@T,...    rank r dies at simulated time T (us)\n"
           "  --fail-start r,...   rank r dies before it starts the op\n"
           "  --seed S             seed for random failure plans (default 1)\n"
           "  --loggp L,o,g,G      L,o,g in us, G in ns/byte\n"
           "                       (default 1,0.3,0.4,0.08)\n"
           "  --detect-delay US    failure notification delay (default 1000)\n"
           "  --no-notify          no failure notification to survivors\n"
           "  --max-events N       stop after N events (default: none)\n"
           "  --json               one JSON object instead of text\n"
           "  --sweep-ranks LIST   N1,N2,... or pow2:MAX or pow2:MIN:MAX;\n"
           "                       one CSV line per N (ignores --ranks)\n"
           "  --csv FILE           CSV output file for a sweep (default "
           "stdout)\n"
           "  --list               list operations and algorithms\n"
           "  -h, --help           this help\n"
           "Exit status: 0 ran, 1 the run failed or gave wrong data, 2 bad "
           "options.\n");
}

static int bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "ucft-sim: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'ucft-sim --help'.\n");
    return 2;
}

/* Unsigned decimal, or 2^k. */
static int parse_u64(const char *t, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (t == NULL || *t == '\0' || *t == '-')
        return -1;
    errno = 0;
    if (t[0] == '2' && t[1] == '^') {
        v = strtoull(t + 2, &end, 10);
        if (errno || *end || end == t + 2 || v > 62)
            return -1;
        v = 1ull << v;
    } else {
        v = strtoull(t, &end, 10);
        if (errno || *end || end == t)
            return -1;
    }
    if (v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *t, int min, int max, int *out)
{
    uint64_t v;
    if (parse_u64(t, (uint64_t)max, &v) != 0 || (int64_t)v < min)
        return -1;
    *out = (int)v;
    return 0;
}

static int add_fail(opts_t *o, const simrun_fail_t *f)
{
    simrun_fail_t *n = realloc(o->fails, (o->nfails + 1) * sizeof(*n));
    if (n == NULL)
        return -1;
    o->fails = n;
    o->fails[o->nfails++] = *f;
    return 0;
}

/* "r@x,r@x,..." or (kind BEFORE_OP) "r,r,...". */
static int parse_fails(opts_t *o, const char *text, simrun_fail_kind_t kind)
{
    char *copy = strdup(text), *save = NULL;
    int rc = 0;

    if (copy == NULL)
        return -1;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0;
         tok = strtok_r(NULL, ",", &save)) {
        simrun_fail_t f = {.kind = kind};
        char *at = strchr(tok, '@');
        if ((kind == SIMRUN_FAIL_BEFORE_OP) != (at == NULL)) {
            rc = -1;
            break;
        }
        if (at != NULL)
            *at = '\0';
        if (parse_int(tok, 0, (int)UCFT_TAG_MAX_RANKS - 1, &f.rank) != 0) {
            rc = -1;
            break;
        }
        if (kind == SIMRUN_FAIL_BEFORE_SEND) {
            uint64_t k;
            rc = parse_u64(at + 1, UINT32_MAX, &k) || k == 0 ? -1 : 0;
            f.k = (unsigned)k;
        } else if (kind == SIMRUN_FAIL_AT_TIME) {
            char *end;
            double us = strtod(at + 1, &end);
            rc = (end == at + 1 || *end || us < 0 || us > 1e12) ? -1 : 0;
            f.time = (uint64_t)(us * 1000.0 + 0.5);
        }
        if (rc == 0)
            rc = add_fail(o, &f);
    }
    free(copy);
    return rc;
}

static int parse_sweep(opts_t *o, const char *text)
{
    uint64_t lo = 2, hi;
    if (strncmp(text, "pow2:", 5) == 0) {
        const char *a = text + 5, *colon = strchr(a, ':');
        char tmp[32];
        if (colon != NULL) {
            if ((size_t)(colon - a) >= sizeof(tmp))
                return -1;
            memcpy(tmp, a, (size_t)(colon - a));
            tmp[colon - a] = '\0';
            if (parse_u64(tmp, UCFT_TAG_MAX_RANKS, &lo) != 0 || lo == 0)
                return -1;
            a = colon + 1;
        }
        if (parse_u64(a, UCFT_TAG_MAX_RANKS, &hi) != 0 || hi < lo)
            return -1;
        for (uint64_t n = 1; n <= hi; n *= 2) {
            if (n < lo)
                continue;
            int *s = realloc(o->sweep, (o->nsweep + 1) * sizeof(*s));
            if (s == NULL)
                return -1;
            o->sweep = s;
            o->sweep[o->nsweep++] = (int)n;
        }
        return o->nsweep ? 0 : -1;
    }
    char *copy = strdup(text), *save = NULL;
    int rc = 0;
    if (copy == NULL)
        return -1;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0;
         tok = strtok_r(NULL, ",", &save)) {
        int n;
        int *s = realloc(o->sweep, (o->nsweep + 1) * sizeof(*s));
        if (s == NULL || parse_int(tok, 1, (int)UCFT_TAG_MAX_RANKS, &n)) {
            if (s != NULL)
                o->sweep = s;
            rc = -1;
            break;
        }
        o->sweep = s;
        o->sweep[o->nsweep++] = n;
    }
    free(copy);
    return rc == 0 && o->nsweep ? 0 : -1;
}

enum {
    OPT_OP = 256,
    OPT_ALG,
    OPT_RANKS,
    OPT_SIZE,
    OPT_ROOT,
    OPT_FAIL,
    OPT_FAIL_AT,
    OPT_KILL_AT,
    OPT_FAIL_START,
    OPT_SEED,
    OPT_LOGGP,
    OPT_DETECT,
    OPT_NO_NOTIFY,
    OPT_MAX_EVENTS,
    OPT_JSON,
    OPT_SWEEP,
    OPT_CSV,
    OPT_LIST,
};

static const struct option long_opts[] = {
    {"op", required_argument, NULL, OPT_OP},
    {"alg", required_argument, NULL, OPT_ALG},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"size", required_argument, NULL, OPT_SIZE},
    {"root", required_argument, NULL, OPT_ROOT},
    {"fail", required_argument, NULL, OPT_FAIL},
    {"fail-at", required_argument, NULL, OPT_FAIL_AT},
    {"kill-at", required_argument, NULL, OPT_KILL_AT},
    {"fail-start", required_argument, NULL, OPT_FAIL_START},
    {"seed", required_argument, NULL, OPT_SEED},
    {"loggp", required_argument, NULL, OPT_LOGGP},
    {"detect-delay", required_argument, NULL, OPT_DETECT},
    {"no-notify", no_argument, NULL, OPT_NO_NOTIFY},
    {"max-events", required_argument, NULL, OPT_MAX_EVENTS},
    {"json", no_argument, NULL, OPT_JSON},
    {"sweep-ranks", required_argument, NULL, OPT_SWEEP},
    {"csv", required_argument, NULL, OPT_CSV},
    {"list", no_argument, NULL, OPT_LIST},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void list_ops(void)
{
    for (size_t i = 0; coll_op_table[i] != NULL; i++)
        printf("%-8s %-10s %s\n", coll_op_table[i]->op, coll_op_table[i]->alg,
               coll_op_table[i]->doc);
}

/* Returns -1 to go on, else an exit status. */
static int parse(opts_t *o, int argc, char **argv)
{
    int c;
    uint64_t v;
    double us;
    char *end;

    while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_OP:
            o->op = optarg;
            break;
        case OPT_ALG:
            o->alg = optarg;
            break;
        case OPT_RANKS:
            if (parse_int(optarg, 1, (int)UCFT_TAG_MAX_RANKS, &o->ranks))
                return bad("--ranks '%s': want 1..16777216 or 2^k", optarg);
            break;
        case OPT_SIZE:
            if (parse_u64(optarg, 1ull << 32, &v))
                return bad("--size '%s': want bytes, 0..2^32", optarg);
            o->size = (size_t)v;
            break;
        case OPT_ROOT:
            if (parse_int(optarg, 0, (int)UCFT_TAG_MAX_RANKS - 1, &o->root))
                return bad("--root '%s': want a rank", optarg);
            break;
        case OPT_FAIL:
            if (parse_int(optarg, 0, (int)UCFT_TAG_MAX_RANKS, &o->fail))
                return bad("--fail '%s': want a count of ranks", optarg);
            break;
        case OPT_FAIL_AT:
            if (parse_fails(o, optarg, SIMRUN_FAIL_BEFORE_SEND))
                return bad("--fail-at '%s': want r@k,... (k >= 1)", optarg);
            break;
        case OPT_KILL_AT:
            if (parse_fails(o, optarg, SIMRUN_FAIL_AT_TIME))
                return bad("--kill-at '%s': want r@microseconds,...", optarg);
            break;
        case OPT_FAIL_START:
            if (parse_fails(o, optarg, SIMRUN_FAIL_BEFORE_OP))
                return bad("--fail-start '%s': want r,r,...", optarg);
            break;
        case OPT_SEED:
            if (parse_u64(optarg, UINT64_MAX, &o->seed))
                return bad("--seed '%s': want an unsigned integer", optarg);
            break;
        case OPT_LOGGP:
            if (sim_loggp_parse(optarg, &o->loggp))
                return bad("--loggp '%s': want L,o,g,G (us,us,us,ns/byte)",
                           optarg);
            break;
        case OPT_DETECT:
            us = strtod(optarg, &end);
            if (end == optarg || *end || us < 0 || us > 1e12)
                return bad("--detect-delay '%s': want microseconds", optarg);
            o->detect_delay_ns = (uint64_t)(us * 1000.0 + 0.5);
            break;
        case OPT_NO_NOTIFY:
            o->notify = 0;
            break;
        case OPT_MAX_EVENTS:
            if (parse_u64(optarg, UINT64_MAX, &o->max_events))
                return bad("--max-events '%s': want a count", optarg);
            break;
        case OPT_JSON:
            o->json = 1;
            break;
        case OPT_SWEEP:
            if (parse_sweep(o, optarg))
                return bad("--sweep-ranks '%s': want N1,N2,... or "
                           "pow2:MAX or pow2:MIN:MAX",
                           optarg);
            break;
        case OPT_CSV:
            o->csv = optarg;
            break;
        case OPT_LIST:
            list_ops();
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            fprintf(stderr, "Try 'ucft-sim --help'.\n");
            return 2;
        }
    }
    if (optind < argc)
        return bad("unexpected argument '%s'", argv[optind]);
    if (o->op == NULL)
        return bad("%s", "--op is required (see --list)");
    if (coll_op_find(o->op, o->alg) == NULL)
        return bad("unknown operation/algorithm '%s' (see --list)",
                   o->alg ? o->alg : o->op);
    if (o->ranks == 0 && o->nsweep == 0)
        return bad("%s", "--ranks or --sweep-ranks is required");
    return -1;
}

/* Checks the options that depend on N; returns 0 or prints and returns 2. */
static int check_n(const opts_t *o, const coll_op_ops_t *op, int n)
{
    char msg[64];
    snprintf(msg, sizeof(msg), "%d", n);
    if (o->root >= n)
        return bad("--root is not below the rank count %s", msg);
    if (o->fail > n - 1)
        return bad("--fail: more failures than non-root ranks (%s)", msg);
    for (size_t i = 0; i < o->nfails; i++)
        if (o->fails[i].rank >= n)
            return bad("a failure names a rank not below %s", msg);
    if ((uint64_t)o->size * op->buf_mult * (uint64_t)n > MAX_BUF_BYTES)
        return bad("--size times ranks needs more than 4 GiB of buffers "
                   "(N = %s)",
                   msg);
    return 0;
}

static ucft_status_t run_one(const opts_t *o, const coll_op_ops_t *op, int n,
                             simrun_result_t *res)
{
    simrun_params_t p;

    simrun_params_default(&p, op, n);
    p.sim.loggp = o->loggp;
    p.sim.seed = o->seed;
    p.sim.notify = o->notify ? SIM_NOTIFY_DELAY : SIM_NOTIFY_NONE;
    p.sim.detect_delay_ns = o->detect_delay_ns;
    p.len = o->size;
    p.root = o->root;
    p.fail_random = o->fail;
    p.fails = o->fails;
    p.nfails = o->nfails;
    p.max_events = o->max_events;
    return simrun_run(&p, res, NULL);
}

static void print_text(const opts_t *o, const coll_op_ops_t *op,
                       const simrun_result_t *r)
{
    printf("%s/%s on %d ranks, %zu bytes, seed %" PRIu64 "\n", op->op, op->alg,
           r->ranks, o->size, o->seed);
    printf("  sim latency   %.3f us\n", (double)r->sim_latency_ns / 1e3);
    printf("  messages      %" PRIu64 " (%" PRIu64 " bytes, %" PRIu64
           " dropped)\n",
           r->stats.messages, r->stats.bytes, r->stats.dropped);
    printf("  events        %" PRIu64 " (%.3g events/s)\n", r->stats.events,
           r->wall_s > 0 ? (double)r->stats.events / r->wall_s : 0.0);
    printf("  delivered     %d of %d live ranks (%d dead, %d failed)%s\n",
           r->completed, r->live, r->ranks - r->live, r->failed_ops,
           r->bounded ? " [stopped by --max-events]" : "");
    if (r->data_errors)
        printf("  DATA ERRORS   %d ranks\n", r->data_errors);
    printf("  wall          %.3f s\n", r->wall_s);
    printf("  peak RSS      %.1f MB\n", simrun_peak_rss_mb());
    printf("  trace hash    0x%016" PRIx64 "\n", r->trace_hash);
}

static void print_json(const opts_t *o, const coll_op_ops_t *op,
                       const simrun_result_t *r)
{
    printf("{\"op\":\"%s\",\"alg\":\"%s\",\"ranks\":%d,\"size\":%zu,"
           "\"seed\":%" PRIu64 ",\"dead\":%d,\"sim_latency_us\":%.3f,"
           "\"messages\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"dropped\":%" PRIu64
           ",\"events\":%" PRIu64
           ",\"delivered\":%d,\"live\":%d,\"failed_ops\":%d,"
           "\"data_errors\":%d,\"bounded\":%s,\"wall_s\":%.3f,"
           "\"events_per_s\":%.0f,\"peak_rss_mb\":%.1f,"
           "\"trace_hash\":\"0x%016" PRIx64 "\"}\n",
           op->op, op->alg, r->ranks, o->size, o->seed, r->ranks - r->live,
           (double)r->sim_latency_ns / 1e3, r->stats.messages, r->stats.bytes,
           r->stats.dropped, r->stats.events, r->completed, r->live,
           r->failed_ops, r->data_errors, r->bounded ? "true" : "false",
           r->wall_s, r->wall_s > 0 ? (double)r->stats.events / r->wall_s : 0.0,
           simrun_peak_rss_mb(), r->trace_hash);
}

static int sweep(const opts_t *o, const coll_op_ops_t *op)
{
    FILE *f = stdout;
    int rc = 0;

    for (size_t i = 0; i < o->nsweep; i++)
        if (check_n(o, op, o->sweep[i]))
            return 2;
    if (o->csv != NULL && (f = fopen(o->csv, "w")) == NULL) {
        fprintf(stderr, "ucft-sim: cannot write '%s': %s\n", o->csv,
                strerror(errno));
        return 1;
    }
    fprintf(f, "op,alg,ranks,size,seed,dead,sim_latency_us,messages,bytes,"
               "events,delivered,live,wall_s,events_per_s,peak_rss_mb,"
               "trace_hash\n");
    for (size_t i = 0; i < o->nsweep; i++) {
        simrun_result_t r;
        ucft_status_t st = run_one(o, op, o->sweep[i], &r);
        if (st != UCFT_OK) {
            fprintf(stderr, "ucft-sim: N=%d: %s\n", o->sweep[i],
                    ucft_status_string(st));
            rc = 1;
            break;
        }
        fprintf(f,
                "%s,%s,%d,%zu,%" PRIu64 ",%d,%.3f,%" PRIu64 ",%" PRIu64
                ",%" PRIu64 ",%d,%d,%.3f,%.0f,%.1f,0x%016" PRIx64 "\n",
                op->op, op->alg, r.ranks, o->size, o->seed, r.ranks - r.live,
                (double)r.sim_latency_ns / 1e3, r.stats.messages, r.stats.bytes,
                r.stats.events, r.completed, r.live, r.wall_s,
                r.wall_s > 0 ? (double)r.stats.events / r.wall_s : 0.0,
                simrun_peak_rss_mb(), r.trace_hash);
        fflush(f);
        if (r.data_errors)
            rc = 1;
    }
    if (f != stdout)
        fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    opts_t o = {.seed = 1,
                .size = 8,
                .notify = 1,
                .detect_delay_ns = SIM_DEFAULT_DETECT_DELAY_NS,
                .loggp = {SIM_LOGGP_DEFAULT_L_NS, SIM_LOGGP_DEFAULT_O_NS,
                          SIM_LOGGP_DEFAULT_G_NS, SIM_LOGGP_DEFAULT_GB_PS}};
    int rc = parse(&o, argc, argv);
    const coll_op_ops_t *op;
    simrun_result_t r;

    if (rc >= 0)
        goto out;
    op = coll_op_find(o.op, o.alg);
    if (o.nsweep > 0) {
        rc = sweep(&o, op);
        goto out;
    }
    if ((rc = check_n(&o, op, o.ranks)) != 0)
        goto out;
    ucft_status_t st = run_one(&o, op, o.ranks, &r);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft-sim: %s\n", ucft_status_string(st));
        rc = 1;
        goto out;
    }
    if (o.json)
        print_json(&o, op, &r);
    else
        print_text(&o, op, &r);
    rc = r.data_errors ? 1 : 0;
out:
    free(o.fails);
    free(o.sweep);
    return rc;
}
