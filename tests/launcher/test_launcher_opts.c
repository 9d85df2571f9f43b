/*
 * Unit tests of ucftrun's option parsing (launcher/opts.c), injection
 * schedule (launcher/kill_schedule.c) and pretend-node map (launcher/nodes.c):
 * accepted command lines give the right struct, every bad one gives
 * UCFTRUN_ACTION_ERROR (exit status 2) with a message naming the problem;
 * the map puts every rank where --map-by says.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "launcher/kill_schedule.h"
#include "launcher/nodes.h"
#include "launcher/opts.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARGV(...) ((char *const[]){"ucftrun", __VA_ARGS__, NULL})
#define ARGC(...)                                                              \
    ((int)(sizeof((char *[]){"ucftrun", __VA_ARGS__}) / sizeof(char *)))

typedef struct parsed {
    ucftrun_opts_t opts;
    ucftrun_action_t action;
    char err[256];
} parsed_t;

#define PARSE(p, ...)                                                          \
    ((p)->action = ucftrun_opts_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__),    \
                                      &(p)->opts, (p)->err, sizeof((p)->err)))

/* A bad command line: error action, the message contains `needle`. */
#define ASSERT_BAD(needle, ...)                                                \
    do {                                                                       \
        parsed_t p_;                                                           \
        assert_int_equal(PARSE(&p_, __VA_ARGS__), UCFTRUN_ACTION_ERROR);       \
        if (strstr(p_.err, needle) == NULL)                                    \
            fail_msg("error '%s' does not mention '%s'", p_.err, needle);      \
        assert_null(strchr(p_.err, '\n'));                                     \
        ucftrun_opts_free(&p_.opts);                                           \
    } while (0)

static void test_launcher_opts_minimal(void **state)
{
    parsed_t p;

    assert_int_equal(PARSE(&p, "-n", "4", "prog"), UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.nprocs, 4);
    assert_int_equal(p.opts.prog_argc, 1);
    assert_string_equal(p.opts.prog_argv[0], "prog");
    assert_null(p.opts.prog_argv[1]);
    assert_int_equal(p.opts.bind, UCFTRUN_BIND_NONE);
    assert_int_equal(p.opts.tag_output, 0);
    assert_int_equal(p.opts.timeout_ns, 0);
    assert_int_equal(p.opts.ninjects, 0);
    assert_int_equal(p.opts.abort_on_failure, 0);
    assert_int_equal(p.opts.nnodes, 0);
    assert_int_equal(p.opts.map_by, UCFTRUN_MAP_SLOT);
    ucftrun_opts_free(&p.opts);
}

static void test_launcher_opts_np_spellings(void **state)
{
    const char *forms[][2] = {{"-n", "3"}, {"-np", "3"}, {"--np", "3"}};
    parsed_t p;

    for (size_t i = 0; i < 3; i++) {
        char *argv[] = {"ucftrun", (char *)forms[i][0], (char *)forms[i][1],
                        "prog", NULL};
        assert_int_equal(
            ucftrun_opts_parse(4, argv, &p.opts, p.err, sizeof(p.err)),
            UCFTRUN_ACTION_RUN);
        assert_int_equal(p.opts.nprocs, 3);
        ucftrun_opts_free(&p.opts);
    }
    assert_int_equal(PARSE(&p, "-n7", "prog"), UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.nprocs, 7);
    ucftrun_opts_free(&p.opts);
    assert_int_equal(PARSE(&p, "--np=5", "prog"), UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.nprocs, 5);
    ucftrun_opts_free(&p.opts);
}

static void test_launcher_opts_all_options(void **state)
{
    parsed_t p;

    assert_int_equal(PARSE(&p, "-n", "8", "--tag-output", "--timeout", "2.5",
                           "--bind-to=core", "--kill", "3@0.25", "--stop",
                           "1@2", "--kill=0@0", "--abort-on-failure", "-v",
                           "--verbose", "prog", "-n", "1", "--kill", "x"),
                     UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.nprocs, 8);
    assert_int_equal(p.opts.tag_output, 1);
    assert_int_equal(p.opts.timeout_ns, 2500000000ull);
    assert_int_equal(p.opts.bind, UCFTRUN_BIND_CORE);
    assert_int_equal(p.opts.abort_on_failure, 1);
    assert_int_equal(p.opts.times_from_connected, 0);
    assert_int_equal(p.opts.verbose, 2);
    assert_int_equal(p.opts.ninjects, 3);
    assert_int_equal(p.opts.injects[0].kind, UCFTRUN_INJECT_KILL);
    assert_int_equal(p.opts.injects[0].target, 3);
    assert_int_equal(p.opts.injects[0].at_ns, 250000000ull);
    assert_int_equal(p.opts.injects[1].kind, UCFTRUN_INJECT_STOP);
    assert_int_equal(p.opts.injects[1].target, 1);
    assert_int_equal(p.opts.injects[1].at_ns, 2000000000ull);
    assert_int_equal(p.opts.injects[2].target, 0);
    assert_int_equal(p.opts.injects[2].at_ns, 0);
    /* Everything after the program belongs to the program. */
    assert_int_equal(p.opts.prog_argc, 5);
    assert_string_equal(p.opts.prog_argv[1], "-n");
    assert_string_equal(p.opts.prog_argv[4], "x");
    ucftrun_opts_free(&p.opts);
}

static void test_launcher_opts_times_from(void **state)
{
    parsed_t p;

    assert_int_equal(PARSE(&p, "-n", "2", "--times-from", "connected", "--kill",
                           "1@1", "prog"),
                     UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.times_from_connected, 1);
    assert_int_equal(p.opts.injects[0].at_ns, 1000000000ull);
    ucftrun_opts_free(&p.opts);
    /* The last one given wins. */
    assert_int_equal(PARSE(&p, "-n", "2", "--times-from=connected",
                           "--times-from=start", "prog"),
                     UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.times_from_connected, 0);
    ucftrun_opts_free(&p.opts);
    ASSERT_BAD("bad --times-from value 'init' (expected start or connected)",
               "-n", "2", "--times-from", "init", "prog");
    ASSERT_BAD("needs a value", "-n", "2", "--times-from");
}

static void test_launcher_opts_double_dash_ends_options(void **state)
{
    parsed_t p;

    assert_int_equal(PARSE(&p, "-n", "2", "--", "-weird-prog", "a"),
                     UCFTRUN_ACTION_RUN);
    assert_string_equal(p.opts.prog_argv[0], "-weird-prog");
    assert_int_equal(p.opts.prog_argc, 2);
    ucftrun_opts_free(&p.opts);
}

static void test_launcher_opts_many_injections(void **state)
{
    char *argv[2 + 2 * 40 + 2];
    char vals[40][16];
    int argc = 0;
    parsed_t p;

    argv[argc++] = "ucftrun";
    argv[argc++] = "-n64";
    for (int i = 0; i < 40; i++) {
        snprintf(vals[i], sizeof(vals[i]), "%d@%d", i, 40 - i);
        argv[argc++] = i % 2 ? "--kill" : "--stop";
        argv[argc++] = vals[i];
    }
    argv[argc++] = "prog";
    argv[argc] = NULL;
    assert_int_equal(
        ucftrun_opts_parse(argc, argv, &p.opts, p.err, sizeof(p.err)),
        UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.ninjects, 40);
    assert_int_equal(p.opts.injects[39].target, 39);
    ucftrun_opts_free(&p.opts);
}

static void test_launcher_opts_help_and_version(void **state)
{
    parsed_t p;

    assert_int_equal(PARSE(&p, "--help"), UCFTRUN_ACTION_HELP);
    ucftrun_opts_free(&p.opts);
    assert_int_equal(PARSE(&p, "-h"), UCFTRUN_ACTION_HELP);
    ucftrun_opts_free(&p.opts);
    /* Options are read in order: an error before --help is reported. */
    assert_int_equal(PARSE(&p, "-n", "0", "--help"), UCFTRUN_ACTION_ERROR);
    ucftrun_opts_free(&p.opts);
    assert_int_equal(PARSE(&p, "--version"), UCFTRUN_ACTION_VERSION);
    ucftrun_opts_free(&p.opts);
    assert_non_null(strstr(ucftrun_opts_usage(), "--tag-output"));
    assert_non_null(strstr(ucftrun_opts_usage(), "--kill-node K@S"));
}

static void test_launcher_opts_bad_unknown_option(void **state)
{
    ASSERT_BAD("unknown option '--frobnicate'", "--frobnicate", "-n", "2",
               "prog");
    ASSERT_BAD("unknown option '-x'", "-n", "2", "-x", "prog");
    ASSERT_BAD("takes no value", "-n", "2", "--tag-output=yes", "prog");
}

static void test_launcher_opts_bad_nprocs(void **state)
{
    ASSERT_BAD("missing -n", "prog");
    ASSERT_BAD("bad number of ranks '0'", "-n", "0", "prog");
    ASSERT_BAD("bad number of ranks '-3'", "-n", "-3", "prog");
    ASSERT_BAD("bad number of ranks 'four'", "-n", "four", "prog");
    ASSERT_BAD("bad number of ranks '2x'", "-n", "2x", "prog");
    ASSERT_BAD("bad number of ranks '99999999999999999999'", "-n",
               "99999999999999999999", "prog");
    ASSERT_BAD("needs a value", "-n");
}

static void test_launcher_opts_bad_missing_program(void **state)
{
    ASSERT_BAD("missing program", "-n", "2");
    ASSERT_BAD("missing program", "-n", "2", "--");
    ASSERT_BAD("missing program", "-n", "2", "");
}

static void test_launcher_opts_bad_inject(void **state)
{
    ASSERT_BAD("bad --kill value '3'", "-n", "4", "--kill", "3", "prog");
    ASSERT_BAD("bad --kill value '@1'", "-n", "4", "--kill", "@1", "prog");
    ASSERT_BAD("bad --kill value '1@'", "-n", "4", "--kill", "1@", "prog");
    ASSERT_BAD("bad --kill value '-1@1'", "-n", "4", "--kill=-1@1", "prog");
    ASSERT_BAD("bad --stop value '1@-2'", "-n", "4", "--stop", "1@-2", "prog");
    ASSERT_BAD("bad --stop value '1@nan'", "-n", "4", "--stop", "1@nan",
               "prog");
    ASSERT_BAD("bad --stop value '1@1s'", "-n", "4", "--stop", "1@1s", "prog");
    ASSERT_BAD("--kill rank 4 is out of range (the job has 4 ranks)", "-n", "4",
               "--kill", "4@1", "prog");
    /* The range is checked after -n, wherever -n appears. */
    ASSERT_BAD("--stop rank 2 is out of range (the job has 1 rank)", "--stop",
               "2@0.5", "-n", "1", "prog");
    ASSERT_BAD("needs a value", "-n", "4", "--kill");
}

static void test_launcher_opts_bad_timeout_and_bind(void **state)
{
    ASSERT_BAD("bad --timeout value 'soon'", "-n", "1", "--timeout", "soon",
               "prog");
    ASSERT_BAD("bad --timeout value '0'", "-n", "1", "--timeout", "0", "prog");
    ASSERT_BAD("bad --timeout value 'inf'", "-n", "1", "--timeout=inf", "prog");
    ASSERT_BAD("bad --bind-to value 'socket'", "-n", "1", "--bind-to", "socket",
               "prog");
}

static void test_launcher_opts_nodes(void **state)
{
    parsed_t p;

    assert_int_equal(PARSE(&p, "-n", "16", "--nodes", "4", "--map-by", "node",
                           "--kill-node", "1@2.5", "--kill-node=3@0", "--kill",
                           "5@1", "prog"),
                     UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.nnodes, 4);
    assert_int_equal(p.opts.map_by, UCFTRUN_MAP_NODE);
    assert_int_equal(p.opts.ninjects, 3);
    assert_int_equal(p.opts.injects[0].kind, UCFTRUN_INJECT_KILL);
    assert_int_equal(p.opts.injects[0].target_kind, UCFTRUN_TARGET_NODE);
    assert_int_equal(p.opts.injects[0].target, 1);
    assert_int_equal(p.opts.injects[0].at_ns, 2500000000ull);
    assert_int_equal(p.opts.injects[1].target_kind, UCFTRUN_TARGET_NODE);
    assert_int_equal(p.opts.injects[1].target, 3);
    assert_int_equal(p.opts.injects[2].target_kind, UCFTRUN_TARGET_RANK);
    assert_int_equal(p.opts.injects[2].target, 5);
    ucftrun_opts_free(&p.opts);
    /* --nodes may come after its --kill-node and before -n; slot is the
     * default; K = N and K = 1 are fine. */
    assert_int_equal(PARSE(&p, "--kill-node", "0@1", "--nodes=2", "--map-by",
                           "slot", "-n", "2", "prog"),
                     UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.nnodes, 2);
    assert_int_equal(p.opts.map_by, UCFTRUN_MAP_SLOT);
    ucftrun_opts_free(&p.opts);
    assert_int_equal(PARSE(&p, "-n", "3", "--nodes", "1", "prog"),
                     UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.nnodes, 1);
    ucftrun_opts_free(&p.opts);
    /* --map-by alone is accepted (one node: both maps are the same). */
    assert_int_equal(PARSE(&p, "-n", "3", "--map-by", "node", "prog"),
                     UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.nnodes, 0);
    ucftrun_opts_free(&p.opts);
    /* 6 ranks on 4 nodes by node: 2, 2, 1, 1. */
    assert_int_equal(
        PARSE(&p, "-n", "6", "--nodes", "4", "--map-by", "node", "prog"),
        UCFTRUN_ACTION_RUN);
    ucftrun_opts_free(&p.opts);
}

static void test_launcher_opts_bad_nodes(void **state)
{
    ASSERT_BAD("bad --nodes value '0'", "-n", "4", "--nodes", "0", "prog");
    ASSERT_BAD("bad --nodes value 'two'", "-n", "4", "--nodes", "two", "prog");
    ASSERT_BAD("bad --nodes value '-1'", "-n", "4", "--nodes=-1", "prog");
    ASSERT_BAD("needs a value", "-n", "4", "--nodes");
    ASSERT_BAD("--nodes 5 is more than the number of ranks (4)", "-n", "4",
               "--nodes", "5", "prog");
    ASSERT_BAD("bad --map-by value 'core'", "-n", "4", "--map-by", "core",
               "prog");
    ASSERT_BAD("bad --map-by value ''", "-n", "4", "--map-by=", "prog");
    /* ceil(6/4) = 2 per node leaves node 3 without a rank. */
    ASSERT_BAD("--nodes 4 --map-by slot leaves node 3 empty (6 ranks, 2 per "
               "node)",
               "-n", "6", "--nodes", "4", "prog");
    ASSERT_BAD("--kill-node 1 needs --nodes K", "-n", "4", "--kill-node", "1@1",
               "prog");
    ASSERT_BAD("--kill-node node 4 is out of range (the job has 4 nodes, 0 "
               "to 3)",
               "-n", "8", "--nodes", "4", "--kill-node", "4@1", "prog");
    ASSERT_BAD("--kill-node node 1 is out of range (the job has 1 node, 0 to "
               "0)",
               "-n", "8", "--kill-node", "1@1", "--nodes", "1", "prog");
    ASSERT_BAD("bad --kill-node value '1'", "-n", "4", "--nodes", "2",
               "--kill-node", "1", "prog");
    ASSERT_BAD("expected NODE@SECONDS", "-n", "4", "--nodes", "2",
               "--kill-node", "x@1", "prog");
    ASSERT_BAD("bad --kill-node value '1@-1'", "-n", "4", "--nodes", "2",
               "--kill-node", "1@-1", "prog");
}

/* Checks a map against the definition of --map-by, rank by rank. */
static void check_map(const ucftrun_nodes_t *m, int n, int k,
                      ucftrun_map_by_t by)
{
    int per_node = (n + k - 1) / k;
    int seen[64] = {0};

    assert_int_equal(m->nprocs, n);
    assert_int_equal(m->nnodes, k);
    for (int r = 0; r < n; r++) {
        int want = by == UCFTRUN_MAP_NODE ? r % k : r / per_node;

        assert_int_equal(m->node_of[r], want);
        /* Local ranks count up from 0 in rank order on each node. */
        assert_int_equal(m->local_rank_of[r], seen[want]++);
    }
    for (int node = 0; node < k; node++)
        assert_int_equal(m->node_size[node], seen[node]);
}

static void test_launcher_nodes_map(void **state)
{
    static const int cases[][2] = {{16, 4}, {4, 4}, {5, 2}, {7, 3},
                                   {1, 1},  {9, 1}, {10, 4}};
    ucftrun_nodes_t m;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (int by = UCFTRUN_MAP_SLOT; by <= UCFTRUN_MAP_NODE; by++) {
            assert_int_equal(ucftrun_nodes_init(&m, cases[i][0], cases[i][1],
                                                (ucftrun_map_by_t)by, "h"),
                             0);
            check_map(&m, cases[i][0], cases[i][1], (ucftrun_map_by_t)by);
            assert_int_equal(m.pretend, 1);
            ucftrun_nodes_free(&m);
        }
    }
    /* 16 on 4 by slot: 0-3 on node 0, ..., 12-15 on node 3. */
    assert_int_equal(ucftrun_nodes_init(&m, 16, 4, UCFTRUN_MAP_SLOT, "h"), 0);
    assert_int_equal(m.node_of[3], 0);
    assert_int_equal(m.node_of[4], 1);
    assert_int_equal(m.node_of[15], 3);
    assert_int_equal(m.local_rank_of[13], 1);
    ucftrun_nodes_free(&m);
    /* Not pretending: one node, named after the machine. */
    assert_int_equal(ucftrun_nodes_init(&m, 3, 0, UCFTRUN_MAP_NODE, "box"), 0);
    check_map(&m, 3, 1, UCFTRUN_MAP_SLOT);
    assert_int_equal(m.pretend, 0);
    ucftrun_nodes_free(&m);
    assert_int_equal(ucftrun_nodes_init(&m, 0, 2, UCFTRUN_MAP_SLOT, "h"), -1);
}

static void test_launcher_nodes_strings(void **state)
{
    ucftrun_nodes_t m;
    char buf[64], *s;

    assert_int_equal(ucftrun_nodes_init(&m, 5, 2, UCFTRUN_MAP_NODE, "box"), 0);
    assert_int_equal(ucftrun_nodes_hostname(&m, 0, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "box-n0");
    assert_int_equal(ucftrun_nodes_hostname(&m, 1, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "box-n1");
    assert_int_equal(ucftrun_nodes_hostname(&m, 2, buf, sizeof(buf)), -1);
    assert_int_equal(ucftrun_nodes_hostname(&m, -1, buf, sizeof(buf)), -1);
    assert_int_equal(ucftrun_nodes_hostname(&m, 1, buf, 6), -1); /* short */
    s = ucftrun_nodes_ranks(&m, 0);
    assert_string_equal(s, "0,2,4");
    free(s);
    s = ucftrun_nodes_ranks(&m, 1);
    assert_string_equal(s, "1,3");
    free(s);
    assert_null(ucftrun_nodes_ranks(&m, 2));
    s = ucftrun_nodes_host_list(&m);
    assert_string_equal(s, "box-n0,box-n1");
    free(s);
    s = ucftrun_nodes_ppn_list(&m);
    assert_string_equal(s, "0,2,4;1,3");
    free(s);
    ucftrun_nodes_free(&m);

    assert_int_equal(ucftrun_nodes_init(&m, 3, 0, UCFTRUN_MAP_SLOT, "box"), 0);
    assert_int_equal(ucftrun_nodes_hostname(&m, 0, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "box");
    s = ucftrun_nodes_ppn_list(&m);
    assert_string_equal(s, "0,1,2");
    free(s);
    ucftrun_nodes_free(&m);
}

static void test_launcher_opts_netns(void **state)
{
    parsed_t p;

    assert_int_equal(PARSE(&p, "-n", "8", "--nodes", "4", "--netns",
                           "--cut-node", "3@2.5", "--heal-node", "3@4",
                           "--partition", "0,1/2,3@1", "--netem", "1:loss=5%",
                           "--netem=2:loss=0", "--netem",
                           "3:loss=2,delay=2ms,jitter=500us", "--netem",
                           "0:delay=1.5", "prog"),
                     UCFTRUN_ACTION_RUN);
    assert_int_equal(p.opts.netns, 1);
    assert_int_equal(p.opts.ninjects, 3);
    assert_int_equal(p.opts.injects[0].kind, UCFTRUN_INJECT_CUT);
    assert_int_equal(p.opts.injects[0].target_kind, UCFTRUN_TARGET_NODE);
    assert_int_equal(p.opts.injects[0].target, 3);
    assert_int_equal(p.opts.injects[0].at_ns, 2500000000ull);
    assert_int_equal(p.opts.injects[1].kind, UCFTRUN_INJECT_HEAL);
    assert_int_equal(p.opts.injects[2].kind, UCFTRUN_INJECT_PARTITION);
    assert_int_equal(p.opts.injects[2].side, 0x3);
    assert_int_equal(p.opts.injects[2].other, 0xc);
    assert_int_equal(p.opts.injects[2].at_ns, 1000000000ull);
    assert_int_equal(p.opts.nnetem, 4);
    assert_int_equal(p.opts.netem[0].node, 1);
    assert_int_equal(p.opts.netem[0].loss_pct, 5);
    assert_int_equal(p.opts.netem[1].node, 2);
    assert_int_equal(p.opts.netem[1].loss_pct, 0);
    assert_int_equal(p.opts.netem[1].delay_ns, 0);
    assert_int_equal(p.opts.netem[2].node, 3);
    assert_int_equal(p.opts.netem[2].loss_pct, 2);
    assert_int_equal(p.opts.netem[2].delay_ns, 2000000);
    assert_int_equal(p.opts.netem[2].jitter_ns, 500000);
    assert_int_equal(p.opts.netem[3].node, 0);
    assert_int_equal(p.opts.netem[3].loss_pct, 0);
    assert_int_equal(p.opts.netem[3].delay_ns, 1500000); /* ms if no unit */
    assert_int_equal(ucftrun_inject_signal(UCFTRUN_INJECT_CUT), 0);
    assert_string_equal(ucftrun_inject_name(UCFTRUN_INJECT_CUT), "cut");
    ucftrun_opts_free(&p.opts);
}

static void test_launcher_opts_bad_netns(void **state)
{
    ASSERT_BAD("--netns needs --nodes", "-n", "2", "--netns", "prog");
    ASSERT_BAD("--cut-node needs --netns", "-n", "2", "--nodes", "2",
               "--cut-node", "1@1", "prog");
    ASSERT_BAD("--netem needs --netns", "-n", "2", "--nodes", "2", "--netem",
               "1:loss=5%", "prog");
    ASSERT_BAD("--cut-node node 2 is out of range", "-n", "2", "--nodes", "2",
               "--netns", "--cut-node", "2@1", "prog");
    ASSERT_BAD("--netem node 5 is out of range", "-n", "2", "--nodes", "2",
               "--netns", "--netem", "5:loss=1", "prog");
    ASSERT_BAD("bad --netem value", "-n", "2", "--nodes", "2", "--netns",
               "--netem", "1:loss=101%", "prog");
    ASSERT_BAD("the jitter exceeds the delay", "-n", "2", "--nodes", "2",
               "--netns", "--netem", "1:delay=2ms,jitter=3ms", "prog");
    ASSERT_BAD("bad --netem value", "-n", "2", "--nodes", "2", "--netns",
               "--netem", "1:delay=2ns", "prog");
    ASSERT_BAD("bad --netem value", "-n", "2", "--nodes", "2", "--netns",
               "--netem", "1:delay=11s", "prog");
    ASSERT_BAD("bad --netem value", "-n", "2", "--nodes", "2", "--netns",
               "--netem", "1:loss=5%,", "prog");
    ASSERT_BAD("bad --netem value", "-n", "2", "--nodes", "2", "--netns",
               "--netem", "1:", "prog");
    ASSERT_BAD("bad --netem value", "-n", "2", "--nodes", "2", "--netns",
               "--netem", "1:rate=1mbit", "prog");
    ASSERT_BAD("bad --netem value", "-n", "2", "--nodes", "2", "--netns",
               "--netem", "1:loss=5%x", "prog");
    ASSERT_BAD("bad --partition value", "-n", "4", "--nodes", "4", "--netns",
               "--partition", "0,1/1,2,3@1", "prog");
    ASSERT_BAD("bad --partition value", "-n", "4", "--nodes", "4", "--netns",
               "--partition", "0,1@1", "prog");
    ASSERT_BAD("bad --partition value", "-n", "4", "--nodes", "4", "--netns",
               "--partition", "0,/2,3@1", "prog");
    ASSERT_BAD("--partition must name every node once", "-n", "4", "--nodes",
               "4", "--netns", "--partition", "0/2,3@1", "prog");
    ASSERT_BAD("--partition must name every node once", "-n", "4", "--nodes",
               "4", "--netns", "--partition", "0,1/2,3,4@1", "prog");
}

static void test_launcher_opts_parse_at(void **state)
{
    int r;
    uint64_t ns;

    assert_int_equal(ucftrun_opts_parse_at("12@0.125", &r, &ns), 0);
    assert_int_equal(r, 12);
    assert_int_equal(ns, 125000000ull);
    assert_int_equal(ucftrun_opts_parse_at("0@3", &r, &ns), 0);
    assert_int_equal(ns, 3000000000ull);
    assert_int_equal(ucftrun_opts_parse_at("1@2@3", &r, &ns), -1);
    assert_int_equal(ucftrun_opts_parse_at("x@1", &r, &ns), -1);
    assert_int_equal(ucftrun_opts_parse_at("", &r, &ns), -1);
    assert_int_equal(ucftrun_opts_parse_seconds("1e3", &ns), -1);
}

static void test_launcher_opts_find_program(void **state)
{
    char dir[] = "/tmp/ucftrun-opts-XXXXXX";
    char exe[64], noexec[64], out[256], err[256], path[128];
    FILE *f;

    assert_non_null(mkdtemp(dir));
    snprintf(exe, sizeof(exe), "%s/tool", dir);
    snprintf(noexec, sizeof(noexec), "%s/data", dir);
    f = fopen(exe, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(chmod(exe, 0755), 0);
    f = fopen(noexec, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof(path), "/nonexistent:%s", dir);

    assert_int_equal(ucftrun_opts_find_program("tool", path, out, sizeof(out),
                                               err, sizeof(err)),
                     0);
    assert_string_equal(out, exe);
    assert_int_equal(ucftrun_opts_find_program(exe, NULL, out, sizeof(out), err,
                                               sizeof(err)),
                     0);
    assert_int_equal(ucftrun_opts_find_program("data", path, out, sizeof(out),
                                               err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "not found in PATH"));
    assert_int_equal(ucftrun_opts_find_program(noexec, path, out, sizeof(out),
                                               err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "not executable"));
    assert_int_equal(ucftrun_opts_find_program(dir, path, out, sizeof(out), err,
                                               sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "not a regular file"));
    assert_int_equal(ucftrun_opts_find_program("./no/such", path, out,
                                               sizeof(out), err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "not found"));

    unlink(exe);
    unlink(noexec);
    rmdir(dir);
}

static void test_launcher_opts_inject_schedule(void **state)
{
    ucftrun_inject_t ev[] = {
        {UCFTRUN_INJECT_STOP, UCFTRUN_TARGET_RANK, 1, 500, 0, 0},
        {UCFTRUN_INJECT_KILL, UCFTRUN_TARGET_RANK, 2, 100, 0, 0},
        {UCFTRUN_INJECT_KILL, UCFTRUN_TARGET_RANK, 3, 500, 0, 0},
    };
    ucftrun_inject_sched_t s;
    const ucftrun_inject_t *e;

    assert_int_equal(ucftrun_inject_sched_init(&s, ev, 3), 0);
    assert_int_equal(ucftrun_inject_next_ns(&s), 100);
    assert_null(ucftrun_inject_pop_due(&s, 99));
    e = ucftrun_inject_pop_due(&s, 100);
    assert_non_null(e);
    assert_int_equal(e->target, 2);
    assert_int_equal(ucftrun_inject_signal(e->kind), SIGKILL);
    assert_null(ucftrun_inject_pop_due(&s, 499));
    /* Same time: command-line order. */
    e = ucftrun_inject_pop_due(&s, 1000);
    assert_int_equal(e->target, 1);
    assert_int_equal(ucftrun_inject_signal(e->kind), SIGSTOP);
    e = ucftrun_inject_pop_due(&s, 1000);
    assert_int_equal(e->target, 3);
    assert_null(ucftrun_inject_pop_due(&s, 1000));
    assert_int_equal(ucftrun_inject_next_ns(&s), UINT64_MAX);
    ucftrun_inject_sched_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launcher_opts_minimal),
        cmocka_unit_test(test_launcher_opts_np_spellings),
        cmocka_unit_test(test_launcher_opts_all_options),
        cmocka_unit_test(test_launcher_opts_times_from),
        cmocka_unit_test(test_launcher_opts_double_dash_ends_options),
        cmocka_unit_test(test_launcher_opts_many_injections),
        cmocka_unit_test(test_launcher_opts_help_and_version),
        cmocka_unit_test(test_launcher_opts_bad_unknown_option),
        cmocka_unit_test(test_launcher_opts_bad_nprocs),
        cmocka_unit_test(test_launcher_opts_bad_missing_program),
        cmocka_unit_test(test_launcher_opts_bad_inject),
        cmocka_unit_test(test_launcher_opts_bad_timeout_and_bind),
        cmocka_unit_test(test_launcher_opts_nodes),
        cmocka_unit_test(test_launcher_opts_bad_nodes),
        cmocka_unit_test(test_launcher_nodes_map),
        cmocka_unit_test(test_launcher_nodes_strings),
        cmocka_unit_test(test_launcher_opts_netns),
        cmocka_unit_test(test_launcher_opts_bad_netns),
        cmocka_unit_test(test_launcher_opts_parse_at),
        cmocka_unit_test(test_launcher_opts_find_program),
        cmocka_unit_test(test_launcher_opts_inject_schedule),
    };
    return cmocka_run_group_tests_name("launcher_opts", tests, NULL, NULL);
}
