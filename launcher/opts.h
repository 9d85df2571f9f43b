/*
 * ucftrun command line. ucftrun_opts_parse() is a pure function from argv to
 * a ucftrun_opts_t (no printing, no exit, no global state such as getopt's
 * optind), so that every accepted and rejected command line can be unit
 * tested.
 *
 * The grammar follows prterun/mpirun: options come first, the first word
 * that is not an option (or the word after "--") is the program, and every
 * word after it belongs to the program. Long options take "--name value" or
 * "--name=value"; "-n 4", "-n4" and "-np 4" are accepted.
 *
 * Adding an option is one row in the table in opts.c plus, when it takes a
 * value, one small parse function. --nodes and --map-by fill the mapping
 * section of this struct (the map itself is launcher/nodes.h); --kill-node
 * is an injection whose target kind is UCFTRUN_TARGET_NODE. The option
 * planned next (--seed S) is one more scalar.
 */
#ifndef UCFTRUN_OPTS_H
#define UCFTRUN_OPTS_H

#include <stddef.h>
#include <stdint.h>

/* Exit status for a bad command line (like many GNU tools). */
#define UCFTRUN_EXIT_USAGE 2

typedef enum ucftrun_action {
    UCFTRUN_ACTION_RUN,     /* run the job */
    UCFTRUN_ACTION_HELP,    /* print ucftrun_opts_usage() and exit 0 */
    UCFTRUN_ACTION_VERSION, /* print the version and exit 0 */
    UCFTRUN_ACTION_ERROR,   /* print the error text and a hint, exit 2 */
} ucftrun_action_t;

typedef enum ucftrun_bind {
    UCFTRUN_BIND_NONE,
    UCFTRUN_BIND_CORE, /* rank i on core i mod ncores */
} ucftrun_bind_t;

/* How ranks are spread over the pretend nodes of --nodes K. */
typedef enum ucftrun_map_by {
    UCFTRUN_MAP_SLOT, /* consecutive ranks fill a node: ceil(n/K) per node */
    UCFTRUN_MAP_NODE, /* round robin: rank r on node r mod K */
} ucftrun_map_by_t;

typedef enum ucftrun_inject_kind {
    UCFTRUN_INJECT_KILL, /* SIGKILL */
    UCFTRUN_INJECT_STOP, /* SIGSTOP: a hung rank */
    /* Network faults (--netns only; launcher/netns.h): */
    UCFTRUN_INJECT_CUT,       /* a node's link goes down (--cut-node) */
    UCFTRUN_INJECT_HEAL,      /* ... and comes back (--heal-node) */
    UCFTRUN_INJECT_PARTITION, /* two groups of nodes (--partition) */
} ucftrun_inject_kind_t;

/* --netem K:loss=P%,delay=D,jitter=J: P % of node K's packets dropped
 * both ways; its incoming packets delayed by D +- J (launcher/relay.h). */
#define UCFTRUN_MAX_NETEM 64
typedef struct ucftrun_netem {
    int node;
    int loss_pct;
    uint64_t delay_ns;  /* 0: none */
    uint64_t jitter_ns; /* <= delay_ns */
} ucftrun_netem_t;

typedef enum ucftrun_target_kind {
    UCFTRUN_TARGET_RANK, /* one rank */
    UCFTRUN_TARGET_NODE, /* every rank of one pretend node (--kill-node) */
} ucftrun_target_kind_t;

/* One planned failure: do `kind` to `target` at `at_ns` after the start. */
typedef struct ucftrun_inject {
    ucftrun_inject_kind_t kind;
    ucftrun_target_kind_t target_kind;
    int target;     /* a rank, or a node id for UCFTRUN_TARGET_NODE */
    uint64_t at_ns; /* since the ranks were started (--times-from) */
    uint64_t side;  /* --partition: the nodes of the first group, */
    uint64_t other; /* ... and of the second */
} ucftrun_inject_t;

typedef struct ucftrun_opts {
    int nprocs;              /* -n N, >= 1 */
    int tag_output;          /* --tag-output */
    uint64_t timeout_ns;     /* --timeout S; 0 = none */
    ucftrun_bind_t bind;     /* --bind-to */
    int nnodes;              /* --nodes K; 0 = not given (one real node) */
    ucftrun_map_by_t map_by; /* --map-by; UCFTRUN_MAP_SLOT by default */
    int abort_on_failure;
    /* --times-from connected: the S of every injection counts from the
     * moment the last rank connected (its PMIx_Init) or ended, not from
     * the start of the ranks */
    int times_from_connected;
    int netns; /* --netns: every node in a network namespace of its own */
    ucftrun_netem_t netem[UCFTRUN_MAX_NETEM]; /* --netem, in order */
    size_t nnetem;
    int verbose;               /* -v, repeatable */
    ucftrun_inject_t *injects; /* owned; release with ucftrun_opts_free() */
    size_t ninjects;
    size_t injects_cap;
    char *const *prog_argv; /* points into argv; NULL-terminated */
    int prog_argc;
} ucftrun_opts_t;

/*
 * Parses argv (argv[0] is the launcher's name). On UCFTRUN_ACTION_RUN the
 * struct is complete and validated (every injected rank < nprocs, nnodes
 * <= nprocs and no pretend node left without a rank, every --kill-node
 * node < nnodes, --kill-node only with --nodes; --netns only with
 * --nodes, --cut-node, --heal-node, --partition and --netem only with
 * --netns, their nodes < nnodes, a partition's two groups disjoint,
 * non-empty and together every node, at most 64 nodes then). On
 * UCFTRUN_ACTION_ERROR `err` holds one line without a newline saying what
 * is wrong. Whatever the result, call ucftrun_opts_free() afterwards.
 * Does not look at the file system: see ucftrun_opts_find_program().
 */
ucftrun_action_t ucftrun_opts_parse(int argc, char *const argv[],
                                    ucftrun_opts_t *opts, char *err,
                                    size_t errlen);

void ucftrun_opts_free(ucftrun_opts_t *opts);

/*
 * Resolves the program like execvp(): a name with a '/' is used as is,
 * otherwise it is looked up in `path` (the value of PATH; NULL means
 * "/usr/local/bin:/usr/bin:/bin"). Returns 0 and the path in `out`, or -1
 * with a one-line reason in `err` (not found, not a regular file, not
 * executable).
 */
int ucftrun_opts_find_program(const char *prog, const char *path, char *out,
                              size_t outlen, char *err, size_t errlen);

/* The --help text (several lines, ends with a newline). */
const char *ucftrun_opts_usage(void);

/* Parses "R@S" (R a rank or node id >= 0, S seconds >= 0, fractional
 * allowed). */
int ucftrun_opts_parse_at(const char *text, int *target, uint64_t *at_ns);

/* Parses seconds ("2", "0.25"); must be finite and >= 0. */
int ucftrun_opts_parse_seconds(const char *text, uint64_t *ns);

#endif
