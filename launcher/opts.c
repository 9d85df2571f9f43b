/*
 * ucftrun option parsing: a table of options and one apply function per
 * option. See opts.h for the grammar.
 */
#include "launcher/opts.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Sanity bounds: more ranks than this on one node is a typo. */
#define OPTS_MAX_PROCS   4096
#define OPTS_MAX_SECONDS 1e7

typedef int (*opt_apply_fn)(ucftrun_opts_t *o, const char *arg, char *err,
                            size_t errlen);

typedef struct opt_def {
    const char *lng;  /* long name without "--" */
    const char *shrt; /* single-dash name without "-" ("n", "np"), or NULL */
    int has_arg;
    opt_apply_fn apply;
} opt_def_t;

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int ucftrun_opts_parse_seconds(const char *text, uint64_t *ns)
{
    char *end;
    double s;

    /* Digits and one '.', nothing else: rejects "inf", "nan", "0x10",
     * "-1", " 1" and "1e3" (the last one only for simplicity). */
    if (text == NULL || text[0] == '\0' ||
        strspn(text, "0123456789.") != strlen(text))
        return -1;
    errno = 0;
    s = strtod(text, &end);
    if (errno != 0 || *end != '\0' || end == text || !isfinite(s) || s < 0 ||
        s > OPTS_MAX_SECONDS)
        return -1;
    *ns = (uint64_t)llround(s * 1e9);
    return 0;
}

static int parse_int(const char *text, long min, long max, long *out)
{
    char *end;
    long v;

    if (text == NULL || text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int ucftrun_opts_parse_at(const char *text, int *target, uint64_t *at_ns)
{
    const char *at;
    char rank[32];
    long r;
    uint64_t ns;

    if (text == NULL || (at = strchr(text, '@')) == NULL)
        return -1;
    if ((size_t)(at - text) >= sizeof(rank))
        return -1;
    memcpy(rank, text, (size_t)(at - text));
    rank[at - text] = '\0';
    if (parse_int(rank, 0, INT_MAX, &r) != 0 ||
        ucftrun_opts_parse_seconds(at + 1, &ns) != 0)
        return -1;
    *target = (int)r;
    *at_ns = ns;
    return 0;
}

static int apply_np(ucftrun_opts_t *o, const char *arg, char *err,
                    size_t errlen)
{
    long n;

    if (parse_int(arg, 1, OPTS_MAX_PROCS, &n) != 0) {
        set_err(err, errlen,
                "bad number of ranks '%s' (expected an integer from 1 to %d)",
                arg, OPTS_MAX_PROCS);
        return -1;
    }
    o->nprocs = (int)n;
    return 0;
}

static int apply_tag_output(ucftrun_opts_t *o, const char *arg, char *err,
                            size_t errlen)
{
    o->tag_output = 1;
    return 0;
}

static int apply_timeout(ucftrun_opts_t *o, const char *arg, char *err,
                         size_t errlen)
{
    uint64_t ns;

    if (ucftrun_opts_parse_seconds(arg, &ns) != 0 || ns == 0) {
        set_err(err, errlen,
                "bad --timeout value '%s' (expected seconds > 0, e.g. 30 or "
                "2.5)",
                arg);
        return -1;
    }
    o->timeout_ns = ns;
    return 0;
}

static int apply_bind_to(ucftrun_opts_t *o, const char *arg, char *err,
                         size_t errlen)
{
    if (strcmp(arg, "core") == 0) {
        o->bind = UCFTRUN_BIND_CORE;
    } else if (strcmp(arg, "none") == 0) {
        o->bind = UCFTRUN_BIND_NONE;
    } else {
        set_err(err, errlen, "bad --bind-to value '%s' (expected core or none)",
                arg);
        return -1;
    }
    return 0;
}

static int apply_nodes(ucftrun_opts_t *o, const char *arg, char *err,
                       size_t errlen)
{
    long k;

    if (parse_int(arg, 1, OPTS_MAX_PROCS, &k) != 0) {
        set_err(err, errlen,
                "bad --nodes value '%s' (expected an integer from 1 to %d)",
                arg, OPTS_MAX_PROCS);
        return -1;
    }
    o->nnodes = (int)k;
    return 0;
}

static int apply_map_by(ucftrun_opts_t *o, const char *arg, char *err,
                        size_t errlen)
{
    if (strcmp(arg, "slot") == 0) {
        o->map_by = UCFTRUN_MAP_SLOT;
    } else if (strcmp(arg, "node") == 0) {
        o->map_by = UCFTRUN_MAP_NODE;
    } else {
        set_err(err, errlen, "bad --map-by value '%s' (expected slot or node)",
                arg);
        return -1;
    }
    return 0;
}

static int add_inject(ucftrun_opts_t *o, ucftrun_inject_kind_t kind,
                      ucftrun_target_kind_t target_kind, const char *name,
                      const char *arg, char *err, size_t errlen)
{
    ucftrun_inject_t inj = {.kind = kind, .target_kind = target_kind};

    if (ucftrun_opts_parse_at(arg, &inj.target, &inj.at_ns) != 0) {
        set_err(err, errlen,
                "bad --%s value '%s' (expected %s@SECONDS, e.g. 3@0.5)", name,
                arg, target_kind == UCFTRUN_TARGET_NODE ? "NODE" : "RANK");
        return -1;
    }
    if (o->ninjects == o->injects_cap) {
        size_t cap = o->injects_cap ? 2 * o->injects_cap : 8;
        ucftrun_inject_t *p = realloc(o->injects, cap * sizeof(*p));

        if (p == NULL) {
            set_err(err, errlen, "out of memory");
            return -1;
        }
        o->injects = p;
        o->injects_cap = cap;
    }
    o->injects[o->ninjects++] = inj;
    return 0;
}

static int apply_kill(ucftrun_opts_t *o, const char *arg, char *err,
                      size_t errlen)
{
    return add_inject(o, UCFTRUN_INJECT_KILL, UCFTRUN_TARGET_RANK, "kill", arg,
                      err, errlen);
}

static int apply_kill_node(ucftrun_opts_t *o, const char *arg, char *err,
                           size_t errlen)
{
    return add_inject(o, UCFTRUN_INJECT_KILL, UCFTRUN_TARGET_NODE, "kill-node",
                      arg, err, errlen);
}

static int apply_stop(ucftrun_opts_t *o, const char *arg, char *err,
                      size_t errlen)
{
    return add_inject(o, UCFTRUN_INJECT_STOP, UCFTRUN_TARGET_RANK, "stop", arg,
                      err, errlen);
}

static int apply_cut_node(ucftrun_opts_t *o, const char *arg, char *err,
                          size_t errlen)
{
    return add_inject(o, UCFTRUN_INJECT_CUT, UCFTRUN_TARGET_NODE, "cut-node",
                      arg, err, errlen);
}

static int apply_heal_node(ucftrun_opts_t *o, const char *arg, char *err,
                           size_t errlen)
{
    return add_inject(o, UCFTRUN_INJECT_HEAL, UCFTRUN_TARGET_NODE, "heal-node",
                      arg, err, errlen);
}

static int apply_netns(ucftrun_opts_t *o, const char *arg, char *err,
                       size_t errlen)
{
    o->netns = 1;
    return 0;
}

/* "0,1" (at most 64 nodes, each < 64) into a bit mask; 0 if malformed. */
static uint64_t parse_group(const char *text, size_t len)
{
    uint64_t mask = 0;
    char word[8];

    while (len > 0) {
        size_t w = 0;
        while (w < len && text[w] != ',')
            w++;
        long k;
        if (w == 0 || w >= sizeof(word))
            return 0;
        memcpy(word, text, w);
        word[w] = '\0';
        if (parse_int(word, 0, 63, &k) != 0 || (mask >> k & 1))
            return 0;
        mask |= 1ull << k;
        text += w;
        len -= w;
        if (len > 0) { /* the comma */
            text++;
            len--;
            if (len == 0)
                return 0;
        }
    }
    return mask;
}

/* --partition A/B@S, e.g. 0,1/2,3@2.5. */
static int apply_partition(ucftrun_opts_t *o, const char *arg, char *err,
                           size_t errlen)
{
    const char *slash = strchr(arg, '/'), *at = strchr(arg, '@');
    uint64_t a, b, ns;

    if (slash == NULL || at == NULL || at < slash ||
        (a = parse_group(arg, (size_t)(slash - arg))) == 0 ||
        (b = parse_group(slash + 1, (size_t)(at - slash - 1))) == 0 ||
        (a & b) != 0 || ucftrun_opts_parse_seconds(at + 1, &ns) != 0) {
        set_err(err, errlen,
                "bad --partition value '%s' (expected two disjoint groups of "
                "nodes and a time, e.g. 0,1/2,3@2.5)",
                arg);
        return -1;
    }
    if (add_inject(o, UCFTRUN_INJECT_PARTITION, UCFTRUN_TARGET_NODE,
                   "partition", "0@0", err, errlen) != 0)
        return -1;
    ucftrun_inject_t *inj = &o->injects[o->ninjects - 1];
    inj->at_ns = ns;
    inj->side = a;
    inj->other = b;
    return 0;
}

/* A delay for --netem: digits and one '.', then us, ms (the default) or
 * s; at most 10 s. */
static int parse_delay(const char *text, size_t len, uint64_t *ns)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"", 1e6}};
    char num[32];
    size_t digits = 0;

    while (digits < len && strchr("0123456789.", text[digits]) != NULL &&
           text[digits] != '\0')
        digits++;
    if (digits == 0 || digits >= sizeof(num))
        return -1;
    memcpy(num, text, digits);
    num[digits] = '\0';
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
        size_t ul = strlen(units[u].unit);
        if (len - digits != ul || strncmp(text + digits, units[u].unit, ul))
            continue;
        uint64_t sec_ns;
        if (ucftrun_opts_parse_seconds(num, &sec_ns) != 0)
            return -1;
        double v = (double)sec_ns / 1e9 * units[u].scale; /* ns */
        if (v > 10e9)
            return -1;
        *ns = (uint64_t)llround(v);
        return 0;
    }
    return -1;
}

/* One "loss=P%" ("%" optional, P from 0 to 100), "delay=T" or
 * "jitter=T" item of --netem (len bytes at item). */
static int netem_item(ucftrun_netem_t *m, const char *item, size_t len)
{
    char pct[8];
    long p;

    if (len > 5 && strncmp(item, "loss=", 5) == 0) {
        size_t plen = len - 5;
        if (item[len - 1] == '%')
            plen--;
        if (plen == 0 || plen >= sizeof(pct))
            return -1;
        memcpy(pct, item + 5, plen);
        pct[plen] = '\0';
        if (parse_int(pct, 0, 100, &p) != 0)
            return -1;
        m->loss_pct = (int)p;
        return 0;
    }
    if (len > 6 && strncmp(item, "delay=", 6) == 0)
        return parse_delay(item + 6, len - 6, &m->delay_ns);
    if (len > 7 && strncmp(item, "jitter=", 7) == 0)
        return parse_delay(item + 7, len - 7, &m->jitter_ns);
    return -1;
}

/* --netem K:ITEM[,ITEM...]: loss=P%, delay=T, jitter=T (T: us, ms or s;
 * ms if none); the jitter needs a delay at least as large. */
static int apply_netem(ucftrun_opts_t *o, const char *arg, char *err,
                       size_t errlen)
{
    const char *colon = strchr(arg, ':');
    char node[16];
    long k;
    ucftrun_netem_t m = {0};

    if (colon == NULL || (size_t)(colon - arg) >= sizeof(node) ||
        colon[1] == '\0')
        goto bad;
    memcpy(node, arg, (size_t)(colon - arg));
    node[colon - arg] = '\0';
    if (parse_int(node, 0, INT_MAX, &k) != 0)
        goto bad;
    for (const char *item = colon + 1; *item != '\0';) {
        size_t len = strcspn(item, ",");
        if (netem_item(&m, item, len) != 0)
            goto bad;
        item += len;
        if (*item == ',' && *++item == '\0')
            goto bad;
    }
    if (m.jitter_ns > m.delay_ns) {
        set_err(err, errlen,
                "bad --netem value '%s': the jitter exceeds the delay", arg);
        return -1;
    }
    if (o->nnetem == UCFTRUN_MAX_NETEM) {
        set_err(err, errlen, "more than %d --netem options", UCFTRUN_MAX_NETEM);
        return -1;
    }
    m.node = (int)k;
    o->netem[o->nnetem++] = m;
    return 0;
bad:
    set_err(err, errlen,
            "bad --netem value '%s' (expected NODE:ITEM[,ITEM...] with items "
            "loss=PERCENT, delay=TIME, jitter=TIME, e.g. "
            "1:loss=5%%,delay=2ms,jitter=1ms)",
            arg);
    return -1;
}

static int apply_times_from(ucftrun_opts_t *o, const char *arg, char *err,
                            size_t errlen)
{
    if (strcmp(arg, "start") == 0 || strcmp(arg, "connected") == 0) {
        o->times_from_connected = arg[0] == 'c';
        return 0;
    }
    set_err(err, errlen,
            "bad --times-from value '%s' (expected start or connected)", arg);
    return -1;
}

static int apply_abort_on_failure(ucftrun_opts_t *o, const char *arg, char *err,
                                  size_t errlen)
{
    o->abort_on_failure = 1;
    return 0;
}

static int apply_verbose(ucftrun_opts_t *o, const char *arg, char *err,
                         size_t errlen)
{
    o->verbose++;
    return 0;
}

static const opt_def_t opt_table[] = {
    {"np", "n", 1, apply_np},
    {NULL, "np", 1, apply_np},
    {"tag-output", NULL, 0, apply_tag_output},
    {"timeout", NULL, 1, apply_timeout},
    {"bind-to", NULL, 1, apply_bind_to},
    {"nodes", NULL, 1, apply_nodes},
    {"map-by", NULL, 1, apply_map_by},
    {"kill", NULL, 1, apply_kill},
    {"kill-node", NULL, 1, apply_kill_node},
    {"stop", NULL, 1, apply_stop},
    {"netns", NULL, 0, apply_netns},
    {"cut-node", NULL, 1, apply_cut_node},
    {"heal-node", NULL, 1, apply_heal_node},
    {"partition", NULL, 1, apply_partition},
    {"netem", NULL, 1, apply_netem},
    {"times-from", NULL, 1, apply_times_from},
    {"abort-on-failure", NULL, 0, apply_abort_on_failure},
    {"verbose", "v", 0, apply_verbose},
    /* --help and --version are handled before the table lookup. */
};

#define OPT_TABLE_LEN (sizeof(opt_table) / sizeof(opt_table[0]))

/* Finds the option for word `w` ("-n", "--timeout=3", "-n4"). Sets *inline_arg
 * to the text after '=' or after a single-letter short option. */
static const opt_def_t *opt_lookup(const char *w, const char **inline_arg)
{
    *inline_arg = NULL;
    if (w[1] == '-') {
        const char *name = w + 2;
        size_t len = strcspn(name, "=");

        for (size_t i = 0; i < OPT_TABLE_LEN; i++) {
            const char *l = opt_table[i].lng;
            if (l != NULL && strlen(l) == len && strncmp(l, name, len) == 0) {
                if (name[len] == '=')
                    *inline_arg = name + len + 1;
                return &opt_table[i];
            }
        }
        return NULL;
    }
    for (size_t i = 0; i < OPT_TABLE_LEN; i++) {
        const char *s = opt_table[i].shrt;
        if (s != NULL && strcmp(s, w + 1) == 0)
            return &opt_table[i];
    }
    /* "-n4": a one-letter option with its value attached. */
    for (size_t i = 0; i < OPT_TABLE_LEN; i++) {
        const char *s = opt_table[i].shrt;
        if (s != NULL && s[1] == '\0' && opt_table[i].has_arg && w[1] == s[0] &&
            w[2] != '\0') {
            *inline_arg = w + 2;
            return &opt_table[i];
        }
    }
    return NULL;
}

/* Checks that need the whole command line (-n may come last). */
static int validate(const ucftrun_opts_t *o, char *err, size_t errlen)
{
    if (o->nnodes > o->nprocs) {
        set_err(err, errlen,
                "--nodes %d is more than the number of ranks (%d): every "
                "pretend node needs a rank",
                o->nnodes, o->nprocs);
        return -1;
    }
    if (o->nnodes > 0 && o->map_by == UCFTRUN_MAP_SLOT) {
        int per_node = (o->nprocs + o->nnodes - 1) / o->nnodes;

        /* ceil(n/K) ranks per node can leave the last nodes empty (6
         * ranks on 4 nodes: 2, 2, 2, 0); PMIx has no empty nodes in a
         * job's map. */
        if ((o->nnodes - 1) * per_node >= o->nprocs) {
            set_err(err, errlen,
                    "--nodes %d --map-by slot leaves node %d empty (%d "
                    "ranks, %d per node): every pretend node needs a rank; "
                    "use --map-by node or another number of nodes",
                    o->nnodes, o->nnodes - 1, o->nprocs, per_node);
            return -1;
        }
    }
    if (o->netns && o->nnodes == 0) {
        set_err(err, errlen,
                "--netns needs --nodes K (each pretend node becomes a "
                "network namespace)");
        return -1;
    }
    for (size_t k = 0; k < o->nnetem; k++) {
        if (!o->netns) {
            set_err(err, errlen, "--netem needs --netns");
            return -1;
        }
        if (o->netem[k].node >= o->nnodes) {
            set_err(err, errlen, "--netem node %d is out of range (%d nodes)",
                    o->netem[k].node, o->nnodes);
            return -1;
        }
    }
    for (size_t k = 0; k < o->ninjects; k++) {
        const ucftrun_inject_t *inj = &o->injects[k];
        int net = inj->kind == UCFTRUN_INJECT_CUT ||
                  inj->kind == UCFTRUN_INJECT_HEAL ||
                  inj->kind == UCFTRUN_INJECT_PARTITION;
        const char *name = inj->kind == UCFTRUN_INJECT_CUT    ? "cut-node"
                           : inj->kind == UCFTRUN_INJECT_HEAL ? "heal-node"
                                                              : "partition";

        if (net && !o->netns) {
            set_err(err, errlen, "--%s needs --netns", name);
            return -1;
        }
        if (inj->kind == UCFTRUN_INJECT_PARTITION) {
            uint64_t all = o->nnodes >= 64 ? ~0ull : (1ull << o->nnodes) - 1;
            if (o->nnodes > 64 || (inj->side | inj->other) != all) {
                set_err(err, errlen,
                        "--partition must name every node once (0 to %d)",
                        o->nnodes - 1);
                return -1;
            }
            continue;
        }
        if (inj->target_kind == UCFTRUN_TARGET_NODE) {
            if (o->nnodes == 0) {
                set_err(err, errlen,
                        "--%s %d needs --nodes K (the job runs on "
                        "pretend nodes only with --nodes)",
                        net ? name : "kill-node", inj->target);
                return -1;
            }
            if (inj->target >= o->nnodes) {
                set_err(err, errlen,
                        "--%s node %d is out of range (the job has %d "
                        "node%s, 0 to %d)",
                        net ? name : "kill-node", inj->target, o->nnodes,
                        o->nnodes == 1 ? "" : "s", o->nnodes - 1);
                return -1;
            }
        } else if (inj->target >= o->nprocs) {
            set_err(err, errlen,
                    "--%s rank %d is out of range (the job has %d rank%s)",
                    inj->kind == UCFTRUN_INJECT_KILL ? "kill" : "stop",
                    inj->target, o->nprocs, o->nprocs == 1 ? "" : "s");
            return -1;
        }
    }
    return 0;
}

ucftrun_action_t ucftrun_opts_parse(int argc, char *const argv[],
                                    ucftrun_opts_t *opts, char *err,
                                    size_t errlen)
{
    int i;

    memset(opts, 0, sizeof(*opts));
    set_err(err, errlen, "%s", "");
    for (i = 1; i < argc; i++) {
        const char *w = argv[i];
        const char *arg;
        const opt_def_t *def;

        if (strcmp(w, "--") == 0) {
            i++;
            break;
        }
        if (w[0] != '-' || w[1] == '\0')
            break; /* the program */
        if (strcmp(w, "-h") == 0 || strcmp(w, "--help") == 0)
            return UCFTRUN_ACTION_HELP;
        if (strcmp(w, "--version") == 0 || strcmp(w, "-V") == 0)
            return UCFTRUN_ACTION_VERSION;
        def = opt_lookup(w, &arg);
        if (def == NULL) {
            set_err(err, errlen, "unknown option '%s'", w);
            return UCFTRUN_ACTION_ERROR;
        }
        if (!def->has_arg && arg != NULL) {
            set_err(err, errlen, "option '--%s' takes no value", def->lng);
            return UCFTRUN_ACTION_ERROR;
        }
        if (def->has_arg && arg == NULL) {
            if (i + 1 >= argc) {
                set_err(err, errlen, "option '%s' needs a value", w);
                return UCFTRUN_ACTION_ERROR;
            }
            arg = argv[++i];
        }
        if (def->apply(opts, arg, err, errlen) != 0)
            return UCFTRUN_ACTION_ERROR;
    }

    if (opts->nprocs == 0) {
        set_err(err, errlen, "missing -n N (the number of ranks)");
        return UCFTRUN_ACTION_ERROR;
    }
    if (i >= argc || argv[i][0] == '\0') {
        set_err(err, errlen, "missing program to run");
        return UCFTRUN_ACTION_ERROR;
    }
    if (validate(opts, err, errlen) != 0)
        return UCFTRUN_ACTION_ERROR;
    opts->prog_argv = &argv[i];
    opts->prog_argc = argc - i;
    return UCFTRUN_ACTION_RUN;
}

void ucftrun_opts_free(ucftrun_opts_t *opts)
{
    free(opts->injects);
    opts->injects = NULL;
    opts->ninjects = opts->injects_cap = 0;
}

static int check_exec(const char *file, char *err, size_t errlen)
{
    struct stat st;

    if (stat(file, &st) != 0) {
        set_err(err, errlen, "program '%s' not found (%s)", file,
                strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        set_err(err, errlen, "program '%s' is not a regular file", file);
        return -1;
    }
    if (access(file, X_OK) != 0) {
        set_err(err, errlen, "program '%s' is not executable", file);
        return -1;
    }
    return 0;
}

int ucftrun_opts_find_program(const char *prog, const char *path, char *out,
                              size_t outlen, char *err, size_t errlen)
{
    const char *p;

    if (strchr(prog, '/') != NULL) {
        if (check_exec(prog, err, errlen) != 0)
            return -1;
        if ((size_t)snprintf(out, outlen, "%s", prog) >= outlen) {
            set_err(err, errlen, "program path too long");
            return -1;
        }
        return 0;
    }
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (p = path;; p += strcspn(p, ":") + 1) {
        size_t len = strcspn(p, ":");
        int n;
        struct stat st;

        /* An empty PATH element means the current directory. */
        if (len == 0)
            n = snprintf(out, outlen, "./%s", prog);
        else
            n = snprintf(out, outlen, "%.*s/%s", (int)len, p, prog);
        if (n > 0 && (size_t)n < outlen && stat(out, &st) == 0 &&
            S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        if (p[len] == '\0')
            break;
    }
    set_err(err, errlen, "program '%s' not found in PATH", prog);
    return -1;
}

const char *ucftrun_opts_usage(void)
{
    return "Usage: ucftrun -n N [options] program [args...]\n"
           "Start N ranks of `program` on this machine under a PMIx server.\n"
           "\n"
           "Options:\n"
           "  -n, -np, --np N      number of ranks (required)\n"
           "  --tag-output         prefix each output line with \"[R] \"\n"
           "  --timeout S          kill the job after S seconds (exit 124)\n"
           "  --bind-to core|none  bind rank i to core i mod ncores "
           "(default none)\n"
           "  --nodes K            pretend the job runs on K nodes "
           "(1 <= K <= N)\n"
           "  --map-by slot|node   slot: consecutive ranks fill a node "
           "(default);\n"
           "                       node: rank r on node r mod K\n"
           "  --kill R@S           SIGKILL rank R S seconds after start "
           "(repeatable)\n"
           "  --kill-node K@S      SIGKILL every rank of pretend node K at "
           "S s (repeatable)\n"
           "  --stop R@S           SIGSTOP rank R S seconds after start "
           "(repeatable)\n"
           "  --netns              each pretend node in a network namespace "
           "of its\n"
           "                       own; ranks talk TCP (needs --nodes, root)\n"
           "  --cut-node K@S       cut node K's link at S s (--netns; "
           "repeatable)\n"
           "  --heal-node K@S      bring node K's link back, drop its "
           "partition\n"
           "  --partition A/B@S    split the nodes into groups A and B, e.g.\n"
           "                       0,1/2,3@2 (--netns, at most 64 nodes)\n"
           "  --netem K:loss=P%[,delay=T][,jitter=T]\n"
           "                       drop P % of node K's packets both ways, "
           "delay its\n"
           "                       incoming ones by T +- jitter (--netns)\n"
           "  --times-from start|connected\n"
           "                       count every S above from the start of "
           "the ranks\n"
           "                       (default) or from when the last one "
           "connected\n"
           "                       (its PMIx_Init): a slow start-up then "
           "takes none\n"
           "  --abort-on-failure   kill the job at the first abnormal "
           "death\n"
           "  -v, --verbose        launcher debug messages on stderr\n"
           "  -h, --help           show this help\n"
           "  --version            show the version\n"
           "\n"
           "S may be fractional (0.25). Exit status: 0 if every rank not\n"
           "killed on purpose exited 0; else the first failing rank's exit\n"
           "code or 128+signal; 124 on timeout; 2 for a bad command line.\n"
           "See docs/launcher.md.\n";
}
